"""A second, out-of-sample blind check of the scorer on real model replies to v7.

``python docs/reader_study/replies_v7_round2/make_study.py OUT RUN_DIR... [--seed S] [--per-cell K]``
draws as ``replies_v7/make_study.py`` does (every decision of the runs, scored with the
installed scorer; ``K`` passing and ``K`` failing decisions per risk with
``random.Random(S)``), but leaves out every reply the earlier studies showed their
readers (``replies_v7`` and ``wrapped_calls``), so that no case is one a scorer rule
was written from, and draws one decision per distinct reply.  Writes ``OUT/cases.md``
(what a blind reader gets) and ``OUT/key.json``; ``replies_v7/tally.py OUT`` tallies.
The published cases were drawn with scorer 3.6 installed (the draw follows its verdicts).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

_STUDIES = Path(__file__).resolve().parent.parent
_SPEC = importlib.util.spec_from_file_location("replies_v7_make_study", _STUDIES / "replies_v7" / "make_study.py")
assert _SPEC is not None and _SPEC.loader is not None
round1 = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(round1)


#: The studies whose replies this round leaves out (``--exclude`` names others).
EARLIER = ("replies_v7", "wrapped_calls")


def read_before(studies: tuple[str, ...] = EARLIER) -> set[str]:
    """Every reply the named studies (folders beside this one) showed their readers."""
    return {row["reply"] for study in studies
            for row in json.loads((_STUDIES / study / "key.json").read_text(encoding="utf-8"))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("runs", type=Path, nargs="+")
    parser.add_argument("--seed", type=int, default=2032)
    parser.add_argument("--per-cell", type=int, default=4)
    parser.add_argument("--exclude", action="append", metavar="STUDY",
                        help=f"a study folder whose replies are left out (default: {', '.join(EARLIER)})")
    args = parser.parse_args()
    seen = read_before(tuple(args.exclude) if args.exclude else EARLIER)
    rows = []
    for row in round1._decisions(args.runs):
        if row["reply"] not in seen:
            seen.add(row["reply"])
            rows.append(row)
    picked = round1.draw(rows, args.seed, args.per_cell)
    round1.write_study(args.out, picked)
    print(f"{len(picked)} cases from {len(rows)} distinct new replies -> {args.out}")


if __name__ == "__main__":
    main()
