"""Ground truth only from the episode (#12 §4, §5): envelopes, tampered samples, the
one check-kind table, the ``accept`` field."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from lm_eval_memrisk.episodes.codec import dumps_episode, episode_to_dict, fingerprint
from lm_eval_memrisk.episodes.errors import EpisodeFormatError, SamplesError
from lm_eval_memrisk.episodes.loader import episode_from_dict, load_episodes
from lm_eval_memrisk.episodes.records import (
    CHECK_KIND_TABLE,
    CHECK_KINDS,
    NEGATIVE_CHECK_KINDS,
    Check,
)
from lm_eval_memrisk.episodes.validate import CHECK_FIELDS
from lm_eval_memrisk.harness.docs import to_rows
from lm_eval_memrisk.logs.rederive import trace_from_texts
from lm_eval_memrisk.logs.runs import known_datasets, read_sample
from lm_eval_memrisk.running.agent_registry import get_agent
from lm_eval_memrisk.running.agents import action_to_reply
from lm_eval_memrisk.running.interactive import agent_generate, run_interactive
from lm_eval_memrisk.running.runner import run_episode
from lm_eval_memrisk.scoring.sample_record import ENVELOPE, sample_metrics
from lm_eval_memrisk.scoring.scorer import NEGATIVE_KINDS, score

SCHEMA = Path(__file__).resolve().parents[1] / "lm_eval_memrisk" / "schema" / "episode.schema.json"


@pytest.fixture(scope="module")
def episodes() -> dict[str, Any]:
    # the reference set and rows are v1
    return {e.id: e for e in load_episodes("v1", track="all")}


# -- envelopes ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        ENVELOPE + "{",
        ENVELOPE,
        ENVELOPE + "[]",
        ENVELOPE + '{"mode": "interactive", "memory_policy": "full", "decision": 7}',
        ENVELOPE + '{"mode": "telepathy", "decision": {"raw_reply": "x"}}',
        ENVELOPE + '{"mode": "scripted", "decision": {"steps": [{"raw_reply": 5}]}}',
        ENVELOPE + "[" * 5000,
    ],
)
def test_malformed_envelope_is_an_invalid_reply(episodes, reply: str) -> None:
    ep = episodes["R1-easy-01"]
    trace = trace_from_texts(ep, [reply], agent="x")
    action = trace.decisions[0].action
    assert action.kind == "invalid" and "envelope" in (action.reason or "")
    assert not score(ep, trace).success


def test_lm_eval_process_results_never_raises_on_a_broken_envelope(episodes) -> None:
    pytest.importorskip("lm_eval")
    from lm_eval.tasks import TaskManager

    from lm_eval_memrisk._autoload import tasks_dir

    task = TaskManager(include_path=str(tasks_dir()), include_defaults=False).load(["memriskbench_r1"])["tasks"]["memriskbench_r1"]
    doc = next(d for d in task.test_docs() if d["episode_id"] == "R1-easy-01")
    metrics = task.process_results(doc, [ENVELOPE + "{"])
    assert metrics["pass"] == 0.0 and metrics["score"] == 0.0
    assert any("envelope" in v for v in metrics["episodes"]["violations"])


def test_forged_envelope_cannot_claim_an_action_or_state(episodes) -> None:
    """The envelope's action, state and statuses are ignored: only its reply texts count."""
    ep = episodes["R1-easy-01"]
    stale = get_agent("stale")
    honest = run_episode(ep, stale)
    oracle = run_episode(ep, get_agent("oracle"))
    decision = dataclasses.asdict(honest.decisions[0])
    decision["action"] = dataclasses.asdict(oracle.decisions[0].action)  # claims the right call
    for item in decision["state"]["memory"]:
        item["status"] = "active"  # and that nothing is stale
    env = ENVELOPE + json.dumps({"mode": "scripted", "memory_policy": "full", "decision": decision})
    assert not score(ep, trace_from_texts(ep, [env], agent="x")).success


# -- rescoring tampered samples -------------------------------------------------------------


V1_HASH = fingerprint(load_episodes("v1", track="all"))


def _sample(ep, trace) -> dict[str, Any]:
    metrics = sample_metrics(ep, trace, V1_HASH)
    return {"doc_id": 0, "doc": to_rows([ep], V1_HASH)[0], "resps": [[d.raw_reply] for d in trace.decisions],
            **metrics}


def rescore_sample(sample: dict[str, Any], episodes: Any = None) -> Any:
    """The ``pass`` result of one sample line read by the one log reader (runs.read_sample)."""
    return read_sample(sample, "s.jsonl:1", "memriskbench_r1", known_datasets()).results["pass"]


def _tamper(sample: dict[str, Any]) -> dict[str, Any]:
    s = copy.deepcopy(sample)
    s["pass"], s["score"] = 1.0, 1.0
    s["episodes"]["success"] = True
    for d in s["episodes"]["trace"]["decisions"]:
        for item in d["state"]["memory"]:
            item["status"] = "active"
        for step in d.get("steps") or []:
            step["action"] = {"kind": "answer", "text": "ok"}
    return s


def test_tampered_statuses_leave_scripted_scores_unchanged(episodes) -> None:
    stale = get_agent("stale")
    r1 = [e for e in episodes.values() if e.risk == "R1"]
    for ep in r1:
        s = _sample(ep, run_episode(ep, stale))
        before = rescore_sample(s, episodes)
        after = rescore_sample(_tamper(s), episodes)
        assert before.success == after.success and before.score == after.score, ep.id
    assert sum(rescore_sample(_sample(e, run_episode(e, stale)), episodes).success for e in r1) < len(r1)


def test_tampered_statuses_leave_interactive_scores_unchanged(episodes) -> None:
    r1 = [e for e in episodes.values() if e.risk == "R1"]
    traces = run_interactive(r1, agent_generate(get_agent("stale")), "stale", progress=False)
    for ep, trace in zip(r1, traces):
        s = _sample(ep, trace)
        assert rescore_sample(s, episodes).success == score(ep, trace).success, ep.id
        assert rescore_sample(_tamper(s), episodes).success == score(ep, trace).success, ep.id


def test_rescore_refuses_an_episode_that_differs_from_the_dataset(episodes) -> None:
    ep = episodes["R1-easy-01"]
    s = _sample(ep, run_episode(ep, get_agent("oracle")))
    d = json.loads(s["doc"]["episode_json"])
    d["description"] = "edited"
    s["doc"]["episode_json"] = json.dumps(d)
    with pytest.raises(SamplesError, match="differs"):
        rescore_sample(s, episodes)
    s["doc"]["episode_id"] = s["episodes"]["episode_id"] = "NOPE-1"
    with pytest.raises(SamplesError, match="not in dataset"):
        rescore_sample(s, episodes)


# -- one table per check kind ---------------------------------------------------------------


def test_every_derived_view_equals_the_table() -> None:
    from lm_eval_memrisk.scoring.checks import REGISTRY

    kinds = [s.kind for s in CHECK_KIND_TABLE]
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    check_schema = schema["$defs"]["check"]
    assert check_schema["properties"]["kind"]["enum"] == kinds == list(CHECK_KINDS)
    assert set(REGISTRY) == set(kinds)
    assert set(CHECK_FIELDS) == set(kinds)
    assert NEGATIVE_KINDS == NEGATIVE_CHECK_KINDS == {s.kind for s in CHECK_KIND_TABLE if s.negative}
    required = {
        rule["if"]["properties"]["kind"]["const"]: rule["then"].get("required", [])
        for rule in check_schema["allOf"]
    }
    for spec in CHECK_KIND_TABLE:
        assert list(spec.required) == required.get(spec.kind, []), spec.kind
        for name in spec.required + spec.optional:
            assert name in check_schema["properties"], (spec.kind, name)


def test_unknown_kind_is_a_load_error_naming_the_field(tmp_path: Path, episodes) -> None:
    d = episode_to_dict(episodes["R1-easy-01"])
    dp = next(e for e in d["events"] if e["type"] == "decision_point")
    dp["checks"][0]["kind"] = "vibes_ok"
    path = tmp_path / "eps.jsonl"
    path.write_text(json.dumps(d) + "\n", encoding="utf-8")
    with pytest.raises(EpisodeFormatError) as err:
        load_episodes(path)
    assert "eps.jsonl:1" in str(err.value) and "checks[0].kind" in str(err.value) and "vibes_ok" in str(err.value)


# -- accept -------------------------------------------------------------------------------------


def test_accept_round_trips_and_is_omitted_when_empty(episodes) -> None:
    ep = episodes["R1-easy-02"]
    assert '"accept"' not in dumps_episode(ep)  # v1 bytes unchanged
    d = episode_to_dict(ep)
    dp = next(e for e in d["events"] if e["type"] == "decision_point")
    arg = next(c for c in dp["checks"] if c["kind"] == "tool_arg_equals")
    arg["accept"] = ["my green Amex card"]
    ep2 = episode_from_dict(d)
    assert episode_to_dict(ep2) == d
    check = next(c for c in ep2.decision_points[0].checks if c.kind == "tool_arg_equals")
    assert check.accept == ("my green Amex card",)
    ref = dict(ep2.decision_points[0].reference or {})
    reply = json.loads(action_to_reply(ref))
    reply["arguments"][arg["argument"]] = "My green AMEX card"
    from lm_eval_memrisk.running.runner import trace_from_replies

    trace = trace_from_replies(ep2, {ep2.decision_points[0].id: json.dumps(reply)}, agent="x")
    assert score(ep2, trace).success
    assert not score(ep, trace_from_replies(ep, {ep.decision_points[0].id: json.dumps(reply)}, agent="x")).success


def test_accept_is_rejected_on_kinds_without_a_value(episodes) -> None:
    from lm_eval_memrisk.episodes.validate import collect_problems

    ep = episodes["R1-easy-01"]
    dp = ep.decision_points[0]
    bad = tuple(dataclasses.replace(c, accept=("x",)) if c.kind == "memory_not_used" else c for c in dp.checks)
    ep2 = dataclasses.replace(ep, events=tuple(dataclasses.replace(dp, checks=bad) if e.id == dp.id else e for e in ep.events))
    assert any(p.field.endswith(".accept") for p in collect_problems(ep2))
    assert Check  # the record carries the field


def test_v2_requires_positive_action_checks(episodes) -> None:
    from lm_eval_memrisk.episodes.validate import collect_problems

    ep = episodes["R3-easy-01"]  # door code: v1 has no check of the courier call
    assert not collect_problems(ep)
    v2 = dataclasses.replace(ep, version="2.0")
    problems = [str(p) for p in collect_problems(v2)]
    assert any("message_courier" in p and "no check requires that call" in p for p in problems)
    assert any("order_ref" in p for p in problems)


def test_memrisk_score_ignores_tampered_statuses_in_saved_traces(tmp_path: Path, episodes, capsys) -> None:
    from lm_eval_memrisk import cli

    r1 = [e for e in episodes.values() if e.risk == "R1"]
    stale = get_agent("stale")
    traces = [run_episode(e, stale).to_dict() for e in r1]
    honest = tmp_path / "honest.jsonl"
    honest.write_text("".join(json.dumps(t) + "\n" for t in traces), encoding="utf-8")
    for t in traces:
        for d in t["decisions"]:
            for item in d["state"]["memory"]:
                item["status"] = "active"
    forged = tmp_path / "forged.jsonl"
    forged.write_text("".join(json.dumps(t) + "\n" for t in traces), encoding="utf-8")
    outs = []
    for path in (honest, forged):
        assert cli.main(["score", str(path), "--json"]) == 0
        outs.append(json.loads(capsys.readouterr().out))
    assert outs[0] == outs[1]
