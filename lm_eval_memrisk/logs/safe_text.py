"""Model-derived text made safe for each output format (system names come from ``model_args``).

One function per format: :func:`md_cell` (a Markdown table cell), :func:`md_code`
(a Markdown code span) and :func:`csv_cell` (a spreadsheet cell).  HTML uses
:func:`html.escape`; run folder names use lm-eval's own ``sanitize_model_name`` (see
:mod:`lm_eval_memrisk.running.run_store`), the function ``memrisk eval`` folders are named by.
"""

from __future__ import annotations

import html
import re

__all__ = ["CSV_FORMULA_PREFIXES", "csv_cell", "md_cell", "md_code"]

#: Line breaks and other control characters: one space each in Markdown.
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")
#: A cell starting with one of these is a formula to a spreadsheet (OWASP CSV injection).
CSV_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def md_cell(text: str) -> str:
    """``text`` inside a Markdown table cell: no raw HTML, no line break, no bare pipe."""
    return _CONTROL.sub(" ", html.escape(str(text), quote=False)).replace("|", "\\|")


def md_code(text: str) -> str:
    """``text`` inside a single-backtick code span: no line break, no backtick to close it."""
    return _CONTROL.sub(" ", str(text)).replace("`", "'")


def csv_cell(text: str) -> str:
    """``text`` as a CSV cell a spreadsheet shows as text: a formula prefix gets a leading quote."""
    text = str(text)
    return "'" + text if text.startswith(CSV_FORMULA_PREFIXES) else text
