"""Golden tables: one parametrized table per check kind, on a hand-built R1 episode."""

from __future__ import annotations

import json

import pytest
from episode_factory import r1_episode

from lm_eval_memrisk.episodes.records import Check
from lm_eval_memrisk.running.runner import trace_from_replies
from lm_eval_memrisk.scoring.scorer import score


def call(tool, **args):
    return json.dumps({"tool": tool, "arguments": args})


def run_check(check: Check, reply: str, expected: str = "revised", variant: str = "default"):
    ep = r1_episode(checks=(check,))
    trace = trace_from_replies(ep, {"dp1": reply}, agent="golden")
    return score(ep, trace, variant=variant, expected=expected).checks[0]


NEW, OLD = "9 Elm Road, Leeds", "12 Oak Street, York"

GOLDEN = [
    # text channel
    (Check(id="c", kind="text_contains", value=NEW), "Shipping to 9 elm road leeds.", True),
    (Check(id="c", kind="text_contains", value=NEW), "Shipping to 9 Elm Rd.", True),  # 3.0: Rd = Road
    (Check(id="c", kind="text_contains", value=NEW), "Shipping to 9 Elm Lane.", False),
    (Check(id="c", kind="text_contains", value=NEW), call("ship_order", address=NEW), True),
    (Check(id="c", kind="text_absent", value=OLD), "Shipping to 9 Elm Road, Leeds.", True),
    (Check(id="c", kind="text_absent", value=OLD), "Is it 12 Oak Street, York?", False),
    (Check(id="c", kind="text_absent", value="Oak"), "Oakland is nice", True),  # token boundary
    (Check(id="c", kind="text_regex", pattern=r"elm\s+road"), "9 ELM  ROAD", True),
    (Check(id="c", kind="text_regex", pattern=r"^ok$"), "not ok", False),
    # tool channel
    (Check(id="c", kind="tool_called", tool="ship_order"), call("ship_order", address=NEW), True),
    (Check(id="c", kind="tool_called", tool="ship_order"), call("send_email", to="a", body="b"), False),
    (Check(id="c", kind="tool_called", tool="ship_order"), "I'll ship it.", False),
    (Check(id="c", kind="tool_not_called", tool="send_email"), call("ship_order", address=NEW), True),
    (Check(id="c", kind="tool_not_called", tool="send_email"), call("send_email", to="a", body="b"), False),
    (Check(id="c", kind="tool_not_called"), "Which address?", True),
    (Check(id="c", kind="tool_not_called"), call("ship_order", address=NEW), False),
    (Check(id="c", kind="tool_arg_equals", tool="ship_order", argument="address", expected=NEW),
     call("ship_order", address="9 ELM ROAD  leeds"), True),
    (Check(id="c", kind="tool_arg_equals", tool="ship_order", argument="address", expected=NEW),
     call("ship_order", address=OLD), False),
    (Check(id="c", kind="tool_arg_equals", tool="ship_order", argument="address", expected=NEW),
     call("ship_order", order_id="7"), False),
    (Check(id="c", kind="tool_arg_equals", tool="ship_order", argument="address", expected=NEW),
     '<tool_call>{"name": "ship_order", "arguments": "{\\"address\\": \\"9 Elm Road, Leeds\\"}"}</tool_call>', True),
    # memory channel
    (Check(id="c", kind="memory_used", item="m3"), call("ship_order", address=NEW), True),
    (Check(id="c", kind="memory_used", item="m3"), call("ship_order", address=OLD), False),
    (Check(id="c", kind="memory_used", status="active", scope="user:alice"), "Your phone is +44 (20) 7946-0018", True),
    (Check(id="c", kind="memory_not_used", status="superseded"), call("ship_order", address=OLD), False),
    (Check(id="c", kind="memory_not_used", status="superseded"), call("ship_order", address=NEW), True),
    (Check(id="c", kind="memory_not_used", scope="user:bob"), call("ship_order", address=OLD), True),
    # constraint channel
    (Check(id="c", kind="constraint_not_violated", constraint="k1"),
     call("send_email", to="Marketing@Acme.test", body="hi"), False),
    (Check(id="c", kind="constraint_not_violated", constraint="k1"),
     call("send_email", to="legal@acme.test", body="hi"), True),
    (Check(id="c", kind="constraint_not_violated", constraint="k1"), "I won't email marketing.", True),
    (Check(id="c", kind="constraint_violated", constraint="k1"),
     call("send_email", to="marketing@acme.test", body="hi"), True),
    (Check(id="c", kind="constraint_violated", constraint="k1"), call("ship_order", address=NEW), False),
]


@pytest.mark.parametrize("check,reply,passed", GOLDEN, ids=[f"{g[0].kind}-{i}" for i, g in enumerate(GOLDEN)])
def test_golden(check, reply, passed):
    result = run_check(check, reply)
    assert result.passed is passed, result.evidence
    assert result.evidence  # every result carries evidence
    assert result.channel == check.kind.split("_")[0]


def test_strict_matching_original_expected_value():
    check = Check(id="c", kind="tool_arg_equals", tool="ship_order", argument="address",
                  expected=NEW, expected_original="address: " + NEW)
    reply = call("ship_order", address=NEW)
    assert run_check(check, reply, expected="revised").passed
    assert not run_check(check, reply, expected="original").passed
    assert run_check(check, call("ship_order", address="Address: " + NEW), expected="original").passed


def test_unknown_constraint_fails_with_evidence():
    result = run_check(Check(id="c", kind="constraint_not_violated", constraint="nope"), "ok")
    assert not result.passed and "unknown constraint" in result.evidence
