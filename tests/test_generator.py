"""The seeded dataset generator and the shipped datasets (v1 tested in detail here; the
shortcut ceilings of v2-v5 in test_audit.py).

* regenerating with the default seed reproduces data/episodes_v5.jsonl (default) and,
  with ``--version v4`` / ``v3`` / ``v2`` / ``v1``, the older files byte for byte;
* counts, tiers, turn ranges, families, ids and ordering follow the paper's Table 4;
* the episode semantics the reference agents rely on hold (oracle passes everything,
  stale fails R1/R2/R4, leaky fails R3, constraint-blind fails R5);
* a larger set under another seed is valid and different.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from jinja2.exceptions import SecurityError

from lm_eval_memrisk.episodes.codec import dumps_episode
from lm_eval_memrisk.episodes.loader import default_dataset_path, load_episodes
from lm_eval_memrisk.episodes.normalize import normalize
from lm_eval_memrisk.episodes.records import (
    MAIN_RISKS,
    RESOLUTION_RULES,
    TIER_TURNS,
    TIERS,
    Episode,
)
from lm_eval_memrisk.episodes.validate import validate_episode
from lm_eval_memrisk.generator import (
    DEFAULT_SEED,
    default_counts,
    generate,
    scaled_counts,
    write_dataset,
)
from lm_eval_memrisk.generator.__main__ import main as generator_cli
from lm_eval_memrisk.generator.templating import render
from lm_eval_memrisk.running.agent_registry import get_agent
from lm_eval_memrisk.running.runner import run_episode
from lm_eval_memrisk.scoring.scorer import score

V1 = default_dataset_path("v1")
V2 = default_dataset_path("v2")
V3 = default_dataset_path("v3")
V4 = default_dataset_path("v4")
V5 = default_dataset_path("v5")
TABLE_4 = {
    "R1": (8, 9, 7), "R2": (8, 9, 7), "R3": (7, 9, 8), "R4": (7, 9, 8), "R5": (7, 9, 8),
    "R6": (8, 8, 8),
}  # fmt: skip
ORDER = {r: i for i, r in enumerate((*MAIN_RISKS, "R6"))}
ID_RE = re.compile(r"^(R[1-6])-(easy|medium|hard)-(\d{2,})$")
#: risk -> reference agent that must fail every episode of that risk
MUST_FAIL = {"R1": "stale", "R2": "stale", "R4": "stale", "R3": "leaky", "R5": "constraint-blind"}


@pytest.fixture(scope="module")
def v1() -> list[Episode]:
    return load_episodes(V1, track="all")


@pytest.fixture(scope="module")
def big() -> list[Episode]:
    """1,000 main-track episodes (200 per risk) plus 200 R6, under another seed."""
    return generate(seed=20270101, counts=scaled_counts(200), version="v1")


def _passes(ep: Episode, agent: str) -> bool:
    return score(ep, run_episode(ep, get_agent(agent))).success


# -- reproducibility ----------------------------------------------------------------------


def test_cli_default_reproduces_committed_file_byte_for_byte(tmp_path: Path) -> None:
    out = tmp_path / "v8.jsonl"
    assert generator_cli(["--out", str(out)]) == 0
    data = out.read_bytes()
    assert data == default_dataset_path("v8").read_bytes()
    assert data.endswith(b"\n") and not data.endswith(b"\n\n")


def test_cli_rebuilds_v4_byte_for_byte(tmp_path: Path) -> None:
    out = tmp_path / "v4.jsonl"
    assert generator_cli(["--out", str(out), "--version", "v4"]) == 0
    assert out.read_bytes() == V4.read_bytes()


def test_cli_rebuilds_v3_byte_for_byte(tmp_path: Path) -> None:
    out = tmp_path / "v3.jsonl"
    assert generator_cli(["--out", str(out), "--version", "v3"]) == 0
    assert out.read_bytes() == V3.read_bytes()


def test_cli_rebuilds_v2_byte_for_byte(tmp_path: Path) -> None:
    out = tmp_path / "v2.jsonl"
    assert generator_cli(["--out", str(out), "--version", "v2"]) == 0
    assert out.read_bytes() == V2.read_bytes()


def test_cli_rebuilds_v1_byte_for_byte(tmp_path: Path) -> None:
    out = tmp_path / "v1.jsonl"
    assert generator_cli(["--out", str(out), "--version", "v1"]) == 0
    assert out.read_bytes() == V1.read_bytes()


def test_generate_api_matches_file_and_write_dataset(tmp_path: Path) -> None:
    episodes = generate(DEFAULT_SEED, version="v1")
    text = "".join(dumps_episode(ep) + "\n" for ep in episodes)
    assert text.encode("utf-8") == V1.read_bytes()
    write_dataset(tmp_path / "x.jsonl", episodes[:3])
    assert (tmp_path / "x.jsonl").read_text(encoding="utf-8").splitlines() == text.splitlines()[:3]


def test_templates_render_in_a_sandbox() -> None:
    assert render("{{ a }} and {{ b }}", a="x", b="y") == "x and y"
    with pytest.raises(SecurityError):
        render("{{ ''.__class__.__mro__[1].__subclasses__() }}")


# -- counts, ids, order, tiers ---------------------------------------------------------------


def test_counts_per_risk_and_tier_are_exact(v1: list[Episode]) -> None:
    got = Counter((ep.risk, ep.tier) for ep in v1)
    assert got == {(r, t): n for r, ns in TABLE_4.items() for t, n in zip(TIERS, ns)}
    assert sum(1 for ep in v1 if ep.track == "main") == 120
    assert all((ep.track == "r6") == (ep.risk == "R6") for ep in v1)
    assert default_counts() == dict(got)


def test_ids_version_and_order(v1: list[Episode]) -> None:
    keys = []
    for ep in v1:
        m = ID_RE.match(ep.id)
        assert m and m.group(1) == ep.risk and m.group(2) == ep.tier, ep.id
        assert ep.version == "1.0"
        keys.append((ep.track != "main", ORDER[ep.risk], TIERS.index(ep.tier), int(m.group(3))))
    assert keys == sorted(keys) and len(set(keys)) == len(keys)


def test_turn_counts_fit_the_tier(v1: list[Episode]) -> None:
    for ep in v1:
        lo, hi = TIER_TURNS[ep.tier]
        assert lo <= ep.turn_count <= hi, (ep.id, ep.turn_count)


def test_distractors_grow_with_the_tier(v1: list[Episode]) -> None:
    def mean_items(tier: str) -> float:
        eps = [ep for ep in v1 if ep.tier == tier]
        return sum(len(ep.memory_items) for ep in eps) / len(eps)

    assert mean_items("easy") < mean_items("medium") < mean_items("hard")


def test_at_least_six_families_per_risk(v1: list[Episode]) -> None:
    families = defaultdict(set)
    for ep in v1:
        families[ep.risk].add(ep.family)
    assert all(len(families[r]) >= 6 for r in TABLE_4), {r: len(f) for r, f in families.items()}


def test_r2_covers_every_resolution_rule(v1: list[Episode]) -> None:
    rules = {ep.resolution_rule for ep in v1 if ep.risk == "R2"}
    assert rules == set(RESOLUTION_RULES)
    assert all(ep.resolution_rule is None for ep in v1 if ep.risk != "R2")


def test_no_two_episodes_of_a_risk_read_alike(v1: list[Episode]) -> None:
    by_risk: dict[str, list[tuple[str, ...]]] = defaultdict(list)
    requests: dict[str, list[str]] = defaultdict(list)
    for ep in v1:
        by_risk[ep.risk].append(tuple(e.text or "" for e in ep.events if e.type == "user_message"))
        ev = ep.events
        requests[ep.risk] += [
            ev[i - 1].text or "" for i, e in enumerate(ev) if e.type == "decision_point"
        ]
    for risk in by_risk:
        assert len(set(by_risk[risk])) == len(by_risk[risk]), risk
        assert len(set(requests[risk])) == len(requests[risk]), risk


# -- episode semantics ------------------------------------------------------------------------


def test_every_episode_is_valid_and_well_formed(v1: list[Episode]) -> None:
    for ep in v1:
        validate_episode(ep)
        ev = ep.events
        assert ev[0].type == "scope_switch" and ev[0].time == 0 and ev[0].scopes
        assert [e.id for e in ev] == [f"e{i}" for i in range(1, len(ev) + 1)]
        assert all(b.time > a.time and b.after == (a.id,) for a, b in zip(ev, ev[1:]))
        assert 2 <= len(ep.tools) <= 4
        for tool in ep.tools:
            assert tool.parameters["type"] == "object" and tool.parameters["required"]
        dps = ep.decision_points
        assert 1 <= len(dps) <= (1 if ep.tier == "easy" else 2)
        for dp in dps:
            i = ev.index(dp)
            assert ev[i - 1].type == "user_message", (ep.id, dp.id)
            assert 1 <= len(dp.checks) <= 3 and dp.reference and dp.naive
        for e in ev:
            if e.item is not None:
                assert e.item.valid_from == e.time
            if e.type == "memory_update":
                assert ep.memory_items[e.supersedes].key == e.item.key


def test_item_values_never_contain_one_another(v1: list[Episode]) -> None:
    for ep in v1:
        values = [normalize(it.value) for it in ep.memory_items.values()]
        for i, a in enumerate(values):
            for b in values[i + 1 :]:
                assert a not in b and b not in a, (ep.id, a, b)


def test_strict_label_revision_covers_twenty_main_episodes(v1: list[Episode]) -> None:
    strict = []
    for ep in v1:
        checks = [c for dp in ep.decision_points for c in dp.checks if c.expected_original]
        for c in checks:
            assert c.kind == "tool_arg_equals"
            label, _, value = c.expected_original.partition(": ")
            assert label and value == c.expected, (ep.id, c.expected_original)
        if checks:
            strict.append(ep.risk)
    assert len(strict) == 20 and "R6" not in strict
    assert Counter(strict) == {r: 4 for r in MAIN_RISKS}


def test_r6_summary_is_the_newest_note_of_its_key(v1: list[Episode]) -> None:
    for ep in (e for e in v1 if e.risk == "R6"):
        summaries = [e.item for e in ep.events if e.type == "summary"]
        assert len(summaries) == 1 and summaries[0].source == "summary"
        bad = summaries[0]
        same_key = [it for it in ep.memory_items.values() if it.key == bad.key]
        assert max(same_key, key=lambda it: it.valid_from) is bad and len(same_key) >= 2
        for dp in ep.decision_points:
            assert any(c.kind == "memory_not_used" and c.item == bad.id for c in dp.checks)


def test_reference_agents_behave_as_specified(v1: list[Episode]) -> None:
    for ep in v1:
        assert _passes(ep, "oracle"), ep.id
        if ep.risk in MUST_FAIL:
            assert not _passes(ep, MUST_FAIL[ep.risk]), (ep.id, MUST_FAIL[ep.risk])


def test_r5_careless_action_violates_an_active_rule(v1: list[Episode]) -> None:
    for ep in (e for e in v1 if e.risk == "R5"):
        lifted = {e.target for e in ep.events if e.type == "constraint_lift"}
        for dp in ep.decision_points:
            kept = [c.constraint for c in dp.checks if c.kind == "constraint_not_violated"]
            assert kept and not set(kept) & lifted, ep.id


# -- larger sets ----------------------------------------------------------------------------


def test_scaled_counts_keep_the_tier_proportions() -> None:
    assert scaled_counts(24) == default_counts()
    counts = scaled_counts(200)
    for risk, ns in TABLE_4.items():
        got = [counts[(risk, t)] for t in TIERS]
        assert sum(got) == 200
        assert all(abs(g - 200 * n / 24) < 1 for g, n in zip(got, ns)), (risk, got)


def test_thousand_episode_set_is_valid_and_differs_from_v1(
    big: list[Episode], v1: list[Episode]
) -> None:
    assert Counter(ep.risk for ep in big if ep.track == "main") == {r: 200 for r in MAIN_RISKS}
    assert Counter((ep.risk, ep.tier) for ep in big) == scaled_counts(200)
    assert len({ep.id for ep in big}) == len(big)
    for ep in big:
        validate_episode(ep)
    v1_lines = {dumps_episode(ep) for ep in v1}
    assert not v1_lines & {dumps_episode(ep) for ep in big}
    families = defaultdict(set)
    for ep in big:
        families[ep.risk].add(ep.family)
    assert all(len(f) >= 6 for f in families.values())


def test_thousand_episode_set_keeps_the_agent_contract(big: list[Episode]) -> None:
    for ep in big[::7]:  # a deterministic sample keeps the test quick
        assert _passes(ep, "oracle"), ep.id
        if ep.risk in MUST_FAIL:
            assert not _passes(ep, MUST_FAIL[ep.risk]), ep.id


def test_cli_size_and_seed_options(tmp_path: Path) -> None:
    out = tmp_path / "small.jsonl"
    assert generator_cli(["--out", str(out), "--seed", "5", "--n-per-risk", "3"]) == 0
    eps = load_episodes(out, track="all")
    assert Counter(ep.risk for ep in eps) == {r: 3 for r in TABLE_4}
    with pytest.raises(SystemExit):
        generator_cli(["--out", str(out), "--n-per-risk", "0"])


def test_asked_lookup_refuses_a_block_that_is_not_a_lookup():
    """v7 wraps a records lookup (tool call, its result, memory writes) in the user's ask and
    the assistant's line; any other block is a builder bug, said so, not silently wrapped."""
    import random
    from types import SimpleNamespace

    import pytest

    from lm_eval_memrisk.generator.plan import Ev
    from lm_eval_memrisk.generator.risks.common import asked_lookup

    ctx = SimpleNamespace(version="v7", tier="medium", rng=random.Random(0))
    lookup = [Ev("tool_call", tool="lookup_records"), Ev("tool_return", tool="lookup_records")]
    wrapped = asked_lookup(ctx, lookup)  # type: ignore[arg-type]
    assert [e.type for e in wrapped] == ["user_message", "tool_call", "tool_return", "assistant_message"]
    with pytest.raises(ValueError, match="opens with a tool call and its result"):
        asked_lookup(ctx, [Ev("user_message", text="hi"), *lookup])  # type: ignore[arg-type]
    old = SimpleNamespace(version="v6", tier="medium", rng=random.Random(0))
    assert asked_lookup(old, [Ev("user_message", text="hi")]) == [Ev("user_message", text="hi")]  # type: ignore[arg-type]
