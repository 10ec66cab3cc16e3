"""Tests for the deterministic tool stubs in lm_eval_memrisk.episodes.tools."""

from __future__ import annotations

import hashlib
import json
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lm_eval_memrisk.episodes.records import Tool
from lm_eval_memrisk.episodes.tools import call_tool, result_id, validate_arguments

SHIP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "address": {"type": "string"},
        "qty": {"type": "integer"},
        "weight": {"type": "number"},
        "gift": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "meta": {"type": "object", "properties": {"note": {"type": "string"}},
                 "required": ["note"]},
        "speed": {"type": "string", "enum": ["fast", "slow"]},
    },
    "required": ["address"],
    "additionalProperties": False,
}
TOOLS = (
    Tool("ship_order", "Ship an order.", SHIP_SCHEMA),
    Tool("send_email", "Send an email.", {"properties": {"to": {"type": "string"}}}),
)

VALID: list[dict[str, Any]] = [
    {"address": "9 Elm Rd"},
    {"address": "9 Elm Rd", "qty": 2, "weight": 1.5, "gift": True},
    {"address": "x", "qty": 2.0},  # JSON Schema: 2.0 is an integer
    {"address": "x", "weight": 3},
    {"address": "x", "tags": ["a", "b"], "meta": {"note": "n"}, "speed": "fast"},
    {"address": ""},
]

# (arguments, substring of the problem)
INVALID: list[tuple[Any, str]] = [
    ({}, "missing required argument 'address'"),
    ({"address": 5}, "argument 'address' must be string, got integer"),
    ({"address": None}, "argument 'address' must be string, got null"),
    ({"address": "x", "qty": "2"}, "argument 'qty' must be integer, got string"),
    ({"address": "x", "qty": True}, "argument 'qty' must be integer, got boolean"),
    ({"address": "x", "qty": 2.5}, "argument 'qty' must be integer, got number"),
    ({"address": "x", "weight": "heavy"}, "argument 'weight' must be number"),
    ({"address": "x", "gift": "yes"}, "argument 'gift' must be boolean, got string"),
    ({"address": "x", "tags": "a"}, "argument 'tags' must be array, got string"),
    ({"address": "x", "tags": ["a", 1]}, "argument 'tags[1]' must be string, got integer"),
    ({"address": "x", "meta": []}, "argument 'meta' must be object, got array"),
    ({"address": "x", "meta": {}}, "missing required argument 'meta.note'"),
    ({"address": "x", "speed": "warp"}, "argument 'speed' must be one of \"fast\", \"slow\""),
    ({"address": "x", "extra": 1}, "unexpected argument 'extra'"),
    ({"address": "x", 3: 1}, "argument names must be strings"),
    ([("address", "x")], "arguments must be a JSON object, got array"),
    ("address=x", "arguments must be a JSON object, got string"),
    (None, "arguments must be a JSON object, got null"),
]


@pytest.mark.parametrize("arguments", VALID)
def test_valid_arguments(arguments: dict[str, Any]) -> None:
    assert validate_arguments(SHIP_SCHEMA, arguments) == []
    result = call_tool(TOOLS, "ship_order", arguments)
    assert result["ok"] is True
    assert result["tool"] == "ship_order"
    assert result["message"] == "ship_order accepted"
    assert result["result_id"].startswith("ship_order-") and len(result["result_id"]) == 19


@pytest.mark.parametrize(("arguments", "problem"), INVALID)
def test_invalid_arguments(arguments: Any, problem: str) -> None:
    problems = validate_arguments(SHIP_SCHEMA, arguments)
    assert any(problem in p for p in problems), problems
    result = call_tool(TOOLS, "ship_order", arguments)
    assert result["ok"] is False and problem in result["error"]
    assert set(result) == {"ok", "error"}


def test_all_problems_are_reported() -> None:
    problems = validate_arguments(SHIP_SCHEMA, {"qty": "x", "extra": 1})
    assert len(problems) == 3


@pytest.mark.parametrize(
    ("name", "error"),
    [
        ("delete_all", "unknown tool 'delete_all'; available: send_email, ship_order"),
        ("", "unknown tool ''; available: send_email, ship_order"),
        ("Ship_Order", "unknown tool 'Ship_Order'; available: send_email, ship_order"),
    ],
)
def test_unknown_tool(name: str, error: str) -> None:
    assert call_tool(TOOLS, name, {}) == {"ok": False, "error": error}


def test_unknown_tool_with_no_tools() -> None:
    assert call_tool((), "x", {}) == {"ok": False, "error": "unknown tool 'x'; available: none"}


def test_result_id_is_sha256_of_canonical_json() -> None:
    args = {"b": 1, "a": "é"}
    canon = json.dumps(["ship_order", args], sort_keys=True, separators=(",", ":"))
    expected = "ship_order-" + hashlib.sha256(canon.encode()).hexdigest()[:8]
    assert result_id("ship_order", args) == expected
    assert call_tool(TOOLS, "ship_order", {"address": "9 Elm Rd"})["result_id"] == result_id(
        "ship_order", {"address": "9 Elm Rd"}
    )


def test_result_id_ignores_key_order_and_mapping_type() -> None:
    a = call_tool(TOOLS, "ship_order", {"address": "x", "qty": 1})
    b = call_tool(TOOLS, "ship_order", MappingProxyType({"qty": 1, "address": "x"}))
    assert a == b


def test_result_id_differs_by_arguments() -> None:
    a = call_tool(TOOLS, "ship_order", {"address": "9 Elm Rd"})
    b = call_tool(TOOLS, "ship_order", {"address": "9 Elm Road"})
    assert a["result_id"] != b["result_id"]


def test_schema_without_additional_properties_allows_extras() -> None:
    assert call_tool(TOOLS, "send_email", {"to": "a@b.c", "cc": "x"})["ok"] is True


def test_non_json_argument_values_give_an_error_not_a_crash() -> None:
    result = call_tool(TOOLS, "send_email", {"to": "a", "x": {1, 2}})
    assert result["ok"] is False and "error" in result


def test_deeply_nested_arguments_do_not_crash() -> None:
    deep: Any = "x"
    for _ in range(5000):
        deep = {"a": deep}
    schema: dict[str, Any] = {"type": "object"}
    schema["additionalProperties"] = schema  # every level is checked again
    assert any("nested too deeply" in p for p in validate_arguments(schema, {"k": deep}))
    result = call_tool((Tool("t", "", schema),), "t", {"k": deep})
    assert result["ok"] is False and "nested too deeply" in result["error"]
    # without a recursive schema, hashing the deep value fails cleanly
    result = call_tool((Tool("t", "", {"type": "object"}),), "t", {"k": deep})
    assert isinstance(result["ok"], bool)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["ship_order", "send_email", "nope"]),
    st.one_of(_JSON, st.dictionaries(st.text(), _JSON)),
)
def test_call_tool_is_deterministic_and_total(name: str, arguments: Any) -> None:
    first = call_tool(TOOLS, name, arguments)
    assert first == call_tool(TOOLS, name, arguments)
    assert isinstance(first["ok"], bool)
    if first["ok"]:
        assert first["result_id"] == result_id(name, arguments)
    else:
        assert isinstance(first["error"], str) and first["error"]
