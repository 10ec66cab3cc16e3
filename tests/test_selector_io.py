"""Reading lm-eval --log_samples folders, and a clear file:line error for each bad input."""

import importlib.util
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from lm_eval_memrisk.errors import SamplesError
from selector.io import load_runs

SAMPLES = Path(__file__).parent / "data" / "samples"
NAMES = ("alpha", "beta", "gamma", "omega")


def _fixture_table() -> dict[str, dict[str, int]]:
    spec = importlib.util.spec_from_file_location("make_samples", SAMPLES / "make_samples.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return dict(mod.rows())


@pytest.fixture
def runs(tmp_path):
    """A writable copy of the four reference run folders."""
    out = []
    for name in NAMES:
        shutil.copytree(SAMPLES / f"run_{name}", tmp_path / f"run_{name}")
        out.append(tmp_path / f"run_{name}")
    return out


def _samples(run: Path, risk: str) -> Path:
    files = sorted(run.glob(f"*/samples_memriskbench_{risk}_*.jsonl"))
    return files[-1]


def _edit(path: Path, lineno: int, fn) -> None:
    lines = path.read_text().splitlines()
    lines[lineno - 1] = fn(lines[lineno - 1])
    path.write_text("\n".join(lines) + "\n")


def test_reads_the_fixture_keyed_by_episode_id():
    m = load_runs([SAMPLES / "run_omega", SAMPLES / "run_alpha" / "org__alpha", SAMPLES / "run_gamma",
                   SAMPLES / "run_beta"])
    table = _fixture_table()
    assert m.systems == tuple(f"org__{n}" for n in NAMES)
    assert m.episode_ids == tuple(sorted(table))
    want = np.array([[table[e][n] for n in NAMES] for e in m.episode_ids], dtype=bool)
    assert np.array_equal(m.passed, want)
    assert m.dataset_hash.startswith("sha256:") and m.scorer_version == "1.0"
    i = m.episode_ids.index("R3-M-002")
    assert (m.risks[i], m.tiers[i], m.tasks[i], int(m.doc_ids[i])) == ("R3", "medium", "memriskbench_r3", 1)
    assert m.trace.shape == (15, 4, 4)


def test_newest_samples_file_wins_and_a_note_says_so():
    m = load_runs([SAMPLES / f"run_{n}" for n in NAMES])
    i, beta = m.episode_ids.index("R1-E-001"), m.systems.index("org__beta")
    assert m.passed[i, beta]  # the older run has it flipped to a failure
    assert any("2 samples files for memriskbench_r1; using the newest" in n for n in m.notes)


def test_names_can_be_given():
    m = load_runs([f"a={SAMPLES / 'run_alpha'}", f"b={SAMPLES / 'run_beta'}"])
    assert m.systems == ("a", "b")


def _error(runs) -> str:
    with pytest.raises(SamplesError) as err:
        load_runs(runs)
    return str(err.value)


def test_error_missing_episodes_names_system_and_where_it_exists(runs):
    path = _samples(runs[2], "r3")
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[1:]) + "\n")  # drop the first line (R3-H-003)
    msg = _error(runs)
    assert msg.startswith(f"{runs[2] / 'org__gamma'}: system 'org__gamma' lacks 1 episode")
    assert "R3-H-003" in msg
    assert re.search(r"samples_memriskbench_r3_[^:]+\.jsonl:1\b", msg)


def test_error_duplicate_episode_names_both_lines(runs):
    path = _samples(runs[0], "r2")
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines + [lines[0]]) + "\n")
    msg = _error(runs)
    assert f"{path}:4:" in msg and "duplicate episode R2-H-003" in msg and f"{path}:1" in msg


def test_error_mixed_dataset_versions(runs):
    path = _samples(runs[3], "r4")
    _edit(path, 2, lambda s: s.replace('"dataset_hash": "sha256:0f1e', '"dataset_hash": "sha256:ffff'))
    msg = _error(runs)
    assert f"{path}:2:" in msg and "dataset_hash" in msg and "mixed" in msg


def test_error_malformed_json(runs):
    path = _samples(runs[1], "r5")
    _edit(path, 3, lambda s: s[:40])
    msg = _error(runs)
    assert f"{path}:3:" in msg and "not valid JSON" in msg


@pytest.mark.parametrize("field,expect", [
    ("pass", "missing field 'pass'"),
    ("doc", "missing the 'doc' object"),
    ("episodes", "missing the 'episodes' record"),
])
def test_error_missing_fields(runs, field, expect):
    path = _samples(runs[0], "r1")

    def drop(line: str) -> str:
        data = json.loads(line)
        del data[field]
        return json.dumps(data)

    _edit(path, 2, drop)
    msg = _error(runs)
    assert f"{path}:2:" in msg and expect in msg


@pytest.mark.parametrize("key,value,expect", [
    ("pass", 0.5, "'pass' must be 0 or 1"),
    ("score", 1.5, "'score' must be a number in [0, 1]"),
    ("doc_id", -1, "'doc_id' must be a non-negative integer"),
])
def test_error_bad_values(runs, key, value, expect):
    path = _samples(runs[0], "r1")
    _edit(path, 1, lambda s: json.dumps({**json.loads(s), key: value}))
    msg = _error(runs)
    assert f"{path}:1:" in msg and expect in msg


def test_error_empty_folder(tmp_path, runs):
    empty = tmp_path / "empty"
    empty.mkdir()
    msg = _error(runs + [empty])
    assert str(empty) in msg and "no samples_memriskbench_*.jsonl" in msg


def test_error_no_main_track_task(tmp_path, runs):
    other = tmp_path / "other" / "m"
    other.mkdir(parents=True)
    (other / "samples_memriskbench_r6_2026-01-01T00-00-00.000000.jsonl").write_text("{}\n")
    msg = _error(runs + [other.parent])
    assert "no samples files of the tasks memriskbench_r1..r5" in msg


def test_error_several_model_folders(tmp_path, runs):
    shutil.copytree(runs[0] / "org__alpha", runs[1] / "org__alpha")
    assert "holds several model folders" in _error(runs)


def test_error_same_system_twice_and_too_few_systems(runs):
    assert "also used by" in _error([runs[0], runs[0]])
    assert "at least 2 systems" in _error(runs[:1])


def test_variant_reads_its_own_pass_field(runs):
    path = _samples(runs[0], "r1")  # line 1 is R1-H-003, passed by alpha
    _edit(path, 1, lambda s: json.dumps({**json.loads(s), "pass_safety_aware": 0.0}))
    default, safety = load_runs(runs), load_runs(runs, variant="safety_aware")
    i = default.episode_ids.index("R1-H-003")
    assert default.passed[i, 0] and not safety.passed[i, 0]
    assert (default.passed.sum() - safety.passed.sum()) == 1 and safety.variant == "safety_aware"
    with pytest.raises(SamplesError, match="unknown variant"):
        load_runs(runs, variant="lenient")


def test_error_missing_structural_feature(runs):
    path = _samples(runs[0], "r2")

    def drop(line: str) -> str:
        data = json.loads(line)
        del data["episodes"]["features"]["n_turns"]
        return json.dumps(data)

    _edit(path, 1, drop)
    msg = _error(runs)
    assert f"{path}:1:" in msg and "missing field 'episodes.features.n_turns'" in msg


def test_error_samples_file_without_a_date(runs):
    bad = runs[0] / "org__alpha" / "samples_memriskbench_r1.jsonl"
    bad.write_text("{}\n")
    msg = _error(runs)
    assert str(bad) in msg and "cannot read the task and date" in msg
