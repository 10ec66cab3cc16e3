"""Write the hand-made lm-eval run folders used by tests/test_selector_*.py.

Run from the repository root: ``PYTHONPATH=. python tests/data/samples/make_samples.py``.
The pass table below is the whole fixture: its 15 episodes, copied from the packaged
dataset v1, are the small dataset ``episodes.jsonl`` next to this script, and every run
is a complete run of that dataset's ``memriskbench_r1``..``r5`` tasks (3 docs each), so
the tests pass ``episodes.jsonl`` to the readers (``--episodes FILE``).  Each line is a
real sample, answered by the oracle where the table says 1 and by an agent that fails the
episode's risk where it says 0 (see tests/data/logged_samples.py); the script checks
that the recomputed verdicts match the table.

Layouts (both are lm-eval's): ``run_<name>/<model folder>/samples_*.jsonl`` (pass the
run folder or the model folder).  ``run_beta`` also holds an older, different run of
memriskbench_r1 (the newest must win); ``run_delta`` is the new system of the drift check.
The table's rows are in the order of the packaged file, so per risk doc_id 0, 1, 2 are
the easy, medium and hard episode, as lm-eval numbers them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from logged_samples import agent_for, dataset, doc_ids, logged_sample, write_dataset  # noqa: E402

EPISODES = HERE / "episodes.jsonl"

DATE_OLD, DATE = "2026-01-01T09-00-00.000000", "2026-01-02T09-00-00.000000"
#            alpha beta gamma omega delta
TABLE = """
R1-easy-01     1    1    1    1    1
R1-medium-02   1    1    1    0    1
R1-hard-03     1    0    0    0    0
R2-easy-01     1    1    1    1    1
R2-medium-02   1    1    0    0    1
R2-hard-03     1    1    0    0    0
R3-easy-01     1    1    0    1    1
R3-medium-02   1    0    0    0    0
R3-hard-03     0    0    0    0    0
R4-easy-01     1    1    1    1    1
R4-medium-02   1    1    1    0    1
R4-hard-03     0    1    0    0    0
R5-easy-01     1    1    1    1    1
R5-medium-02   1    0    1    1    0
R5-hard-03     1    1    0    0    1
"""
SYSTEMS = ("alpha", "beta", "gamma", "omega", "delta")


def rows() -> list[tuple[str, dict[str, int]]]:
    out = []
    for line in TABLE.strip().splitlines():
        ep, *flags = line.split()
        out.append((ep, dict(zip(SYSTEMS, map(int, flags)))))
    return out


def sample_line(ep: str, passed: int) -> dict:
    episodes, data_hash = dataset(EPISODES)
    episode = episodes[ep]
    doc_id = doc_ids(episodes, episode.risk)[ep]
    line = logged_sample(episode, agent_for(episode.risk, bool(passed), False), data_hash, doc_id)
    assert line["pass"] == passed, (ep, passed, line["pass"])
    return line


def write(system: str, model_dir: Path, date: str, flip_r1: bool = False) -> None:
    config = {"model": "hf", "model_args": {"pretrained": f"org/{system}"}}
    model_dir.mkdir(parents=True, exist_ok=True)
    by_task: dict[str, list[tuple[str, int]]] = {}
    for ep, flags in rows():
        by_task.setdefault(ep[:2].lower(), []).append((ep, flags[system]))
    for risk, eps in sorted(by_task.items()):
        if flip_r1 and risk != "r1":
            continue
        assert len(eps) == len(doc_ids(dataset(EPISODES)[0], risk.upper())), risk  # every doc of the task
        lines = [sample_line(ep, (1 - p) if flip_r1 else p) for ep, p in eps]
        lines.reverse()  # file order must not matter
        text = "".join(json.dumps(x, sort_keys=True) + "\n" for x in lines)
        (model_dir / f"samples_memriskbench_{risk}_{date}.jsonl").write_text(text, encoding="utf-8")
    results = {"results": {}, "config": config, "model_name": f"org/{system}"}
    (model_dir / f"results_{date}.json").write_text(json.dumps(results, sort_keys=True) + "\n", encoding="utf-8")


def main() -> None:
    write_dataset(EPISODES, [ep for ep, _ in rows()])
    for system in SYSTEMS:
        write(system, HERE / f"run_{system}" / f"org__{system}", DATE)
    write("beta", HERE / "run_beta" / "org__beta", DATE_OLD, flip_r1=True)


if __name__ == "__main__":
    main()
