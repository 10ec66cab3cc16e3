"""What counterbalanced phrasing (:mod:`.phrasing`) needs to know of a built dataset: for
each sentence template that carried a candidate value at a decision, whether that value
was the right one.

The same count as the audit's template table (``audit.templates``), read from the
episode's ground truth instead of its rendered prompt (the generator sits below the
audit): at each decision, the notes of the keys its naive action fills (each note once,
deleted ones too: the audit's prompt shows them), each attributed to the template of
every conversation message before the decision that names its value (tool results left
out, as the audit leaves them out); right when the reference action names the value.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from lm_eval_memrisk.episodes.normalize import contains_value
from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.episodes.state import state_at
from lm_eval_memrisk.generator.templates import catalog, tag
from lm_eval_memrisk.generator.verify import action_content
from lm_eval_memrisk.running.agents import PLACEHOLDER


def template_uses(episodes: Iterable[Episode]) -> Iterator[tuple[str, str, str, bool]]:
    """``(episode id, value, template text, right)`` for every template that carried a
    candidate note of a decision (once per note per decision per template)."""
    texts = catalog()
    for episode in episodes:
        results = {e.id for e in episode.events if e.type == "tool_return"}
        for dp in episode.decision_points:
            keys = set(PLACEHOLDER.findall(str(dict(dp.naive or {}))))
            if not keys:
                continue
            state = state_at(episode, dp.id)
            said = [m.content for m in state.messages if m.event_id not in results]
            content = action_content(dict(dp.reference or {}))
            for note in state.memory:
                if note.key not in keys:
                    continue
                tags = {tag(text, note.value) for text in said if contains_value(text, note.value)}
                right = contains_value(content, note.value)
                for t in sorted(t for t in tags if t is not None):
                    yield episode.id, note.value, texts[t].text, right
