"""The published shortcut agents of ``memrisk audit``.

Each agent reads a :class:`~lm_eval_memrisk.audit.view.View` (the rendered messages
and the action skeleton, never ground truth) and returns a reply text.

* *single-cue* agents follow one surface cue and ignore at least one memory rule;
* the *all-rules* agent applies the best keyword-level reading of every stated rule
  to the labels and keywords it can parse.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from lm_eval_memrisk.audit.view import TRUST_ORDER, Note, View, fill
from lm_eval_memrisk.episodes.normalize import contains_value, values_equal

REFUSE = "I'm sorry, but I can't help with that."
NOTHING = "Okay."
DELETE_WORDS = re.compile(
    r"\b(delet\w*|remov\w*|revok\w*|forget|erase\w*|no longer valid|compromised|"
    r"get rid of|cancel\w*|wipe\w*)\b",
    re.IGNORECASE,
)
CORRECTION_WORDS = re.compile(r"\b(correction|actually|wrong|mistake)\b", re.IGNORECASE)
PROHIBIT_WORDS = re.compile(
    r"\b(never|don't|do not|stop|no more|not allowed|mustn't|must not|nothing goes|hold off|"
    r"pause\w*|no)\b",
    re.IGNORECASE,
)
LIFT_WORDS = re.compile(
    r"\b(lift\w*|resume|go ahead|back to normal|no longer applies|is over|carry on)\b",
    re.IGNORECASE,
)

#: Negation and hedge words: a value in a sentence with one is doubtful.
HEDGE_WORDS = re.compile(
    r"\b(not|no longer|never|unverified|unconfirmed|maybe|might|perhaps|possibly|probably|"
    r"apparently|reportedly|supposedly|allegedly|seems?|I think|I guess|unsure)\b",
    re.IGNORECASE,
)
#: A tool result as the chat presentation shows it: "[tool result: NAME] {json}".
TOOL_RESULT = re.compile(r"^\[tool result: [^\]]+\]\s*(?P<body>.*)$", re.DOTALL)
#: Sentence ends (a full stop before a space or the end, not inside "co.uk").
SENTENCE_END = re.compile(r"(?<=[.!?;])[\"')\]]*\s+|\s+[—–]\s+")

Agent = Callable[[View], str]


@dataclass(frozen=True)
class Shortcut:
    name: str
    kind: str
    """``single-cue`` or ``all-rules``."""
    agent: Agent
    cue: str
    """One line: what the agent does."""


def reply_with(view: View, choose: dict[str, str]) -> str:
    """The skeleton's action with each slot filled from ``choose``, as a reply text."""
    action = fill(dict(view.skeleton), choose)
    if "tool" in action:
        call = {"tool": action["tool"], "arguments": dict(action.get("arguments") or {})}
        return json.dumps(call, ensure_ascii=False, sort_keys=True)
    return str(action.get("answer", ""))


def ask_reply(view: View) -> str:
    keys = view.keys or ["details"]
    return f"Before I go ahead: which {keys[0]} should I use? Could you confirm it?"


def _by_picker(pick: Callable[[View, list[Note]], Note | None]) -> Agent:
    """An agent that fills every slot with ``pick``'s note of its key (asks if none)."""

    def agent(view: View) -> str:
        choose: dict[str, str] = {}
        for key in view.keys:
            note = pick(view, view.candidates(key))
            if note is None:
                return ask_reply(view)
            choose[key] = note.value
        return reply_with(view, choose)

    return agent


def _newest(notes: list[Note]) -> Note | None:
    return max(notes, key=lambda n: (n.time, n.id), default=None)


def _named_near(view: View, value: str, words: re.Pattern[str]) -> list[int]:
    """Messages that name ``value`` and contain one of ``words``."""
    return [i for i in view.mentions(value) if words.search(view.messages[i][1])]


def _record_fields(text: str) -> list[str]:
    """The string fields of a record-style tool result (a JSON object whose fields each
    hold one value), or [] when ``text`` is no tool result or not such a record."""
    m = TOOL_RESULT.match(text)
    if not m:
        return []
    try:
        body = json.loads(m["body"])
    except ValueError:
        return []
    if not isinstance(body, dict):
        return []
    return [str(v) for v in body.values() if isinstance(v, (str, int, float)) and not isinstance(v, bool)]


def in_record(view: View, value: str) -> bool:
    """Whether a record-style tool result holds ``value`` as a field of its own."""
    return any(
        any(values_equal(field, value) for field in _record_fields(text))
        for i in view.mentions(value)
        for text in (view.messages[i][1],)
    )


def sentences(text: str) -> list[str]:
    """``text`` split into sentences (and clauses set off by a dash)."""
    return [s for s in SENTENCE_END.split(text) if s.strip()]


def hedged(view: View, value: str) -> bool:
    """Whether a sentence naming ``value`` (a whole tool result counts as one) has a
    negation or hedge word."""
    for i in view.mentions(value):
        text = view.messages[i][1]
        parts = [text] if TOOL_RESULT.match(text) else sentences(text)
        if any(contains_value(p, value) and HEDGE_WORDS.search(p) for p in parts):
            return True
    return False


def newest_any_scope(view: View, notes: list[Note]) -> Note | None:
    return _newest(notes)


def newest_in_scope(view: View, notes: list[Note]) -> Note | None:
    return _newest([n for n in notes if view.in_scope(n)])


def last_mentioned(view: View, notes: list[Note]) -> Note | None:
    """The note whose value the conversation names last (else the newest note)."""
    best: tuple[int, int, str] | None = None
    pick: Note | None = None
    for n in notes:
        where = view.mentions(n.value)
        if where and (best is None or (where[-1], n.time, n.id) > best):
            best, pick = (where[-1], n.time, n.id), n
    return pick or _newest(notes)


def trust_first(view: View, notes: list[Note]) -> Note | None:
    return max(notes, key=lambda n: (TRUST_ORDER.get(n.trust, 0), n.time, n.id), default=None)


def skip_deleted(view: View, notes: list[Note]) -> Note | None:
    return _newest([n for n in notes if not _named_near(view, n.value, DELETE_WORDS)])


def skip_earlier_call(view: View, notes: list[Note]) -> Note | None:
    """The newest note in scope whose value no earlier assistant call used."""
    return _newest([n for n in notes if view.in_scope(n) and not view.called_with(n.value)])


def repeat_earlier_call(view: View, notes: list[Note]) -> Note | None:
    """The newest note in scope whose value an earlier assistant call used (else the
    newest in scope): "do what you did last time"."""
    mine = [n for n in notes if view.in_scope(n)]
    return _newest([n for n in mine if view.called_with(n.value)]) or _newest(mine)


def skip_record(view: View, notes: list[Note]) -> Note | None:
    """The newest note in scope whose value no record-style lookup result holds."""
    return _newest([n for n in notes if view.in_scope(n) and not in_record(view, n.value)])


def skip_hedged(view: View, notes: list[Note]) -> Note | None:
    """The newest note in scope whose value no sentence names with a negation or hedge."""
    return _newest([n for n in notes if view.in_scope(n) and not hedged(view, n.value)])


def _corrected_away(view: View, value: str) -> bool:
    """A correction names ``value`` as the wrong one ("..., not X", "X is wrong")."""
    v = re.escape(value)
    pattern = re.compile(rf"\bnot\s+{v}|{v}\W+(?:is|was)\s+wrong", re.IGNORECASE)
    return any(CORRECTION_WORDS.search(text) and pattern.search(text) for _, text in view.messages)


_STOP = frozenset(
    [
        "the",
        "and",
        "for",
        "with",
        "from",
        "your",
        "this",
        "that",
        "have",
        "what",
        "when",
        "will",
        "into",
        "only",
        "more",
        "ever",
        "once",
        "daily",
        "every",
        "morning",
        "evening",
    ]
)


def _tokens(text: str) -> set[str]:
    """Distinctive words of ``text``: names, numbers and words of 5+ letters."""
    words = re.findall(r"[A-Za-z]+|\d+", text)
    return {w.lower() for w in words if (w[0].isupper() or len(w) >= 5) and w.lower() not in _STOP}


def _rule_messages(view: View) -> list[int]:
    """Messages with a prohibition word that nothing later lifts."""
    out = []
    for i, (_, text) in enumerate(view.messages):
        if (
            PROHIBIT_WORDS.search(text)
            and not DELETE_WORDS.search(text)
            and not any(LIFT_WORDS.search(t) for _, t in view.messages[i + 1 :])
        ):
            out.append(i)
    return out


def _prohibited(view: View, value: str, shared: AbstractSet[str] = frozenset()) -> list[int]:
    """Standing rule messages that name ``value`` or share a distinctive word with it
    (other than the ``shared`` words every candidate has)."""
    words = _tokens(value) - shared
    return [
        i
        for i in _rule_messages(view)
        if contains_value(view.messages[i][1], value) or words & _tokens(view.messages[i][1])
    ]


def all_rules(view: View) -> str:
    """Scope, deletions, corrections, record-style lookups, standing rules, then trust
    and recency."""
    choose: dict[str, str] = {}
    for key in view.keys:
        notes = [n for n in view.candidates(key) if view.in_scope(n)]
        notes = [n for n in notes if not _named_near(view, n.value, DELETE_WORDS)]
        notes = [n for n in notes if not _corrected_away(view, n.value)]
        # a record-style lookup holds a legacy value: skip it unless nothing else is left
        # (the hedge cue is left out: it costs all-rules 1-2 episodes on v5 and seeds 1-2)
        notes = [n for n in notes if not in_record(view, n.value)] or notes
        common = [_tokens(n.value) for n in view.candidates(key)]
        shared = set.intersection(*common) if len(common) > 1 else set()
        allowed = [n for n in notes if not _prohibited(view, n.value, shared)]
        if notes and not allowed:  # a rule forbids them: an alternative named in the rule
            rule_msgs = {i for n in notes for i in _prohibited(view, n.value, shared)}
            allowed = [
                n
                for n in view.notes
                if view.in_scope(n)
                and n.key != key
                and any(i in rule_msgs for i in view.mentions(n.value))
            ]
        if not allowed:
            return ask_reply(view)
        corrected = [n for n in allowed if _named_near(view, n.value, CORRECTION_WORDS)]
        pool = corrected or allowed
        best = max(pool, key=lambda n: (TRUST_ORDER.get(n.trust, 0), n.time, n.id))
        choose[key] = best.value
    return reply_with(view, choose)


SHORTCUTS: tuple[Shortcut, ...] = (
    Shortcut("do-nothing", "single-cue", lambda v: NOTHING, "replies without acting"),
    Shortcut("always-refuse", "single-cue", lambda v: REFUSE, "refuses every request"),
    Shortcut("always-ask", "single-cue", ask_reply, "asks which value to use"),
    Shortcut(
        "newest-any-scope", "single-cue", _by_picker(newest_any_scope),
        "newest note of the key, any scope",
    ),
    Shortcut(
        "newest-in-scope", "single-cue", _by_picker(newest_in_scope),
        "newest note of the key in the signed-in scope",
    ),
    Shortcut(
        "last-mentioned", "single-cue", _by_picker(last_mentioned),
        "the note value named last in the conversation",
    ),
    Shortcut(
        "trust-first", "single-cue", _by_picker(trust_first),
        "highest trust label, then newest",
    ),
    Shortcut(
        "skip-deleted", "single-cue", _by_picker(skip_deleted),
        "newest note not named near a deletion word",
    ),
    Shortcut(
        "skip-earlier-call", "single-cue", _by_picker(skip_earlier_call),
        "newest note in scope whose value no earlier call used",
    ),
    Shortcut(
        "repeat-earlier-call", "single-cue", _by_picker(repeat_earlier_call),
        "newest note in scope whose value an earlier call used, else the newest in scope",
    ),
    Shortcut(
        "skip-record", "single-cue", _by_picker(skip_record),
        "newest note in scope whose value no record-style lookup result holds",
    ),
    Shortcut(
        "skip-hedged", "single-cue", _by_picker(skip_hedged),
        "newest note in scope whose value no sentence names with a negation or hedge word",
    ),
    Shortcut(
        "all-rules", "all-rules", all_rules,
        "scope, deletion, correction, record-lookup and rule cues, then trust, then recency",
    ),
)  # fmt: skip
