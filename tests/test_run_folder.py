"""``memrisk run --out``: the folder a run writes (#29): model-derived names stay inside it,
one run at a time holds it, and ``--resume`` refuses traces of another system."""

from __future__ import annotations

import errno
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_interactive import multi_episode

from lm_eval_memrisk.cli import main as memrisk_main
from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.loader import load_episodes
from lm_eval_memrisk.running.agent_registry import get_agent
from lm_eval_memrisk.running.interactive import agent_generate
from lm_eval_memrisk.running.pipeline import run_benchmark
from lm_eval_memrisk.running.run_lock import LOCK_NAME, hold_folder
from lm_eval_memrisk.running.run_store import RunStore
from lm_eval_memrisk.running.runner import run_episode
from lm_eval_memrisk.running.systems import System, model_system_name

ROOT = Path(__file__).resolve().parent.parent


def oracle_named(name: str) -> System:
    return System(name, agent_generate(get_agent("oracle")), {"agent": "oracle"})


def _files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


def test_a_model_name_with_dot_dot_slashes_stays_inside_out(tmp_path):
    """The issue's repro: ``--model_args 'agent=oracle,model=../../../ESCAPED'``."""
    name = model_system_name("memrisk-agent", "agent=oracle,model=../../../ESCAPED")
    out = tmp_path / "a" / "b" / "out1"
    run_benchmark(oracle_named(name), [multi_episode(1)], dataset_hash="h", out=out, progress=False)
    written = _files(tmp_path)
    assert written and all(out in p.parents for p in written)
    folder, = (p for p in out.iterdir() if p.is_dir())
    assert folder.name == "memrisk-agent-agent-oracle_model-..__..__..__ESCAPED"  # as memrisk eval names it
    assert list(folder.glob("results_*.json")) and list(folder.glob("samples_*.jsonl"))


# -- one run at a time per --out (#29 item 3) ---------------------------------------------

HOLD = """
import sys, time
from pathlib import Path
from lm_eval_memrisk.running.run_lock import hold_folder
with hold_folder(Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(120)
"""


def _run(out: Path, *extra: str) -> int:
    return memrisk_main(["run", "--agent", "oracle", "--limit", "2", "--out", str(out), "--json", *extra])


def test_a_second_run_into_a_held_folder_is_refused_and_a_killed_holder_is_taken_over(tmp_path, capsys):
    out = tmp_path / "out1"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert _run(out) == 2
        err = capsys.readouterr().err
        assert f"{out} is in use by another memrisk run (pid {holder.pid}" in err
        assert not (out / "traces.jsonl").exists()  # nothing was written
    finally:
        holder.kill()  # SIGKILL: the lock file stays, with a pid that is no longer alive
        holder.wait()
    assert (out / LOCK_NAME).read_text().strip() == str(holder.pid)
    assert _run(out) == 0  # the stale lock is taken over
    assert not (out / LOCK_NAME).exists()  # and released on exit


def test_the_lock_holds_the_pid_and_is_released_after_a_failed_run(tmp_path):
    out = tmp_path / "out"
    with hold_folder(out) as lock:
        assert lock.read_text().strip() == str(os.getpid())
        with pytest.raises(MemriskError, match=re.escape(f"{out} is in use by another memrisk run")):
            run_benchmark(oracle_named("oracle"), [multi_episode(1)], dataset_hash="h", out=out, progress=False)
    assert not lock.exists()

    def broken(batch):
        raise RuntimeError("model server went away")

    with pytest.raises(RuntimeError):
        run_benchmark(System("x", broken, {"model": "x"}), [multi_episode(1)], dataset_hash="h", out=out,
                      progress=False)
    assert not lock.exists()


def test_resume_refuses_traces_of_another_agent(tmp_path, capsys):
    """The issue's repro: two runs mixed their traces; ``--resume --agent stale`` must not publish them."""
    out = tmp_path / "run"
    base = ["run", "--agent", "stale", "--limit", "3", "--out", str(out), "--json"]
    assert memrisk_main(base[:3] + ["--limit", "1"] + base[5:]) == 0
    episode = load_episodes(track="main")[1]
    RunStore(out, resume=True).append(run_episode(episode, get_agent("oracle")))  # a concurrent oracle line
    before = (out / "traces.jsonl").read_bytes()
    capsys.readouterr()
    assert memrisk_main(base + ["--resume"]) == 2
    err = capsys.readouterr().err
    assert f"traces.jsonl:2: episode {episode.id} was run by 'oracle', not 'stale'" in err
    assert (out / "traces.jsonl").read_bytes() == before


# -- a full disk (#29 item 8) -------------------------------------------------------------

def _disk_full_after(monkeypatch, calls: int) -> None:
    """``os.fsync`` in run_store (called once per trace) raises ENOSPC after ``calls`` calls."""
    from lm_eval_memrisk.running import run_store

    seen = {"n": 0}
    real = os.fsync

    def fsync(fd: int) -> None:
        seen["n"] += 1
        if seen["n"] > calls:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(fd)

    monkeypatch.setattr(run_store.os, "fsync", fsync)


def test_a_full_disk_mid_run_is_a_clean_error_and_resume_finishes(tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    _disk_full_after(monkeypatch, 2)
    assert memrisk_main(["run", "--agent", "stale", "--limit", "5", "--out", str(out), "--json"]) == 2
    err = capsys.readouterr().err
    assert f"{out}: no space left while writing traces.jsonl" in err
    assert f"rerun the same command with --resume --out {out}" in err and "Traceback" not in err
    assert not (out / "scores.jsonl").exists() and not (out / LOCK_NAME).exists()
    monkeypatch.undo()
    assert memrisk_main(["run", "--agent", "stale", "--limit", "5", "--out", str(out), "--json", "--resume"]) == 0
    resumed = capsys.readouterr().out
    fresh = tmp_path / "fresh"
    assert memrisk_main(["run", "--agent", "stale", "--limit", "5", "--out", str(fresh), "--json"]) == 0
    assert capsys.readouterr().out == resumed
    assert (out / "scores.jsonl").read_bytes() == (fresh / "scores.jsonl").read_bytes()


def test_a_full_disk_while_finishing_leaves_no_half_written_result(tmp_path, monkeypatch):
    out = tmp_path / "out"
    real = Path.write_text

    def write_text(self, *args, **kwargs):
        if self.name.startswith("results_"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", write_text)
    with pytest.raises(MemriskError, match=re.escape(f"{out}: no space left while writing the run's scores")):
        run_benchmark(oracle_named("oracle"), [multi_episode(1)], dataset_hash="h", out=out, progress=False)
    assert sorted(p.name for p in out.rglob("*") if p.is_file()) == ["manifest.json", "traces.jsonl"]
    monkeypatch.undo()
    run_benchmark(oracle_named("oracle"), [multi_episode(1)], dataset_hash="h", out=out, resume=True,
                  progress=False)
    assert list((out / "oracle").glob("results_*.json")) and (out / "scores.jsonl").exists()


def test_other_write_errors_are_not_reported_as_a_full_disk(tmp_path, monkeypatch):
    from lm_eval_memrisk.running import run_store

    def fsync(fd: int) -> None:
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr(run_store.os, "fsync", fsync)
    with pytest.raises(OSError, match="I/O error"):
        run_benchmark(oracle_named("oracle"), [multi_episode(1)], dataset_hash="h", out=tmp_path / "o",
                      progress=False)
