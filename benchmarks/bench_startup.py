"""Start-up costs of the lm-eval integration.

1. What the discovery hook (``lm_eval_memrisk-autoload.pth``) adds to *every* Python
   start in an environment where MemRiskBench is installed: wall time of
   ``python -c pass`` in a bare venv vs the same kind of venv holding what
   ``pip install .`` puts into site-packages for the hook (the package, byte-compiled
   as pip does, and the .pth), and the latter with ``MEMRISK_NO_AUTOLOAD=1``.
   Medians over ``--runs`` starts, the three variants interleaved in a shuffled order
   so that machine noise hits them alike; wall and CPU (user + sys) time.  Also lists the modules the hook imports.
2. With ``--task-runs N``: wall time of one small task run end to end with the
   reference oracle, ``lm_eval`` (indexes ~14,700 built-in tasks) vs ``memrisk eval``
   (indexes ours), in the current environment.

Run:  python benchmarks/bench_startup.py [--runs 30] [--task-runs 3]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PTH = "lm_eval_memrisk-autoload.pth"
IMPORT_LINE = re.compile(r"import time:\s+\d+ \|\s+\d+ \|\s+(\S.*)$")


def make_venvs(root: Path) -> dict[str, Path]:
    """A bare venv and one with the package + .pth installed as pip would."""
    pythons = {}
    for name in ("bare", "hooked"):
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / name)], check=True)
        pythons[name] = root / name / "bin" / "python"
    site = Path(subprocess.run(
        [str(pythons["hooked"]), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True).stdout.strip())  # fmt: skip
    shutil.copytree(REPO / "lm_eval_memrisk", site / "lm_eval_memrisk",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))  # fmt: skip
    shutil.copy(REPO / "lm_eval_memrisk" / PTH, site / PTH)
    subprocess.run([str(pythons["hooked"]), "-m", "compileall", "-q", str(site / "lm_eval_memrisk")],
                   check=True)  # fmt: skip
    return pythons


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "MEMRISK_NO_AUTOLOAD", "PYTHONSTARTUP")}  # fmt: skip
    env.update(extra)
    return env


def start_ms(python: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + sys) milliseconds of one ``python -c pass``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([str(python), "-c", "pass"], env=env, check=True)
    wall = (time.perf_counter() - t0) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return wall, cpu


def pth_line_us(repeat: int = 5, number: int = 2000) -> float:
    """Microseconds to execute the .pth line once (best of ``repeat``), in this process."""
    import timeit

    line = (REPO / "lm_eval_memrisk" / PTH).read_text()
    saved = list(sys.meta_path)

    def once() -> None:
        exec(line, {})  # noqa: S102  (our own .pth line, exactly as site.py runs it)
        sys.meta_path[:] = saved

    return min(timeit.repeat(once, repeat=repeat, number=number)) / number * 1e6


def imported_modules(python: Path, env: dict[str, str]) -> list[str]:
    err = subprocess.run([str(python), "-X", "importtime", "-c", "pass"], env=env,
                         capture_output=True, text=True, check=True).stderr  # fmt: skip
    return [m.group(1).strip() for line in err.splitlines() if (m := IMPORT_LINE.search(line))]


def hook_cost(runs: int) -> None:
    with tempfile.TemporaryDirectory(prefix="memrisk-startup-") as tmp:
        py = make_venvs(Path(tmp))
        variants = {
            "bare venv": (py["bare"], clean_env()),
            "venv + .pth (hook on)": (py["hooked"], clean_env()),
            "venv + .pth, MEMRISK_NO_AUTOLOAD=1": (py["hooked"], clean_env(MEMRISK_NO_AUTOLOAD="1")),
        }
        for python, env in variants.values():  # warm the page cache
            start_ms(python, env)
        walls: dict[str, list[float]] = {name: [] for name in variants}
        cpus: dict[str, list[float]] = {name: [] for name in variants}
        order = list(variants)
        rng = random.Random(0)
        for _ in range(runs):
            rng.shuffle(order)  # no variant always runs first (position bias)
            for name in order:
                python, env = variants[name]
                wall, cpu = start_ms(python, env)
                walls[name].append(wall)
                cpus[name].append(cpu)
        base_wall = statistics.median(walls["bare venv"])
        base_cpu = statistics.median(cpus["bare venv"])
        print(f"python -c pass, median of {runs} starts each (interleaved):")
        for name in variants:
            wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
            print(f"  {name:<36} wall {wall:6.2f} ms ({wall - base_wall:+.2f} vs bare; "
                  f"min {min(walls[name]):.2f})   cpu {cpu:6.2f} ms ({cpu - base_cpu:+.2f})")  # fmt: skip
        print(f"executing the .pth line itself (hook on), in process: {pth_line_us():.1f} us")
        extra = sorted(set(imported_modules(py["hooked"], clean_env()))
                       - set(imported_modules(py["bare"], clean_env())))  # fmt: skip
        print(f"modules the hook imports at start-up: {', '.join(extra) or 'none'}")


def task_wall(runs: int) -> None:
    flags = ["--model", "memrisk-agent", "--model_args", "agent=oracle", "--tasks", "memriskbench_r3"]
    bindir = Path(sys.executable).parent
    with tempfile.TemporaryDirectory() as tmp:
        for name, cmd in (("lm_eval", [str(bindir / "lm_eval"), *flags, "--output_path", tmp]),
                          ("memrisk eval", [str(bindir / "memrisk"), "eval", *flags, "--output_path", tmp])):
            times = []
            for _ in range(runs):
                t0 = time.perf_counter()
                subprocess.run(cmd, capture_output=True, check=True)
                times.append(time.perf_counter() - t0)
            print(f"{name:<13} one task (24 episodes, oracle): median {statistics.median(times):.2f} s "
                  f"over {len(times)} runs")  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--task-runs", type=int, default=0)
    args = ap.parse_args()
    hook_cost(args.runs)
    if args.task_runs:
        task_wall(args.task_runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
