"""Deterministic, side-effect-free tool stubs.

:func:`call_tool` checks a call against the episode's tool list and the tool's
JSON-Schema ``parameters`` and returns a result dict; nothing is executed.  The same
inputs always give an identical result, and untrusted arguments never make it raise.

A valid call gets an answer consistent with the episode's script: the scripted
results of that tool (``records``: what the script's own calls of it returned before
the decision point, e.g. ``lookup_records``), else, for a tool that does not complete
the task (``terminal: false``, e.g. ``search_web``), an explicit empty
``"records": []`` with ``"message": "no records found"``, else (an action such as
``send_email``) a receipt ``"<tool> accepted"``.

The built-in checker (:func:`validate_arguments`) supports the subset of JSON Schema
the dataset uses: ``type`` (``object string number integer boolean array null``, or a
list of them), ``properties``, ``required``, ``enum``, ``additionalProperties``
(``false`` or a schema) and ``items``.  Other keywords are ignored.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from lm_eval_memrisk.episodes.records import Tool

__all__ = ["call_tool", "result_id", "validate_arguments"]

_MAX_DEPTH = 32


def _show(value: Any) -> str:
    """Short JSON-ish rendering of an untrusted value for error messages."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        text = type(value).__name__
    return text if len(text) <= 60 else text[:57] + "..."


def _type_ok(expected: str, value: Any) -> bool:
    if expected == "string":
        return isinstance(value, str)
    if expected == "integer":
        if isinstance(value, float):
            return value.is_integer()
        return isinstance(value, int) and not isinstance(value, bool)
    if expected == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if expected == "boolean":
        return isinstance(value, bool)
    if expected == "array":
        return isinstance(value, (list, tuple))
    if expected == "object":
        return isinstance(value, Mapping)
    if expected == "null":
        return value is None
    return True  # unknown type names are not enforced


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def _same(a: Any, b: Any) -> bool:
    """JSON equality: booleans never equal numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001
        return False


def _check(schema: Any, value: Any, path: str, depth: int, out: list[str]) -> None:
    if not isinstance(schema, Mapping):
        return
    if depth > _MAX_DEPTH:
        out.append(f"argument '{path}' is nested too deeply")
        return
    what = f"argument '{path}'"
    types = schema.get("type")
    names = [types] if isinstance(types, str) else list(types or ())
    if names and not any(_type_ok(str(t), value) for t in names):
        out.append(f"{what} must be {' or '.join(map(str, names))}, got {_json_type(value)}")
        return
    enum = schema.get("enum")
    if isinstance(enum, (list, tuple)) and not any(_same(value, e) for e in enum):
        allowed = ", ".join(_show(e) for e in enum)
        out.append(f"{what} must be one of {allowed}; got {_show(value)}")
    if isinstance(value, Mapping):
        _check_object(schema, value, path, depth, out)
    elif isinstance(value, (list, tuple)) and isinstance(schema.get("items"), Mapping):
        for i, item in enumerate(value):
            _check(schema["items"], item, f"{path}[{i}]", depth + 1, out)


def _check_object(
    schema: Mapping[str, Any], value: Mapping[Any, Any], path: str, depth: int, out: list[str]
) -> None:
    prefix = f"{path}." if path else ""
    props = schema.get("properties")
    props = props if isinstance(props, Mapping) else {}
    bad_keys = [k for k in value if not isinstance(k, str)]
    if bad_keys:
        out.append(f"argument names must be strings, got {_show(bad_keys[0])}")
    for req in schema.get("required") or ():
        if req not in value:
            out.append(f"missing required argument '{prefix}{req}'")
    extra = schema.get("additionalProperties", True)
    for key in sorted((k for k in value if isinstance(k, str)), key=str):
        sub = f"{prefix}{key}"
        if key in props:
            _check(props[key], value[key], sub, depth + 1, out)
        elif extra is False:
            known = ", ".join(sorted(map(str, props))) or "none"
            out.append(f"unexpected argument '{sub}' (allowed: {known})")
        elif isinstance(extra, Mapping):
            _check(extra, value[key], sub, depth + 1, out)


def validate_arguments(schema: Mapping[str, Any], arguments: Any) -> list[str]:
    """Problems of ``arguments`` against the JSON-Schema ``schema``; [] = valid."""
    if not isinstance(arguments, Mapping):
        return [f"arguments must be a JSON object, got {_json_type(arguments)}"]
    out: list[str] = []
    try:
        if not isinstance(schema, Mapping):
            return out
        _check_object(schema, arguments, "", 0, out)
    except Exception as exc:  # noqa: BLE001 - untrusted arguments must never crash
        out.append(f"arguments could not be checked ({type(exc).__name__})")
    return out


def _mapping_to_dict(value: Any) -> dict[str, Any]:
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not JSON data")


def result_id(name: str, arguments: Mapping[str, Any]) -> str:
    """``<name>-`` + first 8 hex digits of sha256 of canonical JSON ``[name, arguments]``.

    Raises TypeError/ValueError/RecursionError when the arguments are not JSON data.
    """
    canon = json.dumps(
        [name, arguments], sort_keys=True, separators=(",", ":"), ensure_ascii=True,
        default=_mapping_to_dict,
    )  # fmt: skip
    return f"{name}-{hashlib.sha256(canon.encode('ascii')).hexdigest()[:8]}"


def call_tool(
    tools: Sequence[Tool], name: str, arguments: Mapping[str, Any],
    records: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
) -> dict[str, Any]:
    """Simulate calling tool ``name``: an error dict or an ``ok`` result; never raises.

    ``records`` maps a tool name to the results the script's calls of it returned
    (see the module docstring for what an ``ok`` result holds).
    """
    try:
        tool = next((t for t in tools if t.name == name), None)
        if tool is None:
            available = ", ".join(sorted(t.name for t in tools)) or "none"
            shown = name if isinstance(name, str) and len(name) <= 60 else _show(name)
            return {"ok": False, "error": f"unknown tool '{shown}'; available: {available}"}
        problems = validate_arguments(tool.parameters, arguments)
        if problems:
            return {"ok": False, "error": "; ".join(problems)}
        rid = result_id(tool.name, arguments)
    except Exception as exc:  # noqa: BLE001 - e.g. arguments that are not JSON data
        return {"ok": False, "error": f"tool call could not be processed ({type(exc).__name__})"}
    scripted = [dict(r) for r in (records or {}).get(tool.name, ())]
    if scripted:
        return {"ok": True, "tool": tool.name, "result_id": rid, "records": scripted}
    if not tool.terminal:
        return {"ok": True, "tool": tool.name, "result_id": rid, "records": [], "message": "no records found"}
    return {"ok": True, "tool": tool.name, "result_id": rid, "message": f"{tool.name} accepted"}
