"""JSONL episode files -> :class:`~lm_eval_memrisk.episodes.records.Episode` records.

:func:`episode_from_dict` is the exact inverse of :func:`lm_eval_memrisk.episodes.codec.episode_to_dict`
and checks *structure* (required fields, types, enums, unknown keys).
:func:`load_episodes` reads a file, runs the semantic checks of
:mod:`lm_eval_memrisk.episodes.validate` on every episode and rejects duplicate episode ids.
Every problem is an :class:`~lm_eval_memrisk.episodes.errors.EpisodeFormatError` whose message
names the file, line, episode id and field, e.g.
``episodes.jsonl:12: episode R1-E-003: events[4].checks[0].item: unknown memory item 'm9'``.
Files over :data:`MAX_FILE_BYTES`, texts over :data:`MAX_FIELD_CHARS`, episodes over
:data:`MAX_EVENTS` events and text UTF-8 cannot encode (a lone surrogate) are refused.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, NoReturn

from lm_eval_memrisk.episodes import risks
from lm_eval_memrisk.episodes.errors import EpisodeFormatError, MemriskError
from lm_eval_memrisk.episodes.jsonl import LONE_SURROGATE
from lm_eval_memrisk.episodes.records import (
    CHECK_KINDS,
    CHECK_PAYLOAD_FIELDS,
    EVENT_PAYLOAD_FIELDS,
    EVENT_TYPES,
    RESOLUTION_RULES,
    SOURCES,
    TIERS,
    Check,
    Constraint,
    Episode,
    Event,
    MemoryItem,
    Tool,
)
from lm_eval_memrisk.episodes.trace import ITEM_STATUSES

__all__ = [
    "DATASETS",
    "DATASET_RESOURCE",
    "DEFAULT_DATASET",
    "TRACK_CHOICES",
    "VERSION_FIELDS",
    "FileScan",
    "dataset_hash",
    "default_dataset_path",
    "episode_from_dict",
    "iter_episode_lines",
    "load_episodes",
    "scan_episodes",
]

#: Packaged dataset versions, relative to the ``lm_eval_memrisk`` package.  Old
#: versions stay loadable by name (``load_episodes("v1")``) so old results reproduce.
DATASETS: dict[str, str] = {
    "v1": "data/episodes_v1.jsonl", "v2": "data/episodes_v2.jsonl", "v3": "data/episodes_v3.jsonl",
    "v4": "data/episodes_v4.jsonl", "v5": "data/episodes_v5.jsonl",
    "v6": "data/episodes_v6.jsonl", "v7": "data/episodes_v7.jsonl", "v8": "data/episodes_v8.jsonl",
    "v9": "data/episodes_v9.jsonl", "v10": "data/episodes_v10.jsonl",
}  # fmt: skip
#: An episode's ``version`` field -> its dataset version.
VERSION_FIELDS: dict[str, str] = {
    "1.0": "v1", "2.0": "v2", "3.0": "v3", "4.0": "v4", "5.0": "v5", "6.0": "v6", "7.0": "v7", "8.0": "v8", "9.0": "v9",
    "10.0": "v10",
}  # fmt: skip
#: The version loaded when no file is given.
DEFAULT_DATASET = "v8"
#: The shipped default dataset, relative to the ``lm_eval_memrisk`` package.
DATASET_RESOURCE = DATASETS[DEFAULT_DATASET]
#: Accepted values of the ``track`` argument of :func:`load_episodes`.
TRACK_CHOICES: tuple[str, ...] = (*risks.tracks(), "all")

PathArg = str | os.PathLike[str]

# Size limits of an episode file (enforced on load and by ``memrisk validate``; the
# shipped datasets stay far below: v1-v10 are under 1 MB, their longest text is 257
# characters, their longest episode 52 events).  Errors name file, line and field.
#: Largest episode file, in bytes.
MAX_FILE_BYTES = 64 * 1024 * 1024
#: Longest text (any string value or key), in characters.
MAX_FIELD_CHARS = 10_000
#: Most events in one episode.
MAX_EVENTS = 200


# --------------------------------------------------------------------------------------
# structural parsing: dict -> Episode
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Ctx:
    path: str
    line: int | None
    episode_id: str | None

    def fail(self, fld: str, message: str) -> NoReturn:
        raise EpisodeFormatError(self.path, self.line, self.episode_id, fld, message)


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "an array"
    return type(value).__name__


def _object(ctx: _Ctx, value: Any, fld: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        ctx.fail(fld or "$", f"must be an object, not {_type_name(value)}")
    for key in value:
        if not isinstance(key, str):
            ctx.fail(fld or "$", f"object keys must be strings, not {_type_name(key)}")
    return value


def _check_keys(
    ctx: _Ctx, obj: Mapping[str, Any], fld: str, required: Sequence[str], optional: Sequence[str]
) -> None:
    known = (*required, *optional)
    for key in obj:
        if key not in known:
            close = difflib.get_close_matches(key, known, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            ctx.fail(_join(fld, key), f"unknown field '{key}'{hint}")
    for key in required:
        if key not in obj:
            ctx.fail(_join(fld, key), "missing required field")


def _str(ctx: _Ctx, obj: Mapping[str, Any], key: str, fld: str, *, nonempty: bool = False) -> str:
    value = obj[key]
    f = _join(fld, key)
    if not isinstance(value, str):
        ctx.fail(f, f"must be a string, not {_type_name(value)}")
    if nonempty and not value.strip():
        ctx.fail(f, "must not be empty")
    return value


def _opt_str(
    ctx: _Ctx, obj: Mapping[str, Any], key: str, fld: str, *, nonempty: bool = False
) -> str | None:
    return _str(ctx, obj, key, fld, nonempty=nonempty) if key in obj else None


def _int(ctx: _Ctx, obj: Mapping[str, Any], key: str, fld: str) -> int:
    value = obj[key]
    f = _join(fld, key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        ctx.fail(f, f"must be an integer, not {_type_name(value)}")
    if isinstance(value, float):
        if not value.is_integer():
            ctx.fail(f, f"must be an integer, not {value!r}")
        value = int(value)
    if value < 0:
        ctx.fail(f, f"must be >= 0, not {value}")
    return value


def _float(ctx: _Ctx, obj: Mapping[str, Any], key: str, fld: str) -> float:
    value = obj[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        ctx.fail(_join(fld, key), f"must be a number, not {_type_name(value)}")
    return float(value)


def _bool(ctx: _Ctx, obj: Mapping[str, Any], key: str, fld: str) -> bool:
    value = obj[key]
    if not isinstance(value, bool):
        ctx.fail(_join(fld, key), f"must be true or false, not {_type_name(value)}")
    return value


def _enum(
    ctx: _Ctx, obj: Mapping[str, Any], key: str, fld: str, choices: Sequence[str], what: str
) -> str:
    value = _str(ctx, obj, key, fld)
    if value not in choices:
        ctx.fail(
            _join(fld, key), f"unknown {what} '{value}' (expected one of {', '.join(choices)})"
        )
    return value


def _str_list(ctx: _Ctx, obj: Mapping[str, Any], key: str, fld: str) -> tuple[str, ...]:
    value = obj.get(key, ())
    f = _join(fld, key)
    if not isinstance(value, (list, tuple)):
        ctx.fail(f, f"must be an array of strings, not {_type_name(value)}")
    for i, v in enumerate(value):
        if not isinstance(v, str):
            ctx.fail(f"{f}[{i}]", f"must be a string, not {_type_name(v)}")
        if not v.strip():
            ctx.fail(f"{f}[{i}]", "must not be empty")
    return tuple(value)


#: Deepest nesting accepted inside free-form JSON objects.
MAX_JSON_DEPTH = 64


def _json_copy(ctx: _Ctx, value: Any, fld: str, depth: int) -> Any:
    """Copy a JSON value, rejecting non-JSON types and absurd nesting."""
    if depth > MAX_JSON_DEPTH:
        ctx.fail(fld, f"nested more than {MAX_JSON_DEPTH} levels deep")
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            ctx.fail(fld, f"{value} is not valid JSON")
        return value
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                ctx.fail(fld, f"object keys must be strings, not {_type_name(k)}")
            out[k] = _json_copy(ctx, v, f"{fld}.{k}", depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        return [_json_copy(ctx, v, f"{fld}[{i}]", depth + 1) for i, v in enumerate(value)]
    ctx.fail(fld, f"{type(value).__name__} is not a JSON value")


def _json_object(ctx: _Ctx, obj: Mapping[str, Any], key: str, fld: str) -> dict[str, Any]:
    """A free-form JSON object (tool parameters, arguments, results, actions, metadata)."""
    f = _join(fld, key)
    copied: dict[str, Any] = _json_copy(ctx, _object(ctx, obj[key], f), f, 1)
    return copied


_ITEM_REQ = ("id", "key", "value", "scope", "source", "trust", "valid_from")
_ITEM_OPT = ("valid_to",)


def _item(ctx: _Ctx, value: Any, fld: str) -> MemoryItem:
    obj = _object(ctx, value, fld)
    _check_keys(ctx, obj, fld, _ITEM_REQ, _ITEM_OPT)
    return MemoryItem(
        id=_str(ctx, obj, "id", fld, nonempty=True),
        key=_str(ctx, obj, "key", fld, nonempty=True),
        value=_str(ctx, obj, "value", fld, nonempty=True),
        scope=_str(ctx, obj, "scope", fld, nonempty=True),
        source=_enum(ctx, obj, "source", fld, SOURCES, "source"),
        trust=_float(ctx, obj, "trust", fld),
        valid_from=_int(ctx, obj, "valid_from", fld),
        valid_to=_int(ctx, obj, "valid_to", fld) if "valid_to" in obj else None,
    )


_CONSTRAINT_REQ = ("id", "text")
_CONSTRAINT_OPT = ("scope", "forbid_tool", "forbid_argument", "forbid_value", "forbid_text")


def _constraint(ctx: _Ctx, value: Any, fld: str) -> Constraint:
    obj = _object(ctx, value, fld)
    _check_keys(ctx, obj, fld, _CONSTRAINT_REQ, _CONSTRAINT_OPT)
    return Constraint(
        id=_str(ctx, obj, "id", fld, nonempty=True),
        text=_str(ctx, obj, "text", fld),
        scope=_str(ctx, obj, "scope", fld, nonempty=True) if "scope" in obj else "global",
        forbid_tool=_opt_str(ctx, obj, "forbid_tool", fld, nonempty=True),
        forbid_argument=_opt_str(ctx, obj, "forbid_argument", fld, nonempty=True),
        forbid_value=_opt_str(ctx, obj, "forbid_value", fld, nonempty=True),
        forbid_text=_opt_str(ctx, obj, "forbid_text", fld, nonempty=True),
    )


_CHECK_REQ = ("id", "kind")
_CHECK_OPT = ("description", *CHECK_PAYLOAD_FIELDS, "risk")


def _check(ctx: _Ctx, value: Any, fld: str) -> Check:
    obj = _object(ctx, value, fld)
    _check_keys(ctx, obj, fld, _CHECK_REQ, _CHECK_OPT)
    status = None
    if "status" in obj:
        status = _enum(ctx, obj, "status", fld, ITEM_STATUSES, "memory status")
    return Check(
        id=_str(ctx, obj, "id", fld, nonempty=True),
        kind=_enum(ctx, obj, "kind", fld, CHECK_KINDS, "check kind"),
        description=_str(ctx, obj, "description", fld) if "description" in obj else "",
        value=_opt_str(ctx, obj, "value", fld, nonempty=True),
        pattern=_opt_str(ctx, obj, "pattern", fld, nonempty=True),
        tool=_opt_str(ctx, obj, "tool", fld, nonempty=True),
        argument=_opt_str(ctx, obj, "argument", fld, nonempty=True),
        expected=_opt_str(ctx, obj, "expected", fld),
        expected_original=_opt_str(ctx, obj, "expected_original", fld),
        item=_opt_str(ctx, obj, "item", fld, nonempty=True),
        status=status,
        scope=_opt_str(ctx, obj, "scope", fld, nonempty=True),
        constraint=_opt_str(ctx, obj, "constraint", fld, nonempty=True),
        accept=_str_list(ctx, obj, "accept", fld),
        risk=_enum(ctx, obj, "risk", fld, risks.risk_ids(), "risk") if "risk" in obj else None,
    )


_TOOL_REQ = ("name", "description")
_TOOL_OPT = ("parameters", "terminal")


def _tool(ctx: _Ctx, value: Any, fld: str) -> Tool:
    obj = _object(ctx, value, fld)
    _check_keys(ctx, obj, fld, _TOOL_REQ, _TOOL_OPT)
    return Tool(
        name=_str(ctx, obj, "name", fld, nonempty=True),
        description=_str(ctx, obj, "description", fld),
        parameters=_json_object(ctx, obj, "parameters", fld) if "parameters" in obj else {},
        terminal=_bool(ctx, obj, "terminal", fld) if "terminal" in obj else True,
    )


_EVENT_REQ = ("id", "type", "time")
_EVENT_OPT = ("after", *EVENT_PAYLOAD_FIELDS)


def _event(ctx: _Ctx, value: Any, fld: str) -> Event:
    obj = _object(ctx, value, fld)
    _check_keys(ctx, obj, fld, _EVENT_REQ, _EVENT_OPT)
    checks_raw = obj.get("checks", ())
    if not isinstance(checks_raw, (list, tuple)):
        ctx.fail(_join(fld, "checks"), f"must be an array, not {_type_name(checks_raw)}")
    return Event(
        id=_str(ctx, obj, "id", fld, nonempty=True),
        type=_enum(ctx, obj, "type", fld, EVENT_TYPES, "event type"),
        time=_int(ctx, obj, "time", fld),
        after=_str_list(ctx, obj, "after", fld),
        text=_opt_str(ctx, obj, "text", fld),
        item=_item(ctx, obj["item"], _join(fld, "item")) if "item" in obj else None,
        supersedes=_opt_str(ctx, obj, "supersedes", fld, nonempty=True),
        target=_opt_str(ctx, obj, "target", fld, nonempty=True),
        tool=_opt_str(ctx, obj, "tool", fld, nonempty=True),
        arguments=_json_object(ctx, obj, "arguments", fld) if "arguments" in obj else None,
        result=_json_object(ctx, obj, "result", fld) if "result" in obj else None,
        constraint=(
            _constraint(ctx, obj["constraint"], _join(fld, "constraint"))
            if "constraint" in obj
            else None
        ),
        scopes=_str_list(ctx, obj, "scopes", fld),
        checks=tuple(
            _check(ctx, c, f"{_join(fld, 'checks')}[{i}]") for i, c in enumerate(checks_raw)
        ),
        reference=_json_object(ctx, obj, "reference", fld) if "reference" in obj else None,
        naive=_json_object(ctx, obj, "naive", fld) if "naive" in obj else None,
        terminal_tool=_opt_str(ctx, obj, "terminal_tool", fld, nonempty=True),
    )


_EPISODE_REQ = ("id", "version", "risk", "tier", "track", "family", "description", "events")
_EPISODE_OPT = ("tools", "resolution_rule", "metadata")


def _array(ctx: _Ctx, obj: Mapping[str, Any], key: str) -> Sequence[Any]:
    value = obj.get(key, ())
    if not isinstance(value, (list, tuple)):
        ctx.fail(key, f"must be an array, not {_type_name(value)}")
    return value


def episode_from_dict(
    data: Mapping[str, Any], *, path: str = "<memory>", line: int | None = None
) -> Episode:
    """Build an Episode from its canonical dict (inverse of ``codec.episode_to_dict``).

    Checks structure only (required fields, types, enums, unknown keys); run
    :func:`lm_eval_memrisk.episodes.validate.validate_episode` for the semantic checks.
    Raises :class:`EpisodeFormatError` naming ``path``, ``line``, episode id and field.
    """
    raw_id = data.get("id") if isinstance(data, Mapping) else None
    ctx = _Ctx(str(path), line, raw_id if isinstance(raw_id, str) and raw_id.strip() else None)
    obj = _object(ctx, data, "")
    _check_keys(ctx, obj, "", _EPISODE_REQ, _EPISODE_OPT)
    tools_raw = _array(ctx, obj, "tools")
    events_raw = _array(ctx, obj, "events")
    if not events_raw:
        ctx.fail("events", "must contain at least one event")
    return Episode(
        id=_str(ctx, obj, "id", "", nonempty=True),
        version=_str(ctx, obj, "version", "", nonempty=True),
        risk=_enum(ctx, obj, "risk", "", risks.risk_ids(), "risk"),
        tier=_enum(ctx, obj, "tier", "", TIERS, "tier"),
        track=_enum(ctx, obj, "track", "", risks.tracks(), "track"),
        family=_str(ctx, obj, "family", "", nonempty=True),
        description=_str(ctx, obj, "description", ""),
        tools=tuple(_tool(ctx, t, f"tools[{i}]") for i, t in enumerate(tools_raw)),
        events=tuple(_event(ctx, e, f"events[{i}]") for i, e in enumerate(events_raw)),
        resolution_rule=(
            _enum(ctx, obj, "resolution_rule", "", RESOLUTION_RULES, "resolution rule")
            if "resolution_rule" in obj
            else None
        ),
        metadata=_json_object(ctx, obj, "metadata", "") if "metadata" in obj else {},
    )


# --------------------------------------------------------------------------------------
# files
# --------------------------------------------------------------------------------------


def default_dataset_path(version: str = DEFAULT_DATASET) -> Path:
    """Path of a packaged dataset (default ``lm_eval_memrisk/data/episodes_v8.jsonl``)."""
    if version not in DATASETS:
        raise MemriskError(
            f"unknown dataset version {version!r} (expected one of {', '.join(DATASETS)})"
        )
    return Path(str(resources.files("lm_eval_memrisk").joinpath(DATASETS[version])))


def _read_bytes(path: PathArg | None) -> tuple[str, bytes]:
    """(display name, file bytes); ``None`` or a version name (``"v1"``) reads a packaged
    dataset; missing or unreadable files raise MemriskError."""
    if path is None or (isinstance(path, str) and path in DATASETS):
        res = resources.files("lm_eval_memrisk").joinpath(DATASETS[path or DEFAULT_DATASET])
        name = str(res)
        try:
            return name, res.read_bytes()
        except FileNotFoundError:
            raise MemriskError(
                f"the shipped dataset {name} is missing; generate it or pass an episode file"
            ) from None
        except OSError as exc:
            raise MemriskError(f"cannot read {name}: {exc.strerror or exc}") from None
    name = os.fspath(path)
    try:
        size = os.stat(name).st_size
        if size > MAX_FILE_BYTES:
            raise MemriskError(
                f"{name}: {size:,} bytes, over the limit of {MAX_FILE_BYTES:,} bytes for an episode file"
            )
        return name, Path(name).read_bytes()
    except FileNotFoundError:
        if name in VERSION_FIELDS.values():  # a version the generator builds but nobody packaged
            raise MemriskError(
                f"dataset {name} is not packaged (it is a generator candidate): build it with "
                f"'python -m lm_eval_memrisk.generator --version {name} --out FILE' and pass FILE"
            ) from None
        raise MemriskError(f"no such file: {name}") from None
    except IsADirectoryError:
        raise MemriskError(f"{name} is a directory, expected a .jsonl file") from None
    except OSError as exc:
        raise MemriskError(f"cannot read {name}: {exc.strerror or exc}") from None


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key '{key}' in a JSON object")
        out[key] = value
    return out


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


#: How a surrogate gets into a line (raw surrogate bytes are invalid UTF-8): its JSON escape.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _strings(obj: Any) -> Iterator[tuple[str, str]]:
    """``(field path, text)`` for every key and string value in a parsed JSON object."""
    stack: list[tuple[str, Any]] = [("", obj)]
    while stack:
        fld, value = stack.pop()
        if isinstance(value, str):
            yield fld or "$", value
        elif isinstance(value, dict):
            for key, item in reversed(list(value.items())):
                yield _join(fld, key), key
                stack.append((_join(fld, key), item))
        elif isinstance(value, list):
            stack.extend((f"{fld}[{i}]", item) for i, item in reversed(list(enumerate(value))))


def _text_problem(obj: Mapping[str, Any], raw: bytes) -> tuple[str, str] | None:
    """``(field, message)`` for the first text in ``obj`` that cannot be encoded as UTF-8
    or is longer than :data:`MAX_FIELD_CHARS`; the events over :data:`MAX_EVENTS`."""
    events = obj.get("events")
    if isinstance(events, list) and len(events) > MAX_EVENTS:
        return "events", f"{len(events):,} events, over the limit of {MAX_EVENTS:,} per episode"
    surrogates, long = _SURROGATE_ESCAPE.search(raw) is not None, len(raw) > MAX_FIELD_CHARS
    if not (surrogates or long):
        return None  # neither can occur: skip the walk
    for fld, text in _strings(obj):
        bad = LONE_SURROGATE.search(text) if surrogates else None
        if bad:
            return fld, (
                f"contains a lone surrogate (\\u{ord(bad.group()):04x}) at character {bad.start() + 1}, "
                "which cannot be encoded as UTF-8"
            )
        if len(text) > MAX_FIELD_CHARS:
            return fld, f"{len(text):,} characters, over the limit of {MAX_FIELD_CHARS:,} per field"
    return None


def _parse_line(name: str, lineno: int, raw: bytes) -> Mapping[str, Any]:
    try:
        text = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
    except UnicodeDecodeError as exc:
        raise EpisodeFormatError(
            name, lineno, None, "$", f"not valid UTF-8 (byte {exc.start + 1})"
        ) from None
    try:
        obj = json.loads(
            text, object_pairs_hook=_no_duplicate_keys, parse_constant=_reject_constant
        )
    except json.JSONDecodeError as exc:
        raise EpisodeFormatError(
            name, lineno, None, "$", f"invalid JSON: {exc.msg} (column {exc.colno})"
        ) from None
    except (ValueError, RecursionError) as exc:
        raise EpisodeFormatError(name, lineno, None, "$", f"invalid JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise EpisodeFormatError(
            name, lineno, None, "$", f"each line must be a JSON object, not {_type_name(obj)}"
        )
    problem = _text_problem(obj, raw)
    if problem is not None:
        ep_id = obj.get("id")
        clean_id = ep_id if isinstance(ep_id, str) and not LONE_SURROGATE.search(ep_id) else None
        raise EpisodeFormatError(name, lineno, clean_id, *problem)
    return obj


def _lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        if raw.strip():
            yield lineno, raw


def iter_episode_lines(path: PathArg | None = None) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """Yield ``(line number, JSON object)`` for each non-blank line of a JSONL file.

    A line that is not a JSON object raises :class:`EpisodeFormatError`.
    """
    name, data = _read_bytes(path)
    for lineno, raw in _lines(data):
        yield lineno, _parse_line(name, lineno, raw)


@dataclass
class FileScan:
    """Everything found in one episode file: valid episodes and all problems."""

    path: str
    episodes: list[Episode] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    """Line number of each entry of ``episodes``."""
    problems: list[EpisodeFormatError] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems and bool(self.episodes)

    def track_counts(self) -> dict[str, int]:
        counts = {t: 0 for t in risks.tracks()}
        for ep in self.episodes:
            counts[ep.track] = counts.get(ep.track, 0) + 1
        return counts


def _checked_lines(
    name: str, data: bytes, behaviour: bool = False
) -> Iterator[tuple[int, Episode | None, list[EpisodeFormatError]]]:
    """``(line number, episode or None, its problems)`` for each non-blank line.

    Problems come in the order :func:`load_episodes` reports them: the line's JSON or
    structure (then no episode), else a duplicate id first and the semantic problems
    (with ``behaviour``, also the oracle and do-nothing rules of
    :func:`lm_eval_memrisk.episodes.validate.behaviour_problems`).
    """
    from lm_eval_memrisk.episodes.validate import collect_problems

    first_line: dict[str, int] = {}
    for lineno, raw in _lines(data):
        try:
            ep = episode_from_dict(_parse_line(name, lineno, raw), path=name, line=lineno)
        except EpisodeFormatError as exc:
            if exc.episode_id is not None:
                first_line.setdefault(exc.episode_id, lineno)
            yield lineno, None, [exc]
            continue
        problems = collect_problems(ep, path=name, line=lineno, behaviour=behaviour)
        if ep.id in first_line:
            problems.insert(
                0,
                EpisodeFormatError(
                    name,
                    lineno,
                    ep.id,
                    "id",
                    f"duplicate episode id (first used on line {first_line[ep.id]})",
                ),
            )
        else:
            first_line[ep.id] = lineno
        yield lineno, ep, problems


def scan_episodes(path: PathArg | None = None, behaviour: bool = False) -> FileScan:
    """Parse and validate a whole file, collecting every problem instead of stopping.

    Structural problems stop at the first one per line; semantic problems are all
    listed; ``behaviour`` adds the oracle and do-nothing rules (``memrisk validate``).
    Only unreadable files raise (:class:`MemriskError`).
    """
    name, data = _read_bytes(path)
    scan = FileScan(name)
    for lineno, ep, problems in _checked_lines(name, data, behaviour):
        if problems:
            scan.problems.extend(problems)
        elif ep is not None:
            scan.episodes.append(ep)
            scan.lines.append(lineno)
    return scan


def load_episodes(path: PathArg | None = None, track: str = "main") -> list[Episode]:
    """Load and validate an episode file; keep the episodes of ``track``.

    ``path=None`` reads the shipped dataset; ``track`` is ``"main"``, ``"r6"`` or
    ``"all"``.  The first problem in the file raises :class:`EpisodeFormatError`;
    an unreadable or empty file, or a bad ``track``, raises :class:`MemriskError`.
    """
    choices = (*risks.tracks(), "all")
    if track not in choices:
        raise MemriskError(f"unknown track '{track}' (expected one of {', '.join(choices)})")
    name, data = _read_bytes(path)
    episodes: list[Episode] = []
    for _, ep, problems in _checked_lines(name, data):
        if problems:
            raise problems[0]
        if ep is not None:
            episodes.append(ep)
    if not episodes:
        raise MemriskError(f"{name}: no episodes found (the file is empty)")
    if track == "all":
        return episodes
    return [ep for ep in episodes if ep.track == track]


def dataset_hash(path: PathArg | None = None) -> str:
    """The dataset hash of result signatures (:func:`codec.fingerprint`) of a file's episodes.

    It depends on the episodes only, not on file order or formatting.
    """
    from lm_eval_memrisk.episodes.codec import fingerprint

    return fingerprint(load_episodes(path, track="all"))
