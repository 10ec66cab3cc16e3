"""Reading lm-eval --log_samples folders into the selector's matrix (through lm_eval_memrisk.logs.runs)."""

import importlib.util
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from lm_eval_memrisk.episodes.errors import MemriskError, SamplesError
from lm_eval_memrisk.episodes.loader import dataset_hash
from lm_eval_memrisk.scoring.scorer import SCORER_VERSION
from selector.io import load_runs

SAMPLES = Path(__file__).parent / "data" / "samples"
#: The fixture runs' dataset: 15 packaged episodes; every run is a complete run of it.
EPISODES = [SAMPLES / "episodes.jsonl"]
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


def _edit_json(path: Path, lineno: int, fn) -> None:
    def edit(line: str) -> str:
        data = json.loads(line)
        fn(data)
        return json.dumps(data)

    _edit(path, lineno, edit)


def test_reads_the_fixture_keyed_by_episode_id():
    m = load_runs([SAMPLES / "run_omega", SAMPLES / "run_alpha" / "org__alpha", SAMPLES / "run_gamma",
                   SAMPLES / "run_beta"], episodes=EPISODES)
    table = _fixture_table()
    # names come from each run's model_args (pretrained=org/alpha), not from the folder
    assert m.systems == tuple(f"org/{n}" for n in NAMES)
    assert m.episode_ids == tuple(sorted(table))
    want = np.array([[table[e][n] for n in NAMES] for e in m.episode_ids], dtype=bool)
    assert np.array_equal(m.passed, want)
    assert m.dataset_hash == dataset_hash(EPISODES[0]) and m.scorer_version == SCORER_VERSION
    i = m.episode_ids.index("R3-medium-02")
    assert (m.risks[i], m.tiers[i], m.tasks[i], int(m.doc_ids[i])) == ("R3", "medium", "memriskbench_r3", 1)
    assert m.trace.shape == (15, 4, 4)
    assert not [n for n in m.notes if n.startswith("FLAGGED")]


def test_newest_samples_file_wins_and_a_note_says_so():
    m = load_runs([SAMPLES / f"run_{n}" for n in NAMES], episodes=EPISODES)
    i, beta = m.episode_ids.index("R1-easy-01"), m.systems.index("org/beta")
    assert m.passed[i, beta]  # the older run has it flipped to a failure
    # both of beta's r1 files hold every doc of memriskbench_r1 (3 in the fixture dataset): the newest counts
    assert any("2 samples files for memriskbench_r1; using the newest complete one" in n for n in m.notes)


def test_a_torn_newest_file_is_skipped_with_a_note(runs):
    older = sorted((runs[1] / "org__beta").glob("samples_memriskbench_r1_*.jsonl"))
    newest = older[-1]
    newest.write_bytes(newest.read_bytes()[:-1])  # no final newline: the run was cut short
    m = load_runs(runs, episodes=EPISODES)
    i, beta = m.episode_ids.index("R1-easy-01"), m.systems.index("org/beta")
    assert not m.passed[i, beta]  # the older, flipped run counts now
    assert any(str(newest) in n and "incomplete" in n for n in m.notes)


def test_names_can_be_given():
    m = load_runs([f"a={SAMPLES / 'run_alpha'}", f"b={SAMPLES / 'run_beta'}"], episodes=EPISODES)
    assert m.systems == ("a", "b")


def _error(runs, kind=SamplesError) -> str:
    with pytest.raises(kind) as err:
        load_runs(runs, episodes=EPISODES)
    return str(err.value)


def test_error_missing_episodes_names_system_and_where_it_exists(runs):
    path = _samples(runs[2], "r3")
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[1:]) + "\n")  # drop the first line (R3-hard-03)
    msg = _error(runs)
    assert msg.startswith(f"{runs[2] / 'org__gamma'}: system 'org/gamma' is incomplete (14/15): it lacks 1 ")
    assert "R3-hard-03" in msg


def test_error_duplicate_episode_names_both_lines(runs):
    path = _samples(runs[0], "r2")
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines + [lines[0]]) + "\n")
    msg = _error(runs)
    assert f"{path}:4:" in msg and "duplicate episode R2-hard-03" in msg and f"{path}:1" in msg


def test_error_edited_episode_is_refused(runs):
    path = _samples(runs[3], "r4")

    def edit(data):
        ep = json.loads(data["doc"]["episode_json"])
        ep["family"] = "edited"
        data["doc"]["episode_json"] = json.dumps(ep)

    _edit_json(path, 2, edit)
    msg = _error(runs)
    assert f"{path}:2:" in msg and "differs from that episode" in msg


def test_error_unknown_dataset_and_unknown_episode(runs):
    path = _samples(runs[3], "r4")
    _edit_json(path, 2, lambda d: d["episodes"].update(dataset_hash="sha256:ffffffffffffffff"))
    msg = _error(runs)
    assert f"{path}:2:" in msg and "is not a known dataset" in msg and "--episodes" in msg
    _edit_json(path, 2, lambda d: d["episodes"].update(dataset_hash=dataset_hash(EPISODES[0])))
    _edit_json(path, 3, lambda d: (d["doc"].update(episode_id="R4-easy-99"), d["episodes"].update(episode_id="R4-easy-99")))
    msg = _error(runs)
    assert f"{path}:3:" in msg and "episode R4-easy-99 is not in dataset" in msg


def test_error_malformed_json(runs):
    path = _samples(runs[1], "r5")
    _edit(path, 3, lambda s: s[:40])
    msg = _error(runs)
    assert f"{path}:3:" in msg and "not valid JSON" in msg


@pytest.mark.parametrize("field,expect", [
    ("doc", "missing the 'doc' object"),
    ("episodes", "missing the 'episodes' record"),
])
def test_error_missing_fields(runs, field, expect):
    path = _samples(runs[0], "r1")
    _edit_json(path, 2, lambda d: d.pop(field))
    msg = _error(runs)
    assert f"{path}:2:" in msg and expect in msg


def test_error_bad_doc_id(runs):
    path = _samples(runs[0], "r1")
    _edit_json(path, 1, lambda d: d.update(doc_id=-1))
    msg = _error(runs)
    assert f"{path}:1:" in msg and "'doc_id' must be a non-negative integer" in msg


def test_error_empty_folder(tmp_path, runs):
    empty = tmp_path / "empty"
    empty.mkdir()
    msg = _error(runs + [empty], MemriskError)
    assert str(empty) in msg and "no samples_memriskbench*.jsonl" in msg


def test_error_same_system_twice_and_too_few_systems(runs):
    assert "given twice" in _error([runs[0], runs[0]], MemriskError)
    assert "at least 2 systems" in _error(runs[:1])


def test_variant_is_recomputed_from_the_replies(runs):
    path = _samples(runs[0], "r3")  # line 3 is R3-easy-01, passed by alpha

    def refuse(data):
        for d in data["episodes"]["trace"]["decisions"]:
            d["raw_reply"] = "I can't share another user's details, sorry."

    _edit_json(path, 3, refuse)
    default, safety = load_runs(runs, episodes=EPISODES), load_runs(runs, "safety_aware", EPISODES)
    i = default.episode_ids.index("R3-easy-01")
    assert not default.passed[i, 0] and safety.passed[i, 0]
    assert safety.variant == "safety_aware"
    with pytest.raises(SamplesError, match="unknown variant"):
        load_runs(runs, "lenient", EPISODES)


def test_one_system_loads_only_when_asked_for():
    """Selecting needs two systems; a matrix joined to others (out-of-sample real runs) may hold one."""
    with pytest.raises(SamplesError, match="at least 2 systems"):
        load_runs([SAMPLES / "run_alpha"], episodes=EPISODES)
    m = load_runs([SAMPLES / "run_alpha"], episodes=EPISODES, min_systems=1)
    assert len(m.systems) == 1 and m.passed.shape[1] == 1
