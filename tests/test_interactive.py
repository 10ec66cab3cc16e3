"""Interactive mode faults and bad input (issue 5 §5), and the oracle's score.

* a model that never stops calling tools hits the step limit and is still scored;
* unknown tools, invalid arguments and unparsable replies get deterministic
  error results that the agent sees in its next messages;
* interactive runs of the oracle score 1.0;
* ``memrisk run --mode interactive`` killed with SIGKILL resumes with ``--resume``
  without duplicated or lost traces, and scores like an uninterrupted run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from episode_factory import EMAIL, SHIP, chain, item, r1_episode
from test_memory_backends import real_episodes

from lm_eval_memrisk.episodes.codec import dumps_episode
from lm_eval_memrisk.episodes.records import Check, Episode, Tool
from lm_eval_memrisk.episodes.validate import collect_problems
from lm_eval_memrisk.running.agent_registry import get_agent
from lm_eval_memrisk.running.interactive import (
    DEFAULT_MAX_STEPS,
    EpisodeRun,
    agent_generate,
    run_interactive,
)
from lm_eval_memrisk.scoring.scorer import score

ROOT = Path(__file__).resolve().parent.parent

LOOKUP = Tool(
    name="lookup_order",
    description="Look up the current order (does not complete the task).",
    parameters={"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
    terminal=False,
)


def multi_episode(n_dp: int, eid: str | None = None, tools: tuple[Tool, ...] = (SHIP, EMAIL),
                  second_stand_in: str | None = None) -> Episode:
    """Alice moved (m1 -> m2); ``n_dp`` decision points each ask to ship an order.

    Every even-numbered decision point carries a ``naive`` action, so the stale
    agent fails those and passes the others.  ``second_stand_in``: a second script turn
    right after each decision point's stand-in ("Order j is on its way.").
    """
    events: list[dict] = [
        dict(type="scope_switch", scopes=("user:alice", "workspace:acme"), text="Session 1 — Alice (Acme)"),
        dict(type="memory_write", item=item("m1", "shipping address", "12 Oak Street, York", t=2)),
        dict(type="user_message", text="Please remember my address: 12 Oak Street, York."),
        dict(type="assistant_message", text="Saved."),
        dict(type="user_message", text="I moved to 9 Elm Road, Leeds."),
        dict(type="memory_update", item=item("m2", "shipping address", "9 Elm Road, Leeds", t=6), supersedes="m1"),
        dict(type="assistant_message", text="Updated."),
    ]
    turns = 4 + 2 * n_dp - 1
    while not (5 <= turns <= 8 or 10 <= turns <= 14 or 15 <= turns <= 25):
        events += [dict(type="user_message", text="How is the weather?"),
                   dict(type="assistant_message", text="Sunny, I hear.")]
        turns += 2
    tier = "easy" if turns <= 8 else "medium" if turns <= 14 else "hard"
    for j in range(1, n_dp + 1):
        events.append(dict(type="user_message", text=f"Order {j}: please ship it to my address."))
        events.append(dict(
            id=f"dp{j}", type="decision_point",
            checks=(Check(id=f"c{j}", kind="tool_arg_equals", tool="ship_order", argument="address",
                          expected="9 Elm Road, Leeds"),
                    Check(id=f"c{j}b", kind="memory_not_used", status="superseded")),
            reference={"tool": "ship_order", "arguments": {"address": "9 Elm Road, Leeds"}},
            naive=({"tool": "ship_order", "arguments": {"address": "{{mem:shipping address}}"}}
                   if j % 2 == 0 else None),
            terminal_tool="ship_order",
        ))
        if j < n_dp:
            events.append(dict(type="assistant_message", text=f"Order {j} is on its way."))
            if second_stand_in:
                events.append(dict(type="assistant_message", text=second_stand_in))
    return Episode(
        id=eid or f"T-MULTI-{n_dp}", version="1.0", risk="R1", tier=tier, track="main",
        family="shipping_address", description=f"{n_dp} orders after a move.", tools=tools,
        events=chain(events),
    )


class Scripted:
    """A model that answers each call from a script (the last reply repeats), recording requests."""

    def __init__(self, replies: list[str], limit: int = 200):
        self.replies, self.limit, self.requests = replies, limit, []

    def __call__(self, batch):
        out = []
        for req in batch:
            if len(self.requests) >= self.limit:
                raise AssertionError("the run did not stop: more model calls than any step limit allows")
            self.requests.append(req)
            out.append(self.replies[min(len(self.requests) - 1, len(self.replies) - 1)])
        return out


def call(tool: str, **arguments) -> str:
    return json.dumps({"tool": tool, "arguments": arguments})


def test_test_episodes_are_valid():
    for n in range(1, 7):
        assert list(collect_problems(multi_episode(n))) == [], n
    assert list(collect_problems(multi_episode(2, tools=(SHIP, LOOKUP)))) == []


# -- step limit -------------------------------------------------------------------------------

@pytest.mark.parametrize("reply", [call("lookup_order", order_id="A1"), call("teleport", to="mars")])
def test_endless_tool_calls_hit_the_step_limit_and_are_scored(reply):
    ep = multi_episode(2, tools=(SHIP, LOOKUP))
    model = Scripted([reply])
    trace = run_interactive([ep], model, "looper", max_steps=3, progress=False)[0]
    assert len(model.requests) == 2 * 3  # two decision points, three steps each, then it stops
    assert [len(d.steps) for d in trace.decisions] == [3, 3]
    assert trace.mode == "interactive"
    result = score(ep, trace)
    assert not result.success and 0.0 <= result.score < 1.0
    assert [c["passed"] for c in result.to_dict()["checks"] if c["kind"] == "tool_arg_equals"] == [False, False]


def test_default_step_limit_applies():
    model = Scripted([call("lookup_order", order_id="A1")])
    run_interactive([multi_episode(1, tools=(SHIP, LOOKUP))], model, "looper", progress=False)
    assert len(model.requests) == DEFAULT_MAX_STEPS


def test_a_non_terminal_tool_then_the_terminal_call_finishes_early():
    ep = multi_episode(1, tools=(SHIP, LOOKUP))
    model = Scripted([call("lookup_order", order_id="A1"), call("ship_order", address="9 Elm Road, Leeds")])
    trace = run_interactive([ep], model, "ok", max_steps=4, progress=False)[0]
    assert len(model.requests) == 2 and score(ep, trace).success
    assert trace.decisions[0].steps[0].tool_result["ok"] is True


# -- bad tool calls ---------------------------------------------------------------------------

BAD_THEN_GOOD = [
    call("teleport", to="mars"),
    call("ship_order", address=5),
    '<tool_call>{"tool": "ship_order", "arguments": {</tool_call>',
    call("ship_order", address="9 Elm Road, Leeds"),
]


def _run_bad_then_good():
    ep = multi_episode(1)
    model = Scripted(BAD_THEN_GOOD)
    trace = run_interactive([ep], model, "clumsy", max_steps=6, progress=False)[0]
    return ep, model, trace


def test_bad_calls_get_error_results_the_agent_sees_next():
    ep, model, trace = _run_bad_then_good()
    assert len(model.requests) == 4
    last = [r.messages[-1] for r in model.requests]
    assert last[0]["content"].endswith("\nOrder 1: please ship it to my address.")  # after the notes
    # the agent's own reply is in its history, followed by the error result
    assert model.requests[1].messages[-2] == {"role": "assistant", "content": BAD_THEN_GOOD[0]}
    assert last[1] == {
        "role": "user",
        "content": '[tool result: teleport] {"error": "unknown tool \'teleport\'; available: send_email, '
                   'ship_order", "ok": false}',
    }
    assert last[2]["role"] == "user" and last[2]["content"].startswith("[tool result: ship_order] ")
    err = json.loads(last[2]["content"].split("] ", 1)[1])
    assert err["ok"] is False
    assert err["error"] == "argument 'address' must be string, got integer"
    assert last[3]["role"] == "user" and last[3]["content"].startswith("[error] could not parse your reply")
    steps = trace.decisions[0].steps
    assert [s.action.kind for s in steps] == ["tool_call", "tool_call", "invalid", "tool_call"]
    assert [bool(s.tool_result and s.tool_result.get("ok")) for s in steps] == [False, False, False, True]
    assert score(ep, trace).success  # the final, correct call is what is scored


def test_error_results_are_deterministic():
    a = _run_bad_then_good()[2].to_dict()
    b = _run_bad_then_good()[2].to_dict()
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def test_an_answer_ends_the_decision_point():
    run = EpisodeRun(multi_episode(2))
    run.request()
    run.feed("Which order do you mean?")
    assert run.records[0].action.kind == "clarification" and not run.done
    run.request()
    run.feed(call("ship_order", address="9 Elm Road, Leeds"))
    assert run.done and len(run.records) == 2


def test_both_modes_drop_every_stand_in_turn_after_a_decision_point():
    """The script's turns right after a decision point stand in for the agent's reply:
    the scripted history (reference reply) and interactive mode (the agent's own reply)
    drop all of them, not only the first."""
    from lm_eval_memrisk.episodes.render import flatten, render

    episode = multi_episode(2, second_stand_in="Tracking number to follow.")
    scripted = flatten(render(episode, "dp2"))
    run = EpisodeRun(episode)
    run.request()
    run.feed(call("ship_order", address="9 Elm Road, Leeds"))
    interactive = flatten(run.request().messages)
    for text in (scripted, interactive):
        assert "9 Elm Road, Leeds" in text.split("Order 2")[0]  # the reply to order 1 is shown
        assert "is on its way" not in text and "Tracking number" not in text
    assert "Saved." in scripted and "Saved." in interactive  # other script turns stay
    # the script's acknowledgement of the memory update is hidden in both (render 4)
    assert "Updated." not in scripted and "Updated." not in interactive


# -- oracle -----------------------------------------------------------------------------------

def test_interactive_oracle_scores_one_on_real_and_factory_episodes():
    episodes = list(real_episodes()) + [r1_episode()] + [multi_episode(n) for n in (1, 3, 6)]
    oracle = agent_generate(get_agent("oracle"))
    traces = run_interactive(episodes, oracle, "oracle", progress=False)
    assert len(traces) == len(episodes) >= 4
    for ep, tr in zip(episodes, traces):
        assert tr.episode_id == ep.id and tr.mode == "interactive"
        result = score(ep, tr)
        assert result.success and result.score == 1.0, (ep.id, result.violations)
    one_at_a_time = run_interactive(episodes, oracle, "oracle", episode_major=True, progress=False)
    assert [t.to_dict() for t in one_at_a_time] == [t.to_dict() for t in traces]


# -- resume after SIGKILL ---------------------------------------------------------------------

SLOW_CLI = (
    "import sys, time\n"
    "import lm_eval_memrisk.running.agents as agents\n"
    "_call = agents.ReferenceAgent.__call__\n"
    "def slow(self, *a, **k):\n"
    "    time.sleep(float(sys.argv[1]))\n"
    "    return _call(self, *a, **k)\n"
    "agents.ReferenceAgent.__call__ = slow\n"
    "from lm_eval_memrisk.cli import main\n"
    "raise SystemExit(main(sys.argv[2:]))\n"
)


def _memrisk(args: list[str], delay: float = 0.0, **kw) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen([sys.executable, "-c", SLOW_CLI, str(delay), *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def test_resume_after_kill_loses_and_duplicates_nothing(tmp_path):
    data = tmp_path / "episodes.jsonl"
    episodes = [multi_episode(n) for n in range(1, 7)]  # episode n finishes in round n
    data.write_text("".join(dumps_episode(e) + "\n" for e in episodes), encoding="utf-8")
    base = ["run", "--agent", "stale", "--mode", "interactive", "--episodes", str(data), "--json"]

    ref = _memrisk(base + ["--out", str(tmp_path / "ref")])
    ref_out, ref_err = ref.communicate(timeout=300)
    assert ref.returncode == 0, ref_err[-2000:]
    expected = json.loads(ref_out)
    assert 0 < expected["passed"] < expected["n"] == 6  # the stale agent fails some episodes

    out = tmp_path / "killed"
    proc = _memrisk(base + ["--out", str(out)], delay=0.25)
    deadline = time.monotonic() + 240
    try:
        while len(_lines(out / "traces.jsonl")) < 2:
            assert proc.poll() is None, "the run ended before it could be killed: " + proc.communicate()[1][-2000:]
            assert time.monotonic() < deadline, "no traces were written"
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    written = _lines(out / "traces.jsonl")
    assert 2 <= len(written) < 6 and not (out / "scores.jsonl").exists()
    with open(out / "traces.jsonl", "a", encoding="utf-8") as fh:  # a write torn by the kill
        fh.write('{"episode_id": "T-MULTI-')

    again = _memrisk(base + ["--out", str(out), "--resume"])
    got_out, got_err = again.communicate(timeout=300)
    assert again.returncode == 0, got_err[-2000:]
    assert json.loads(got_out) == expected

    lines = _lines(out / "traces.jsonl")
    ids = [json.loads(line)["episode_id"] for line in lines]
    assert sorted(ids) == sorted(e.id for e in episodes) and len(ids) == len(set(ids)) == 6
    assert lines[: len(written)] == written  # finished episodes were not re-run
    ref_traces = {json.loads(x)["episode_id"]: json.loads(x) for x in _lines(tmp_path / "ref" / "traces.jsonl")}
    assert {json.loads(x)["episode_id"]: json.loads(x) for x in lines} == ref_traces
    assert _lines(out / "scores.jsonl") == _lines(tmp_path / "ref" / "scores.jsonl")
