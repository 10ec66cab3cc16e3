"""In-process llama.cpp vs an OpenAI-compatible server driven concurrently by lm-eval.

The same GGUF is run (1) in process through our ``llama-cpp`` model and (2) through
lm-eval's own ``local-chat-completions`` with ``num_concurrent=N`` against
llama-cpp-python's server (``python -m llama_cpp.server``, extra ``server``), for each
N.  Both in scripted mode (one lm-eval request per decision point) and, with
``--modes scripted,interactive``, in interactive mode (``memrisk-agent`` wrapping the
same backends; each round sends the pending steps of all episodes in one
``generate_until`` call, which the API model sends ``num_concurrent`` at a time).

Reports wall time, tokens/s (prompt + generated tokens of the in-process run, counted
by llama.cpp, over each configuration's wall time), the ratio to the in-process run, and whether the
replies are byte-identical to the in-process replies.  ``--tools native`` passes each
episode's tools natively instead: to the GGUF's chat template in process, and as the
OpenAI ``tools`` field through ``memrisk-chat-completions`` (lm-eval's
local-chat-completions sends no tools); a tool call the server returns as
``message.tool_calls`` comes back as ``<tool_call>`` text, so replies may differ from
the in-process text in form while parsing to the same action.

    python benchmarks/bench_serving.py [--per-risk 6] [--concurrency 1,2,4] [--threads 1]
        [--modes scripted] [--tools text] [--model smollm2-135m] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lm_eval_memrisk._autoload import install, tasks_dir
from lm_eval_memrisk.harness.model_files import resolve_model

TASKS = [f"memriskbench_r{i}" for i in range(1, 6)]
ALIAS = "served-gguf"
SERVER_GEN_KWARGS = "repeat_penalty=1.0"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def llama_cpp_server(gguf: Path, threads: int, n_ctx: int, log: Path) -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server on 127.0.0.1; always stopped."""
    port = _free_port()
    cmd = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
        "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", str(threads),
        "--n_threads_batch", str(threads), "--model_alias", ALIAS, "--seed", "1234",
        "--verbose", "False",
    ]  # fmt: skip
    with open(log, "wb") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited: {log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    raise RuntimeError("server not ready after 120 s") from None
                time.sleep(0.25)
        yield f"http://127.0.0.1:{port}/v1/chat/completions"
    finally:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if proc.poll() is not None:
                break
            os.killpg(proc.pid, sig)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                continue


def evaluate(
    model: str, model_args: str, per_risk: int, gen_kwargs: str | None = None, tools: str = "text"
) -> tuple[float, dict[str, list[str]], Any]:
    """One lm-eval run over the slice; (wall s, replies by episode, results)."""
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    metadata = {"tools": tools} if tools != "text" else None
    tm = TaskManager(include_path=str(tasks_dir()), include_defaults=False, metadata=metadata)
    t0 = time.perf_counter()
    res = simple_evaluate(
        model=model, model_args=model_args, tasks=TASKS, task_manager=tm,
        samples={t: list(range(per_risk)) for t in TASKS}, apply_chat_template=True,
        log_samples=True, bootstrap_iters=0, gen_kwargs=gen_kwargs,
    )  # fmt: skip
    wall = time.perf_counter() - t0
    replies = {s["doc"]["episode_id"]: [r[0] for r in s["resps"]]
               for v in res["samples"].values() for s in v}  # fmt: skip
    return wall, replies, res


def as_mode(mode: str, base: str, base_args: str, max_steps: int, tools: str = "text") -> tuple[str, str]:
    """lm-eval (model, model_args) for a backend in scripted or interactive mode."""
    if mode == "scripted":
        return base, base_args
    native = ",tools=native" if tools == "native" else ""
    return "memrisk-agent", f"base={base},{base_args},mode=interactive,max_steps={max_steps}{native}"


def _reply_text(reply: str) -> str:
    """The model's text: interactive runs return an envelope holding the decision record."""
    from lm_eval_memrisk.scoring.sample_record import ENVELOPE

    if not reply.startswith(ENVELOPE):
        return reply
    decision = json.loads(reply[len(ENVELOPE):])["decision"]
    return json.dumps(decision.get("steps", decision), sort_keys=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--per-risk", type=int, default=6, help="episodes per risk (R1-R5)")
    ap.add_argument("--concurrency", default="1,2,4")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--n-ctx", type=int, default=8192)
    ap.add_argument("--modes", default="scripted", help="scripted and/or interactive")
    ap.add_argument("--max-steps", type=int, default=2, help="interactive mode step limit")
    ap.add_argument("--tools", default="text", choices=("text", "native"),
                    help="native: tools to the chat template / the OpenAI tools field")
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args()
    install()
    gguf = resolve_model(args.model, None, None, None)
    local_args = f"model={args.model},n_threads={args.threads},n_ctx={args.n_ctx}"
    # lm-eval's local-chat-completions sends no tools; ours does (same payload without)
    api_model = "memrisk-chat-completions" if args.tools == "native" else "local-chat-completions"
    rows: list[dict[str, Any]] = []
    for mode in args.modes.split(","):

        def wrap(base: str, base_args: str, mode: str = mode) -> tuple[str, str]:
            return as_mode(mode, base, base_args, args.max_steps, args.tools)

        wall, ref, res = evaluate(*wrap("llama-cpp", local_args), args.per_risk, tools=args.tools)
        stats = res["config"].get("llama_cpp_stats", {})
        tokens = stats.get("prompt_tokens", 0) + stats.get("generated_tokens", 0)
        base_row = {"mode": mode, "tools": args.tools, "backend": "in-process llama-cpp", "N": "-", "wall_s": wall,
                    "episodes": len(ref), "requests": stats.get("n_requests"), "tokens": tokens,
                    "same_replies": "reference"}  # fmt: skip
        rows.append(base_row)
        print(json.dumps(base_row), flush=True)
        with tempfile.TemporaryDirectory() as tmp, llama_cpp_server(
            gguf, args.threads, args.n_ctx, Path(tmp) / "server.log"
        ) as url:
            for n in (int(x) for x in args.concurrency.split(",")):
                api_args = (f"base_url={url},model={ALIAS},num_concurrent={n},tokenizer_backend=None,"
                            f"max_retries=1,timeout=900")  # fmt: skip
                # llama-cpp-python's server defaults to repeat_penalty=1.1; our model and
                # greedy decoding use 1.0 (lm-eval passes extra gen_kwargs through)
                wall_n, replies, _ = evaluate(*wrap(api_model, api_args), args.per_risk,
                                              gen_kwargs=SERVER_GEN_KWARGS, tools=args.tools)  # fmt: skip
                differing = sorted(e for e in ref if _reply_text(str(ref[e])) != _reply_text(str(replies.get(e))))
                row = {"mode": mode, "tools": args.tools, "backend": f"llama_cpp.server + {api_model}", "N": n,
                       "wall_s": wall_n, "episodes": len(replies), "ratio_to_in_process": wall_n / wall,
                       "same_replies": f"{len(ref) - len(differing)}/{len(ref)}",
                       "differing": differing}  # fmt: skip
                rows.append(row)
                print(json.dumps(row), flush=True)
                if differing and mode == "scripted":
                    e = differing[0]
                    print(f"  e.g. {e}: in-process {ref[e]!r:.200}\n        server     {replies[e]!r:.200}")
        # tokens/s: the in-process run's token count (same prompts, same GGUF tokenizer)
        for row in rows:
            if row["mode"] == mode:
                row["tokens_per_s"] = tokens / row["wall_s"] if tokens else None
    print("\n| mode | backend | N | wall s | tokens/s | ratio to in-process | replies = in-process |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        ratio = f"{r['ratio_to_in_process']:.2f}" if "ratio_to_in_process" in r else "1.00"
        tps = f"{r['tokens_per_s']:.0f}" if r.get("tokens_per_s") else "-"
        print(f"| {r['mode']} | {r['backend']} | {r['N']} | {r['wall_s']:.1f} | {tps} | {ratio} | {r['same_replies']} |")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
