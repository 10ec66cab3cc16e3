"""Text from template pools, rendered in a sandboxed jinja2 environment.

Templates are trusted package data, but they are still rendered with
:class:`jinja2.sandbox.SandboxedEnvironment` and ``StrictUndefined`` so that a typo
in a variable name fails loudly instead of producing an empty string.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import cache
from typing import Any

from jinja2 import StrictUndefined, Template
from jinja2.sandbox import SandboxedEnvironment

from lm_eval_memrisk.generator.phrasing import choose

_ENV = SandboxedEnvironment(
    undefined=StrictUndefined, autoescape=False, keep_trailing_newline=False, trim_blocks=True
)


@cache
def _compile(source: str) -> Template:
    return _ENV.from_string(source)


def render(source: str, **ctx: Any) -> str:
    """Render one template string."""
    return " ".join(_compile(source).render(**ctx).split())


def pick(rng: random.Random, pool: Sequence[str], **ctx: Any) -> str:
    """Render a template chosen from ``pool`` with ``rng`` (in a counterbalanced build,
    the template dealt to this sentence: :mod:`~lm_eval_memrisk.generator.phrasing`)."""
    return render(choose(rng, pool, ctx), **ctx)
