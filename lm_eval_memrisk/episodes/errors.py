"""Typed exceptions with messages a user can act on."""

from __future__ import annotations


class MemriskError(Exception):
    """Base class: the CLI prints the message (no traceback) and exits 2."""


class EpisodeFormatError(MemriskError):
    """A malformed or invalid episode file.

    The message names the file, line, episode id and field, e.g.
    ``data.jsonl:12: episode R1-E-003: events[4].after[0]: unknown event 'e9'``.
    """

    def __init__(self, path: str, line: int | None, episode_id: str | None, field: str, message: str):
        self.path, self.line, self.episode_id, self.field = path, line, episode_id, field
        self.reason = message
        where = f"{path}:{line}" if line is not None else path
        ep = f" episode {episode_id}:" if episode_id else ""
        super().__init__(f"{where}:{ep} {field}: {message}")


class ModelFileError(MemriskError):
    """A GGUF model that is missing, truncated, not GGUF, or fails its checksum."""


class SamplesError(MemriskError):
    """Malformed or inconsistent lm-eval --log_samples output (names file and line)."""


class AuditError(MemriskError):
    """The audit cannot run as asked (e.g. no training episodes for the learned reader)."""
