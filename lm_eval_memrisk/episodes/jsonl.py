"""JSON Lines shared by the writers and readers of run output (traces, lm-eval sample logs).

:func:`json_line` is the writer: model output is untrusted and may hold lone
surrogates (``"\\ud800"`` decoded from JSON), which cannot be encoded as UTF-8; it
writes them as ``\\udXXX`` escapes, so the line is valid UTF-8 and JSON and reads back
to the same string.

Lines are split on ``"\\n"`` only.  lm-eval and ``memrisk run`` write with
``ensure_ascii=False``, so a logged reply may hold U+2028, U+2029 or U+0085 as raw
characters; ``str.splitlines`` would cut such a line in two.  Blank lines are
skipped; line numbers count from 1, so errors can name ``file:line``.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lm_eval_memrisk.episodes.errors import SamplesError

__all__ = ["LONE_SURROGATE", "escape_surrogates", "json_line", "numbered_lines", "read_bytes", "read_sample_objects",
           "write_atomic"]

#: A lone UTF-16 surrogate: what ``"\\ud800"`` in JSON decodes to; UTF-8 cannot encode it.
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def escape_surrogates(text: str) -> str:
    """``text`` with each lone surrogate written as its ``\\udXXX`` escape (UTF-8 encodable)."""
    return LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def json_line(obj: Any) -> str:
    """``obj`` as one line of JSON (sorted keys, non-ASCII kept), always UTF-8 encodable."""
    return escape_surrogates(json.dumps(obj, ensure_ascii=False, sort_keys=True))


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through ``path.tmp``: all of it or nothing, no ``.tmp`` left behind."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    try:
        tmp.write_text(escape_surrogates(text), encoding="utf-8")
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def numbered_lines(text: str) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` for each non-blank line of JSON Lines ``text``."""
    for lineno, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            yield lineno, line


def read_bytes(path: Path) -> bytes:
    """A samples file's bytes, gunzipped when it ends in ``.gz``; SamplesError if unreadable."""
    try:
        data = path.read_bytes()
        return gzip.decompress(data) if path.suffix == ".gz" else data
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise SamplesError(f"{path}: cannot read samples file: {exc}") from exc


def read_sample_objects(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(file:line, object)`` for each line of an lm-eval samples file with filter "none".

    Lines of other filters are skipped.  An unreadable file, a line that is not JSON or
    not a JSON object raises :class:`SamplesError` naming the file (and line).
    """
    try:
        text = read_bytes(path).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SamplesError(f"{path}: cannot read samples file: {exc}") from exc
    for lineno, line in numbered_lines(text):
        where = f"{path}:{lineno}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SamplesError(f"{where}: not valid JSON ({exc.msg}, column {exc.colno})") from exc
        if not isinstance(data, dict):
            raise SamplesError(f"{where}: a sample line must be a JSON object")
        if data.get("filter", "none") != "none":
            continue
        yield where, data
