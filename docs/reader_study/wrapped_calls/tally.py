"""Agreement of the scorer with blind readers of JSON calls with words around them.

``python docs/reader_study/wrapped_calls/tally.py [DIR]`` reads ``DIR/key.json`` (the cases:
episode, decision, reply, and the verdict of the scorer they were drawn under) and every
``DIR/verdicts_*.md`` (a reader's RIGHT / WRONG / UNSURE and CALLED / NOT CALLED per case), scores each reply
again with the installed scorer (a decision passes when all its checks pass), and prints
per reader its agreement with the scorer (as drawn and as installed) on the verdict and on
whether the reply calls the tool, and the cases where they differ.  Controls (constructed
replies, ``"control": true``) have no drawn verdict."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from lm_eval_memrisk.episodes.loader import load_episodes
from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.running.runner import trace_from_replies
from lm_eval_memrisk.scoring.parse import parse_action
from lm_eval_memrisk.scoring.scorer import SCORER_VERSION, score

_VERDICT = re.compile(r"Case (\d+): (RIGHT|WRONG|UNSURE)")
CALLED = re.compile(r"Case (\d+): [A-Z]+ · (CALLED|NOT CALLED)")


def readers(folder: Path, pattern: re.Pattern[str] = _VERDICT) -> dict[str, dict[int, str]]:
    """Reader name -> case -> RIGHT / WRONG / UNSURE (or CALLED / NOT CALLED)."""
    return {
        path.stem.removeprefix("verdicts_"): {int(n): v for n, v in pattern.findall(path.read_text(encoding="utf-8"))}
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
    episodes = {v: {ep.id: ep for ep in load_episodes(v)} for v in {row["dataset"] for row in key.values()}}
    now = {n: installed_verdict(row, episodes[row["dataset"]]) for n, row in key.items()}
    calls = {n: parse_action(row["reply"]).kind == "tool_call" for n, row in key.items()}
    print(f"scorer {SCORER_VERSION} (installed): {sum(p for p, _ in now.values())}/{len(now)} cases pass, "
          f"{sum(calls.values())} read as calls")
    called = readers(folder, CALLED)
    for name, verdicts in readers(folder).items():
        decided = {n: v for n, v in verdicts.items() if v != "UNSURE"}
        drawn = sum((v == "RIGHT") == key[n]["passed"] for n, v in decided.items() if key[n]["passed"] is not None)
        same_call = [n for n, v in called.get(name, {}).items() if (v == "CALLED") == calls[n]]
        print(f"reader {name}: calls the tool or not: agrees on {len(same_call)}/{len(called.get(name, {}))}; "
              f"cases {sorted(set(called.get(name, {})) - set(same_call))} differ")
        agree = [n for n, v in decided.items() if (v == "RIGHT") == now[n][0]]
        print(f"reader {name}: {len(verdicts)}/{len(key)} judged, {len(verdicts) - len(decided)} unsure; "
              f"agrees with the scorer on {len(agree)}/{len(decided)} "
              f"(logged verdicts of the real replies: {drawn}/{sum(key[n]['passed'] is not None for n in decided)})")
        for n in sorted(set(decided) - set(agree)):
            row, (passed, failing) = key[n], now[n]
            print(f"  case {n} ({row['run']} {row['episode']} {row['decision']}): reader {decided[n]}, "
                  f"scorer {'pass' if passed else 'fail: ' + '; '.join(failing)[:300]}")


if __name__ == "__main__":
    main()
