"""The risk registry (lm_eval_memrisk/episodes/risks.py): its values are what the packaged
datasets hold, the old per-module lists are its snapshots, and a risk added to it (a toy
R7 in a temporary registry) reaches the task files, the loader and validator, the scorer,
the leaderboard and the selector with no other edit."""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from lm_eval_memrisk.cli import main as cli_main
from lm_eval_memrisk.episodes import risks
from lm_eval_memrisk.episodes.codec import dumps_episode
from lm_eval_memrisk.episodes.episode_features import risk_types_present
from lm_eval_memrisk.episodes.loader import load_episodes
from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.episodes.risks import RiskSpec
from lm_eval_memrisk.episodes.validate import collect_problems
from lm_eval_memrisk.running.agent_registry import get_agent
from lm_eval_memrisk.running.runner import run_episode
from lm_eval_memrisk.scoring.scorer import score
from lm_eval_memrisk.scoring.summary import summarize

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "lm_eval_memrisk" / "data"


def _has_update(episode: Episode) -> bool:
    return any(e.type == "memory_update" for e in episode.events)


#: A toy main-track risk: R1's episodes relabelled, found by R1's structural detector.
R7 = RiskSpec("R7", "toy risk", "main", (1, 1, 0), False, ("stale",), "r1_stale", None, _has_update)
#: A toy risk of its own track.
R8 = RiskSpec("R8", "toy side risk", "r8", (1, 0, 0), False, ("leaky",), "r1_stale", None, _has_update)


# --- the registry is the packaged data ---------------------------------------------


@pytest.mark.parametrize("version", ["v1", "v2", "v3", "v4", "v5", "v6"])
def test_registry_equals_what_the_packaged_dataset_holds(version: str) -> None:
    episodes = load_episodes(DATA / f"episodes_{version}.jsonl", track="all")
    counts = Counter((e.risk, e.tier) for e in episodes)
    assert dict(counts) == {k: n for k, n in risks.tier_counts().items() if n}
    assert {e.risk: e.track for e in episodes} == {s.risk: s.track for s in risks.specs()}
    assert list(dict.fromkeys(e.risk for e in episodes)) == list(risks.risk_ids())  # main track first
    assert sum(n for (r, _), n in counts.items() if r in risks.main_risks()) == 120


def test_the_shipped_table() -> None:
    assert risks.risk_ids() == ("R1", "R2", "R3", "R4", "R5", "R6")
    assert risks.main_risks() == ("R1", "R2", "R3", "R4", "R5") and risks.side_risks() == ("R6",)
    assert risks.tracks() == ("main", "r6")
    assert risks.safety_aware_risks() == frozenset({"R3", "R5"})
    assert {s.risk: s.adversaries for s in risks.specs()} == {
        "R1": ("stale",), "R2": ("stale",), "R3": ("leaky",), "R4": ("stale",),
        "R5": ("constraint-blind",), "R6": ("stale", "leaky"),
    }  # fmt: skip
    assert list(risks.ablations()) == ["R1", "R2", "R3", "R4", "R5"]


def test_old_names_are_snapshots_of_the_registry() -> None:
    from lm_eval_memrisk.episodes import records
    from lm_eval_memrisk.fuzz.validate_mutant import ADVERSARIES
    from lm_eval_memrisk.generator.build import MAIN_TIERS, R6_TIERS, default_counts, scaled_counts
    from lm_eval_memrisk.generator.risks import BUILDERS
    from lm_eval_memrisk.leaderboard import records as board_records
    from lm_eval_memrisk.running.agents import ABLATIONS, ABLATORS, AGENT_NAMES
    from lm_eval_memrisk.scoring.scorer import SAFETY_AWARE_RISKS

    assert records.RISKS == risks.risk_ids() and records.MAIN_RISKS == risks.main_risks()
    assert records.TRACKS == risks.tracks() and dict(records.RISK_NAMES) == dict(risks.risk_names())
    assert board_records.MAIN_RISKS == risks.main_risks() and board_records.SIDE_RISKS == risks.side_risks()
    assert SAFETY_AWARE_RISKS == risks.safety_aware_risks()
    assert ABLATIONS == risks.ablations() and set(ABLATORS) == set(ABLATIONS)
    assert [n for n in AGENT_NAMES if n.startswith("ablated-")] == [f"ablated-{r}" for r in risks.ablations()]
    assert ADVERSARIES == {s.risk: s.adversaries for s in risks.specs()}
    assert {**MAIN_TIERS, "R6": R6_TIERS} == {s.risk: s.tiers for s in risks.specs()}
    assert default_counts() == scaled_counts(24) == risks.tier_counts()
    assert list(BUILDERS) == list(risks.risk_ids())
    assert {r: f.__module__.rsplit(".", 1)[1] for r, f in BUILDERS.items()} == {s.risk: s.builder for s in risks.specs()}
    assert risks.TIER_ORDER == records.TIERS


def test_detectors_find_each_risk_in_its_own_episodes() -> None:
    """Structural detectors (the selector's n_risk_types): on v6 every risk's detector finds
    it in all 24 of its episodes; on v5 R3's missed 2 of its 24 (someone else's value in
    the user's own notes, which v6 dropped)."""
    for version, r3 in (("v6", 24), ("v5", 22)):
        episodes = load_episodes(version, track="all")
        found = {s.risk: sum(s.risk in risk_types_present(e) for e in episodes if e.risk == s.risk)
                 for s in risks.specs()}
        assert found == {"R1": 24, "R2": 24, "R3": r3, "R4": 24, "R5": 24, "R6": 24}, version


def test_bad_specs_are_refused() -> None:
    with pytest.raises(ValueError, match="unique"):
        with risks.temporary(dataclasses.replace(R7, risk="R1")):
            pass
    with pytest.raises(ValueError, match="own track names it 'r7'"):
        with risks.temporary(dataclasses.replace(R7, track="side")):
            pass
    with pytest.raises(KeyError, match="unknown risk 'R9'"):
        risks.spec("R9")


def test_temporary_is_undone() -> None:
    with risks.temporary(R7, R8) as table:
        assert [s.risk for s in table] == ["R1", "R2", "R3", "R4", "R5", "R7", "R6", "R8"]
        assert risks.tracks() == ("main", "r6", "r8")
    assert risks.risk_ids() == ("R1", "R2", "R3", "R4", "R5", "R6")


# --- a toy risk reaches every consumer ---------------------------------------------


def _as_r7(episode: Episode, n: int) -> Episode:
    return dataclasses.replace(episode, risk="R7", id=f"R7-{episode.tier}-{n:02d}")


@pytest.fixture(scope="module")
def toy_episodes() -> list[Episode]:
    """Two main-track episodes of each shipped risk, plus two R1 episodes as R7."""
    main = load_episodes()
    out = [e for r in risks.main_risks() for e in [x for x in main if x.risk == r][:2]]
    r1 = [e for e in main if e.risk == "R1"]
    return out + [_as_r7(r1[2], 1), _as_r7(r1[-1], 2)]


@pytest.fixture()
def with_r7() -> Iterator[None]:
    with risks.temporary(R7):
        yield


def _gen_task_yamls() -> ModuleType:
    script = ROOT / "scripts" / "gen_task_yamls.py"
    spec = importlib.util.spec_from_file_location("gen_task_yamls_registry", script)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gen_task_yamls_registry"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_toy_risks_reach_the_task_files() -> None:
    gen = _gen_task_yamls()
    shipped = gen.files()
    assert "memriskbench_r7.yaml" not in shipped
    with risks.temporary(R7, R8):
        files = gen.files()
    assert set(files) - set(shipped) == {
        "memriskbench_r7.yaml", "memriskbench_r7_easy.yaml", "memriskbench_r7_medium.yaml",
        "memriskbench_r7_hard.yaml", "memriskbench_r8.yaml",
    }  # fmt: skip
    assert "  - memriskbench_r7\n" in files["memriskbench.yaml"]  # in the main group
    assert "  - memriskbench_r8\n" not in files["memriskbench.yaml"]
    assert "risk: R7" in files["memriskbench_r7_hard.yaml"] and "track: main" in files["memriskbench_r7.yaml"]
    r8 = files["memriskbench_r8.yaml"]
    assert "  - memriskbench_tracks\n" in r8 and "risk: R8" in r8 and "track: r8" in r8
    assert all(files[n] == text for n, text in shipped.items() if n != "memriskbench.yaml")


def test_toy_risk_reaches_loader_and_validator(tmp_path: Path, toy_episodes: list[Episode]) -> None:
    path = tmp_path / "toy.jsonl"
    r8 = dataclasses.replace(toy_episodes[-1], risk="R8", id="R8-easy-01", track="r8")
    path.write_text("".join(dumps_episode(e) + "\n" for e in [*toy_episodes, r8]), encoding="utf-8")
    from lm_eval_memrisk.episodes.errors import EpisodeFormatError

    with pytest.raises(EpisodeFormatError, match="unknown risk 'R7'"):
        load_episodes(path, track="all")  # not registered: refused
    with risks.temporary(R7, R8):
        assert [e.risk for e in load_episodes(path, track="r8")] == ["R8"]
        assert {e.risk for e in load_episodes(path)} == {"R1", "R2", "R3", "R4", "R5", "R7"}
        assert not collect_problems(r8)
        problems = [str(p) for p in collect_problems(dataclasses.replace(r8, track="main"))]
        assert any("risk R8 episodes belong to track 'r8', not 'main'" in p for p in problems)
        assert "R7" in risk_types_present(toy_episodes[-1])


def test_toy_risk_reaches_the_scorer(toy_episodes: list[Episode], with_r7: None) -> None:
    toy = [e for e in toy_episodes if e.risk == "R7"]
    oracle = [score(e, run_episode(e, get_agent("oracle"))) for e in toy]
    assert summarize(oracle, "default", "sig")["by_risk"] == {"R7": {"n": 2, "passed": 2, "pass_rate": 1.0}}
    stale = [score(e, run_episode(e, get_agent("stale"))) for e in toy]
    assert summarize(stale, "default", "sig")["by_risk"]["R7"]["passed"] == 0
    # the safety-aware flag: a refusal passes only when the registry says so
    refusal = run_episode(toy[0], get_agent("refuser"))
    assert not score(toy[0], refusal, "safety_aware").success
    with risks.temporary(dataclasses.replace(R7, risk="R9", safety_aware=True)):
        r9 = dataclasses.replace(toy[0], risk="R9")
        assert score(r9, run_episode(r9, get_agent("refuser")), "safety_aware").success


@pytest.fixture(scope="module")
def toy_runs(tmp_path_factory: pytest.TempPathFactory, toy_episodes: list[Episode]) -> tuple[Path, list[Path]]:
    """The toy dataset and two ``memrisk run`` folders on it (oracle, stale)."""
    root = tmp_path_factory.mktemp("toy_runs")
    path = root / "toy.jsonl"
    path.write_text("".join(dumps_episode(e) + "\n" for e in toy_episodes), encoding="utf-8")
    folders = []
    with risks.temporary(R7):
        for agent in ("oracle", "stale"):
            out = root / agent
            assert cli_main(["run", "--agent", agent, "--episodes", str(path), "--out", str(out)]) == 0
            folders.append(out)
    assert sorted(f.name for f in folders[0].rglob("samples_memriskbench_r7_*.jsonl"))
    return path, folders


def test_toy_risk_reaches_the_leaderboard(toy_runs: tuple[Path, list[Path]]) -> None:
    from lm_eval_memrisk.leaderboard import build, collect, table

    path, folders = toy_runs
    with risks.temporary(R7):
        board = build(collect(folders, lambda _: None, [path]))
        markdown, csv_text = table.to_markdown(board), table.to_csv(board)
    assert board.risks == ("R1", "R2", "R3", "R4", "R5", "R7")
    rows = {r.system.name: r for r in board.rows}
    oracle, stale = rows["memrisk-agent:oracle"], rows["memrisk-agent:stale"]
    assert (oracle.risks["R7"].default.k, oracle.risks["R7"].default.n) == (2, 2)
    assert (stale.risks["R7"].default.k, stale.risks["R7"].default.n) == (0, 2)
    assert oracle.overall.default.n == 12  # R7 is main track: in the overall score
    assert stale.violations["R7"].k == 2 and "R7" in stale.flag_risks and "R7" not in oracle.flag_risks
    assert "| R5 SA | R7 | R7 SA | Overall |" in markdown and "| R5 viol./acted | R7 viol./acted |" in markdown
    assert "R7" in csv_text.splitlines()[0]


def test_toy_risk_reaches_the_selector(toy_runs: tuple[Path, list[Path]]) -> None:
    from selector.greedy import seed_phase
    from selector.io import load_runs
    from selector.objective import risk_coverage

    path, folders = toy_runs
    with risks.temporary(R7):
        m = load_runs([str(f) for f in folders], episodes=[path])
    assert m.risk_names == ("R1", "R2", "R3", "R4", "R5", "R7")
    seeds = seed_phase(m.risk_codes, np.zeros(len(m.risks)))
    assert sorted(m.risks[i] for i in seeds) == list(m.risk_names)  # one seed per risk, R7 too
    onehot = np.eye(len(m.risk_names))[m.risk_codes]
    without_r7 = np.array([r != "R7" for r in m.risks])
    assert risk_coverage(without_r7[None, :], onehot)[0] == pytest.approx(5 / 6)


def test_the_generator_iterates_the_registry(with_r7: None) -> None:
    from lm_eval_memrisk.generator.build import GenerationError, default_counts, generate

    assert default_counts()[("R7", "easy")] == 1
    # its builder module (here R1's) must say which families it draws from
    with pytest.raises(GenerationError, match="dataset v5 has no builder for R7: .*FAMILIES"):
        generate(counts={("R7", "easy"): 1}, version="v5")


def test_a_registered_risk_is_generated_in_every_version_from_its_builder_module(
    with_r7: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Adding a risk: its RiskSpec and its builder module (with FAMILIES); the dataset
    versions' own tables need no entry."""
    from lm_eval_memrisk.episodes.validate import validate_episode
    from lm_eval_memrisk.generator.build import generate
    from lm_eval_memrisk.generator.risks import r1_stale

    monkeypatch.setattr(r1_stale, "FAMILIES", ("shipping_address", "phone_number"), raising=False)
    for version in ("v1", "v5", "v6"):
        episodes = generate(counts={("R7", "easy"): 1, ("R7", "medium"): 1}, version=version)
        assert [(e.risk, e.tier) for e in episodes] == [("R7", "easy"), ("R7", "medium")], version
        assert {e.family for e in episodes} <= {"shipping_address", "phone_number"}
        for ep in episodes:
            validate_episode(ep)
