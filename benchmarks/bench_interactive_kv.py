"""Interactive vs scripted on the embedded model: KV-cache reuse and wall time per model call.

    PYTHONPATH=. timeout 3600 python benchmarks/bench_interactive_kv.py --threads 1 --per-risk 2
    PYTHONPATH=. timeout 3600 python benchmarks/bench_interactive_kv.py --threads 1 --tool lookup_records --limit 10

Runs the same episodes (the first ``--per-risk`` main-track episodes of each risk, or
with ``--tool`` the first ``--limit`` main-track episodes offering that tool, where
the model may take several steps) three times on one in-process ``llama-cpp`` model:

* ``scripted``: one reply per decision point, prefix-sorted batches (``memrisk run``'s
  scripted mode);
* ``interactive``: up to ``--max-steps`` steps per decision point, one episode at a
  time, the KV cache kept between the steps of an episode;
* ``interactive-reset``: the same with the cache reset before every call (the
  behaviour before issue #16), to show what the reuse saves and that the replies are
  the same.

For every model call it records prompt tokens, prompt tokens llama.cpp evaluated,
generated tokens and wall time (from the model's ``llama_cpp_stats``); it prints a
JSON summary with per-call medians and the ratio interactive / scripted of the mean
wall time per model call (goal: <= 1.3).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from lm_eval_memrisk.episodes.loader import load_episodes
from lm_eval_memrisk.episodes.records import RISKS, Episode
from lm_eval_memrisk.episodes.trace import Trace
from lm_eval_memrisk.harness.lm_adapter import lm_generate, load_lm
from lm_eval_memrisk.running.interactive import run_interactive
from lm_eval_memrisk.running.runner import Generate, Request, run_scripted
from lm_eval_memrisk.scoring.scorer import score

COUNTERS = ("prompt_tokens", "prompt_tokens_evaluated", "generated_tokens")


def measured(lm: Any, generate: Generate, calls: list[dict[str, Any]]) -> Generate:
    """``generate`` that appends one record per call to ``calls``."""

    def wrapped(batch: Sequence[Request]) -> list[str]:
        before = dict(lm.stats)
        t0 = time.perf_counter()
        replies = generate(batch)
        wall = time.perf_counter() - t0
        calls.append({
            "requests": len(batch), "wall_s": wall,
            **{k: lm.stats[k] - before[k] for k in COUNTERS},
            "episode": batch[0].episode.id, "decision": batch[0].decision_id,
        })
        return replies

    return wrapped


def summarize(calls: list[dict[str, Any]], traces: list[Trace]) -> dict[str, Any]:
    n = sum(c["requests"] for c in calls)
    wall = sum(c["wall_s"] for c in calls)
    per_call = [c["wall_s"] / c["requests"] for c in calls]
    return {
        "model_calls": n, "wall_s": round(wall, 2),
        "mean_wall_per_call_s": round(wall / n, 3),
        "median_wall_per_call_s": round(statistics.median(per_call), 3),
        **{k: sum(c[k] for c in calls) for k in COUNTERS},
        "generated_tokens_per_call": round(sum(c["generated_tokens"] for c in calls) / n, 1),
        "replies": [d.raw_reply for t in traces for d in t.decisions],
        "steps": [s.raw_reply for t in traces for d in t.decisions for s in (d.steps or ())],
    }


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="smollm2-135m")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--per-risk", type=int, default=2)
    p.add_argument("--max-steps", type=int, default=4)
    p.add_argument("--tool", help="episodes that offer this tool (e.g. lookup_records) instead of --per-risk")
    p.add_argument("--limit", type=int, default=10, help="with --tool: at most this many episodes")
    p.add_argument("--json", help="also write the full result (with per-call records) here")
    args = p.parse_args(argv)

    episodes: list[Episode] = []
    main_track = load_episodes(None, track="main")
    if args.tool:
        episodes = [e for e in main_track if any(t.name == args.tool for t in e.tools)][: args.limit]
    for risk in RISKS if not args.tool else ():
        episodes += [e for e in main_track if e.risk == risk][: args.per_risk]
    lm = load_lm("llama-cpp", f"model={args.model},n_threads={args.threads}")
    generate = lm_generate(lm)
    out: dict[str, Any] = {"episodes": [e.id for e in episodes], "model": args.model, "threads": args.threads}
    all_calls: dict[str, list[dict[str, Any]]] = {}

    runs: dict[str, Callable[[Generate], list[Trace]]] = {
        "scripted": lambda g: run_scripted(episodes, g, "bench", progress=False),
        "interactive": lambda g: run_interactive(
            episodes, g, "bench", max_steps=args.max_steps, episode_major=True, progress=False),
    }
    for mode, run in (("scripted", runs["scripted"]), ("interactive", runs["interactive"]),
                      ("interactive-reset", runs["interactive"])):
        if mode == "interactive-reset":
            lm._continues_last_prompt = lambda context: False  # the old behaviour: reset every call
        lm.llm.reset()
        lm._last_prompt = []
        calls: list[dict[str, Any]] = []
        traces = run(measured(lm, generate, calls))
        all_calls[mode] = calls
        out[mode] = summarize(calls, traces)
        out[mode]["passed"] = sum(score(e, t).success for e, t in zip(episodes, traces))
        out[mode]["passed_safety_aware"] = sum(
            score(e, t, variant="safety_aware").success for e, t in zip(episodes, traces))
        if args.json:  # partial results survive a timeout
            with open(args.json, "w", encoding="utf-8") as fh:
                json.dump({**out, "calls": all_calls}, fh, indent=2)

    inter, reset, scripted = out["interactive"], out["interactive-reset"], out["scripted"]
    out["same_replies_with_and_without_reuse"] = inter["steps"] == reset["steps"]
    out["ratio_interactive_vs_scripted_mean_wall_per_call"] = round(
        inter["mean_wall_per_call_s"] / scripted["mean_wall_per_call_s"], 3)
    out["ratio_interactive_vs_scripted_median_wall_per_call"] = round(
        inter["median_wall_per_call_s"] / scripted["median_wall_per_call_s"], 3)
    out["first_episode_steps"] = [
        {k: c[k] for k in ("decision", "prompt_tokens", "prompt_tokens_evaluated", "generated_tokens")}
        | {"wall_s": round(c["wall_s"], 3)}
        for c in all_calls["interactive"] if c["episode"] == episodes[0].id
    ]
    brief = {k: v for k, v in out.items() if k not in ("scripted", "interactive", "interactive-reset")}
    for mode in ("scripted", "interactive", "interactive-reset"):
        brief[mode] = {k: v for k, v in out[mode].items() if k not in ("replies", "steps")}
    print(json.dumps(brief, indent=2))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({**out, "calls": all_calls}, fh, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
