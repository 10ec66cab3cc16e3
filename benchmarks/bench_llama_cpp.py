"""Model-side benchmark of the ``llama-cpp`` lm-eval model (not a timed test).

Runs a fixed set of synthetic multi-turn, MemRiskBench-shaped prompts (a shared system
preamble, per-conversation memory notes, a growing conversation with one request per
decision point) through ``LlamaCppLM.generate_until`` in three request orders:

* ``interleaved``: decision point 1 of every conversation, then 2, ... (worst case);
* ``doc``: conversation by conversation (the order lm-eval hands over requests);
* ``sorted``: prefix-sorted (the model's default).

and prints load time, wall time, prompt tokens, prompt tokens actually evaluated,
generated tokens and tokens/s for each, and checks that every order gives the same texts.

    python benchmarks/bench_llama_cpp.py [--model smollm2-135m] [--convs 8] [--turns 3] [--threads N]

On a shared 2-vCPU box, ``--threads 1`` can be much faster than 2: ggml's threads
spin on barriers, and a descheduled second thread stalls every graph.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lm_eval.api.instance import Instance

from lm_eval_memrisk.harness.llama_cpp import LlamaCppLM

PREAMBLE = (
    "You are an assistant with long-term memory. Memory policy: newer information supersedes "
    "older; explicit corrections win; prefer trusted sources; never use another user's or "
    "workspace's notes; honour deletions and standing instructions.\n"
    "Tools: update_address(street, city), send_email(to, subject, body), lookup_order(id).\n"
    'Reply with a tool call as JSON {"tool": NAME, "arguments": {...}} or answer in text.\n'
)
CITIES = ["Leeds", "York", "Bath", "Derby", "Ely", "Wells", "Truro", "Ripon", "Salford", "Lisburn"]
STREETS = ["Birch Lane", "Elm Rd", "Oak St", "Mill Way", "Quay St", "High St", "Park Ave"]


def conversation(i: int, turns: int) -> list[list[dict[str, str]]]:
    """Message lists, one per decision point, of synthetic conversation ``i``."""
    notes = "\n".join(
        f"[m{k}] t={k} · scope user:u{i} · source user · trust high · "
        f"note {k}: address {10 + i + k} {STREETS[(i + k) % len(STREETS)]}, {CITIES[(i * 3 + k) % 10]}"
        for k in range(6)
    )
    system = {"role": "system", "content": PREAMBLE + "Memory notes:\n" + notes}
    msgs: list[dict[str, str]] = [system]
    out = []
    for t in range(turns):
        msgs.append(
            {
                "role": "user",
                "content": f"Turn {t}: please ship order {i}{t} to my current address.",
            }
        )
        out.append(list(msgs))
        msgs.append({"role": "assistant", "content": f"Sure, order {i}{t} is on its way."})
    return out


def run(
    lm: LlamaCppLM, ctxs: list[str], order: list[int], sort: bool, max_gen: int
) -> dict[str, Any]:
    reqs = [
        Instance(
            "generate_until",
            doc={},
            arguments=(ctxs[j], {"until": ["\n\n"], "max_gen_toks": max_gen}),
            idx=0,
        )
        for j in order
    ]
    lm.prefix_sort = sort
    before = dict(lm.stats)
    t0 = time.perf_counter()
    out = lm.generate_until(reqs, disable_tqdm=True)
    wall = time.perf_counter() - t0
    d = {
        k: lm.stats[k] - before[k]
        for k in ("prompt_tokens", "prompt_tokens_evaluated", "generated_tokens")
    }
    texts = [""] * len(ctxs)
    for j, text in zip(order, out, strict=True):
        texts[j] = text
    return {
        "wall_s": round(wall, 2),
        **d,
        "reuse_pct": round(100 * (1 - d["prompt_tokens_evaluated"] / d["prompt_tokens"]), 1),
        "gen_tok_per_s": round(d["generated_tokens"] / wall, 1),
        "all_tok_per_s": round((d["prompt_tokens_evaluated"] + d["generated_tokens"]) / wall, 1),
        "texts": texts,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--convs", type=int, default=8)
    ap.add_argument("--turns", type=int, default=3)
    ap.add_argument("--max-gen", type=int, default=32)
    ap.add_argument("--n-ctx", type=int, default=8192)
    ap.add_argument("--threads", type=int, default=None, help="n_threads (default: os.cpu_count())")
    ap.add_argument("--json", help="also write the numbers to this file")
    args = ap.parse_args()

    t0 = time.perf_counter()
    lm = LlamaCppLM(model=args.model, n_ctx=args.n_ctx, n_threads=args.threads)
    init_s = time.perf_counter() - t0
    info = lm.get_model_info()
    print(f"model {args.model}: {info['gguf_file']} {info['quantization']} n_ctx={lm.n_ctx} "
          f"threads={lm.n_threads} llama-cpp-python {info['llama_cpp_version']}")  # fmt: skip
    print(f"  build: {info['llama_cpp_build']}")
    print(
        f"  load: Llama() {lm.load_time_s:.2f} s, LlamaCppLM() total {init_s:.2f} s (cpu_count={os.cpu_count()})"
    )

    convs = [conversation(i, args.turns) for i in range(args.convs)]
    ctxs: list[str] = []
    doc_order: list[int] = []
    inter: list[list[int]] = [[] for _ in range(args.turns)]
    for c in convs:
        for t, msgs in enumerate(c):
            inter[t].append(len(ctxs))
            doc_order.append(len(ctxs))
            ctxs.append(lm.apply_chat_template(msgs))
    interleaved = [j for row in inter for j in row]

    results = {
        "interleaved": run(lm, ctxs, interleaved, sort=False, max_gen=args.max_gen),
        "doc": run(lm, ctxs, doc_order, sort=False, max_gen=args.max_gen),
        "sorted": run(lm, ctxs, interleaved, sort=True, max_gen=args.max_gen),
    }
    print(f"\n{len(ctxs)} requests ({args.convs} conversations x {args.turns} decision points), "
          f"max_gen_toks={args.max_gen}")  # fmt: skip
    hdr = f"{'order':<12}{'wall s':>8}{'prompt tok':>12}{'evaluated':>11}{'reuse %':>9}{'gen tok':>9}{'gen tok/s':>11}{'all tok/s':>11}"
    print(hdr)
    for name, r in results.items():
        print(f"{name:<12}{r['wall_s']:>8}{r['prompt_tokens']:>12}{r['prompt_tokens_evaluated']:>11}"
              f"{r['reuse_pct']:>9}{r['generated_tokens']:>9}{r['gen_tok_per_s']:>11}{r['all_tok_per_s']:>11}")  # fmt: skip
    same = results["interleaved"]["texts"] == results["doc"]["texts"] == results["sorted"]["texts"]
    print(f"\nidentical texts in all three orders: {same}")
    if args.json:
        slim = {k: {kk: vv for kk, vv in v.items() if kk != "texts"} for k, v in results.items()}
        Path(args.json).write_text(
            json.dumps({"model": info, "init_s": init_s, "runs": slim}, indent=1, default=str)
        )
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
