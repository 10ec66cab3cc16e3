"""scripts/fuzz_real_model.py: the pure parts of the real-model fuzz comparison (process
split, which folders hold a strategy's runs, reading the reference run, the summary)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from script_loading import load_script


@pytest.fixture(scope="module")
def script():
    return load_script("fuzz_real_model")


def test_split_runs_the_named_strategies_seed_groups_as_separate_processes(script):
    got = script.processes(["margin", "coverage", "margin-only"], "0,1,2", "margin=1/2;margin-only=0")
    assert got == [("margin", "1"), ("margin", "2"), ("coverage", "0,1,2"), ("margin-only", "0")]
    assert [script.folder_name(s, g, "0,1,2") for s, g in got] == [
        "margin-s1", "margin-s2", "coverage", "margin-only-s0"]


@pytest.mark.parametrize(("folder", "strategy", "ran"), [
    ("margin", "margin", True),
    ("margin-s1", "margin", True),
    ("margin-s0_1", "margin", True),
    ("margin-s0-b1", "margin", True),
    ("margin-only", "margin", False),
    ("margin-only-s0", "margin", False),
    ("margin-only-s0", "margin-only", True),
    ("random", "margin", False),
])
def test_a_strategys_folders_are_matched_exactly(script, folder, strategy, ran):
    assert script.ran_strategy(folder, strategy) is ran


def _samples(folder: Path, rows: list[dict]) -> None:
    folder.mkdir()
    (folder / "samples_memriskbench_2026.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_the_reference_runs_passed_episodes_are_read_and_its_dataset_checked(script, tmp_path):
    ok = {"dataset_hash": "sha256:aa"}
    _samples(tmp_path / "run", [
        {"pass": 1.0, "episodes": {"episode_id": "R1-easy-02", **ok}},
        {"pass": 0.0, "episodes": {"episode_id": "R1-easy-01", **ok}},
        {"pass": 1.0, "episodes": {"episode_id": "R1-easy-00", **ok}},
    ])
    assert script.passed_episode_ids(tmp_path / "run", "sha256:aa") == ["R1-easy-00", "R1-easy-02"]
    with pytest.raises(SystemExit, match=r"samples_memriskbench_2026.jsonl:1: field episodes.dataset_hash"):
        script.passed_episode_ids(tmp_path / "run", "sha256:bb")


def test_the_seed_dataset_is_the_packaged_one_the_reference_run_names(script, tmp_path):
    from lm_eval_memrisk.episodes.loader import dataset_hash, default_dataset_path

    v6 = default_dataset_path("v6")
    _samples(tmp_path / "run", [{"pass": 1.0, "episodes": {"episode_id": "R1-easy-01",
                                                          "dataset_hash": dataset_hash(v6)}}])
    assert script.run_dataset(tmp_path / "run").resolve() == v6.resolve()
    _samples(tmp_path / "other", [{"pass": 1.0, "episodes": {"episode_id": "x", "dataset_hash": "sha256:00"}}])
    with pytest.raises(SystemExit, match=r"samples_memriskbench_2026.jsonl:1: dataset sha256:00 is no packaged"):
        script.run_dataset(tmp_path / "other")
    _samples(tmp_path / "bad", [{"pass": 1.0}])
    with pytest.raises(SystemExit, match=r"jsonl:1: no field episodes.dataset_hash"):
        script.run_dataset(tmp_path / "bad")


def test_a_reference_row_without_the_fields_names_its_line(script, tmp_path):
    _samples(tmp_path / "run", [{"pass": 1.0, "episodes": {"episode_id": "x", "dataset_hash": "h"}},
                                {"pass": 1.0}])
    with pytest.raises(SystemExit, match=r"jsonl:2: no 'pass' or 'episodes' field"):
        script.passed_episode_ids(tmp_path / "run", "h")


def test_margin_against_verdict_counts_and_auc(script):
    def mutant(after, passed):
        return {"margin": {"after": after, "nats_after": after}, "passed": passed}

    got = script.margin_vs_verdict([mutant(-0.5, False), mutant(0.1, False), mutant(0.3, True),
                                    mutant(0.1, True), {"passed": True}])
    # failing margins {-0.5, 0.1} against passing {0.3, 0.1}: 3 below, 1 tie -> 3.5 / 4
    assert got == {"n": 4, "fired/failed": 1, "fired/passed": 0, "held/failed": 1, "held/passed": 2,
                   "auc": 0.875}
    assert script.margin_vs_verdict([{"passed": False}]) is None


def test_cause_union_is_what_any_run_found(script):
    rows = [{"strategy": "random", "unique_failures": [2, 3], "root_causes": ["R1:none", "R2:conflict", "R3:none"]},
            {"strategy": "margin", "unique_failures": [2], "root_causes": ["R1:none", "R4:revoked"]}]
    got = script.cause_union(rows)
    assert got["causes"] == ["R1:none", "R2:conflict", "R3:none", "R4:revoked"]
    assert got["mean_share_per_run"] == {"random": 0.625, "margin": 0.5}
