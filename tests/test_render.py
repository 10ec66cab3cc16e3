"""The renderer: what the agent sees, for every episode and decision point."""

from __future__ import annotations

import re

import pytest

from lm_eval_memrisk.episodes.loader import load_episodes
from lm_eval_memrisk.episodes.render import NOTES_HEADER, flatten, make_presentation, render
from lm_eval_memrisk.episodes.state import state_at

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


def test_a_passed_decision_point_shows_its_reference_reply_not_the_scripts_stand_in():
    """R4-hard-03: the early request (e7) was answered by the script's "Email sent." with
    no call; at the final decision the history shows the call that acted correctly then,
    and the stand-in turn is gone.  The pending decision's own reference is never shown."""
    from lm_eval_memrisk.episodes.state import action_text

    episode = next(e for e in EPISODES if e.id == "R4-hard-03")
    early, final = episode.decision_points
    assert any(e.type == "assistant_message" and e.text == "Email sent." for e in episode.events)
    final_text = flatten(render(episode, final.id, presentation=make_presentation("chat")))
    history = render(episode, final.id)[-1]["content"]
    early_reply = action_text(early.reference or {})
    for text in (final_text, history):
        assert early_reply in text and "Email sent." not in text
        assert action_text(final.reference or {}) not in text
    assert early_reply not in flatten(render(episode, early.id))
    # every passed decision point of every episode is shown once, each stand-in turn dropped
    for ep in EPISODES:
        for i, dp in enumerate(ep.decision_points):
            text = flatten(render(ep, dp.id, presentation=make_presentation("chat")))
            for passed in ep.decision_points[:i]:
                assert action_text(passed.reference or {}) in text, (ep.id, dp.id, passed.id)


@pytest.mark.parametrize("name", ["history", "chat", "session"])
def test_the_scripts_acknowledgements_are_not_shown(name: str) -> None:
    """Render 4: an assistant turn right after a memory or rule event ("Understood — I've
    written it down.") is not shown under any presentation, in either mode (Qwen copied
    them instead of acting); the user's words and the other assistant turns (chit-chat
    answers, passed decisions' reference calls) stay.  Fails on render 3."""
    from lm_eval_memrisk.episodes.state import ACKNOWLEDGED, message_text
    from lm_eval_memrisk.running.interactive import EpisodeRun

    presentation = make_presentation(name)
    hidden = kept = 0
    for ep in EPISODES:
        acks = {e.text for p, e in zip(ep.events, ep.events[1:])
                if e.type == "assistant_message" and p.type in ACKNOWLEDGED and e.text}  # fmt: skip
        others = {e.text for p, e in zip(ep.events, ep.events[1:])
                  if e.type == "assistant_message" and p.type == "user_message" and e.text} - acks  # fmt: skip
        last = ep.decision_points[-1].id
        text = flatten(render(ep, last, presentation=presentation))
        for ack in acks:
            assert ack not in text, (ep.id, ack)
            hidden += 1
        for said in others:
            if any(message_text(e) == ("assistant", said) for e in ep.events):
                kept += said in text
        first = ep.decision_points[0].id
        run = EpisodeRun(ep, presentation=presentation)
        assert run.request().messages == render(ep, first, presentation=presentation), ep.id
    # `session` shows one session: on v6 30 other assistant turns stay in view (v5: over 50)
    assert hidden > 500 and kept > (25 if name == "session" else 50), (hidden, kept)
