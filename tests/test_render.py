"""The renderer: what the agent sees, for every episode and decision point."""

from __future__ import annotations

import re

import pytest

from lm_eval_memrisk.loader import load_episodes
from lm_eval_memrisk.render import NOTES_HEADER, flatten, render
from lm_eval_memrisk.state import state_at

EPISODES = load_episodes(track="all")
NOTE = re.compile(r"^\[(?P<id>[^\]]+)\] time \d+ · scope \S+ · source (user|tool|system|summary) · "
                  r"trust (low|medium|high) · [^:]+: .+$")


@pytest.mark.parametrize("episode", EPISODES, ids=[e.id for e in EPISODES])
def test_messages_shape_and_no_oracle_labels(episode):
    for dp in episode.decision_points:
        messages = render(episode, dp.id)
        assert messages[0]["role"] == "system" and messages[-1]["role"] == "user"
        roles = [m["role"] for m in messages[1:]]
        assert all(a != b for a, b in zip(roles, roles[1:])), "roles must alternate"
        system = messages[0]["content"]
        assert "Memory notes" not in system  # notes come last (layout v2), after the transcript
        notes = messages[-1]["content"].split(NOTES_HEADER + "\n", 1)[1].split("\n\n", 1)[0].splitlines()
        state = state_at(episode, dp.id)
        assert len(notes) == len(state.memory)  # full policy: every note is shown
        for line in notes:
            m = NOTE.match(line)
            assert m, line
            assert not re.search(r"\b(stale|superseded|revoked|outdated|invalid)\b", line.split("·")[0:5].__str__())
        for tool in episode.tools:
            assert tool.name in system
        assert render(episode, dp.id) == messages  # pure


def test_flatten_is_a_plain_transcript():
    ep = EPISODES[0]
    text = flatten(render(ep, ep.decision_points[0].id))
    assert text.startswith("SYSTEM:\n") and text.endswith("ASSISTANT:\n")
