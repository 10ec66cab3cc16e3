"""The scorer on degenerate model output: seconds to score one reply of each shape.

Model output is untrusted text, and small models do emit long runs of blank lines,
repeated memory-note lines or the same word over and over.  Every reply shape below
is scored, as the whole reply of one decision, at one decision of each check kind's
episode (the main track's episodes that hold the kind), at two lengths (10,000 and
40,000 characters; a reply over ``MAX_REPLY_CHARS`` is invalid unread).  The table
gives the slowest decision per shape and length and their ratio: about 4 where the
time grows linearly with the reply, about 16 where it grows with its square.

Run:  python benchmarks/bench_scorer_worst_case.py
"""

from __future__ import annotations

import time
from collections.abc import Callable

from lm_eval_memrisk.episodes.loader import load_episodes
from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.running.runner import trace_from_replies
from lm_eval_memrisk.scoring.scorer import score

LENGTHS = (10_000, 40_000)
#: Reply shapes: each makes a reply of about ``n`` characters.
SHAPES: dict[str, Callable[[int], str]] = {
    "blank lines": lambda n: "Hi" + "\n" * n + "Which number?",
    "space-newline": lambda n: "Hi" + " \n" * (n // 2) + "Which number?",
    "spaces": lambda n: "Hi" + " " * n + "Which number?",
    "CRLF and tabs": lambda n: "Hi" + "\t\r\n" * (n // 3) + "Which number?",
    "full stops and newlines": lambda n: ". \n" * (n // 3),
    "note lines": lambda n: "[m1] time 2 · scope user:a · source user · trust high · k: v\n" * (n // 60),
    "session headers": lambda n: "Session 1 — Monday 2 March 2026 — signed in as A B\n" * (n // 52),
    "question marks": lambda n: "? " * (n // 2),
    "digits and spaces": lambda n: "account " + "1 " * (n // 2),
    "open braces": lambda n: "{ " * (n // 2),
    "one long word": lambda n: "a" * n,
    "claim words": lambda n: "I have paid " * (n // 12),
    "negations": lambda n: "not " * (n // 4) + "paid.",
    "colons": lambda n: "Memory notes" + ":" * n,
    "user near-misses": lambda n: "Use\n" * (n // 4),
}


def episodes_by_check_kind() -> list[Episode]:
    """One main-track episode per check kind (the first that holds it)."""
    seen: dict[str, Episode] = {}
    for ep in load_episodes():
        for dp in ep.decision_points:
            for check in dp.checks or ():
                seen.setdefault(check.kind, ep)
    return list({ep.id: ep for ep in seen.values()}.values())


def slowest(episodes: list[Episode], reply: str) -> float:
    """Seconds of the slowest single-decision scoring of ``reply``."""
    worst = 0.0
    for ep in episodes:
        for dp in ep.decision_points:
            t0 = time.perf_counter()
            score(ep, trace_from_replies(ep, {dp.id: reply}, "worst-case"))
            worst = max(worst, time.perf_counter() - t0)
    return worst


def main() -> int:
    episodes = episodes_by_check_kind()
    decisions = sum(len(ep.decision_points) for ep in episodes)
    print(f"{len(episodes)} episodes, {decisions} decisions; slowest decision per reply shape\n")
    print("| reply shape | " + " | ".join(f"{n:,} chars (s)" for n in LENGTHS) + " | ratio |")
    print("|---|" + "---|" * (len(LENGTHS) + 1))
    for name, make in SHAPES.items():
        times = [slowest(episodes, make(n)) for n in LENGTHS]
        print(f"| {name} | " + " | ".join(f"{t:.3f}" for t in times) + f" | {times[-1] / max(times[0], 1e-9):.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
