"""Agreement of the scorer with blind readers of real model replies (v7).

``python docs/reader_study/replies_v7/tally.py [DIR [VERSION]]`` reads ``DIR/key.json`` (the cases:
episode, decision, reply, and the verdict of the scorer they were drawn under) and every
``DIR/verdicts_*.md`` (a reader's RIGHT / WRONG / UNSURE per case), scores each reply
again with the installed scorer (a decision passes when all its checks pass), and prints
per reader its agreement with the scorer as drawn and as installed, and the cases where
the installed scorer and the reader differ.  ``VERSION``: the packaged dataset the runs
were on (default v7)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from lm_eval_memrisk.episodes.loader import load_episodes
from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.running.runner import trace_from_replies
from lm_eval_memrisk.scoring.scorer import SCORER_VERSION, score

_VERDICT = re.compile(r"Case (\d+): (RIGHT|WRONG|UNSURE)")


def readers(folder: Path) -> dict[str, dict[int, str]]:
    """Reader name -> case -> RIGHT / WRONG / UNSURE."""
    return {
        path.stem.removeprefix("verdicts_"): {int(n): v for n, v in _VERDICT.findall(path.read_text(encoding="utf-8"))}
        for path in sorted(folder.glob("verdicts_*.md"))
    }


def installed_verdict(row: dict, episodes: dict[str, Episode]) -> tuple[bool, list[str]]:
    """(passed, failing checks) of the case's reply under the installed scorer."""
    ep = episodes[row["episode"]]
    result = score(ep, trace_from_replies(ep, {row["decision"]: row["reply"]}, "reader-study"))
    failing = [f"{c.check_id}: {c.evidence}" for c in result.checks if c.decision_id == row["decision"] and not c.passed]
    return not failing, failing


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent
    key = {row["case"]: row for row in json.loads((folder / "key.json").read_text(encoding="utf-8"))}
    version = sys.argv[2] if len(sys.argv) > 2 else "v7"
    episodes = {ep.id: ep for ep in load_episodes(version, track="all")}
    now = {n: installed_verdict(row, episodes) for n, row in key.items()}
    print(f"scorer {SCORER_VERSION} (installed): {sum(p for p, _ in now.values())}/{len(now)} cases pass; "
          f"as drawn: {sum(row['passed'] for row in key.values())}")
    for name, verdicts in readers(folder).items():
        decided = {n: v for n, v in verdicts.items() if v != "UNSURE"}
        drawn = sum((v == "RIGHT") == key[n]["passed"] for n, v in decided.items())
        agree = [n for n, v in decided.items() if (v == "RIGHT") == now[n][0]]
        print(f"reader {name}: {len(verdicts)}/{len(key)} judged, {len(verdicts) - len(decided)} unsure; "
              f"agrees with the scorer on {len(agree)}/{len(decided)} (as drawn: {drawn})")
        for n in sorted(set(decided) - set(agree)):
            row, (passed, failing) = key[n], now[n]
            print(f"  case {n} ({row['run']} {row['episode']} {row['decision']}): reader {decided[n]}, "
                  f"scorer {'pass' if passed else 'fail: ' + '; '.join(failing)[:300]}")


if __name__ == "__main__":
    main()
