"""Fuzzing outputs: found.jsonl, mutants.jsonl, report.json, report.md, budget_curve.png.

``found.jsonl`` holds every failure-inducing mutant of every run (first occurrence of
an id wins), (parent passes, mutant fails) pairs first; it is a normal episode file
(``load_episodes(path, track="all")``) and runs as an lm-eval task with
``--tasks memriskbench_rN --metadata '{"episodes": "DIR/found.jsonl"}'``.
Unique failures and coverage at B are reported as mean +- sd (sample sd) over seeds.
With a margin source (a planted-weakness agent), every ``mutants.jsonl`` line carries
the mutant's ``margin`` against its parent's (``before``, ``after``, ``shrink``, the
``cause`` that shrank most, ``fired``; :class:`lm_eval_memrisk.fuzz.margins.MarginChange`),
and the found list of ``report.md`` shows margin before -> after.  A model's margins
(``--model llama-cpp``) add ``nats_before``/``nats_after`` to ``margin`` and a
``margin_cost`` (prompt tokens evaluated, candidate tokens scored for the mutant's
margins) to each line; each run's ``margin_cost`` in ``report.json`` sums the mutants'
costs (``mutants``) and every margin the run computed, parents and probes included
(``all``), and ``report.md`` lists both.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lm_eval_memrisk.episodes.codec import dumps_episode
from lm_eval_memrisk.episodes.risks import risk_ids
from lm_eval_memrisk.fuzz.campaign import Executed, RunResult


def mean_sd(values: Sequence[float]) -> dict[str, Any]:
    vals = [float(v) for v in values]
    sd = statistics.stdev(vals) if len(vals) > 1 else 0.0
    return {"mean": statistics.fmean(vals) if vals else 0.0, "sd": sd, "values": vals}


def found_episodes(runs: Sequence[RunResult]) -> list[Executed]:
    """Failing mutants over all runs, pairs first, each id once."""
    out: list[Executed] = []
    seen: set[str] = set()
    for want_pair in (True, False):
        for run in runs:
            for e in run.failures:
                if e.pair == want_pair and e.episode.id not in seen:
                    seen.add(e.episode.id)
                    out.append(e)
    return out


def write_found(path: Path, runs: Sequence[RunResult]) -> int:
    found = found_episodes(runs)
    path.write_text("".join(dumps_episode(e.episode) + "\n" for e in found), encoding="utf-8")
    return len(found)


def write_mutants(path: Path, runs: Sequence[RunResult]) -> None:
    lines = []
    for run in runs:
        for e in run.executed:
            cost = e.margin.cost if e.margin is not None else None
            extra = {"margin_cost": cost.to_json()} if cost is not None else {}
            lines.append(
                json.dumps(
                    {
                        **extra,
                        "strategy": run.strategy,
                        "seed": run.seed,
                        "index": e.index,
                        "id": e.episode.id,
                        "parent": e.parent_id,
                        "operators": list(e.operators),
                        "risk": e.episode.risk,
                        "passed": e.passed,
                        "parent_passed": e.parent_passed,
                        "failing": [list(f) for f in e.failing],
                        "new_points": e.new_points,
                        "divergence": e.divergence,
                        "reply": e.reply,
                        "margin": e.margin.to_json() if e.margin is not None else None,
                    },
                    sort_keys=True,
                    ensure_ascii=False,
                )
            )
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def table(runs: Sequence[RunResult]) -> dict[str, dict[str, Any]]:
    """strategy -> mean +- sd of unique failures, coverage, failures and pairs at B
    (+ false positives and per-weakness budget to first detection when planted)."""
    out: dict[str, dict[str, Any]] = {}
    for name in dict.fromkeys(r.strategy for r in runs):
        mine = [r.summary() for r in runs if r.strategy == name]
        row: dict[str, Any] = {
            "seeds": [s["seed"] for s in mine],
            **{
                k: mean_sd([s[k] for s in mine])
                for k in ("unique_failures", "coverage", "failures", "pairs", "executed")
            },
        }
        if all("margin_shrinks" in s for s in mine):
            row["margin_shrinks"] = mean_sd([s["margin_shrinks"] for s in mine])
        if all("margin_cost" in s for s in mine):
            row["margin_cost"] = {
                f"{part}_{k}": mean_sd([s["margin_cost"][part][k] for s in mine])
                for part in ("mutants", "all")
                for k in ("prompt_tokens", "tokens_scored")
            }
        if all("planted" in s for s in mine):
            row["false_positives"] = mean_sd([s["false_positives"] for s in mine])
            found = sorted({w for s in mine for w in s["first_detection"]})
            row["first_detection"] = {
                w: {
                    "found_in": sum(w in s["first_detection"] for s in mine),
                    "median_budget": statistics.median(
                        [s["first_detection"][w] for s in mine if w in s["first_detection"]]
                    ),
                }
                for w in found
            }
        out[name] = row
    return out


def build_report(runs: Sequence[RunResult], config: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "config": dict(config),
        "table": table(runs),
        "runs": [
            {
                **r.summary(),
                "curve": r.curve,
                "unique": [
                    {"root_cause": ":".join(key), "first_mutant": m}
                    for key, m in sorted(r.unique.items())
                ],
            }
            for r in runs
        ],
    }


def _pm(cell: Mapping[str, Any], digits: int) -> str:
    return f"{cell['mean']:.{digits}f} ± {cell['sd']:.{digits}f}"


def markdown(report: Mapping[str, Any], found: Sequence[Executed], out_dir: str) -> str:
    cfg = report["config"]
    lines = [
        "# MemRiskBench fuzzing report",
        "",
        (
            f"System under test: `{cfg.get('sut')}` · memory policy `{cfg.get('memory_policy')}` · "
            f"budget B = {cfg.get('budget')} mutant executions per run · seeds {cfg.get('seeds')}"
        ),
        "",
        f"Command: `{cfg.get('command')}`",
        "",
        (
            f"Seed checkpoints: {cfg.get('n_seeds')} (skipped: {cfg.get('skipped_seeds')}); "
            f"decision points sent to the system under test: {cfg.get('model_calls')}."
        ),
        "",
        "## Unique failures and coverage at B (mean ± sd over seeds)",
        "",
        "| strategy | UF@B | Cov@B | failing mutants | (parent pass, mutant fail) pairs |",
        "|---|---|---|---|---|",
    ]
    for name, row in report["table"].items():
        lines.append(
            f"| {name} | {_pm(row['unique_failures'], 1)} | {_pm(row['coverage'], 3)} | "
            f"{_pm(row['failures'], 1)} | {_pm(row['pairs'], 1)} |"
        )
    lines += [
        "",
        (
            "Unique failure = a distinct root cause of a (parent passes, mutant fails) pair: "
            "the planted weakness acting (planted-weakness agents), else (targeted risk, role "
            "of the implicated memory item). Coverage = covered (risk, check kind, operator, "
            "role, shown/hidden) points over the universe reachable from the seeds."
        ),
        "",
        "## Runs",
        "",
        (
            "| strategy | seed | executed | failures | pairs | UF | coverage "
            "| rejected (invalid, never run) | inapplicable | duplicates | model calls |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in report["runs"]:
        rejected = ", ".join(f"{k} {v}" for k, v in r["rejected"].items()) or "0"
        lines.append(
            f"| {r['strategy']} | {r['seed']} | {r['executed']} | {r['failures']} | {r['pairs']} | "
            f"{r['unique_failures']} | {r['coverage']:.3f} | {rejected} | "
            f"{r['inapplicable']} | {r['duplicates']} | {r['model_calls']} |"
        )
    costed = [r for r in report["runs"] if "margin_cost" in r]
    if costed:
        lines += [
            "",
            "## Margin cost (model margins)",
            "",
            "| strategy | seed | mutants: prompt tokens | mutants: tokens scored "
            "| all margins: prompt tokens | all margins: tokens scored |",
            "|---|---|---|---|---|---|",
        ]
        for r in costed:
            mut, every = r["margin_cost"]["mutants"], r["margin_cost"]["all"]
            lines.append(
                f"| {r['strategy']} | {r['seed']} | {mut['prompt_tokens']} | {mut['tokens_scored']} | "
                f"{every['prompt_tokens']} | {every['tokens_scored']} |"
            )
        lines += [
            "",
            "Prompt tokens: the decision prompts (and call prefixes) evaluated for margins; "
            "tokens scored: candidate tokens evaluated after them. *all* adds parents and probes.",
        ]
    lines += ["", "## Found episodes (pairs first)", ""]
    if not found:
        lines.append("No failure-inducing mutant was found.")
    for e in found[:50]:
        fails = ", ".join(f"{k} [{role}]" for k, role in e.failing)
        tag = "pair" if e.pair else "parent also fails"
        if e.margin is not None:
            tag += f"; margin {e.margin.before:g} -> {e.margin.after:g}"
        lines.append(
            f"- `{e.episode.id}` ({e.episode.risk}; {' > '.join(e.operators)}; {tag}): {fails}"
        )
    if len(found) > 50:
        lines.append(f"- ... and {len(found) - 50} more in found.jsonl")
    risks = sorted({e.episode.risk for e in found}, key=risk_ids().index)
    tasks = ",".join(f"memriskbench_{r.lower()}" for r in risks) or "memriskbench_r1"
    lines += [
        "",
        "## Running the found set as an lm-eval task",
        "",
        "```",
        f"lm_eval --model llama-cpp --model_args model=smollm2-135m --tasks {tasks} \\",
        f'  --metadata \'{{"episodes": "{out_dir}/found.jsonl"}}\'',
        "```",
        "",
        "(or `memrisk run --episodes DIR/found.jsonl --track all ...`).",
        "",
    ]
    return "\n".join(lines)


def plot_curves(path: Path, runs: Sequence[RunResult]) -> bool:
    """Budget curve PNG (unique failures and coverage vs budget); False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    import numpy as np

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for name in dict.fromkeys(r.strategy for r in runs):
        mine = [r for r in runs if r.strategy == name and r.curve]
        if not mine:
            continue
        n = max(len(r.curve) for r in mine)
        for ax, metric in zip(axes, ("unique_failures", "coverage")):
            ys = np.array(
                [[r.curve[min(i, len(r.curve) - 1)][metric] for i in range(n)] for r in mine]
            )
            x = np.arange(1, n + 1)
            mu, sd = ys.mean(axis=0), ys.std(axis=0, ddof=1) if len(mine) > 1 else np.zeros(n)
            ax.plot(x, mu, label=name)
            ax.fill_between(x, mu - sd, mu + sd, alpha=0.2)
    axes[0].set(xlabel="budget (mutant executions)", ylabel="unique failures", title="UF@budget")
    axes[1].set(xlabel="budget (mutant executions)", ylabel="coverage", title="Cov@budget")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120, metadata={"Software": None})
    plt.close(fig)
    return True


def write_all(out: Path, runs: Sequence[RunResult], config: Mapping[str, Any]) -> dict[str, Any]:
    """Write every output file into ``out``; returns the report dict."""
    out.mkdir(parents=True, exist_ok=True)
    n_found = write_found(out / "found.jsonl", runs)
    write_mutants(out / "mutants.jsonl", runs)
    report = build_report(runs, {**config, "found": n_found})
    (out / "report.json").write_text(
        json.dumps(report, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    plotted = plot_curves(out / "budget_curve.png", runs)
    text = markdown(report, found_episodes(runs), str(out))
    if plotted:
        text += "\n![budget curve](budget_curve.png)\n"
    (out / "report.md").write_text(text, encoding="utf-8")
    return report
