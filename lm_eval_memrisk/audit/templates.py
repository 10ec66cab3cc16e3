"""The template table: for each generator sentence template, how often a value said in
it is the right one (the value the ground-truth reference action uses) — issue 26, item 2.

Like the cue table (:mod:`lm_eval_memrisk.audit.cues`) it counts every candidate note of
every decision: a note is attributed to every template that renders a sentence of the
conversation carrying its value (:func:`lm_eval_memrisk.generator.templates.tag`; tool
results are left out).  A template used :data:`TEMPLATE_MIN` times or more whose right
rate is near 0 or 1 gives the answer away: the goal is a rate in
:data:`BAND` for every such template, which takes contrast (the same phrasing sometimes
attached to the value that holds and sometimes to one that does not).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from lm_eval_memrisk.audit.cues import candidate_notes
from lm_eval_memrisk.audit.shortcuts import TOOL_RESULT
from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.generator.phrasing import BAND, BAND_MIN_USES
from lm_eval_memrisk.generator.templates import catalog, tag

#: Fewest attributed notes for a template to be held to the band (:data:`BAND`: the right
#: rates it should fall in).  Both live in :mod:`~lm_eval_memrisk.generator.phrasing`,
#: whose deal beside a fixed context aims at the same band.
TEMPLATE_MIN = BAND_MIN_USES


def template_uses(episodes: Iterable[Episode]) -> Iterator[tuple[str, str, str, bool]]:
    """``(episode id, value, template text, right)`` for every template that carried a
    candidate note of a decision (once per note per decision per template)."""
    texts = catalog()
    for episode in episodes:
        for view, note, _, ok in candidate_notes([episode]):
            said = [view.messages[i][1] for i in view.mentions(note.value)]
            tags = {tag(text, note.value) for text in said if not TOOL_RESULT.match(text)}
            for t in sorted(t for t in tags if t is not None):
                yield episode.id, note.value, texts[t].text, ok


def template_table(episodes: Iterable[Episode]) -> list[dict[str, Any]]:
    """``[{"template", "text", "n", "right_rate", "in_band"}]``, every template that carried
    a candidate value at least once, most used first (``in_band`` only matters for
    ``n >= TEMPLATE_MIN``)."""
    seen: Counter[str] = Counter()
    right: Counter[str] = Counter()
    texts = catalog()
    ids = {t.text: tid for tid, t in texts.items()}
    for _, _, text, ok in template_uses(episodes):
        seen[ids[text]] += 1
        right[ids[text]] += ok
    rows = []
    for tid in sorted(seen, key=lambda t: (-seen[t], t)):
        rate = right[tid] / seen[tid]
        rows.append({"template": tid, "text": texts[tid].text, "n": seen[tid], "right_rate": round(rate, 3),
                     "in_band": BAND[0] <= rate <= BAND[1]})  # fmt: skip
    return rows


def template_summary(rows: list[dict[str, Any]]) -> dict[str, int]:
    """How many templates are used TEMPLATE_MIN times or more, and how many of them sit
    outside the band."""
    held = [r for r in rows if r["n"] >= TEMPLATE_MIN]
    return {"templates": len(rows), "held": len(held), "outside_band": sum(not r["in_band"] for r in held)}


def format_templates(rows: list[dict[str, Any]]) -> str:
    """The table (templates used TEMPLATE_MIN times or more) and its summary as Markdown."""
    s = template_summary(rows)
    lines = [
        f"{s['held']} of {s['templates']} templates carried a candidate value {TEMPLATE_MIN}+ times; "
        f"{s['outside_band']} of them have a right rate outside [{BAND[0]}, {BAND[1]}].",
        "",
        "| template | n | right rate | text |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {r['template']} | {r['n']} | {r['right_rate']:.2f}{'' if r['in_band'] else ' *'} | {r['text']} |"
        for r in rows
        if r["n"] >= TEMPLATE_MIN
    ]
    return "\n".join(lines)
