"""Start-up costs of the lm-eval integration.

1. What the discovery hook (``lm_eval_memrisk-autoload.pth``) adds to *every*
   Python start: median over N runs of the cumulative import time of
   ``lm_eval_memrisk._autoload`` from ``python -X importtime -c pass``.
2. Wall time of one small task run end to end with the reference oracle:
   ``lm_eval`` (indexes ~14,700 built-in tasks) vs ``memrisk eval`` (indexes ours).

Run:  python benchmarks/bench_startup.py [--runs 20]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time

LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|\s+(\S.*)$")


def hook_cost_us(runs: int) -> tuple[float, list[int]]:
    samples = []
    for _ in range(runs):
        err = subprocess.run([sys.executable, "-X", "importtime", "-c", "pass"], capture_output=True, text=True).stderr
        total = 0
        for line in err.splitlines():
            m = LINE.search(line)
            if m and m.group(3).strip() in ("lm_eval_memrisk._autoload", "lm_eval_memrisk"):
                total += int(m.group(1))  # self time of both modules
        samples.append(total)
    return statistics.median(samples), samples


def wall(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, capture_output=True, check=True)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--task-runs", type=int, default=3)
    args = ap.parse_args()
    med, samples = hook_cost_us(args.runs)
    if not any(samples):
        print("the autoload .pth is not installed in this environment (pip install . installs it)")
    else:
        print(f"discovery hook cost per Python start: median {med / 1000:.2f} ms over {args.runs} runs "
              f"(min {min(samples) / 1000:.2f}, max {max(samples) / 1000:.2f})")
    flags = ["--model", "memrisk-agent", "--model_args", "agent=oracle", "--tasks", "memriskbench_r3"]
    with tempfile.TemporaryDirectory() as tmp:
        for name, cmd in (("lm_eval", ["lm_eval", *flags, "--output_path", tmp]),
                          ("memrisk eval", ["memrisk", "eval", *flags, "--output_path", tmp])):
            times = [wall(cmd) for _ in range(args.task_runs)]
            print(f"{name:<13} one task (24 episodes, oracle): median {statistics.median(times):.2f} s "
                  f"over {len(times)} runs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
