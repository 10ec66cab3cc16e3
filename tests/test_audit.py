"""``memrisk audit``: the shortcut agents read only what a model sees, and dataset v2
meets the shortcut ceilings of issue #10 (on the packaged file and on other seeds).

* the view parser recovers exactly the notes the renderer shows;
* on v1 the audit reproduces the shortcuts the issue measured (all-rules ~109/120);
* on v2: the oracle passes everything, each adversary fails its own risk, every
  single-cue agent passes at most 50% of each risk and 35% of the main track, the
  all-rules agent at most 70% of the main track;
* the cue table: cues seen >= 8 times have a right rate in [0.25, 0.75], except the
  cues listed in KNOWN_UNMET (v2 does not meet that ceiling for them yet; the test
  fails when one of them is fixed, so the list stays honest).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from lm_eval_memrisk.agents import get_agent
from lm_eval_memrisk.audit import SHORTCUTS, audit
from lm_eval_memrisk.audit.view import read_view
from lm_eval_memrisk.cli import main as memrisk
from lm_eval_memrisk.generator import generate
from lm_eval_memrisk.loader import load_episodes
from lm_eval_memrisk.records import MAIN_RISKS, Episode
from lm_eval_memrisk.runner import decision_prompts, run_episode
from lm_eval_memrisk.scorer import score

MUST_FAIL = {"R1": "stale", "R2": "stale", "R4": "stale", "R3": "leaky", "R5": "constraint-blind"}
#: Cues of v2 whose right rate is still outside [0.25, 0.75] (see README, "Shortcut audit").
KNOWN_UNMET = frozenset(
    {"notice: rule word", "recency oldest", "recency only note", "scope other"}
)


@pytest.fixture(scope="module")
def v1_audit() -> dict[str, Any]:
    return audit(load_episodes("v1", track="all"))


@pytest.fixture(scope="module")
def v2() -> list[Episode]:
    return load_episodes("v2", track="all")


@pytest.fixture(scope="module")
def v2_audit(v2: list[Episode]) -> dict[str, Any]:
    return audit(v2)


def test_view_recovers_the_rendered_notes(v2: list[Episode]) -> None:
    for ep in v2[::7]:
        for p in decision_prompts(ep):
            view = read_view(p.messages, dict(ep.event(p.decision_id).naive or {}))
            shown = [(n.id, n.key, n.value, n.scope) for n in view.notes]
            assert shown == [(i.id, i.key, i.value, i.scope) for i in p.view.notes], ep.id
            assert view.scopes == p.view.state.active_scopes, ep.id


def test_agents_never_see_ground_truth() -> None:
    """Agents take a View; a View is built from messages and the action skeleton only."""
    fields = set(read_view.__annotations__)
    assert fields == {"messages", "skeleton", "return"}


def test_v1_audit_reproduces_the_issue(v1_audit: dict[str, Any]) -> None:
    sc = v1_audit["shortcuts"]
    assert sc["all-rules"]["main"]["passed"] >= 100  # issue: 109/120
    assert sc["all-rules"]["R6"]["passed"] == 24
    assert sc["newest-any-scope"]["R1"]["passed"] == 24
    assert sc["last-mentioned"]["R6"]["passed"] == 24
    cues = {c["cue"]: c for c in v1_audit["cues"]}
    assert cues["trust low"]["right_rate"] == 0.0
    assert cues["source summary"]["right_rate"] == 0.0


def _check_ceilings(episodes: list[Episode], result: dict[str, Any]) -> None:
    for ep in episodes:
        assert score(ep, run_episode(ep, get_agent("oracle"))).success, ep.id
        if ep.risk in MUST_FAIL:
            assert not score(ep, run_episode(ep, get_agent(MUST_FAIL[ep.risk]))).success, ep.id
    for name, row in result["shortcuts"].items():
        if row["kind"] == "single-cue":
            for risk in (*MAIN_RISKS, "R6"):
                assert row[risk]["pass_rate"] <= 0.5, (name, risk, row[risk])
            assert row["main"]["pass_rate"] <= 0.35, (name, row["main"])
        else:
            assert row["main"]["pass_rate"] <= 0.70, (name, row["main"])
    for cue in result["cues"]:
        if cue["n"] >= 8:
            inside = 0.25 <= cue["right_rate"] <= 0.75
            assert inside != (cue["cue"] in KNOWN_UNMET), cue


def test_v2_meets_the_ceilings(v2: list[Episode], v2_audit: dict[str, Any]) -> None:
    _check_ceilings(v2, v2_audit)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_v2_meets_the_ceilings_on_other_seeds(seed: int) -> None:
    episodes = generate(seed, version="v2")
    result = audit(episodes)
    rows = result["shortcuts"]
    for ep in episodes:
        assert score(ep, run_episode(ep, get_agent("oracle"))).success, ep.id
    for name, row in rows.items():
        limit = 0.35 if row["kind"] == "single-cue" else 0.70
        assert row["main"]["pass_rate"] <= limit, (seed, name, row["main"])
        if row["kind"] == "single-cue":
            assert all(row[r]["pass_rate"] <= 0.5 for r in (*MAIN_RISKS, "R6")), (seed, name)


def test_v2_is_harder_than_v1_for_the_best_shortcuts(
    v1_audit: dict[str, Any], v2_audit: dict[str, Any]
) -> None:
    def best(result: dict[str, Any], kind: str) -> int:
        rows = result["shortcuts"].values()
        return max(int(r["main"]["passed"]) for r in rows if r["kind"] == kind)

    for kind in ("single-cue", "all-rules"):
        assert best(v2_audit, kind) < best(v1_audit, kind), kind


def test_acknowledgements_are_varied(v2: list[Episode]) -> None:
    texts = Counter(e.text for ep in v2 for e in ep.events if e.type == "assistant_message")
    total = sum(texts.values())
    assert max(texts.values()) <= 0.05 * total, texts.most_common(3)


def test_cli_json_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert memrisk(["audit", "--episodes", "v2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"shortcuts", "cues"}
    names = {s.name for s in SHORTCUTS}
    assert set(out["shortcuts"]) == names
    row = out["shortcuts"]["all-rules"]
    assert row["kind"] == "all-rules"
    assert set(row["main"]) == {"n", "passed", "pass_rate"} and row["main"]["n"] == 120
    assert all(set(c) == {"cue", "n", "right_rate"} for c in out["cues"])
