"""Out-of-sample subset selection on planted-weakness systems (no model, CPU-light).

Selects on seed-0 outcomes of 12 planted profiles (p < 1) and 3 reference agents,
scores every method on fresh outcomes (seeds 1-5) against the known ranking; see
:mod:`selector.out_of_sample`.  Writes ``out_of_sample.json`` and ``out_of_sample.md``.

    python scripts/selector_out_of_sample.py --out docs/selector_out_of_sample

Real models join with ``--real NAME SELECTION_DIR FRESH_DIR...`` (lm-eval run folders
of the model sampled under different seeds; one fresh folder per fresh seed), e.g.
selection on seed 1 and evaluation on seed 2:

    python scripts/selector_out_of_sample.py --selection-seed 1 --fresh-seeds 2 \
      --real qwen runs/sampled/qwen-s1 runs/sampled/qwen-s2 --out docs/selector_out_of_sample_real
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.loader import dataset_hash, load_episodes
from selector.evaluate import Settings
from selector.io import load_runs
from selector.out_of_sample import RealRuns, evaluate, markdown
from selector.report import clean


def _real_runs(specs: list[list[str]], n_fresh: int, p: argparse.ArgumentParser) -> RealRuns | None:
    """``--real NAME SELECTION_DIR FRESH_DIR...`` specs -> RealRuns (None without any)."""
    if not specs:
        return None
    for spec in specs:
        if len(spec) != 2 + n_fresh:
            p.error(f"--real {' '.join(spec)}: give NAME, a selection folder and {n_fresh} fresh folder(s)")
    selection = load_runs([f"{spec[0]}={spec[1]}" for spec in specs], min_systems=1)
    fresh = tuple(load_runs([f"{spec[0]}={spec[2 + i]}" for spec in specs], min_systems=1) for i in range(n_fresh))
    return RealRuns(selection, fresh)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--fresh-seeds", default="1,2,3,4,5")
    p.add_argument("--selection-seed", type=int, default=0)
    p.add_argument("--bootstrap", type=int, default=1000)
    p.add_argument("--episodes", default=None,
                   help="dataset version or file (default: the default dataset); real runs must be on it")
    p.add_argument("--real", nargs="+", action="append", default=[], metavar="NAME SELECTION_DIR FRESH_DIR",
                   help="a real system: its name, the run folder to select on, one run folder per fresh seed")
    args = p.parse_args(argv)
    seeds = tuple(int(s) for s in args.fresh_seeds.split(","))
    try:
        real = _real_runs(args.real, len(seeds), p)
        result = evaluate(load_episodes(args.episodes), fresh_seeds=seeds, selection_seed=args.selection_seed, real=real,
                          settings=Settings(bootstrap=args.bootstrap, progress=False),
                          dataset_hash=dataset_hash(args.episodes) if real is not None else "")
    except (ValueError, MemriskError) as err:
        p.error(str(err))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "out_of_sample.json").write_text(
        json.dumps(clean(result), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    text = markdown(result)
    (args.out / "out_of_sample.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
