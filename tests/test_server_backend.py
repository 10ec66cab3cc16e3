"""Issue §7: lm-eval's own ``local-chat-completions`` against an OpenAI-compatible
llama.cpp server (``python -m llama_cpp.server``) on 127.0.0.1 with SmolLM2.

The server is started once per module on a free port and always stopped (bounded
waits, SIGTERM then SIGKILL of its process group). Skips when the server extra
(``pip install 'lm-eval-memrisk[server]'``) or the model is unavailable.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
SERVER_MODULES = ("llama_cpp", "fastapi", "uvicorn", "sse_starlette", "starlette_context",
                  "pydantic_settings", "aiohttp", "tenacity")  # fmt: skip
_missing = [m for m in SERVER_MODULES if importlib.util.find_spec(m) is None]

pytestmark = [
    pytest.mark.model,
    pytest.mark.skipif(
        bool(_missing),
        reason=f"server extra missing ({', '.join(_missing)}): pip install 'lm-eval-memrisk[server]'",
    ),
]

START_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 15.0


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Terminate the server's process group; bounded waits."""
    if proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, STOP_TIMEOUT_S), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, smollm2_file: Path) -> Iterator[str]:
    model = smollm2_file
    port = _free_port()
    log = tmp_path_factory.mktemp("server") / "server.log"
    cmd = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(model),
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096",
        "--n_threads", str(len(os.sched_getaffinity(0))), "--model_alias", "smollm2",  # as llama-cpp
        "--seed", "1234", "--verbose", "False",
    ]  # fmt: skip
    with open(log, "wb") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                pytest.fail(
                    f"llama_cpp.server exited with {proc.returncode}:\n{log.read_text()[-3000:]}"
                )
            try:
                with urllib.request.urlopen(f"{base}/models", timeout=2) as r:
                    ids = [m["id"] for m in json.load(r)["data"]]
                    assert "smollm2" in ids, ids
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    pytest.fail(
                        f"server not ready after {START_TIMEOUT_S}s:\n{log.read_text()[-3000:]}"
                    )
                time.sleep(0.25)
        yield base
    finally:
        _stop(proc)
        assert proc.poll() is not None, "server still running after stop"


def _chat_lm(base: str) -> Any:
    from lm_eval.api.registry import get_model

    import lm_eval_memrisk.harness.llama_cpp  # noqa: F401  (lm-eval built-ins + llama-cpp)

    cls = get_model("local-chat-completions")
    return cls(
        base_url=f"{base}/chat/completions", model="smollm2", tokenizer_backend=None,
        max_retries=1, timeout=300, max_gen_toks=32,  # the timeout guards a hang (a loaded 2-core machine took > 120 s)
    )  # fmt: skip


def test_local_chat_completions_generate_until(server: str) -> None:
    from lm_eval.api.instance import Instance
    from lm_eval.models.api_models import JsonChatStr

    lm = _chat_lm(server)
    convs = [
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Count from 1 to 20."},
        ],
        [{"role": "user", "content": "The capital of France is?"}],
    ]
    gk = {"until": ["\n3."], "max_gen_toks": 32, "do_sample": False, "repeat_penalty": 1.0}
    reqs = [
        Instance("generate_until", doc={}, arguments=(JsonChatStr(json.dumps(c)), dict(gk)), idx=0)
        for c in convs
    ]
    out = lm.generate_until(reqs)
    assert len(out) == 2 and all(isinstance(o, str) and o for o in out)
    assert "\n3." not in out[0]  # the stop string went through to the server
    # same greedy text as the in-process backend (same build, template, settings)
    from lm_eval_memrisk.harness.llama_cpp import LlamaCppLM

    local = LlamaCppLM(model="smollm2-135m", n_ctx=4096, seed=1234)
    ctxs = [local.apply_chat_template(c) for c in convs]
    local_out = local.generate_until(
        [Instance("generate_until", doc={}, arguments=(c, dict(gk)), idx=0) for c in ctxs]
    )
    assert out == local_out


def _memriskbench_ready() -> str | None:
    """None when the MemRiskBench tasks and data can run; else why not."""
    if not (REPO / "lm_eval_memrisk" / "harness" / "task.py").is_file():
        return "lm_eval_memrisk/harness/task.py does not exist yet"
    if not (REPO / "tasks" / "memriskbench" / "memriskbench_r1.yaml").is_file():
        return "tasks/memriskbench/memriskbench_r1.yaml does not exist yet"
    if not any((REPO / "lm_eval_memrisk" / "data").glob("episodes_v1*.jsonl")):
        return "the episode data (lm_eval_memrisk/data/episodes_v1.jsonl) does not exist yet"
    return None


def test_memriskbench_r1_through_simple_evaluate(server: str) -> None:
    why = _memriskbench_ready()
    if why:
        pytest.skip(why)
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    lm = _chat_lm(server)
    tm = TaskManager(include_path=str(REPO / "tasks"), include_defaults=False)
    res = simple_evaluate(
        model=lm, tasks=["memriskbench_r1"], limit=2, apply_chat_template=True,
        task_manager=tm, bootstrap_iters=0, log_samples=True,
    )  # fmt: skip
    assert res is not None
    r1 = res["results"]["memriskbench_r1"]
    for metric in ("pass,none", "score,none"):
        assert 0.0 <= float(r1[metric]) <= 1.0
    samples = res["samples"]["memriskbench_r1"]
    assert len(samples) == 2
    for s in samples:  # every decision point got a real reply from the server
        assert s["resps"] and all(isinstance(r[0], str) and r[0] for r in s["resps"])


def test_native_tools_through_the_server_match_in_process(server: str) -> None:
    """tools=native through ``memrisk-chat-completions``: the server gets the OpenAI
    ``tools`` field and renders it with the GGUF's template, as the in-process
    ``llama-cpp`` model does with the same tools: the replies are the same."""
    why = _memriskbench_ready()
    if why:
        pytest.skip(why)
    from lm_eval import simple_evaluate
    from lm_eval.api.registry import get_model
    from lm_eval.tasks import TaskManager

    from lm_eval_memrisk.harness.llama_cpp import LlamaCppLM

    api = get_model("memrisk-chat-completions")(
        base_url=f"{server}/chat/completions", model="smollm2", tokenizer_backend=None,
        max_retries=1, timeout=300,  # guards a hang, not a speed test (a loaded 2-core machine took > 120 s)
    )  # fmt: skip
    local = LlamaCppLM(model="smollm2-135m", n_ctx=4096, seed=1234)
    replies = []
    for lm in (api, local):
        tm = TaskManager(include_path=str(REPO / "tasks"), include_defaults=False, metadata={"tools": "native"})
        res = simple_evaluate(
            model=lm, tasks=["memriskbench_r1"], limit=2, apply_chat_template=True, task_manager=tm,
            bootstrap_iters=0, log_samples=True, gen_kwargs="repeat_penalty=1.0",
        )  # fmt: skip
        samples = res["samples"]["memriskbench_r1"]
        assert len(samples) == 2 and all(s["episodes"]["tools"] == "native" for s in samples)
        replies.append([s["resps"] for s in samples])
    assert replies[0] == replies[1]
