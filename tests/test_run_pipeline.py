"""``memrisk run`` as a library (run_benchmark, build_system) and the #16 regressions.

Untrusted output never crashes a run (lone surrogates, deep nesting), a model that
gives no reply stops the run instead of being scored, ``--max-steps`` is checked,
``--resume`` refuses a folder of other settings, tool stubs answer like the script,
scripted assistant turns never merge into the agent's reply, and failures that a
memory policy caused are labelled ``policy_hidden``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from episode_factory import EMAIL, SHIP, chain, item
from test_interactive import LOOKUP, Scripted, call, multi_episode

from lm_eval_memrisk.cli import main as memrisk_main
from lm_eval_memrisk.episodes.codec import dumps_episode
from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.records import Check, Episode, Tool
from lm_eval_memrisk.episodes.tools import call_tool
from lm_eval_memrisk.episodes.validate import collect_problems
from lm_eval_memrisk.running.agent_registry import get_agent
from lm_eval_memrisk.running.agents import AMNESIAC_REPLY
from lm_eval_memrisk.running.interactive import EpisodeRun, agent_generate, run_interactive
from lm_eval_memrisk.running.pipeline import run_benchmark
from lm_eval_memrisk.running.policies import make_policy, policy_description
from lm_eval_memrisk.running.run_store import RunStore, parse_traces
from lm_eval_memrisk.running.runner import InfrastructureError, run_episode, run_scripted
from lm_eval_memrisk.running.systems import System, build_system
from lm_eval_memrisk.scoring.attribution import attribute
from lm_eval_memrisk.scoring.scorer import score


def fake_system(replies: list) -> System:
    return System("scripted-model", Scripted(replies), {"model": "scripted"})


# -- untrusted output never crashes a run ------------------------------------------------

def test_a_lone_surrogate_in_tool_arguments_is_written_and_read_back(tmp_path):
    ep = multi_episode(1)
    reply = '{"tool": "ship_order", "arguments": {"address": "\\ud800 Elm"}}'
    result = run_benchmark(fake_system([reply]), [ep], dataset_hash="h", mode="interactive", out=tmp_path,
                           progress=False)
    assert not result.results[0].success
    text = (tmp_path / "traces.jsonl").read_text(encoding="utf-8")  # valid UTF-8
    assert "\\ud800" in text
    (_, trace), = parse_traces(text, "traces.jsonl")
    assert trace.decisions[0].action.arguments["address"] == "\ud800 Elm"  # the same string back
    assert score(ep, trace).to_dict() == result.results[0].to_dict()


@pytest.mark.parametrize("mode", ["scripted", "interactive"])
def test_arguments_nested_500_deep_are_an_invalid_reply_not_a_crash(tmp_path, mode):
    ep = multi_episode(1)
    deep = '{"a": ' * 500 + '"x"' + "}" * 500
    reply = '{"tool": "ship_order", "arguments": {"address": ' + deep + '}}'
    result = run_benchmark(fake_system([reply]), [ep], dataset_hash="h", mode=mode, out=tmp_path, progress=False)
    action = result.traces[0].decisions[0].action
    assert action.kind == "invalid" and "nested more than 32 levels" in (action.reason or "")
    assert not result.results[0].success
    assert (tmp_path / "scores.jsonl").exists()


@pytest.mark.parametrize("mode", ["scripted", "interactive"])
@pytest.mark.parametrize("bad", [None, "", "  \n"])
def test_no_reply_stops_the_run_with_a_clear_message(tmp_path, mode, bad):
    episodes = [multi_episode(1, eid="T-A"), multi_episode(2, eid="T-B")]
    good = call("ship_order", address="9 Elm Road, Leeds")

    class FailsOnSecondEpisode:
        def __call__(self, batch):
            return [good if req.episode.id == "T-A" else bad for req in batch]

    system = System("flaky", FailsOnSecondEpisode(), {"model": "flaky"}, episode_major=True)
    with pytest.raises(InfrastructureError, match=r"episode T-B, decision point dp1: an infrastructure failure"):
        run_benchmark(system, episodes, dataset_hash="h", mode=mode, out=tmp_path, progress=False)
    assert not (tmp_path / "scores.jsonl").exists()  # nothing was scored
    if mode == "interactive":  # the finished episode was kept for --resume
        assert [t.episode_id for _, t in parse_traces((tmp_path / "traces.jsonl").read_text(), "t")] == ["T-A"]


def test_an_agent_returning_none_is_an_infrastructure_error():
    with pytest.raises(InfrastructureError, match="no reply"):
        run_episode(multi_episode(1), lambda messages: None)


@pytest.mark.parametrize("steps", ["0", "-3", "two"])
def test_max_steps_below_one_is_refused(tmp_path, capsys, steps):
    with pytest.raises(SystemExit) as exc:
        memrisk_main(["run", "--agent", "oracle", "--mode", "interactive", "--max-steps", steps,
                      "--out", str(tmp_path / "x")])
    assert exc.value.code == 2
    assert "--max-steps: must be an integer >= 1" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("steps", [0, -3])
def test_max_steps_below_one_is_refused_by_the_library(steps):
    with pytest.raises(MemriskError, match="max_steps must be an integer >= 1"):
        run_interactive([multi_episode(1)], Scripted(["hi"]), "x", max_steps=steps, progress=False)


# -- manifest and --resume ---------------------------------------------------------------

def _write(tmp_path: Path, episodes: list[Episode]) -> Path:
    path = tmp_path / "episodes.jsonl"
    path.write_text("".join(dumps_episode(e) + "\n" for e in episodes), encoding="utf-8")
    return path


def test_resume_refuses_other_settings_the_issue_repro(tmp_path, capsys):
    out = tmp_path / "run"
    assert memrisk_main(["run", "--agent", "oracle", "--mode", "interactive", "--limit", "5",
                         "--out", str(out), "--json"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["agent"] == "oracle" and manifest["mode"] == "interactive"
    assert manifest["memory_policy"] == "full" and manifest["max_steps"] == 4
    assert len(manifest["dataset_hash"]) > 8
    before = (out / "traces.jsonl").read_bytes()
    capsys.readouterr()

    code = memrisk_main(["run", "--agent", "stale", "--mode", "scripted", "--memory-policy", "bm25:3",
                         "--limit", "10", "--out", str(out), "--resume", "--json"])
    err = capsys.readouterr().err
    assert code == 2
    assert "holds a run with other settings" in err
    assert "agent: 'oracle' in the folder, 'stale' now" in err
    assert "mode: 'interactive' in the folder, 'scripted' now" in err
    assert "memory_policy: 'full' in the folder, 'bm25:3' now" in err
    assert (out / "traces.jsonl").read_bytes() == before  # nothing written


def test_resume_with_the_same_settings_extends_the_run(tmp_path, capsys):
    out = tmp_path / "run"
    base = ["run", "--agent", "stale", "--mode", "interactive", "--out", str(out), "--json"]
    assert memrisk_main(base + ["--limit", "3"]) == 0
    capsys.readouterr()
    assert memrisk_main(base + ["--limit", "6", "--resume"]) == 0
    resumed = json.loads(capsys.readouterr().out)
    assert resumed["n"] == 6
    fresh = tmp_path / "fresh"
    assert memrisk_main(["run", "--agent", "stale", "--mode", "interactive", "--out", str(fresh), "--json",
                         "--limit", "6"]) == 0
    assert json.loads(capsys.readouterr().out) == resumed
    assert (out / "scores.jsonl").read_bytes() == (fresh / "scores.jsonl").read_bytes()


def test_resume_of_a_folder_without_manifest_is_refused(tmp_path):
    store = RunStore(tmp_path)
    store.append(run_episode(multi_episode(1), get_agent("oracle")))
    again = RunStore(tmp_path, resume=True)
    with pytest.raises(MemriskError, match="no manifest.json"):
        again.start({"system": "oracle"})


def test_run_benchmark_reads_model_info_after_the_run(tmp_path):
    calls = {"n": 0}

    def generate(batch):
        calls["n"] += len(batch)
        return [call("ship_order", address="9 Elm Road, Leeds") for _ in batch]

    system = System("counting", generate, {"model": "counting"}, _info=lambda: {"calls_seen": calls["n"]})
    run_benchmark(system, [multi_episode(2)], dataset_hash="h", out=tmp_path, progress=False)
    results_file, = (tmp_path / "counting").glob("results_*.json")
    config = json.loads(results_file.read_text())["config"]
    assert config["calls_seen"] == 2 and config["mode"] == "scripted"
    assert config["memory_policy_config"] == {"name": "full", "filters_by_status": False, "signature": "full"}


def test_build_system_needs_exactly_one_of_agent_and_model():
    with pytest.raises(MemriskError):
        build_system()
    with pytest.raises(MemriskError):
        build_system("oracle", "hf")
    system = build_system("oracle")
    assert system.name == "oracle" and system.settings == {"agent": "oracle"} and not system.episode_major
    assert system.info() == {}


# -- tool stubs and scripted turns -------------------------------------------------------

RECORDS = Tool(
    name="lookup_records",
    description="Look up records (does not complete the task).",
    parameters={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    terminal=False,
)
SEARCH = Tool(
    name="search_web",
    description="Search the web.",
    parameters={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    terminal=False,
)


def lookup_episode() -> Episode:
    """The script calls lookup_records before the decision point and gets a record back."""
    events = [
        {"type": "scope_switch", "scopes": ("user:alice", "workspace:acme"), "text": "Session 1 — Alice (Acme)"},
        {"type": "user_message", "text": "Find my order number please."},
        {"type": "tool_call", "tool": "lookup_records", "arguments": {"query": "order Alice"}},
        {"type": "tool_return", "tool": "lookup_records", "result": {"match": "Alice", "order": "A-1207"}},
        {"type": "assistant_message", "text": "Your order is A-1207."},
        {"type": "user_message", "text": "Thanks."},
        {"type": "assistant_message", "text": "You're welcome."},
        {"type": "user_message", "text": "Please email bob@example.com that my order is A-1207."},
        {"id": "dp1", "type": "decision_point",
             "checks": (Check(id="c1", kind="tool_called", tool="send_email"),),
             "reference": {"tool": "send_email", "arguments": {"to": "bob@example.com", "body": "Order A-1207"}},
             "terminal_tool": "send_email"},
        {"type": "assistant_message", "text": "Email sent."},
        {"type": "user_message", "text": "And email carol@example.com the same."},
        {"id": "dp2", "type": "decision_point",
             "checks": (Check(id="c2", kind="tool_called", tool="send_email"),),
             "reference": {"tool": "send_email", "arguments": {"to": "carol@example.com", "body": "Order A-1207"}},
             "terminal_tool": "send_email"},
    ]
    return Episode(id="T-LOOKUP", version="1.0", risk="R1", tier="easy", track="main", family="orders",
                   description="A scripted lookup.", tools=(EMAIL, RECORDS, SEARCH), events=chain(events))


def test_lookup_episode_is_valid():
    assert list(collect_problems(lookup_episode())) == []


def test_tool_stubs_return_the_scripted_record_or_no_records():
    model = Scripted([call("lookup_records", query="anything"), call("search_web", query="x"),
                      call("send_email", to="bob@example.com", body="Order A-1207")])
    trace = run_interactive([lookup_episode()], model, "t", progress=False)[0]
    lookup, search, send = (s.tool_result for s in trace.decisions[0].steps)
    assert lookup["ok"] and lookup["records"] == [{"match": "Alice", "order": "A-1207"}]
    assert search["ok"] and search["records"] == [] and search["message"] == "no records found"
    assert send["ok"] and send["message"] == "send_email accepted" and "records" not in send
    seen = model.requests[1].messages[-1]["content"]  # the agent saw the record
    assert seen.startswith("[tool result: lookup_records]") and "A-1207" in seen


def test_call_tool_records_argument():
    tools = (EMAIL, RECORDS)
    got = call_tool(tools, "lookup_records", {"query": "q"}, {"lookup_records": [{"a": 1}]})
    assert got["records"] == [{"a": 1}]
    assert call_tool(tools, "lookup_records", {"query": "q"})["records"] == []
    assert call_tool(tools, "lookup_records", {"query": 3}, {"lookup_records": [{"a": 1}]})["ok"] is False


def test_scripted_assistant_turns_are_never_merged_into_the_agent_reply():
    from lm_eval_memrisk.episodes.render import make_presentation

    model = Scripted(["Which address should I use?", "Which address should I use?"])
    trace = run_interactive([lookup_episode()], model, "t", progress=False, presentation=make_presentation("chat"))[0]
    second = model.requests[1].messages
    assert "Which address should I use?\n\nEmail sent." not in json.dumps(second)
    assert "Email sent." not in [m["content"] for m in second]
    assistant = [m["content"] for m in second if m["role"] == "assistant"]
    assert assistant[-1] == "Which address should I use?"
    assert second[-1]["role"] == "user" and second[-1]["content"].endswith("\n\nAnd email carol@example.com the same.")
    assert [d.raw_reply for d in trace.decisions] == ["Which address should I use?"] * 2


# -- retrieval attribution ---------------------------------------------------------------

def hidden_note_episode() -> Episode:
    """The address lives only in an old note; later notes push it out of recency:1."""
    events = [
        {"type": "scope_switch", "scopes": ("user:alice", "workspace:acme"), "text": "Session 1 — Alice (Acme)"},
        {"type": "memory_write", "item": item("m1", "shipping address", "9 Elm Road, Leeds", t=2)},
        {"type": "user_message", "text": "Please remember my shipping address."},
        {"type": "assistant_message", "text": "Saved."},
        {"type": "memory_write", "item": item("m2", "phone number", "+44 20 7946 0018", t=5)},
        {"type": "user_message", "text": "And my phone number."},
        {"type": "assistant_message", "text": "Saved."},
        {"type": "user_message", "text": "Please ship my order to my address."},
        {"id": "dp1", "type": "decision_point",
             "checks": (Check(id="c1", kind="tool_arg_equals", tool="ship_order", argument="address",
                           expected="9 Elm Road, Leeds"),),
             "reference": {"tool": "ship_order", "arguments": {"address": "9 Elm Road, Leeds"}},
             "terminal_tool": "ship_order"},
    ]
    return Episode(id="T-HIDDEN", version="1.0", risk="R1", tier="easy", track="main", family="shipping_address",
                   description="A note only recency hides.", tools=(SHIP,), events=chain(events))


def test_hidden_note_episode_is_valid():
    assert list(collect_problems(hidden_note_episode())) == []


def test_a_failure_on_a_hidden_note_is_policy_hidden_and_under_full_the_agents():
    ep = hidden_note_episode()
    for policy, label in (("recency:1", "policy_hidden"), ("full", "agent")):
        trace = run_episode(ep, get_agent("amnesiac"), make_policy(policy))
        got = attribute(ep, trace, score(ep, trace))
        assert got["failure"] == label, policy
        assert got["hidden_decisions"] == (["dp1"] if policy == "recency:1" else [])


def test_a_value_the_user_said_is_not_hidden():
    ep = multi_episode(1)  # the user says "I moved to 9 Elm Road, Leeds." in the conversation
    trace = run_episode(ep, get_agent("amnesiac"), make_policy("recency:1"))
    assert attribute(ep, trace, score(ep, trace))["failure"] == "agent"


def test_visible_oracle_asks_when_the_note_is_hidden_and_acts_when_shown():
    ep = hidden_note_episode()
    agent = get_agent("visible-oracle")
    hidden = run_episode(ep, agent, make_policy("recency:1"))
    assert hidden.decisions[0].raw_reply == AMNESIAC_REPLY
    shown = run_episode(ep, agent)
    assert score(ep, shown).success


def _real(n: int = 60, version: str | None = None) -> list[Episode]:
    from lm_eval_memrisk.episodes.loader import load_episodes

    return load_episodes(version, track="main")[:n]


def test_visible_oracle_validates_policies_on_real_episodes():
    # v3: recency:3 hides a needed value in one R3 episode (v4 changed that episode and
    # no policy hides a needed value there: docs/interactive.md, the visible-oracle table)
    episodes = _real(120, "v3")
    agent = get_agent("visible-oracle")
    full = [score(e, run_episode(e, agent)).success for e in episodes]
    assert all(full)  # under full nothing is hidden
    policy = make_policy("recency:3")
    labels = []
    for e in episodes:
        trace = run_episode(e, agent, policy)
        labels.append(attribute(e, trace, score(e, trace))["failure"])
    assert "policy_hidden" in labels  # recency:3 hides needed notes in real episodes
    assert "agent" not in labels  # every failure of the visible oracle is the policy's


def test_interactive_visible_oracle_matches_scripted_labels():
    episodes = _real(30)
    policy = make_policy("recency:3")
    traces = run_interactive(episodes, agent_generate(get_agent("visible-oracle")), "v", policy=policy,
                             progress=False)
    scripted = run_scripted(episodes, agent_generate(get_agent("visible-oracle")), "v", policy, progress=False)
    for e, ti, ts in zip(episodes, traces, scripted):
        assert attribute(e, ti, score(e, ti))["failure"] == attribute(e, ts, score(e, ts))["failure"], e.id


# -- policies declare whether they filter by status --------------------------------------

@pytest.mark.parametrize("spec, filters", [
    ("full", False), ("recency:3", False), ("bm25:3", False), ("embedding:3", False),
    ("reference:3", True), ("reference-embedding:3", True),
])
def test_every_policy_declares_whether_it_filters_by_status(spec, filters):
    described = policy_description(make_policy(spec))
    assert described["filters_by_status"] is filters
    assert described["signature"] == spec + ("+active-only" if filters else "")


def test_the_signature_marks_status_filtering_policies(tmp_path):
    result = run_benchmark(build_system("oracle"), [multi_episode(1)], dataset_hash="h",
                           memory_policy="reference:3", progress=False)
    assert "policy=reference:3+active-only" in result.signature
    assert result.manifest["policy_filters_by_status"] is True


def test_episode_run_uses_lookup_tool_from_test_interactive():
    run = EpisodeRun(multi_episode(1, tools=(SHIP, LOOKUP)))
    run.feed(call("lookup_order", order_id="A1"))
    result = run._steps[0].tool_result
    assert result is not None and result["records"] == [] and result["message"] == "no records found"


def test_mem0_records_its_effective_rankers():
    import importlib.util

    if importlib.util.find_spec("mem0") is None:  # importorskip would import it with telemetry on
        pytest.skip("mem0 is not installed (extra [memory])")
    described = policy_description(make_policy("mem0:3"))
    assert described["filters_by_status"] is True and described["signature"] == "mem0:3+active-only"
    rankers = described["rankers"]
    assert rankers["semantic"] is True
    if importlib.util.find_spec("fastembed") is None:  # mem0 then skips its BM25 keyword scores
        assert rankers["keyword_bm25"] is False
    if importlib.util.find_spec("spacy") is None:  # ... and its entity boosts
        assert rankers["entity_boost"] is False
    assert described["mem0_version"] and described["search_filter"] == "status=active"


def test_run_and_report_split_policy_hidden_from_agent_failures(tmp_path, capsys):
    data = _write(tmp_path, [hidden_note_episode(), multi_episode(1)])
    out = tmp_path / "run"
    assert memrisk_main(["run", "--agent", "amnesiac", "--memory-policy", "recency:1", "--episodes", str(data),
                         "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["failures"]["R1"] == {"n": 2, "passed": 0, "agent": 1, "policy_hidden": 1}
    rows = [json.loads(line) for line in (out / "attribution.jsonl").read_text().splitlines()]
    assert [(r["episode_id"], r["failure"]) for r in rows] == [("T-HIDDEN", "policy_hidden"), ("T-MULTI-1", "agent")]
    assert memrisk_main(["report", str(out), "--episodes", str(data), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    (row,) = report["rows"].values()
    assert row["R1"] == "0/2 (0%; 1 policy-hidden)"
    assert memrisk_main(["report", str(out), "--episodes", str(data)]) == 0
    header, line = capsys.readouterr().out.splitlines()[:2]
    cells = re.split(r"\s{2,}", line.strip())  # a long cell never runs into its neighbour
    assert cells[1:] == [row[c] for c in header.split()[1:]], line


def test_every_backend_declares_whether_it_filters_by_status():
    from lm_eval_memrisk.episodes.trace import ItemState
    from lm_eval_memrisk.running.memory import ReferenceBackend
    from lm_eval_memrisk.running.memory.mem0_backend import Mem0Backend

    assert Mem0Backend.filters_by_status is True  # its search filters on metadata status=active
    backend = ReferenceBackend()
    assert backend.filters_by_status is True
    old = ItemState("m1", "address", "12 Oak Street", "user:a", "user", 0.9, 1, "active")
    new = ItemState("m2", "address", "9 Elm Road", "user:a", "user", 0.9, 2, "active")
    backend.write(old)
    backend.update("m1", new)
    assert backend.search("address", 5) == ["m2"]  # what the declaration says: m1 is never shown
