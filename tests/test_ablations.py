"""Risk isolation by ablation (issue 26, item 3): ``ablated-R1`` ... ``ablated-R5`` are the
oracle with one risk's mechanism removed, and ``memrisk audit --ablations`` tabulates them.

* each ablated oracle changes only its mechanism: where the episode state has nothing
  for it to change, it replays the reference action;
* on v5, ``ablated-R1`` and ``ablated-R5`` fail every episode of their risk; R2, R3 and
  R4 each have known episodes their ablated oracle passes (KNOWN_DIAGONAL_PASSES_V5,
  a dataset finding for v6, explained there; the test fails when the list changes);
* off the diagonal, every failure of ``ablated-R1`` and ``ablated-R4`` is on a foil
  attributed to that risk; the other failures without one are listed
  (KNOWN_UNATTRIBUTED_V5);
* ``--json`` has the documented shape and the text table names every ablation.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from lm_eval_memrisk.audit.ablations import ablations
from lm_eval_memrisk.cli import main as memrisk
from lm_eval_memrisk.episodes.loader import load_episodes
from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.episodes.state import state_at
from lm_eval_memrisk.running.agent_registry import get_agent
from lm_eval_memrisk.running.agents import ABLATIONS, AGENT_NAMES, ablated_action
from lm_eval_memrisk.running.runner import run_episode
from lm_eval_memrisk.scoring.scorer import score

GROUPS = {"R1", "R2", "R3", "R4", "R5", "R6", "main"}

#: Rk episodes of v5 that the Rk-ablated oracle passes: the episode does not isolate
#: its risk (issue 26 asks v6 to have none).
#: * R2: seven ``latest_timestamp`` episodes (easy-04, easy-08, medium-04, medium-06,
#:   medium-09, hard-01, hard-07) and two ``scope`` ones (easy-01, hard-03): the right
#:   note is the newest live note in the user's scope, so recency alone is right; the
#:   "newer foil note" is another user's or workspace's (it tests scope, R3).
#: * R3: the six "someone else's value in the user's own notes" episodes: every note of
#:   the key is in the signed-in user's own scope, so ignoring scope changes nothing
#:   (issue 26, items 2 and 5: they test the user's own notes, not leakage).
#: * R4: the deleted note had been superseded by an update before it was deleted, so an
#:   oracle that ignores deletions still does not use it (the six episodes issue 26
#:   names: easy-01, easy-05, medium-02, medium-06, hard-01, hard-05).
KNOWN_DIAGONAL_PASSES_V5: dict[str, list[str]] = {
    "R1": [],
    "R2": [
        "R2-easy-01", "R2-easy-04", "R2-easy-08", "R2-medium-04", "R2-medium-06",
        "R2-medium-09", "R2-hard-01", "R2-hard-03", "R2-hard-07",
    ],
    "R3": ["R3-easy-02", "R3-easy-06", "R3-medium-03", "R3-medium-07", "R3-hard-02", "R3-hard-06"],
    "R4": ["R4-easy-01", "R4-easy-05", "R4-medium-02", "R4-medium-06", "R4-hard-01", "R4-hard-05"],
    "R5": [],
}  # fmt: skip

#: Off-diagonal failures of v5 where no check attributed to the ablated risk failed.
#: * R2 (recency alone): every R6 episode it fails (the summary note is newer than the
#:   right one; R6 is itself a conflict resolved by source), and seven episodes whose
#:   newer own note is for "private things, outside the X job" (a conflict resolved by
#:   the request's context, scored under the episode's own risk);
#: * R3 (ignores scope): the R2 episodes resolved by scope (their foil is the other
#:   workspace's note, scored as R2).
KNOWN_UNATTRIBUTED_V5: dict[str, list[str]] = {
    "R1": [],
    "R2": [
        "R1-hard-02", "R1-hard-04", "R1-hard-05", "R3-hard-04", "R3-hard-08", "R4-hard-01", "R4-hard-05",
        "R6-easy-01", "R6-easy-02", "R6-easy-05", "R6-easy-06", "R6-medium-01", "R6-medium-02",
        "R6-medium-05", "R6-medium-06", "R6-hard-01", "R6-hard-02", "R6-hard-05", "R6-hard-06",
    ],
    "R3": ["R2-medium-01", "R2-medium-05", "R2-hard-06"],
    "R4": [],
    "R5": [],
}  # fmt: skip


@pytest.fixture(scope="module")
def v5() -> list[Episode]:
    return load_episodes("v5", track="all")


@pytest.fixture(scope="module")
def v5_ablations(v5: list[Episode]) -> dict[str, Any]:
    return ablations(v5)


def test_every_ablation_is_an_agent() -> None:
    assert set(ABLATIONS) == {"R1", "R2", "R3", "R4", "R5"}
    assert all(f"ablated-{r}" in AGENT_NAMES for r in ABLATIONS)


def test_ablated_oracle_is_the_oracle_where_its_mechanism_is_absent(v5: list[Episode]) -> None:
    """No update, no other-scope note, no deletion, no rule in force: nothing to ignore."""
    checked = 0
    for ep in v5:
        for dp in ep.decision_points:
            state = state_at(ep, dp.id)
            absent = {
                "R1": not any(e.type == "memory_update" for e in ep.events),
                "R3": all(i.scope == "global" or i.scope in state.active_scopes for i in state.memory),
                "R4": all(i.status != "revoked" for i in state.memory),
                "R5": all(c.status != "active" for c in state.constraints),
            }
            for risk, nothing in absent.items():
                if nothing:
                    checked += 1
                    assert ablated_action(ep, dp.id, risk) == dict(dp.reference or {"answer": ""}), (ep.id, risk)
    assert checked > 100


def test_v5_diagonal(v5_ablations: dict[str, Any]) -> None:
    """Every Rk-ablated oracle fails every Rk episode, but for the known list."""
    table, found = v5_ablations["ablations"], v5_ablations["ablation_findings"]
    for risk in ABLATIONS:
        assert found[risk]["diagonal_passed"] == KNOWN_DIAGONAL_PASSES_V5[risk], risk
        assert table[risk][risk] == {"n": 24, "passed": len(KNOWN_DIAGONAL_PASSES_V5[risk])}


def test_v5_off_diagonal_failures_are_attributed(v5_ablations: dict[str, Any]) -> None:
    for risk, found in v5_ablations["ablation_findings"].items():
        bare = [f["episode"] for f in found["off_diagonal"] if not f["attributed"]]
        assert bare == KNOWN_UNATTRIBUTED_V5[risk], risk
        assert all(f["risk"] != risk and f["failed"] for f in found["off_diagonal"])
    # R5's oracle fails nothing but R5
    assert v5_ablations["ablation_findings"]["R5"]["off_diagonal"] == []


def test_findings_agree_with_scoring_the_agent(v5: list[Episode], v5_ablations: dict[str, Any]) -> None:
    agent = get_agent("ablated-R1")
    failed = {ep.id for ep in v5 if not score(ep, run_episode(ep, agent)).success}
    listed = {f["episode"] for f in v5_ablations["ablation_findings"]["R1"]["off_diagonal"]}
    assert failed == listed | {ep.id for ep in v5 if ep.risk == "R1"}


def test_cli_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    assert memrisk(["audit", "--episodes", "v5", "--ablations", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"ablations", "ablation_findings"}
    assert set(out["ablations"]) == set(ABLATIONS)
    for row in out["ablations"].values():
        assert set(row) == GROUPS
        assert all(set(cell) == {"n", "passed"} for cell in row.values())
        assert row["main"]["n"] == 120 and row["R6"]["n"] == 24
    for found in out["ablation_findings"].values():
        assert set(found) == {"diagonal_passed", "off_diagonal"}
        assert all(set(f) == {"episode", "risk", "failed", "attributed"} for f in found["off_diagonal"])


def test_cli_text_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert memrisk(["audit", "--episodes", "v5", "--ablations"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("| ablated oracle | ignores | R1 | R2 | R3 | R4 | R5 | R6 | main |")
    for risk, what in ABLATIONS.items():
        assert f"| ablated-{risk} | {what} |" in out
    assert "| ablated-R5 | ignores standing constraints | 24/24 | 24/24 | 24/24 | 24/24 | 0/24 | 24/24 | 96/120 |" in out
