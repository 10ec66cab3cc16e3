"""One reader of logged replies (#28 item 3): one parser, one MODES, one default for a
missing presentation, one rule for a missing episode_json, and ``memrisk score`` printing
the run's own signature."""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

import pytest

import lm_eval_memrisk.logs.recompute as recompute
import lm_eval_memrisk.logs.rederive as rederive
import lm_eval_memrisk.running.pipeline as pipeline
from lm_eval_memrisk.cli import main
from lm_eval_memrisk.episodes.codec import fingerprint
from lm_eval_memrisk.episodes.errors import MemriskError, SamplesError
from lm_eval_memrisk.episodes.loader import load_episodes
from lm_eval_memrisk.episodes.trace import MAX_REPLAY_STEPS, MISSING_PRESENTATION, MODES, Trace
from lm_eval_memrisk.harness.docs import to_rows
from lm_eval_memrisk.logs.recompute import replies_of_sample, replies_of_trace
from lm_eval_memrisk.logs.runs import known_datasets, read_sample
from lm_eval_memrisk.running.agent_registry import get_agent
from lm_eval_memrisk.running.interactive import agent_generate, check_max_steps, run_interactive
from lm_eval_memrisk.running.runner import run_episode
from lm_eval_memrisk.scoring.sample_record import ENVELOPE, sample_metrics
from lm_eval_memrisk.scoring.scorer import score

EPISODES = load_episodes("v1", track="all")
V1 = fingerprint(EPISODES)
BY_ID = {e.id: e for e in EPISODES}


def _sample(ep, trace) -> dict[str, Any]:
    metrics = sample_metrics(ep, trace, V1)
    return {"doc_id": 0, "doc": to_rows([ep], V1)[0], "resps": [[d.raw_reply] for d in trace.decisions], **metrics}


def _read(sample: dict[str, Any]):
    return read_sample(sample, "s.jsonl:7", "memriskbench_r1", known_datasets())


def test_the_twins_are_gone_and_modes_is_declared_once() -> None:
    for twin in ("rescore_sample", "verified_episode", "step_replies", "retrace"):
        assert not hasattr(rederive, twin), twin
    assert pipeline.MODES is MODES and recompute.MODES is MODES


def test_a_missing_episode_json_is_refused_naming_file_and_line() -> None:
    ep = BY_ID["R1-easy-01"]
    s = _sample(ep, run_episode(ep, get_agent("oracle")))
    assert _read(s).passed
    del s["doc"]["episode_json"]
    with pytest.raises(SamplesError, match=r"^s\.jsonl:7: doc\.episode_json"):
        _read(s)


def test_step_replies_count_only_in_interactive_mode() -> None:
    """One rule for the trace dict and the memrisk-agent envelope: a scripted decision is
    scored on its raw_reply, whatever steps it lists."""
    ep = BY_ID["R1-easy-01"]
    oracle = run_episode(ep, get_agent("oracle"))
    decision = dataclasses.asdict(oracle.decisions[0])
    decision["steps"] = [{"raw_reply": "", "action": {"kind": "invalid", "text": ""}}]
    parsed = replies_of_trace({"mode": "scripted", "decisions": [decision]}, "t:1")
    assert parsed.texts == ((oracle.decisions[0].raw_reply,),)
    env = ENVELOPE + json.dumps({"mode": "scripted", "memory_policy": "full", "decision": decision})
    via_envelope = rederive.trace_from_texts(ep, [env], agent="x")
    assert via_envelope.decisions[0].raw_reply == oracle.decisions[0].raw_reply
    assert score(ep, via_envelope).success == score(ep, oracle).success


def test_more_steps_than_the_replay_bound_is_refused_not_capped() -> None:
    r1 = [BY_ID["R1-easy-01"]]
    trace = run_interactive(r1, agent_generate(get_agent("stale")), "stale", progress=False)[0]
    s = _sample(r1[0], trace)
    _read(s)  # the honest log reads
    forged = copy.deepcopy(s)
    d0 = forged["episodes"]["trace"]["decisions"][0]
    d0["steps"] = [copy.deepcopy(d0["steps"][0]) for _ in range(MAX_REPLAY_STEPS + 1)]
    with pytest.raises(SamplesError, match=rf"^s\.jsonl:7: .*more than {MAX_REPLAY_STEPS}"):
        _read(forged)
    with pytest.raises(MemriskError, match="max_steps"):  # and no run can write such a log
        check_max_steps(MAX_REPLAY_STEPS + 1)
    assert check_max_steps(MAX_REPLAY_STEPS) == MAX_REPLAY_STEPS


def test_a_missing_presentation_has_one_default() -> None:
    ep = BY_ID["R1-easy-01"]
    d = run_episode(ep, get_agent("oracle")).to_dict()
    del d["presentation"], d["tools"]
    bare = Trace(episode_id=ep.id, episode_version=ep.version, agent="x", decisions=())
    sample = {"episodes": {"trace": d}}
    assert MISSING_PRESENTATION == "chat"  # logs before presentations existed showed chat
    assert (Trace.from_dict(d).presentation == bare.presentation == replies_of_trace(d, "t:1").presentation
            == replies_of_sample(sample, "t:1").presentation == recompute.Replies("scripted", "full", "x", ()).presentation
            == MISSING_PRESENTATION)


def test_replies_of_trace_reads_presentation_and_tools() -> None:
    ep = BY_ID["R1-easy-01"]
    d = run_episode(ep, get_agent("oracle")).to_dict()
    d.update(presentation="session", tools="native", memory_policy="recency:3")
    r = replies_of_trace(d, "t:1")
    assert (r.presentation, r.tools, r.memory_policy) == ("session", "native", "recency:3")
    d["presentation"] = "telepathy"
    with pytest.raises(SamplesError, match=r"^t:1: trace presentation"):
        replies_of_trace(d, "t:1")


def test_score_prints_the_runs_own_signature(tmp_path, capsys) -> None:
    out = tmp_path / "run"
    assert main(["run", "--agent", "stale", "--presentation", "chat", "--memory-policy", "recency:3",
                 "--risk", "R1", "--out", str(out), "--json"]) == 0
    ran = json.loads(capsys.readouterr().out)
    assert main(["score", str(out / "traces.jsonl"), "--json"]) == 0
    scored = json.loads(capsys.readouterr().out)
    sig = scored["signature"]
    assert "policy=recency:3" in sig and "presentation=chat" in sig and "mode=scripted" in sig, sig
    assert "agent=stale" in sig and "tools=text" in sig
    assert scored["passed"] == ran["passed"]
    if "signature" in ran:
        assert ran["signature"] == sig
