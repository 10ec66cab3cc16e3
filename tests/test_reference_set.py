"""The committed reference set and the shipped subset20 built from it."""

from __future__ import annotations

import json
from pathlib import Path

from lm_eval_memrisk.cli import main
from lm_eval_memrisk.episodes.loader import load_episodes
from lm_eval_memrisk.harness.docs import SUBSET_DIR, subset_ids
from selector.reference import REFERENCE_DIR, systems

SHIPPED = SUBSET_DIR / "subset20.json"


def test_reference_set_has_real_models_and_planted_profiles():
    names = systems()
    real = [n for n in names if not n.startswith(("agent-", "weak-"))]
    planted = [n for n in names if n.startswith("weak-")]
    assert len(real) >= 5 and len(planted) >= 8, names
    for name in names:
        files = sorted(p.name for p in (REFERENCE_DIR / name).iterdir())
        assert sum(f.startswith("results_") for f in files) == 1
        assert sum(f.startswith("samples_memriskbench_r") and f.endswith(".jsonl.gz") for f in files) == 5


def test_select_on_the_reference_set_reproduces_the_shipped_subset(tmp_path, capsys):
    out = tmp_path / "sel"
    assert main(["select", "--reference", "--fraction", "0.2", "--seed", "0", "--out", str(out),
                 "--no-plots", "--no-progress"]) == 0
    assert (out / "subset.json").read_bytes() == SHIPPED.read_bytes()
    subset = json.loads(SHIPPED.read_text(encoding="utf-8"))
    assert subset["size"] == 24
    assert {e["risk"] for e in subset["episodes"]} == {"R1", "R2", "R3", "R4", "R5"}
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report  # the report renders


def test_subset20_task_loads_exactly_the_subset():
    from lm_eval_memrisk.harness.dataset import load_docs

    ids = subset_ids("subset20")
    docs = load_docs(subset="subset20")["test"]
    assert [d["episode_id"] for d in docs] == ids
    known = {e.id for e in load_episodes()}
    assert set(ids) <= known and len(ids) == 24


def test_subset20_through_lm_eval_with_the_oracle(tmp_path):
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    from lm_eval_memrisk._autoload import tasks_dir

    tm = TaskManager(include_path=str(tasks_dir()), include_defaults=False)
    res = simple_evaluate(model="memrisk-agent", model_args="agent=oracle", tasks=["memriskbench_subset20"],
                          task_manager=tm, bootstrap_iters=0)
    row = res["results"]["memriskbench_subset20"]
    assert row["sample_len"] == 24 and row["pass,none"] == 1.0


def test_packing_is_byte_stable(tmp_path):
    from selector.reference import pack, unpack

    runs = unpack(tmp_path / "runs")
    again = tmp_path / "again"
    pack(runs, dest=again)
    for name in systems():
        for f in (REFERENCE_DIR / name).iterdir():
            assert (again / name / f.name).read_bytes() == f.read_bytes(), f
    assert isinstance(Path(REFERENCE_DIR), Path)


def _fake_run(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "results_2026-01-01T00-00-00.json").write_text("{}", encoding="utf-8")
    (folder / "samples_memriskbench_r1_2026-01-01T00-00-00.jsonl").write_text("{}\n", encoding="utf-8")
    return folder


def test_pack_with_prune_leaves_only_the_packed_systems(tmp_path):
    import pytest

    from lm_eval_memrisk.episodes.errors import SamplesError
    from selector.reference import pack

    dest = tmp_path / "reference"
    (dest / "left-the-set").mkdir(parents=True)
    runs = [_fake_run(tmp_path / "runs" / n) for n in ("sys-a", "sys-b")]
    pack(runs, dest=dest)
    assert systems(dest) == ["left-the-set", "sys-a", "sys-b"]  # without prune nothing else goes
    written = pack(runs, dest=dest, prune=True)
    assert systems(dest) == ["sys-a", "sys-b"]
    assert sorted(p.name for p in written) == sorted(
        ["results_2026-01-01T00-00-00.json", "samples_memriskbench_r1_2026-01-01T00-00-00.jsonl.gz"] * 2
    )
    with pytest.raises(SamplesError, match="empty the reference set"):
        pack([], dest=dest, prune=True)
    (tmp_path / "runs" / "not-a-run").mkdir()
    (dest / "sys-a" / "marker").write_text("kept", encoding="utf-8")
    with pytest.raises(SamplesError, match="not-a-run: no results"):
        pack([*runs, tmp_path / "runs" / "not-a-run"], dest=dest, prune=True)
    assert (dest / "sys-a" / "marker").exists()  # the bad folder stopped it before anything moved
    assert systems(dest) == ["sys-a", "sys-b"]
