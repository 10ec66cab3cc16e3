"""Tests for lm_eval_memrisk.episodes.validate: one bad-input case per rule.

Each case breaks one thing in a valid sample episode, writes it as line 3 of a file
and checks that load_episodes' error names the file, line, episode id and field.

The behaviour rules (issue 26, item 10; ``memrisk validate`` only): a crafted episode
whose oracle fails a check, and one that a do-nothing agent passes, are each rejected
with the file, line, episode id and field; every packaged dataset still validates.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_loader import assert_file_error, event_index, make_dict, make_episode, write_jsonl

from lm_eval_memrisk import cli
from lm_eval_memrisk.episodes.errors import EpisodeFormatError
from lm_eval_memrisk.episodes.loader import episode_from_dict, load_episodes, scan_episodes
from lm_eval_memrisk.episodes.validate import collect_problems, validate_episode

Mutator = Callable[[dict[str, Any]], Any]


def ev(d: dict[str, Any], event_id: str) -> dict[str, Any]:
    event: dict[str, Any] = d["events"][event_index(d, event_id)]
    return event


def check0(d: dict[str, Any], **fields: Any) -> None:
    """Replace the first check of the decision point e18."""
    ev(d, "e18")["checks"][0] = {"id": "k1", **fields}


def _swap_first(d: dict[str, Any]) -> None:
    d["events"][0], d["events"][2] = d["events"][2], d["events"][0]


def _cycle(d: dict[str, Any]) -> None:
    ev(d, "e3")["time"] = 2  # e3 after e2 (same time) ...
    ev(d, "e2")["after"] = ["e3"]  # ... and e2 after e3


def _three_cycle(d: dict[str, Any]) -> None:
    for eid in ("e13", "e14", "e15", "e16"):
        ev(d, eid)["time"] = 8
    ev(d, "e13")["after"] = ["e15"]
    ev(d, "e14")["after"] = ["e13"]
    ev(d, "e15")["after"] = ["e14"]


def _written_later(d: dict[str, Any]) -> None:
    ev(d, "e1")["time"] = 5
    ev(d, "e1")["item"]["valid_from"] = 5
    del ev(d, "e4")["after"]


def _lift_before_declare(d: dict[str, Any]) -> None:
    ev(d, "e10")["time"] = 8


def _seven_checks(d: dict[str, Any]) -> None:
    checks = ev(d, "e18")["checks"]
    for k in range(len(checks) + 1, 8):
        checks.append({"id": f"k{k}", "kind": "tool_called", "tool": "ship_order"})


def _drop_turns(d: dict[str, Any]) -> None:
    d["events"] = [e for e in d["events"] if e["id"] not in ("e13", "e14", "e15")]


def _r2_without_rule(d: dict[str, Any]) -> None:
    d["risk"] = "R2"


def _no_decision(d: dict[str, Any]) -> None:
    d["events"] = [e for e in d["events"] if e["type"] != "decision_point"]


def _dup_tool(d: dict[str, Any]) -> None:
    d["tools"].append(dict(d["tools"][0]))


CASES: list[tuple[str, Mutator, str, str]] = [
    # the after graph
    ("cycle", _cycle, "events[3].after", "cycle in the after graph: e2 after e3 after e2"),
    (
        "three-event cycle",
        _three_cycle,
        "events[14].after",
        "cycle in the after graph: e13 after e15 after e14 after e13",
    ),
    (
        "after unknown event",
        lambda d: ev(d, "e18").update(after=["e17", "e99"]),
        "events[18].after[1]",
        "unknown event 'e99'",
    ),
    (
        "after itself",
        lambda d: ev(d, "e18").update(after=["e18"]),
        "events[18].after[0]",
        "cannot come after itself",
    ),
    (
        "after later event",
        lambda d: ev(d, "e3").update(after=["e13"]),
        "events[3].after[0]",
        "event 'e13' has a later time (8 > 3)",
    ),
    # dangling references
    (
        "supersedes unknown item",
        lambda d: ev(d, "e4").update(supersedes="m99"),
        "events[4].supersedes",
        "unknown memory item 'm99' (never written)",
    ),
    (
        "revoke unknown item",
        lambda d: ev(d, "e6").update(target="m99"),
        "events[6].target",
        "unknown memory item 'm99' (never written)",
    ),
    (
        "lift unknown constraint",
        lambda d: ev(d, "e11").update(target="c9"),
        "events[11].target",
        "unknown constraint 'c9'",
    ),
    # order of writes, updates, revocations, lifts
    (
        "update before write",
        _written_later,
        "events[4].supersedes",
        "memory item 'm1' is not written yet at time 4 (written at time 5 by event 'e1')",
    ),
    (
        "revoke before write",
        lambda d: ev(d, "e6").update(target="m4"),
        "events[6].target",
        "memory item 'm4' is not written yet at time 5 (written at time 7 by event 'e12')",
    ),
    (
        "lift before declare",
        _lift_before_declare,
        "events[11].target",
        "constraint 'c2' is not declared yet at time 7 (declared at time 8 by event 'e10')",
    ),
    (
        "update supersedes itself",
        lambda d: ev(d, "e4").update(supersedes="m2"),
        "events[4].supersedes",
        "cannot supersede its own item 'm2'",
    ),
    (
        "update changes key",
        lambda d: ev(d, "e4")["item"].update(key="billing address"),
        "events[4].item.key",
        (
            "must keep the key of the item it supersedes ('shipping address' in 'm1'), "
            "not 'billing address'"
        ),
    ),
    # duplicate ids
    (
        "duplicate event id",
        lambda d: ev(d, "e16").update(id="e2"),
        "events[16].id",
        "duplicate event id 'e2' (also events[2])",
    ),
    (
        "duplicate item id",
        lambda d: ev(d, "e5")["item"].update(id="m1"),
        "events[5].item.id",
        "duplicate memory item id 'm1' (first written by event 'e1')",
    ),
    (
        "duplicate constraint id",
        lambda d: ev(d, "e10")["constraint"].update(id="c1"),
        "events[10].constraint.id",
        "duplicate constraint id 'c1' (first declared by event 'e9')",
    ),
    (
        "duplicate check id",
        lambda d: ev(d, "e18")["checks"][1].update(id="k1"),
        "events[18].checks[1].id",
        "duplicate check id 'k1'",
    ),
    ("duplicate tool name", _dup_tool, "tools[3].name", "duplicate tool name 'ship_order'"),
    # decision points and checks
    (
        "decision without checks",
        lambda d: ev(d, "e18").pop("checks"),
        "events[18].checks",
        "needs at least one check",
    ),
    ("decision with seven checks", _seven_checks, "events[18].checks", "at most 6 checks, found 7"),
    (
        "decision without reference",
        lambda d: ev(d, "e18").pop("reference"),
        "events[18].reference",
        "a decision_point event needs 'reference'",
    ),
    ("no decision point", _no_decision, "events", "no decision_point"),
    (
        "check unknown item",
        lambda d: ev(d, "e18")["checks"][1].update(item="m9"),
        "events[18].checks[1].item",
        "unknown memory item 'm9'",
    ),
    (
        "check unknown tool",
        lambda d: ev(d, "e18")["checks"][0].update(tool="fax"),
        "events[18].checks[0].tool",
        "unknown tool 'fax'",
    ),
    (
        "check unknown constraint",
        lambda d: ev(d, "e18")["checks"][2].update(constraint="c9"),
        "events[18].checks[2].constraint",
        "unknown constraint 'c9'",
    ),
    (
        "check unknown argument",
        lambda d: ev(d, "e18")["checks"][0].update(argument="city"),
        "events[18].checks[0].argument",
        "tool 'ship_order' has no argument 'city'",
    ),
    (
        "text_contains without value",
        lambda d: check0(d, kind="text_contains"),
        "events[18].checks[0].value",
        "check kind 'text_contains' needs 'value'",
    ),
    (
        "text_absent without value",
        lambda d: check0(d, kind="text_absent"),
        "events[18].checks[0].value",
        "needs 'value'",
    ),
    (
        "text_regex without pattern",
        lambda d: check0(d, kind="text_regex"),
        "events[18].checks[0].pattern",
        "needs 'pattern'",
    ),
    (
        "tool_called without tool",
        lambda d: check0(d, kind="tool_called"),
        "events[18].checks[0].tool",
        "needs 'tool'",
    ),
    (
        "tool_arg_equals without expected",
        lambda d: check0(d, kind="tool_arg_equals", tool="ship_order", argument="address"),
        "events[18].checks[0].expected",
        "needs 'expected'",
    ),
    (
        "tool_arg_equals without argument",
        lambda d: check0(d, kind="tool_arg_equals", tool="ship_order", expected="x"),
        "events[18].checks[0].argument",
        "needs 'argument'",
    ),
    (
        "memory_used without selector",
        lambda d: check0(d, kind="memory_used"),
        "events[18].checks[0]",
        "needs at least one of item, status, scope",
    ),
    (
        "memory_not_used without selector",
        lambda d: check0(d, kind="memory_not_used"),
        "events[18].checks[0]",
        "needs at least one of item, status, scope",
    ),
    (
        "constraint_violated without constraint",
        lambda d: check0(d, kind="constraint_violated"),
        "events[18].checks[0].constraint",
        "needs 'constraint'",
    ),
    (
        "check field of another kind",
        lambda d: check0(d, kind="text_contains", value="9 Elm Rd", tool="ship_order"),
        "events[18].checks[0].tool",
        "not used by check kind 'text_contains'",
    ),
    (
        "invalid regex",
        lambda d: check0(d, kind="text_regex", pattern="(9 Elm"),
        "events[18].checks[0].pattern",
        "invalid regular expression: missing ), unterminated",
    ),
    # reference / naive actions
    (
        "reference unknown tool",
        lambda d: ev(d, "e18")["reference"].update(tool="fax"),
        "events[18].reference.tool",
        "unknown tool 'fax'",
    ),
    (
        "naive unknown tool",
        lambda d: ev(d, "e18")["naive"].update(tool="fax"),
        "events[18].naive.tool",
        "unknown tool 'fax'",
    ),
    (
        "reference wrong shape",
        lambda d: ev(d, "e18").update(reference={"tool": "ship_order"}),
        "events[18].reference",
        "got keys ['tool']",
    ),
    (
        "reference with placeholder",
        lambda d: ev(d, "e18").update(reference={"answer": "{{mem:shipping address}}"}),
        "events[18].reference",
        "only allowed in 'naive'",
    ),
    (
        "naive placeholder unknown key",
        lambda d: ev(d, "e18").update(naive={"answer": "at {{mem:home}}"}),
        "events[18].naive",
        "{{mem:home}} names no memory item key",
    ),
    (
        "unknown terminal tool",
        lambda d: ev(d, "e18").update(terminal_tool="fax"),
        "events[18].terminal_tool",
        "unknown tool 'fax'",
    ),
    # episode-level rules
    (
        "easy with too few turns",
        _drop_turns,
        "tier",
        "easy episodes need 5-8 turns (user + assistant messages), found 4",
    ),
    (
        "medium with too few turns",
        lambda d: d.update(tier="medium"),
        "tier",
        "medium episodes need 10-14 turns",
    ),
    (
        "hard with too few turns",
        lambda d: d.update(tier="hard"),
        "tier",
        "hard episodes need 15-25 turns",
    ),
    (
        "R6 on main track",
        lambda d: d.update(risk="R6"),
        "track",
        "risk R6 episodes belong to track 'r6', not 'main'",
    ),
    (
        "r6 track with R1",
        lambda d: d.update(track="r6"),
        "track",
        "track 'r6' is only for risk R6, not R1",
    ),
    (
        "R2 without resolution rule",
        _r2_without_rule,
        "resolution_rule",
        "R2 episodes need a resolution_rule",
    ),
    (
        "resolution rule on R1",
        lambda d: d.update(resolution_rule="scope"),
        "resolution_rule",
        "only R2 episodes have a resolution_rule",
    ),
    (
        "does not start with scope_switch",
        _swap_first,
        "events[0].type",
        "must start with a scope_switch event, not 'user_message'",
    ),
    (
        "scope_switch not earliest",
        lambda d: ev(d, "e0").update(time=2),
        "events[0].time",
        "event 'e1' has an earlier time (1 < 2)",
    ),
    # event payloads
    (
        "message with item",
        lambda d: ev(d, "e2").update(item=dict(ev(d, "e12")["item"], id="m7")),
        "events[2].item",
        "not used by event type 'user_message'",
    ),
    (
        "message without text",
        lambda d: ev(d, "e2").pop("text"),
        "events[2].text",
        "a user_message event needs 'text'",
    ),
    (
        "scope_switch without scopes",
        lambda d: ev(d, "e0").pop("scopes"),
        "events[0].scopes",
        "needs 'scopes'",
    ),
    (
        "update without supersedes",
        lambda d: ev(d, "e4").pop("supersedes"),
        "events[4].supersedes",
        "needs 'supersedes'",
    ),
    (
        "tool call of unknown tool",
        lambda d: ev(d, "e7").update(tool="fax"),
        "events[7].tool",
        "unknown tool 'fax'",
    ),
    (
        "summary item not from summary",
        lambda d: ev(d, "e12")["item"].update(source="user"),
        "events[12].item.source",
        "must have source 'summary'",
    ),
    (
        "trust above 1",
        lambda d: ev(d, "e1")["item"].update(trust=1.5),
        "events[1].item.trust",
        "between 0 and 1",
    ),
    (
        "valid_to before valid_from",
        lambda d: ev(d, "e5")["item"].update(valid_to=2),
        "events[5].item.valid_to",
        "before valid_from",
    ),
    (
        "constraint that cannot be violated",
        lambda d: ev(d, "e9")["constraint"].pop("forbid_tool"),
        "events[9].constraint",
        "needs forbid_tool or forbid_text",
    ),
    (
        "constraint forbids unknown tool",
        lambda d: ev(d, "e9")["constraint"].update(forbid_tool="fax"),
        "events[9].constraint.forbid_tool",
        "unknown tool 'fax'",
    ),
    (
        "forbid_argument without forbid_value",
        lambda d: ev(d, "e9")["constraint"].update(forbid_argument="body"),
        "events[9].constraint.forbid_value",
        "go together",
    ),
    (
        "tool parameters not an object schema",
        lambda d: d["tools"][0].update(parameters={"type": "string"}),
        "tools[0].parameters",
        'type "object"',
    ),
]


@pytest.mark.parametrize("mutate,field,fragment", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_problem_names_file_line_episode_and_field(
    tmp_path: Path, mutate: Mutator, field: str, fragment: str
) -> None:
    bad = make_dict("BAD-3")
    mutate(bad)
    episode_from_dict(bad)  # structurally fine: the semantic check must catch it
    assert_file_error(tmp_path, bad, field, fragment)


def test_samples_are_valid() -> None:
    for risk, track in [("R1", "main"), ("R2", "main"), ("R3", "main"), ("R6", "r6")]:
        ep = make_episode("X-1", risk, track)
        assert collect_problems(ep) == []
        validate_episode(ep)


def test_in_memory_error_has_no_line() -> None:
    ep = dataclasses.replace(make_episode("X-1"), tier="hard")
    with pytest.raises(EpisodeFormatError) as info:
        validate_episode(ep)
    assert str(info.value).startswith("<memory>: episode X-1: tier: hard episodes need")
    assert info.value.line is None


def test_validate_catches_bad_enums_of_code_built_episodes() -> None:
    ep = dataclasses.replace(make_episode("X-1"), risk="R9")
    assert [p.field for p in collect_problems(ep, path="gen", line=4)][:1] == ["risk"]
    with pytest.raises(EpisodeFormatError, match=r"^gen:4: episode X-1: risk: unknown risk 'R9'"):
        validate_episode(ep, path="gen", line=4)


def test_collect_lists_all_problems_and_validate_raises_the_first() -> None:
    d = make_dict("X-1")
    d["tier"] = "hard"
    ev(d, "e18")["checks"][0]["tool"] = "fax"
    ev(d, "e6")["target"] = "m99"
    ep = episode_from_dict(d)
    problems = collect_problems(ep, path="f.jsonl", line=9)
    assert [p.field for p in problems] == ["tier", "events[6].target", "events[18].checks[0].tool"]
    assert all(str(p).startswith("f.jsonl:9: episode X-1: ") for p in problems)
    with pytest.raises(EpisodeFormatError) as info:
        validate_episode(ep, path="f.jsonl", line=9)
    assert info.value.field == "tier"


def test_empty_tool_arg_expectation_is_allowed() -> None:
    d = make_dict("X-1")
    ev(d, "e18")["checks"][0]["expected"] = ""
    assert collect_problems(episode_from_dict(d)) == []


def test_tool_not_called_without_tool_is_valid() -> None:
    d = make_dict("X-1")
    check0(d, kind="tool_not_called")
    assert collect_problems(episode_from_dict(d)) == []


# -- behaviour rules: the oracle passes, a do-nothing agent does not (issue 26, item 10) --


def _oracle_fails() -> dict[str, Any]:
    """The reference ships to the superseded address: the oracle fails k1 and k2."""
    d = make_dict("ORACLE-FAILS-1")
    ev(d, "e18")["reference"] = {"tool": "ship_order", "arguments": {"address": "14 Birch Lane"}}
    return d


def _does_nothing() -> dict[str, Any]:
    """Only negative checks left and an answer for reference: replying "Okay, noted."
    passes every check."""
    d = make_dict("DOES-NOTHING-1")
    ev(d, "e18")["checks"] = [c for c in ev(d, "e18")["checks"] if c["id"] != "k1"]
    ev(d, "e18")["reference"] = {"answer": "Sure, I'll hold the order for now."}
    return d


def test_crafted_episodes_pass_the_other_rules() -> None:
    """Both validated OK before the behaviour rules, and the loader still loads them."""
    for d in (_oracle_fails(), _does_nothing()):
        assert collect_problems(episode_from_dict(d)) == []
        assert [p.field for p in collect_problems(episode_from_dict(d), behaviour=True)]


def test_validate_rejects_an_episode_the_oracle_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_jsonl(tmp_path / "eps.jsonl", make_dict("OK-1"), _oracle_fails())
    assert len(load_episodes(path, track="all")) == 2
    assert cli.main(["validate", str(path)]) == 1
    err = capsys.readouterr().err
    assert (
        f"{path}:3: episode ORACLE-FAILS-1: events[18].checks[0]: the oracle (the reference action) "
        "fails check k1 (tool_arg_equals): ship_order.address: got '14 Birch Lane', expected '9 Elm Rd'"
    ) in err
    assert f"{path}:3: episode ORACLE-FAILS-1: events[18].checks[1]: the oracle" in err
    assert "OK-1" not in err and "FAILED: 2 problems" in err


def test_validate_rejects_an_episode_a_do_nothing_agent_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_jsonl(tmp_path / "eps.jsonl", make_dict("OK-1"), make_dict("OK-2"), _does_nothing())
    assert cli.main(["validate", str(path), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False and report["episodes"] == 2
    [problem] = report["problems"]
    assert problem["path"] == str(path) and problem["line"] == 5
    assert problem["episode_id"] == "DOES-NOTHING-1" and problem["field"] == "events[18].checks"
    assert problem["message"].startswith("an agent that does nothing (it replies 'Okay, noted.') passes every check")


def test_behaviour_rules_wait_for_the_other_rules() -> None:
    """An episode with a format or semantic problem is not run: only that problem is listed."""
    d = _oracle_fails()
    ev(d, "e18")["checks"][0]["tool"] = "fax"
    assert [p.field for p in collect_problems(episode_from_dict(d), behaviour=True)] == [
        "events[18].checks[0].tool"
    ]


@pytest.mark.parametrize("version", ["v1", "v2", "v3", "v4", "v5"])
def test_packaged_datasets_pass_the_behaviour_rules(version: str) -> None:
    scan = scan_episodes(version, behaviour=True)
    assert scan.ok and len(scan.episodes) == 144, [str(p) for p in scan.problems[:3]]
