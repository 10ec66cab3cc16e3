"""``memrisk audit``: the shortcut agents read only what a model sees, and dataset v2
meets the shortcut ceilings of issue #10 (on the packaged file and on other seeds).

* the view parser recovers exactly the notes the renderer shows;
* on v1 the audit reproduces the shortcuts the issue measured (all-rules ~109/120);
* on v2: the oracle passes everything, each adversary fails its own risk, every
  single-cue agent passes at most 50% of each risk and 35% of the main track, the
  all-rules agent at most 70% of the main track;
* the cue table: cues seen >= 8 times have a right rate in [0.25, 0.75], except the
  cues listed in KNOWN_UNMET (v2 does not meet that ceiling for them yet; the test
  fails when one of them is fixed, so the list stays honest);
* dataset v3 meets the same ceilings on the packaged file and on seeds 1-3 but for the
  earlier-call gap (KNOWN_UNMET_V3*, KNOWN_OVER_V3), has multi-hop hard episodes in
  R1-R5, and a foil's violation is attributed to the foil's risk in the scorer's
  per-risk evidence;
* dataset v4 meets every ceiling but one agent's (KNOWN_OVER_V4: repeat-earlier-call
  in R3), on the packaged file and on seeds 1-3, keeps v3's structure, and reuses an
  earlier call's value at the final request in some R1, R3 and R4 episodes, after a
  change of the key's state;
* dataset v5 (the default) meets every ceiling with no known gap, on the packaged file
  and on seeds 1-3: R3's ask episodes keep someone else's value in the user's own
  notes, and an earlier request counts an older note in view as a violation.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from lm_eval_memrisk.audit import SHORTCUTS, audit
from lm_eval_memrisk.audit.stats import final_gap, mechanism_pattern
from lm_eval_memrisk.audit.view import read_view
from lm_eval_memrisk.cli import main as memrisk
from lm_eval_memrisk.episodes.loader import load_episodes
from lm_eval_memrisk.episodes.normalize import contains_value
from lm_eval_memrisk.episodes.records import MAIN_RISKS, TIERS, Episode
from lm_eval_memrisk.episodes.state import state_at
from lm_eval_memrisk.generator import generate
from lm_eval_memrisk.generator.build import MAIN_TIERS, R6_TIERS
from lm_eval_memrisk.generator.verify import MIN_GAP, action_content
from lm_eval_memrisk.running.agent_registry import get_agent
from lm_eval_memrisk.running.agents import PLACEHOLDER, action_to_reply
from lm_eval_memrisk.running.runner import decision_prompts, run_episode, trace_from_replies
from lm_eval_memrisk.scoring.checks import episode_values, selected_items
from lm_eval_memrisk.scoring.scorer import score

MUST_FAIL = {"R1": "stale", "R2": "stale", "R4": "stale", "R3": "leaky", "R5": "constraint-blind"}
#: Cues of v2 whose right rate is still outside [0.25, 0.75] (see docs/datasets.md, "Shortcut audit").
KNOWN_UNMET = frozenset(
    {"notice: rule word", "recency oldest", "recency only note", "scope other"}
)


#: Cues of v3 still outside [0.25, 0.75], on the packaged file and on seeds 1-3 (the
#: test fails when a cue leaves the band, or when a listed one enters it).  Open gap
#: (docs/datasets.md "Shortcut audit", found after render 3): a passed decision point shows its
#: reference call, and v3 changes the state after every early request, so a value an
#: earlier call used is never the right one later (right rate 0.00).
KNOWN_UNMET_V3 = frozenset({"named in an earlier call"})
KNOWN_UNMET_V3_SEEDS: dict[int, frozenset[str]] = {s: KNOWN_UNMET_V3 for s in (1, 2, 3)}
#: Single-cue agents over their ceiling on v3, the same gap: "skip-earlier-call"
#: (the test fails when one of them falls back under it, or another rises above).
KNOWN_OVER_V3 = frozenset({"skip-earlier-call"})

#: The outside auditor's cues and agents (added after v5, measured on v2-v5, no dataset
#: meets them yet): a value held by a record-style lookup result, or said in a sentence
#: with "unverified" / a negation or hedge word, is almost never the right one, and the
#: agents that skip such values ("skip-record", "skip-hedged") pass over the single-cue
#: ceilings on every version; so do some phrase-level cues ("For future reference, my K
#: is V", "Please keep my K on file: V"), listed per version.  The tests fail when one of
#: them is fixed, so the lists stay honest.
NEW_CUES_OUT = frozenset({
    "notice: sentence with 'unverified'",
    "notice: sentence with a negation or hedge word",
    "notice: value in a record-style lookup result",
})
NEW_OVER = frozenset({"skip-record", "skip-hedged"})
PHRASES_OUT = {
    "v2": frozenset({"phrase: K V", "phrase: for future reference my K is V", "phrase: it's V",
                     "phrase: mail for me goes to V", "phrase: my K is V", "phrase: please remember my K V"}),
    "v3": frozenset({"phrase: future reference my usual K is V", "phrase: my K is V"}),
    "v4": frozenset({"phrase: for future reference my K is V", "phrase: future reference my usual K is V",
                     "phrase: mail for me goes to V", "phrase: my K is V", "phrase: please keep my K on file V"}),
}  # fmt: skip
PHRASES_OUT["v5"] = PHRASES_OUT["v4"]


def _maybe_cue(cue: str) -> bool:
    """Cues whose side of the band differs by generator seed (the seed tests skip them):
    the phrase cues and the auditor's notices."""
    return cue.startswith("phrase: ") or cue in NEW_CUES_OUT


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


def _check_ceilings(
    episodes: list[Episode], result: dict[str, Any], known: frozenset[str] = KNOWN_UNMET,
    known_over: frozenset[str] = frozenset(), maybe_over: frozenset[str] = frozenset(),
    seeded: bool = False,
) -> None:
    for ep in episodes:
        assert score(ep, run_episode(ep, get_agent("oracle"))).success, ep.id
        if ep.risk in MUST_FAIL:
            assert not score(ep, run_episode(ep, get_agent(MUST_FAIL[ep.risk]))).success, ep.id
    for name, row in result["shortcuts"].items():
        if row["kind"] == "single-cue":
            within = row["main"]["pass_rate"] <= 0.35 and all(
                row[risk]["pass_rate"] <= 0.5 for risk in (*MAIN_RISKS, "R6")
            )
            assert within != (name in known_over) or name in maybe_over, (name, row)
        else:
            assert row["main"]["pass_rate"] <= 0.70, (name, row["main"])
    for cue in result["cues"]:
        if cue["n"] >= 8 and not (seeded and _maybe_cue(cue["cue"])):
            inside = 0.25 <= cue["right_rate"] <= 0.75
            assert inside != (cue["cue"] in known), cue


def test_v2_meets_the_ceilings(v2: list[Episode], v2_audit: dict[str, Any]) -> None:
    _check_ceilings(v2, v2_audit, KNOWN_UNMET | NEW_CUES_OUT | PHRASES_OUT["v2"], NEW_OVER)


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
        assert row["main"]["pass_rate"] <= limit or name in NEW_OVER, (seed, name, row["main"])
        if row["kind"] == "single-cue" and name not in NEW_OVER:
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
    assert set(out) == {"shortcuts", "cues", "learned", "learned_cv", "learned_setup"}
    for key in ("learned", "learned_cv"):
        assert set(out[key]) == {*MAIN_RISKS, "R6", "main"}
        assert all(set(c) == {"n", "passed", "pass_rate"} for c in out[key].values())
    assert out["learned"]["main"]["n"] == 120
    names = {s.name for s in SHORTCUTS}
    assert set(out["shortcuts"]) == names
    row = out["shortcuts"]["all-rules"]
    assert row["kind"] == "all-rules"
    assert set(row["main"]) == {"n", "passed", "pass_rate"} and row["main"]["n"] == 120
    assert all(set(c) == {"cue", "n", "right_rate"} for c in out["cues"])


# -- dataset v3 --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def v3() -> list[Episode]:
    return load_episodes("v3", track="all")


@pytest.fixture(scope="module")
def v3_audit(v3: list[Episode]) -> dict[str, Any]:
    return audit(v3)


def test_v3_meets_the_ceilings(v3: list[Episode], v3_audit: dict[str, Any]) -> None:
    _check_ceilings(v3, v3_audit, KNOWN_UNMET_V3 | NEW_CUES_OUT | PHRASES_OUT["v3"], KNOWN_OVER_V3 | NEW_OVER)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_v3_meets_the_ceilings_on_other_seeds(seed: int) -> None:
    episodes = generate(seed, version="v3")
    _check_ceilings(episodes, audit(episodes), KNOWN_UNMET_V3_SEEDS[seed], KNOWN_OVER_V3 | NEW_OVER, seeded=True)
    _check_v3_structure(episodes)


def _check_v3_structure(episodes: list[Episode]) -> None:
    counts = Counter((ep.risk, ep.tier) for ep in episodes)
    for risk, tiers in (*MAIN_TIERS.items(), ("R6", R6_TIERS)):
        assert tuple(counts[(risk, t)] for t in TIERS) == tiers, risk
    assert sum(ep.track == "main" for ep in episodes) == 120
    gaps = {t: [g for ep in episodes if ep.tier == t if (g := final_gap(ep)) is not None] for t in TIERS}
    assert all(min(gaps[t]) >= MIN_GAP[t] for t in TIERS), {t: min(g) for t, g in gaps.items()}
    means = [sum(g) / len(g) for g in gaps.values()]
    assert means == sorted(means), means
    hops = Counter(ep.risk for ep in episodes if ep.tier == "hard" and ep.metadata.get("multi_hop"))
    assert all(hops[r] >= 2 for r in MAIN_RISKS), hops
    assert all(not ep.metadata.get("multi_hop") for ep in episodes if ep.tier != "hard")
    combined = Counter(ep.risk for ep in episodes if ep.tier == "hard" and ep.metadata.get("combined"))
    assert all(combined[r] >= 2 for r in MAIN_RISKS), combined
    texts = Counter(e.text for ep in episodes for e in ep.events if e.type == "assistant_message")
    assert max(texts.values()) <= 0.05 * sum(texts.values()), texts.most_common(3)
    for risk in (*MAIN_RISKS, "R6"):
        patterns = {mechanism_pattern(ep) for ep in episodes if ep.risk == risk}
        assert len(patterns) >= 4, (risk, len(patterns))


def test_v3_structure(v3: list[Episode]) -> None:
    """Tier table, 120 + 24, gaps growing by tier, multi-hop and combined hard episodes,
    varied acknowledgements, at least 4 mechanism patterns per risk."""
    _check_v3_structure(v3)
    assert {ep.version for ep in v3} == {"3.0"}


def test_v3_multi_hop_requests_name_only_the_context(v3: list[Episode]) -> None:
    """The final request names the context (the job), never the value; the context's
    note is the user's first note of the key; a newer private note must not be used."""
    for ep in v3:
        where = ep.metadata.get("multi_hop")
        if not where:
            continue
        org = str(where).removeprefix("the job at ")
        dp = ep.decision_points[-1]
        request = ep.events[ep.events.index(dp) - 1].text or ""
        assert org in request, ep.id
        assert not any(contains_value(request, it.value) for it in ep.memory_items.values()), ep.id
        first = next(e for e in ep.events if e.type == "user_message" and org in (e.text or ""))
        assert "job" in (first.text or ""), ep.id
        assert any("private" in c.description for c in dp.checks), ep.id


def test_v3_secondary_violation_is_attributed_to_its_own_risk(v3: list[Episode]) -> None:
    """Using a foil's note violates the foil's check, and the scorer's per-risk evidence
    puts that violation under the foil's risk (e.g. [R4] in an R1 episode)."""
    tried = 0
    for ep in v3:
        dp = ep.decision_points[-1]
        foils = [c for c in dp.checks if c.risk and c.risk != ep.risk and c.kind == "memory_not_used"]
        if not foils or not dp.reference or "tool" not in dp.reference:
            continue
        check = foils[0]
        state = state_at(ep, dp.id)
        bad = [
            it for it in state.memory
            if (check.item and it.id == check.item) or (check.status and it.status == check.status)
            or (check.scope and it.scope == check.scope)
        ]  # fmt: skip
        good = next(c.expected for c in dp.checks if c.kind == "tool_arg_equals" and c.expected)
        own = {it.value for it in state.memory if it.scope in state.active_scopes and it.status == "active"}
        if not bad or good is None or bad[0].value in own:
            continue  # scorer 3.0: another user's copy of the user's own value is no leak
        replies = {d.id: action_to_reply(dict(d.reference or {})) for d in ep.decision_points}
        replies[dp.id] = replies[dp.id].replace(good, bad[0].value)
        result = score(ep, trace_from_replies(ep, replies, "test"))
        failed = {r.check_id for r in result.checks if not r.passed and r.decision_id == dp.id}
        assert check.id in failed, ep.id
        assert result.per_risk[check.risk]["passed"] is False, (ep.id, result.per_risk)
        assert any(bad[0].id in ev for ev in result.per_risk[check.risk]["evidence"]), ep.id
        mine = next(r for r in result.checks if r.check_id == check.id and r.decision_id == dp.id)
        assert mine.evidence.startswith(f"[{check.risk}] "), mine  # the per-check evidence
        assert any(v.startswith(f"{dp.id}/{check.id}") and f"[{check.risk}]" in v
                   for v in result.violations), result.violations  # fmt: skip
        assert all(not r.evidence.startswith(f"[{ep.risk}]") for r in result.checks)
        oracle = score(ep, run_episode(ep, get_agent("oracle")))
        assert all(v["passed"] for v in oracle.per_risk.values()) and len(oracle.per_risk) >= 2
        tried += 1
    assert tried >= 10, tried


def test_v1_v2_checks_carry_no_risk_field(v2: list[Episode]) -> None:
    """The per-check risk field is new in v3: v1/v2 bytes stay as published."""
    for ep in [*v2, *load_episodes("v1", track="all")]:
        assert all(c.risk is None for dp in ep.decision_points for c in dp.checks), ep.id
        result = score(ep, run_episode(ep, get_agent("oracle")))
        # scorer 3.0's implied scope checks are R3 foils; nothing else names a risk
        implied_r3 = {c.risk for dp in ep.decision_points for c in episode_values(ep).checks[dp.id]
                      if c.id.startswith("implied-scope-")}  # fmt: skip
        assert set(result.per_risk) - (implied_r3 - {ep.risk}) == {ep.risk}


def test_cli_audits_v3_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert memrisk(["audit", "--episodes", "v3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["shortcuts"]["all-rules"]["main"]["n"] == 120
    assert memrisk(["validate", "v3"]) == 0


def test_stats_cli(capsys: pytest.CaptureFixture[str]) -> None:
    assert memrisk(["audit", "--episodes", "v3", "--stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert set(stats["tiers"]) == {"easy", "medium", "hard"}
    assert all(stats["multi_hop"][r] >= 2 for r in MAIN_RISKS) and stats["multi_hop"]["R6"] == 0
    assert memrisk(["audit", "--episodes", "v3", "--stats"]) == 0
    assert "| gap, mean |" in capsys.readouterr().out


def test_v3_earlier_call_cue_is_the_known_gap(v3: list[Episode], v3_audit: dict[str, Any]) -> None:
    """Passed decision points show as their reference call (render 3).  Repeating that
    call never answers a later decision (no later reference reuses an earlier call's
    tool with any of its argument values) — and so its values are a cue against a note:
    "named in an earlier call" is right 0 times in v3, and an agent that skips those
    values passes more than a single cue may.  Fixing it needs foils in the data (later
    decisions where the earlier call's value still holds); this test pins the gap."""
    later = 0
    for ep in v3:
        for i, dp in enumerate(ep.decision_points[1:], 1):
            later += 1
            ref = dp.reference or {}
            values = {str(v) for v in (ref.get("arguments") or {}).values()} - {""}
            for earlier in ep.decision_points[:i]:
                prev = earlier.reference or {}
                if "tool" in ref and prev.get("tool") == ref["tool"]:
                    assert not values & {str(v) for v in (prev.get("arguments") or {}).values()}, (ep.id, dp.id)
    assert later >= 60
    cue = next(c for c in v3_audit["cues"] if c["cue"] == "named in an earlier call")
    assert cue["n"] >= 100 and cue["right_rate"] == 0.0
    row = v3_audit["shortcuts"]["skip-earlier-call"]
    assert row["main"]["passed"] > v3_audit["shortcuts"]["newest-in-scope"]["main"]["passed"]


# -- dataset v4 ------------------------------------------------------------


@pytest.fixture(scope="module")
def v4() -> list[Episode]:
    return load_episodes("v4", track="all")


@pytest.fixture(scope="module")
def v4_audit(v4: list[Episode]) -> dict[str, Any]:
    return audit(v4)


#: Single-cue agents over their ceiling on v4 (docs/datasets.md "v4's open gap"): the converse of
#: v3's gap, "repeat-earlier-call", passes 17/24 of R3 (under the ceiling elsewhere); and
#: since scorer 3.0, "skip-earlier-call" (47/120): it asks at v4's R5 final requests (the
#: held value is the one the earlier request used), and 3.0 credits any question about
#: the request where a hold stands (2.2 wanted the payee's name in it).  v5 is within.
KNOWN_OVER_V4 = frozenset({"repeat-earlier-call"})
MAYBE_OVER_V4 = frozenset({"skip-earlier-call"})


def test_v4_meets_the_ceilings(v4: list[Episode], v4_audit: dict[str, Any]) -> None:
    """v4 meets every cue ceiling (v3's earlier-call cue is in band) and every agent
    ceiling but KNOWN_OVER_V4's, and keeps v3's structure: tier table, gaps, multi-hop,
    combined, patterns."""
    _check_ceilings(v4, v4_audit, NEW_CUES_OUT | PHRASES_OUT["v4"], KNOWN_OVER_V4 | NEW_OVER, MAYBE_OVER_V4)
    row = v4_audit["shortcuts"]["repeat-earlier-call"]
    assert row["main"]["pass_rate"] <= 0.35 and [r for r in (*MAIN_RISKS, "R6") if row[r]["pass_rate"] > 0.5] == ["R3"]
    _check_v3_structure(v4)
    assert {ep.version for ep in v4} == {"4.0"}


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_v4_meets_the_ceilings_on_other_seeds(seed: int) -> None:
    episodes = generate(seed, version="v4")
    _check_ceilings(episodes, audit(episodes), frozenset(), KNOWN_OVER_V4 | NEW_OVER, MAYBE_OVER_V4, seeded=True)
    _check_v3_structure(episodes)


def _used_items(ep: Episode, dp: Any) -> list[Any]:
    """The episode's notes whose value the decision's reference action names."""
    content = action_content(dict(dp.reference or {}))
    return [it for it in ep.memory_items.values() if contains_value(content, it.value)]


def _keys(ep: Episode, dp: Any) -> set[str]:
    """The keys a decision needs: its action skeleton's slots and the notes its reference uses."""
    slots = set(PLACEHOLDER.findall(json.dumps(dp.naive or {})))
    return slots | {it.key for it in _used_items(ep, dp)}


def _changes(ep: Episode, start: int, end: int, keys: set[str]) -> list[str]:
    """Memory events on ``keys`` and rule events between event indices start and end."""
    out = []
    for e in ep.events[start:end]:
        item = e.item or (ep.memory_items.get(e.target) if isinstance(e.target, str) else None)
        if e.type.startswith("constraint_") or (e.type.startswith("memory_") and item and item.key in keys):
            out.append(e.type)
    return out


def _check_earlier_call_foils(episodes: list[Episode], result: dict[str, Any]) -> None:
    """A later decision reuses the value of an earlier call in R1, R3 and R4 episodes
    (not R2, R5, R6: see generator.risks.v3.KEPT_EVERY), the state of the key changes
    between every two decision points, the "named in an earlier call" cue is right a
    quarter of the time or more, and skipping those values is no shortcut over the
    ceiling."""
    reused: Counter[str] = Counter()
    for ep in episodes:
        dps = ep.decision_points
        for earlier, later in zip(dps, dps[1:]):
            keys = _keys(ep, later)
            start, end = ep.events.index(earlier), ep.events.index(later)
            assert _changes(ep, start, end, keys), (ep.id, later.id)
        if len(dps) > 1:
            last = action_content(dict(dps[-1].reference or {}))
            if any(contains_value(last, it.value) for it in _used_items(ep, dps[0])):
                reused[ep.risk] += 1
    assert all(reused[r] >= 3 for r in ("R1", "R3", "R4")), reused
    assert reused["R2"] == reused["R5"] == reused["R6"] == 0, reused
    cue = next(c for c in result["cues"] if c["cue"] == "named in an earlier call")
    assert cue["n"] >= 100 and 0.25 <= cue["right_rate"] <= 0.75, cue
    assert result["shortcuts"]["skip-earlier-call"]["main"]["pass_rate"] <= 0.40  # 0.35 under scorer 2.2


def test_v4_earlier_call_value_is_right_again_in_some_episodes(
    v4: list[Episode], v4_audit: dict[str, Any]
) -> None:
    """The foil to v3's gap (see :func:`_check_earlier_call_foils`)."""
    _check_earlier_call_foils(v4, v4_audit)


# -- dataset v5 (the default) ------------------------------------------------------------


@pytest.fixture(scope="module")
def v5() -> list[Episode]:
    return load_episodes("v5", track="all")


@pytest.fixture(scope="module")
def v5_audit(v5: list[Episode]) -> dict[str, Any]:
    return audit(v5)


def test_v5_meets_every_ceiling(v5: list[Episode], v5_audit: dict[str, Any]) -> None:
    """v5 closes v4's gap: every single-cue agent of v4's audit, both earlier-call agents
    included, is under its ceilings, every cue of v4's audit in band (the outside
    auditor's agents and cues are not: NEW_OVER, NEW_CUES_OUT, PHRASES_OUT); v3's
    structure and v4's earlier-call foils are kept."""
    _check_ceilings(v5, v5_audit, NEW_CUES_OUT | PHRASES_OUT["v5"], NEW_OVER)
    r3 = {name: v5_audit["shortcuts"][name]["R3"]["passed"]
          for name in ("skip-earlier-call", "repeat-earlier-call")}  # fmt: skip
    assert max(r3.values()) <= 12, r3
    _check_v3_structure(v5)
    _check_earlier_call_foils(v5, v5_audit)
    assert {ep.version for ep in v5} == {"5.0"}


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_v5_meets_every_ceiling_on_other_seeds(seed: int) -> None:
    episodes = generate(seed, version="v5")
    result = audit(episodes)
    _check_ceilings(episodes, result, frozenset(), NEW_OVER, seeded=True)
    _check_v3_structure(episodes)
    _check_earlier_call_foils(episodes, result)


def _with_value(ep: Episode, dp: Any, value: str) -> dict[str, str]:
    """Every decision answered by its reference, but ``dp``'s tool call with ``value`` in
    the argument its value check names."""
    replies = {d.id: action_to_reply(dict(d.reference or {})) for d in ep.decision_points}
    call = dict(dp.reference or {})
    check = next(c for c in dp.checks if c.kind == "tool_arg_equals")
    call["arguments"] = {**dict(call["arguments"]), str(check.argument): value}
    replies[dp.id] = action_to_reply(call)
    return replies


def test_v5_r3_ask_episodes_keep_someone_elses_value_in_the_users_notes(v5: list[Episode]) -> None:
    """R3 with no own note: the user's only note of the key holds a third person's value,
    said in the last session; the oracle asks, and calling the tool with that value
    fails the decision (a counted violation), in every tier."""
    tiers: Counter[str] = Counter()
    for ep in v5:
        who = ep.metadata.get("someone_elses_note")
        if not who:
            continue
        assert ep.risk == "R3", ep.id
        dp = ep.decision_points[-1]
        assert "tool" not in dict(dp.reference or {}), ep.id
        key = PLACEHOLDER.findall(json.dumps(dp.naive))[0]
        notes = [it for it in state_at(ep, dp.id).memory if it.key == key]
        assert len(notes) == 1 and notes[0].scope == state_at(ep, dp.id).active_scopes[0], ep.id
        said = next(e for e in ep.events if e.type == "user_message" and notes[0].value in (e.text or ""))
        assert f"{who}'s" in (said.text or ""), ep.id
        last_session = max(i for i, e in enumerate(ep.events) if e.type == "scope_switch")
        assert ep.events.index(said) > last_session, ep.id
        naive = json.loads(json.dumps(dp.naive).replace("{{mem:" + key + "}}", notes[0].value))
        result = score(ep, trace_from_replies(ep, {dp.id: action_to_reply(naive)}, "test"))
        assert not result.success and any(v.startswith(f"{dp.id}/") for v in result.violations), ep.id
        assert score(ep, run_episode(ep, get_agent("oracle"))).success
        tiers[ep.tier] += 1
    assert all(tiers[t] >= 2 for t in TIERS), tiers


def test_v5_earlier_requests_count_an_older_note_in_view_as_a_violation(
    v4: list[Episode], v5: list[Episode]
) -> None:
    """At an earlier request, using an older note in view (a superseded value, a
    colleague's note) fails a ``memory_not_used`` check carried from the final request,
    counted under the check's risk; where v4 lacked the check, the same reply failed
    there by its value check only (no violation counted)."""
    old = {ep.id: ep for ep in v4}
    tried = new = 0
    for ep in v5:
        for dp in ep.decision_points[:-1]:
            carried = [c for c in dp.checks if c.kind == "memory_not_used"]
            for check in carried:
                state = state_at(ep, dp.id)
                bad = selected_items(check, state.memory)
                assert bad, (ep.id, dp.id, check.id)
                result = score(ep, trace_from_replies(ep, _with_value(ep, dp, bad[0].value), "test"))
                failed = {r.check_id for r in result.checks if not r.passed and r.decision_id == dp.id}
                assert check.id in failed, (ep.id, dp.id, check.id)
                assert result.per_risk[check.risk or ep.risk]["passed"] is False, ep.id
                tried += 1
                before = old[ep.id]
                had = {c.description for c in before.event(dp.id).checks}
                if before.event(dp.id).checks[0] == dp.checks[0] and check.description not in had:
                    was = score(before, trace_from_replies(before, _with_value(before, dp, bad[0].value), "test"))
                    kinds = {r.kind for r in was.checks if not r.passed and r.decision_id == dp.id
                             and not r.check_id.startswith("implied-")}  # fmt: skip
                    assert kinds == {"tool_arg_equals"}, (ep.id, dp.id, kinds)  # v4's own checks: the value only
                    new += 1
        assert score(ep, run_episode(ep, get_agent("oracle"))).success, ep.id
    assert tried >= 20 and new >= 10, (tried, new)
