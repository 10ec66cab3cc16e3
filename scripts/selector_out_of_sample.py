"""Out-of-sample subset selection on planted-weakness systems (no model, CPU-light).

Selects on seed-0 outcomes of 12 planted profiles (p < 1) and 3 reference agents,
scores every method on fresh outcomes (seeds 1-5) against the known ranking; see
:mod:`selector.out_of_sample`.  Writes ``out_of_sample.json`` and ``out_of_sample.md``.

    python scripts/selector_out_of_sample.py --out docs/selector_out_of_sample
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from lm_eval_memrisk.loader import load_episodes
from selector.evaluate import Settings
from selector.out_of_sample import evaluate, markdown
from selector.report import clean


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--fresh-seeds", default="1,2,3,4,5")
    p.add_argument("--bootstrap", type=int, default=1000)
    args = p.parse_args(argv)
    seeds = tuple(int(s) for s in args.fresh_seeds.split(","))
    result = evaluate(load_episodes(), fresh_seeds=seeds,
                      settings=Settings(bootstrap=args.bootstrap, progress=False))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "out_of_sample.json").write_text(
        json.dumps(clean(result), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    text = markdown(result)
    (args.out / "out_of_sample.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
