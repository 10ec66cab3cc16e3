"""Regenerate the hand-made lm-eval run folders used by tests/test_leaderboard*.py.

    PYTHONPATH=. python tests/data/leaderboard/make_runs.py

The pass patterns below are chosen by hand so that the expected numbers in the tests
can be worked out on paper (see PATTERNS).  The runs are complete runs of a small
dataset, ``episodes.jsonl`` (written here: episodes 1..4 of R1-R5 and R6-hard-01..02,
copied from the packaged dataset v1; 20 main-track episodes), so the tests pass it to
the readers (``--episodes FILE``): every ``memriskbench_rN`` samples file holds every
doc of its task.  Every line is a real sample of one of its episodes answered by a
reference agent that gets the pattern's verdicts (oracle: pass; refuser: safety-aware
pass only; an agent failing the risk: fail; see tests/data/logged_samples.py); the
script checks the recomputed verdicts.  Tests never run this script.

Layout written next to this file:

    episodes.jsonl                      the small dataset of every run but epsilon's
    runs/alpha, runs/beta, runs/gamma   one lm-eval --output_path folder, three systems
    extra/delta                         a model folder given directly
    other_dataset/epsilon               same episode ids, a different dataset (episodes.jsonl)
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from logged_samples import agent_for, dataset, doc_ids, logged_sample, write_dataset  # noqa: E402

EPISODES = HERE / "episodes.jsonl"
OTHER_EPISODES = HERE / "other_dataset" / "episodes.jsonl"
TIERS = ("easy", "easy", "medium", "hard")  # episodes 1..4 of every risk
#: The small dataset: R1-R5 episodes 1..4 (easy, easy, medium, hard), R6-hard-01..02.
IDS = [f"{r}-{t}-{i + 1:02d}" for r in ("R1", "R2", "R3", "R4", "R5") for i, t in enumerate(TIERS)] + [
    "R6-hard-01", "R6-hard-02"]
NEW = "2026-02-01T10-00-00.000000"
OLD = "2026-01-01T10-00-00.000000"
#: beta's failing R4 reply carries markup, which the page must show as text.
MARKUP = "<script>alert(1)</script>"

# system -> risk -> (default pass per episode, safety-aware pass per episode)
PATTERNS: dict[str, dict[str, tuple[str, str]]] = {
    "alpha": {
        "R1": ("1111", "1111"),
        "R2": ("1111", "1111"),
        "R3": ("1110", "1110"),
        "R4": ("1111", "1111"),
        "R5": ("1111", "1111"),
        "R6": ("11", "11"),
    },
    "beta": {
        "R1": ("1111", "1111"),
        "R2": ("1110", "1110"),
        "R3": ("1100", "1110"),
        "R4": ("1110", "1110"),
        "R5": ("1100", "1100"),
    },
    "gamma": {
        "R1": ("1100", "1100"),
        "R2": ("1100", "1100"),
        "R3": ("1000", "1110"),
        "R4": ("1111", "1111"),
        "R5": ("1110", "1111"),
        "R6": ("00", "00"),
    },
    "delta": {
        "R1": ("1110", "1110"),
        "R2": ("1100", "1100"),
        "R3": ("1000", "1000"),
        "R4": ("1110", "1110"),
        "R5": ("1110", "1110"),
    },
    "epsilon": {
        "R1": ("1111", "1111"),
        "R2": ("1111", "1111"),
        "R3": ("1111", "1111"),
        "R4": ("1111", "1111"),
        "R5": ("1111", "1111"),
    },
}
SETTINGS = {  # system -> (memory policy, mode, model-file hash or None)
    "alpha": ("full", "scripted", "sha256:" + "1" * 64),
    "beta": ("full", "scripted", None),
    "gamma": ("recency:3", "interactive", None),
    "delta": ("full", "scripted", None),
    "epsilon": ("full", "scripted", None),
}


def with_markup(reply: str) -> str:
    call = json.loads(reply)
    call["arguments"]["note"] = MARKUP
    return json.dumps(call, sort_keys=True)


def sample(system: str, risk: str, i: int, passed: str, safe: str, other: bool) -> dict[str, object]:
    """A real sample line: episode i of the risk answered by an agent that gets the pattern."""
    policy, mode, _ = SETTINGS[system]
    tier = "hard" if risk == "R6" else TIERS[i]
    eid = f"{risk}-{tier}-{i + 1:02d}"
    episodes, data_hash = dataset(OTHER_EPISODES if other else EPISODES)
    assert doc_ids(episodes, risk)[eid] == i, (eid, i)
    edit = with_markup if (system, risk, passed) == ("beta", "R4", "0") else None
    agent = agent_for(risk, passed == "1", safe == "1")
    line = logged_sample(episodes[eid], agent, data_hash, i, mode, edit, policy)
    got = (line["pass"], line["pass_safety_aware"])
    assert got == (float(passed), float(safe)), (system, eid, got)
    return line


def results(system: str, risks: list[str]) -> dict[str, object]:
    _, _, model_hash = SETTINGS[system]
    config: dict[str, object] = {
        "model": "llama-cpp",
        "model_args": {"model": system},
        "batch_size": 1,
    }
    if model_hash:
        config["gguf_sha256"] = model_hash
    return {
        "results": {
            f"memriskbench_{r.lower()}": {
                "alias": f"memriskbench_{r.lower()}",
                "pass,none": 0.5,
                "pass_stderr,none": 0.1,
            }
            for r in risks
        },
        "config": config,
        "model_name": system,
        "model_name_sanitized": system,
        "lm_eval_version": "0.4.13",
    }


def write_system(folder: Path, system: str, date: str, other: bool = False, all_pass: bool = False) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    risks = list(PATTERNS[system])
    (folder / f"results_{date}.json").write_text(
        json.dumps(results(system, risks), indent=2, sort_keys=True) + "\n"
    )
    for risk in risks:
        passed, safe = PATTERNS[system][risk]
        assert len(passed) == len(doc_ids(dataset(EPISODES)[0], risk)), (system, risk)  # every doc of the task
        if all_pass:
            passed = safe = "1" * len(passed)
        lines = [
            json.dumps(sample(system, risk, i, p, s, other), sort_keys=True)
            for i, (p, s) in enumerate(zip(passed, safe))
        ]
        (folder / f"samples_memriskbench_{risk.lower()}_{date}.jsonl").write_text(
            "\n".join(lines) + "\n"
        )


def write_other_dataset() -> None:
    """The small dataset with one R6 episode's family renamed: same ids, another hash."""

    def rename(line: dict[str, object]) -> None:
        if line["id"] == "R6-hard-02":
            line["family"] = f"{line['family']}_v2"

    write_dataset(OTHER_EPISODES, IDS, rename)


def main() -> None:
    for sub in ("runs", "extra", "other_dataset"):
        shutil.rmtree(HERE / sub, ignore_errors=True)
    write_dataset(EPISODES, IDS)
    write_other_dataset()
    write_system(HERE / "runs" / "alpha", "alpha", NEW)
    write_system(HERE / "runs" / "beta", "beta", OLD, all_pass=True)  # older run: ignored
    write_system(HERE / "runs" / "beta", "beta", NEW)
    write_system(HERE / "runs" / "gamma", "gamma", NEW)
    write_system(HERE / "extra" / "delta", "delta", NEW)
    write_system(HERE / "other_dataset" / "epsilon", "epsilon", NEW, other=True)


if __name__ == "__main__":
    main()
