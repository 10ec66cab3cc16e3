"""The generator's sentence templates, by id, and the tag of a rendered sentence.

Every ``{{ … }}`` template the generator draws sentences from lives in a module-level
tuple of a family module, a risk module or :mod:`~lm_eval_memrisk.generator.pools`
(``STATES``, ``v2.DROP_NEWEST``, …) or in a :class:`~lm_eval_memrisk.generator.families.Family`
field (``states``, ``updates``, ``revokes``, ``asks``, ``questions``).  :func:`catalog`
names each one (``risks.v2.DROP_NEWEST[1]``, ``family:door_code.updates[4]``; a text
found in several places keeps its first id, module tuples first), and :func:`tag` finds
which template rendered a sentence that carries a given value.  Tagging reads the
rendered text, so it needs no field in the episode files: the packaged datasets (and
every result on them) stay as they are.  Used by the audit's template table
(:mod:`lm_eval_memrisk.audit.templates`, issue 26 item 2).
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.generator.families import FAMILIES

#: Modules whose module-level tuples of strings hold sentence templates.
TEMPLATE_MODULES: tuple[str, ...] = (
    "families.base", "families.everyday", "families.accounts", "families.policy",
    "risks.common", "risks.r1_stale", "risks.r2_conflict", "risks.r3_leak", "risks.r4_revoked",
    "risks.r5_constraint", "risks.r5_rules", "risks.r6_summary", "risks.v2", "risks.v3", "risks.v6", "risks.v7", "risks.v8", "risks.v8_r2",
    "fillers", "distractors", "pools", "polish", "polish.v10",
)  # fmt: skip
#: The :class:`Family` fields that hold templates.
FAMILY_FIELDS: tuple[str, ...] = ("states", "updates", "revokes", "asks", "questions")
PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")


@dataclass(frozen=True)
class Template:
    """One sentence template: its id, its text, and the regex source of its renderings
    with ``VALUE_SLOT`` where the value goes (None where it has no ``value`` slot)."""

    id: str
    text: str
    source: str | None
    anchor: str
    """The template's longest literal stretch, to skip texts that cannot match."""

    def matches(self, text: str, value: str) -> bool:
        """Whether ``text`` holds a rendering of this template with ``value`` in its slot."""
        if self.source is None or self.anchor not in text or value not in text:
            return False  # cheap rejections first: the regex is compiled per value
        return re.search(self.source.replace(VALUE_SLOT, re.escape(value)), text) is not None


#: Stands for the value in :attr:`Template.source` (no template contains it).
VALUE_SLOT = "\x00VALUE\x00"


def _compile(text: str) -> tuple[str | None, str]:
    parts, pos, has_value = [], 0, False
    for m in PLACEHOLDER.finditer(text):
        parts.append(re.escape(text[pos : m.start()]))
        if m.group(1) == "value":
            parts.append(VALUE_SLOT)
            has_value = True
        else:
            parts.append(r".+?")
        pos = m.end()
    parts.append(re.escape(text[pos:]))
    literals = [lit.strip() for lit in PLACEHOLDER.split(text)[::2]]
    return ("".join(parts) if has_value else None), max(literals, key=len)


def wildcard(text: str) -> re.Pattern[str]:
    """A case-blind pattern that finds any rendering of template ``text``, each
    placeholder a wildcard (for templates that carry no value: :meth:`Template.matches`
    needs one)."""
    return re.compile(".+?".join(re.escape(literal) for literal in PLACEHOLDER.split(text)[::2]), re.IGNORECASE)


def said(episode: Episode, pool: Sequence[str]) -> list[str]:
    """The user's messages in ``episode`` that hold a rendering of one of ``pool``'s
    templates (:func:`wildcard`)."""
    forms = [wildcard(t) for t in pool]
    return [e.text or "" for e in episode.events if e.type == "user_message" and any(f.search(e.text or "") for f in forms)]


def _entries() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for short in TEMPLATE_MODULES:
        module = importlib.import_module(f"lm_eval_memrisk.generator.{short}")
        for name, obj in sorted(vars(module).items()):
            if name.isupper() and isinstance(obj, tuple):
                out += [(f"{short}.{name}[{i}]", t) for i, t in enumerate(obj) if isinstance(t, str) and "{{" in t]
    for fam in FAMILIES.values():
        for field in FAMILY_FIELDS:
            texts = getattr(fam, field, ()) or ()
            out += [(f"family:{fam.name}.{field}[{i}]", t) for i, t in enumerate(texts) if "{{" in t]
    return out


@functools.cache
def catalog() -> dict[str, Template]:
    """Template id -> :class:`Template`, every template the generator draws from."""
    seen: dict[str, Template] = {}
    texts: set[str] = set()
    for tid, text in _entries():
        if text in texts or "{%" in text:
            continue
        texts.add(text)
        source, anchor = _compile(text)
        seen[tid] = Template(tid, text, source, anchor)
    return seen


def tag(text: str, value: str) -> str | None:
    """The id of the template that rendered the part of ``text`` carrying ``value`` (the
    most specific one: the longest template text), or None when no template did."""
    found = [t for t in catalog().values() if t.matches(text, value)]
    return max(found, key=lambda t: len(t.text)).id if found else None
