"""Tally a reader-study round: verdicts per risk and phase-1 action agreement.

Usage: python docs/reader_study/tally.py docs/reader_study/round3
"""
import collections
import json
import sys
from pathlib import Path

VERDICTS = ("AGREE", "TOO STRICT", "TOO LAX", "AMBIGUOUS", "UNNATURAL")


def main(folder: Path) -> None:
    table: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    matched = total = 0
    for phase2 in sorted(folder.glob("reader*_phase2.jsonl")):
        for row in map(json.loads, phase2.read_text(encoding="utf-8").splitlines()):
            risk = row["episode"].split("-")[0]
            table[risk][row["verdict"]] += 1
            table["all"][row["verdict"]] += 1
            if "phase1_matches" in row:
                matched += bool(row["phase1_matches"])
                total += 1
    print("| risk | decisions | " + " | ".join(VERDICTS) + " |")
    print("|---|---|" + "---|" * len(VERDICTS))
    for risk in sorted(table, key=lambda r: (r == "all", r)):
        n = sum(table[risk].values())
        cells = [str(table[risk][v]) for v in VERDICTS]
        if risk == "all":
            cells = [f"{c} ({int(c) / n:.1%})" for c in cells]
        print(f"| {risk} | {n} | " + " | ".join(cells) + " |")
    if total:
        print(f"\nphase 1 action agreement with the reference: {matched}/{total} ({matched / total:.1%})")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
