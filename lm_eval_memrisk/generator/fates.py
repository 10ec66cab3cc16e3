"""What counterbalanced phrasing (:mod:`.phrasing`) needs to know of a built dataset: for
each sentence template that carried a candidate value at a decision, whether that value
was the right one.

The same count as the audit's template table (``audit.templates``), read from the
episode's ground truth instead of its rendered prompt (the generator sits below the
audit): at each decision, the notes of the keys its naive action fills that are not
deleted, each attributed to the template of every conversation message before the
decision that names its value; right when the reference action names the value.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from lm_eval_memrisk.episodes.normalize import contains_value
from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.episodes.state import state_at
from lm_eval_memrisk.generator.templates import catalog, tag
from lm_eval_memrisk.generator.verify import action_content

#: How the conversation shows a tool result (``state.message_text``): left out, as the
#: audit leaves it out.
TOOL_RESULT = "[tool result: "
#: A memory slot of a naive action (``{{mem:KEY}}``).
SLOT = re.compile(r"\{\{mem:([^{}]+)\}\}")


def template_uses(episodes: Iterable[Episode]) -> Iterator[tuple[str, str, str, bool]]:
    """``(episode id, value, template text, right)`` for every template that carried a
    candidate note of a decision (once per note per decision per template)."""
    texts = catalog()
    for episode in episodes:
        for dp in episode.decision_points:
            keys = set(SLOT.findall(str(dict(dp.naive or {}))))
            if not keys:
                continue
            state = state_at(episode, dp.id)
            said = [m.content for m in state.messages if not m.content.startswith(TOOL_RESULT)]
            content = action_content(dict(dp.reference or {}))
            for note in state.memory:
                if note.key not in keys:
                    continue
                tags = {tag(text, note.value) for text in said if contains_value(text, note.value)}
                right = contains_value(content, note.value)
                for t in sorted(t for t in tags if t is not None):
                    yield episode.id, note.value, texts[t].text, right
