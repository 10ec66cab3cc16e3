"""lm-eval's ``--use_cache DB`` keeps finished generations across a crash.

A real ``memrisk eval`` run on the embedded GGUF is SIGKILLed part-way (once the cache
holds some replies), then rerun with the same flags: lm-eval takes the cached replies
and the model generates only the rest (llama-cpp's own request counter in the results
config says how many it generated).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.model]
pytest.importorskip("llama_cpp")
pytest.importorskip("sqlitedict")

REPO = Path(__file__).resolve().parents[1]
LIMIT = 4  # R1 episodes 0-3: one decision point each -> 4 requests


def _cached(db: Path) -> int:
    if not db.exists():
        return 0
    from sqlitedict import SqliteDict

    try:
        with SqliteDict(str(db), flag="r") as d:
            return len(d)
    except Exception:  # noqa: BLE001  (the writer may hold the file mid-creation)
        return 0


def _cmd(cache: Path, out: Path) -> list[str]:
    return [
        sys.executable, "-c", "import sys; from lm_eval_memrisk.cli import main; sys.exit(main(sys.argv[1:]))",
        "eval", "--model", "llama-cpp",
        "--model_args", "model=smollm2-135m,n_threads=1,n_ctx=4096,max_gen_toks=48",
        "--tasks", "memriskbench_r1", "--limit", str(LIMIT), "--apply_chat_template",
        "--use_cache", str(cache), "--output_path", str(out),
    ]  # fmt: skip


def test_killed_run_resumes_from_the_cache(tmp_path: Path, smollm2_file: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO), HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1")
    cache, db = tmp_path / "cache" / "smollm2", tmp_path / "cache" / "smollm2_rank0.db"
    log = tmp_path / "first.log"
    with open(log, "wb") as fh:
        proc = subprocess.Popen(_cmd(cache, tmp_path / "out1"), env=env, stdout=fh,
                                stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 240
        while _cached(db) < 2:  # let it finish two requests, then pull the plug
            assert proc.poll() is None, log.read_text()[-2000:]
            assert time.monotonic() < deadline, "no cached reply after 240 s"
            time.sleep(0.2)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    done_before = _cached(db)
    assert 2 <= done_before < LIMIT, "the kill must land part-way"
    assert not list((tmp_path / "out1").glob("*/results_*.json"))  # the first run never finished

    second = subprocess.run(_cmd(cache, tmp_path / "out2"), env=env, capture_output=True,
                            text=True, timeout=600, check=False)  # fmt: skip
    assert second.returncode == 0, second.stderr[-3000:]
    assert f"Cached requests: {done_before}, Requests remaining: {LIMIT - done_before}" in second.stderr
    (results,) = (tmp_path / "out2").glob("*/results_*.json")
    stats = json.loads(results.read_text())["config"]["llama_cpp_stats"]
    assert stats["n_requests"] == LIMIT - done_before  # the finished ones were not generated again
    assert _cached(db) == LIMIT
