"""Margin feedback: the change a mutation makes, the margin energy schedule, recorded
margins, determinism and the tuning/report seed split (no model)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from script_loading import load_script
from test_fuzz_episodes import all_seed_episodes

from lm_eval_memrisk.cli import main
from lm_eval_memrisk.episodes.codec import dumps_episode
from lm_eval_memrisk.fuzz.guidance import (
    MARGIN_ONLY_SCHEDULE,
    MARGIN_SCHEDULE,
    MARGIN_WEIGHT,
    Entry,
    MarginGuided,
    MarginOnly,
    MarginSchedule,
    make_strategy,
)
from lm_eval_memrisk.fuzz.margins import MarginChange, Margins, margin_change
from lm_eval_memrisk.fuzz.seeds import make_seeds


def entries() -> list[Entry]:
    seeds, _ = make_seeds(all_seed_episodes())
    return [Entry(episode=s.episode, exp=s.exp) for s in seeds]


def child_of(parent: Entry, op: str = "paraphrase") -> Entry:
    return Entry(episode=parent.episode, exp=parent.exp, chain=({"op": op, "params": {}},))


def shrunk(by: float, after: float = 0.5) -> MarginChange:
    return MarginChange(before=after + by, after=after, shrink=by, cause="deep-chain", fired=False)


def test_margin_change_takes_the_largest_drop_of_one_cause() -> None:
    parent = Margins((("gap10", 0.3), ("churn3", 0.5), ("deep-chain", 0.75)))
    child = Margins((("gap10", 0.4), ("churn3", 0.25), ("deep-chain", 0.5)))
    change = margin_change(parent, child)
    # the decision margin grew (0.3 -> 0.25 is the min: it fell), and both drops are 0.25:
    # the tie goes to the first cause in the parts' order
    assert (change.before, change.after, change.shrink, change.cause) == (0.3, 0.25, 0.25, "churn3")
    assert not change.fired
    still = margin_change(parent, parent)
    assert still.shrink == 0.0 and still.cause is None
    fired = margin_change(parent, Margins((("gap10", 0.0), ("churn3", 0.5), ("deep-chain", 0.75))))
    assert fired.fired and fired.shrink == pytest.approx(0.3) and fired.after == 0.0


def test_a_cause_the_parent_lacks_counts_from_the_parents_decision_margin() -> None:
    """A value decision turned into a question (``dp1:superseded`` gives way to
    ``dp1:tool-call``): the new cause is a shrink only below the parent's margin."""
    parent = Margins((("dp1:superseded", 0.6),))
    farther = margin_change(parent, Margins((("dp1:tool-call", 0.8),)))
    assert farther.shrink == 0.0 and farther.cause is None  # counted from 1.0 it was 0.2
    closer = margin_change(parent, Margins((("dp1:tool-call", 0.35),)))
    assert closer.shrink == pytest.approx(0.25) and closer.cause == "dp1:tool-call"
    # a parent with no parts (margin 1.0): a new cause counts from 1.0, as before
    fresh = margin_change(Margins(()), Margins((("dp1:tool-call", 0.8),)))
    assert fresh.shrink == pytest.approx(0.2)


@pytest.mark.parametrize("strategy", [MarginGuided, MarginOnly])
def test_the_reward_counts_a_new_cause_from_the_parents_margin(strategy: type[MarginOnly]) -> None:
    """The energy schedule reads the same drops as :func:`margin_change`: a value
    decision turned into a question earns nothing unless the question's cause comes
    closer to failing than the parent's margin (before, it counted from 1.0)."""
    es = entries()
    parent = es[1]
    parent.margins = Margins((("dp1:superseded", 0.6),))
    g = strategy(es, random.Random(0))
    farther, closer = child_of(parent), child_of(parent)
    farther.margins = Margins((("dp1:tool-call", 0.8),))
    closer.margins = Margins((("dp1:tool-call", 0.35),))
    assert g.schedule_gain(parent, farther, margin_change(parent.margins, farther.margins)) == 0.0
    assert g.schedule_gain(parent, closer, margin_change(parent.margins, closer.margins)) == \
        pytest.approx(12.0 * 0.25)


def test_a_shrinking_margin_gets_corpus_priority() -> None:
    es = entries()
    g = MarginGuided(es, random.Random(0))
    covering, closer = child_of(es[0]), child_of(es[1])
    g.feedback(es[0], covering, "paraphrase", new_points=3, divergence=1.0, new_shapes=0,
               margin=shrunk(0.0))
    g.feedback(es[1], closer, "paraphrase", new_points=0, divergence=0.0, new_shapes=0,
               margin=shrunk(0.25))
    assert closer.energy == pytest.approx(1 + MARGIN_WEIGHT * 0.25)
    assert covering.energy < closer.energy  # coverage counts, the margin counts more
    assert g.best() is closer


def test_no_margin_reward_once_the_mutant_fails() -> None:
    es = entries()
    g = MarginGuided(es, random.Random(0))
    failing = child_of(es[0])
    change = MarginChange(before=0.25, after=0.0, shrink=0.25, cause="deep-chain", fired=True)
    g.feedback(es[0], failing, "paraphrase", new_points=0, divergence=0.0, margin=change)
    assert failing not in g.corpus and es[0].energy == 1.0


def test_margin_only_ignores_coverage_and_divergence() -> None:
    es = entries()
    m = make_strategy("margin-only", es, random.Random(0))
    assert isinstance(m, MarginOnly) and m.candidates == 1
    covering = child_of(es[0])
    m.feedback(es[0], covering, "paraphrase", new_points=5, divergence=1.0, new_shapes=2,
               margin=shrunk(0.0))
    assert covering not in m.corpus
    closer = child_of(es[0])
    m.feedback(es[0], closer, "paraphrase", new_points=0, divergence=0.0, margin=shrunk(0.5))
    assert closer in m.corpus and closer.energy == pytest.approx(1 + MARGIN_WEIGHT * 0.5)


def test_ties_go_to_the_earlier_entry() -> None:
    """Equal energy: the entry that joined first wins, on every rebuild."""
    picks = []
    for _ in range(2):
        es = entries()
        g = MarginGuided(es, random.Random(3))
        first, second = child_of(es[2]), child_of(es[0])
        for parent, child in ((es[2], first), (es[0], second)):
            g.feedback(parent, child, "paraphrase", new_points=0, divergence=0.0, margin=shrunk(0.25))
        assert first.energy == second.energy and first.rank < second.rank
        assert g.best() is first
        picks.append([(e.episode.id, e.chain) for e in (g.choose()[0] for _ in range(20))])
    assert picks[0] == picks[1]


def _write_seeds(path: Path) -> Path:
    path.write_text("".join(dumps_episode(e) + "\n" for e in all_seed_episodes()), encoding="utf-8")
    return path


def _fuzz(out: Path, episodes: Path, *extra: str) -> int:
    return main(["fuzz", "--agent", "weak:fuzz-target", "--episodes", str(episodes),
                 "--budget", "16", "--seed", "7", "--out", str(out), "--json", *extra])


def test_margin_runs_are_deterministic_and_record_margins(tmp_path: Path) -> None:
    episodes = _write_seeds(tmp_path / "seeds.jsonl")
    outs = [tmp_path / f"run{n}" for n in range(2)]
    for out in outs:
        assert _fuzz(out, episodes, "--strategy", "margin,margin-only") == 0
    for name in ("found.jsonl", "mutants.jsonl", "report.json", "report.md"):
        a, b = ((o / name).read_bytes().replace(str(o).encode(), b"OUT") for o in outs)
        assert a == b, name
    lines = [json.loads(x) for x in (outs[0] / "mutants.jsonl").read_text().splitlines()]
    assert {x["strategy"] for x in lines} == {"margin", "margin-only"}
    after = {(x["strategy"], x["id"]): x["margin"]["after"] for x in lines}
    for x in lines:
        m = x["margin"]
        assert set(m) == {"before", "after", "shrink", "cause", "fired"}
        assert m["fired"] == (m["after"] <= 0) == (not x["passed"])  # planted: margin 0 = fails
        if (x["strategy"], x["parent"]) in after:  # a mutant of a mutant: before = its after
            assert m["before"] == after[(x["strategy"], x["parent"])]
    report = json.loads((outs[0] / "report.json").read_text())
    shrinks = [r["margin_shrinks"] for r in report["runs"] if r["strategy"] == "margin"]
    assert report["table"]["margin"]["margin_shrinks"]["values"] == shrinks
    assert shrinks[0] == sum(1 for x in lines if x["strategy"] == "margin"
                             and x["margin"]["shrink"] > 0 and not x["margin"]["fired"])


def test_margin_strategies_need_a_margin_source(tmp_path: Path, capsys) -> None:
    episodes = _write_seeds(tmp_path / "seeds.jsonl")
    rc = main(["fuzz", "--agent", "stale", "--episodes", str(episodes), "--budget", "2",
               "--strategy", "margin", "--out", str(tmp_path / "x"), "--json"])
    assert rc == 2 and "margin" in capsys.readouterr().err


def test_the_planted_study_keeps_tuning_and_report_seeds_apart() -> None:
    script = load_script("fuzz_planted")
    assert not set(script.TUNING_SEEDS) & set(script.REPORT_SEEDS)
    assert script.seed_problem(script.TUNING_SEEDS, tuning=True) is None
    assert script.seed_problem(script.REPORT_SEEDS, tuning=False) is None
    assert script.seed_problem((0, 100), tuning=False) is not None  # mixed
    assert script.seed_problem((0,), tuning=True) is not None  # tuning on a report seed


def test_the_documented_margin_schedule() -> None:
    """The ``margin`` schedule tuned on seeds 100-104 (docs/fuzzer.md's tuning table);
    ``margin-only`` keeps the untuned starting point."""
    assert MARGIN_SCHEDULE == MarginSchedule(
        weight=12.0, explore=0.75, failing=0.0, solved=0.0, record=0.0, redraws=8, probe=True
    )
    assert MARGIN_ONLY_SCHEDULE == MarginSchedule(weight=12.0, explore=0.5, failing=1.0, solved=1.0)
    es = entries()
    assert make_strategy("margin", es, random.Random(0)).explore == 0.75
    assert make_strategy("margin-only", entries(), random.Random(0)).explore == 0.5


def test_the_schedule_skips_failing_parents_and_solved_causes() -> None:
    es = entries()
    fails = Margins((("gap10", 0.0), ("deep-chain", 0.75)))
    passes = Margins((("gap10", 0.5), ("deep-chain", 0.75)))
    for n, e in enumerate(es):
        e.margins = passes if n else fails
    g = MarginGuided(es, random.Random(0))
    es[0].energy = 100.0  # highest energy, but the system already fails it
    assert g.best() is not es[0]
    assert all(g.root() is not es[0] for _ in range(200))  # root picks redraw past it
    # a cause already reached (gap10 fired at a parent) earns nothing when it shrinks again;
    # a cause not reached yet (deep-chain) earns weight x its drop
    seen = child_of(es[0])
    seen.margins = fails
    assert g.schedule_gain(es[0], seen, margin_change(fails, fails)) == 0.0  # notes gap10 reached
    parent = es[1]
    closer_gap, closer_deep = child_of(parent), child_of(parent)
    closer_gap.margins = Margins((("gap10", 0.25), ("deep-chain", 0.75)))
    closer_deep.margins = Margins((("gap10", 0.5), ("deep-chain", 0.5)))
    assert g.schedule_gain(parent, closer_gap, margin_change(passes, closer_gap.margins)) == 0.0
    assert g.schedule_gain(parent, closer_deep, margin_change(passes, closer_deep.margins)) == \
        pytest.approx(MARGIN_SCHEDULE.weight * 0.25)
    # the untuned schedule (margin-only) rewards both and keeps failing parents
    m = MarginOnly(es, random.Random(0))
    assert m.schedule_gain(parent, closer_gap, margin_change(passes, closer_gap.margins)) == \
        pytest.approx(12.0 * 0.25)
    assert m.best() is es[0]


def test_probing_reads_a_roots_margin_once() -> None:
    es = entries()
    failing = {id(e.episode) for e in es[::4]}  # a quarter of the roots fail
    calls: list[int] = []

    def source(episode):  # noqa: ANN001, ANN202
        calls.append(id(episode))
        return Margins((("gap10", 0.0 if id(episode) in failing else 0.5),))

    g = MarginGuided(es, random.Random(0))
    g.source = source
    picked = [g.root() for _ in range(50)]
    assert all(e.margins is not None and not e.margins.fired for e in picked)
    assert g.probes == len(calls) == len(set(calls))  # each root probed at most once
