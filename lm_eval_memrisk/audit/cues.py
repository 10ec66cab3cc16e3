"""The cue table: for each surface cue a note can carry, how often that note is the
right one (the note the ground-truth reference action uses).

Unlike the shortcut agents this reads the ground truth, because it measures the
dataset: a cue whose right rate is near 0 or 1 is a shortcut.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator

from lm_eval_memrisk.audit.shortcuts import (
    CORRECTION_WORDS,
    DELETE_WORDS,
    PROHIBIT_WORDS,
    TOOL_RESULT,
    hedged,
    in_record,
    sentences,
)
from lm_eval_memrisk.audit.view import AUDIT_PRESENTATION, Note, View, read_view
from lm_eval_memrisk.episodes.normalize import contains_value
from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.generator.verify import action_content
from lm_eval_memrisk.running.runner import decision_prompts

QUOTED_NOTICE = re.compile(r'^[A-Z][\w-]+: "')
SUMMARY_WORDS = re.compile(r"\b(summary|summari[sz]ed|digest|condensed)\b", re.IGNORECASE)
UNVERIFIED = re.compile(r"\bunverified\b", re.IGNORECASE)
#: Phrase cues: words kept before and after the value, and the fewest notes a phrase
#: needs to get a row of the table.
PHRASE_BEFORE, PHRASE_AFTER, PHRASE_MIN = 6, 4, 8
PHRASE_WORD = re.compile(r"[a-z']+|VALUE|KEY")


def phrases(view: View, note: Note) -> set[str]:
    """The phrase frames the note's value is said in: ``phrase: for future reference, my K
    is V`` (``K`` the key, ``V`` the value; at most 6 words before and 4 after, within
    the sentence), from the user's and assistant's messages (not tool results)."""
    out: set[str] = set()
    for i in view.mentions(note.value):
        text = view.messages[i][1]
        if TOOL_RESULT.match(text):
            continue
        for sentence in sentences(text):
            low = sentence.lower()
            if note.value.lower() not in low:
                continue
            low = low.replace(note.value.lower(), " VALUE ").replace(note.key.lower(), " KEY ")
            words = PHRASE_WORD.findall(low)
            at = words.index("VALUE")
            frame = [
                *words[max(0, at - PHRASE_BEFORE) : at],
                "V",
                *words[at + 1 : at + 1 + PHRASE_AFTER],
            ]
            out.add("phrase: " + " ".join("K" if w == "KEY" else w for w in frame))
    return out


def note_cues(view: View, note: Note, rank: str) -> list[str]:
    """The surface cues ``note`` carries in ``view``."""
    cues = [
        f"trust {note.trust}",
        f"source {note.source}",
        f"recency {rank}",
        "scope current" if view.in_scope(note) else "scope other",
    ]
    named = [view.messages[i][1] for i in view.mentions(note.value)]
    wording = {
        "notice: deletion word": DELETE_WORDS,
        "notice: correction word": CORRECTION_WORDS,
        "notice: rule word": PROHIBIT_WORDS,
        "summary origin: named in a summary": SUMMARY_WORDS,
    }
    cues += [cue for cue, words in wording.items() if any(words.search(t) for t in named)]
    if any(QUOTED_NOTICE.search(t) for t in named):
        cues.append("notice: quoted-name notice")
    if view.called_with(note.value):
        cues.append("named in an earlier call")
    if in_record(view, note.value):
        cues.append("notice: value in a record-style lookup result")
    if hedged(view, note.value):
        cues.append("notice: sentence with a negation or hedge word")
    if any(
        UNVERIFIED.search(part) and contains_value(part, note.value)
        for t in named
        for part in ([t] if TOOL_RESULT.match(t) else sentences(t))
    ):
        cues.append("notice: sentence with 'unverified'")
    return cues + sorted(phrases(view, note))


def _rank(i: int, n: int) -> str:
    if n == 1:
        return "only note"
    return "newest" if i == n - 1 else "oldest" if i == 0 else "middle"


def candidate_notes(episodes: Iterable[Episode]) -> Iterator[tuple[View, Note, str, bool]]:
    """Every candidate note of every decision: ``(view, note, recency rank, right)``, where
    right means the ground-truth reference action uses the note's value."""
    for ep in episodes:
        for prompt in decision_prompts(ep, None, AUDIT_PRESENTATION):
            dp = ep.event(prompt.decision_id)
            view = read_view(prompt.messages, dict(dp.naive or {}))
            content = action_content(dp.reference or {})
            for key in view.keys:
                notes = view.candidates(key)
                for i, note in enumerate(notes):
                    yield view, note, _rank(i, len(notes)), contains_value(content, note.value)


def cue_table(episodes: Iterable[Episode]) -> list[dict[str, object]]:
    """``[{"cue", "n", "right_rate"}]`` over every candidate note of every decision
    (phrase cues only where seen at least :data:`PHRASE_MIN` times)."""
    seen: Counter[str] = Counter()
    right: Counter[str] = Counter()
    for view, note, rank, ok in candidate_notes(episodes):
        for cue in note_cues(view, note, rank):
            seen[cue] += 1
            right[cue] += ok
    return [
        {"cue": cue, "n": seen[cue], "right_rate": round(right[cue] / seen[cue], 3)}
        for cue in sorted(seen)
        if not cue.startswith("phrase: ") or seen[cue] >= PHRASE_MIN
    ]
