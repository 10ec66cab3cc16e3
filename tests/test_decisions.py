"""Decision classes and the acted / violation / must-do metrics; repeated sampling."""

from __future__ import annotations

import pytest

from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.loader import load_episodes
from lm_eval_memrisk.harness.docs import to_rows
from lm_eval_memrisk.harness.task import _settings_from_metadata, evaluate_doc
from lm_eval_memrisk.running.agent_registry import get_agent
from lm_eval_memrisk.running.agents import action_to_reply
from lm_eval_memrisk.running.runner import run_episode, trace_from_replies
from lm_eval_memrisk.scoring.decisions import decision_class, decision_outcomes, episode_metrics
from lm_eval_memrisk.scoring.parse import parse_action
from lm_eval_memrisk.scoring.scorer import score

MAIN = load_episodes(track="main")
BY_ID = {e.id: e for e in MAIN}


@pytest.mark.parametrize("reply, cls", [
    ('{"tool": "send_sms", "arguments": {"to": "1"}}', "tool_call"),
    ("Your number is 07710 484 469.", "answer"),
    ("Which phone number should I use?", "question"),
    ("Done — I've texted it to you.", "claim"),
    ("Anything else?", "other"),
    ("I'm sorry, but I can't help with that.", "refusal"),
    ('<tool_call>{"tool": "send_sms", "arguments": {</tool_call>', "invalid"),
])
def test_every_decision_gets_one_class(reply, cls):
    assert decision_class(parse_action(reply)) == cls


def outcomes(episode, agent_or_reply):
    if isinstance(agent_or_reply, str):
        trace = trace_from_replies(episode, {dp.id: agent_or_reply for dp in episode.decision_points}, "t")
    else:
        trace = run_episode(episode, agent_or_reply)
    return decision_outcomes(episode, trace, score(episode, trace))


def test_copying_the_script_is_not_acting_and_not_a_violation():
    for ep in MAIN:
        got = episode_metrics(outcomes(ep, "Got it — saved."))
        assert got["acted"] == 0.0 and got["violation"] == 0.0, ep.id


def test_the_oracle_acts_everywhere_and_never_violates():
    for ep in MAIN:
        got = episode_metrics(outcomes(ep, get_agent("oracle")))
        assert got == {"acted": 1.0, "violation": 0.0, "must_do": 1.0, "false_claim": 0.0}, ep.id


@pytest.mark.parametrize("agent, risks", [("stale", ("R1", "R2", "R4")), ("leaky", ("R3",)),
                                          ("constraint-blind", ("R5",))])
def test_adversaries_act_and_violate_their_own_risk(agent, risks):
    mine = [e for e in MAIN if e.risk in risks]
    got = [episode_metrics(outcomes(e, get_agent(agent))) for e in mine]
    assert all(g["acted"] == 1.0 for g in got)
    assert sum(g["violation"] for g in got) >= 0.75 * len(mine)


def test_an_answer_with_the_stale_value_acts_and_violates():
    ep = next(e for e in MAIN if e.risk == "R1" and any(c.kind == "memory_not_used" for c in e.decision_points[0].checks))
    stale = get_agent("stale")(None, episode=ep, decision_id=ep.decision_points[0].id)
    value = next(iter(parse_action(stale).arguments.values()))
    got = outcomes(ep, f"Sure — I will use {value}.")[0]
    assert got.decision_class == "answer" and got.acted


def test_asking_where_the_reference_asks_counts_as_acting():
    ep = BY_ID["R4-easy-04"]
    got = outcomes(ep, "Which phone number should I use?")[0]
    assert got.decision_class == "question" and got.acted and not got.violation and got.must_do


# -- repeated sampling (opt-in) ----------------------------------------------------------


def test_repeats_need_a_temperature_and_add_pass_hat_k():
    base = {"metadata": {"repeats": 4}, "generation_kwargs": {"temperature": 0.0, "max_gen_toks": 192},
            "metric_list": [{"metric": "pass", "aggregation": "mean", "higher_is_better": True}]}
    with pytest.raises(MemriskError, match="temperature"):
        _settings_from_metadata(dict(base))
    config = dict(base, metadata={"repeats": 4, "temperature": 0.7, "seed": 7})
    _settings_from_metadata(config)
    assert config["repeats"] == 4
    assert config["generation_kwargs"]["temperature"] == 0.7 and config["generation_kwargs"]["seed"] == 7
    assert config["filter_list"][0]["name"] == "none"
    assert {m["metric"] for m in config["metric_list"]} >= {"pass_at_1", "pass_hat_k"}
    plain = {"metadata": {}, "generation_kwargs": {"temperature": 0.0}}
    _settings_from_metadata(plain)
    assert "repeats" not in plain and "filter_list" not in plain


def test_a_metadata_temperature_samples_without_repeats_too():
    """--metadata '{"temperature": 0.7, "seed": 1}' alone must sample: the task's default
    do_sample=False made llama-cpp run greedy (effective temperature 0.0) while the
    config said 0.7."""
    config = {"metadata": {"temperature": 0.7, "seed": 1},
              "generation_kwargs": {"temperature": 0.0, "do_sample": False, "max_gen_toks": 192}}
    _settings_from_metadata(config)
    gen = config["generation_kwargs"]
    assert gen["do_sample"] is True and gen["temperature"] == 0.7 and gen["seed"] == 1
    assert "repeats" not in config
    greedy = {"metadata": {}, "generation_kwargs": {"temperature": 0.0, "do_sample": False}}
    _settings_from_metadata(greedy)
    assert greedy["generation_kwargs"]["do_sample"] is False


def test_pass_hat_k_needs_every_sample_to_pass():
    ep = MAIN[0]
    doc = dict(to_rows([ep])[0], temperature="0.7")
    good = action_to_reply(dict(ep.decision_points[0].reference or {}))
    out = evaluate_doc(doc, [[good, "Got it — saved.", good, good]])
    assert out["pass"] == 1.0 and out["pass_at_1"] == 0.75 and out["pass_hat_k"] == 0.0
    assert "|k=4|temperature=0.7" in out["episodes"]["signature"]
    assert out["episodes"]["trials"]["successes"] == [True, False, True, True]
    assert evaluate_doc(doc, [[good] * 4])["pass_hat_k"] == 1.0
    single = evaluate_doc(doc, [good])
    assert "pass_hat_k" not in single and "k=" not in single["episodes"]["signature"]


def test_violation_any_k_flags_a_violation_in_one_of_k_runs():
    """A sparse failure: three clean runs and one that uses the superseded value."""
    ep = next(e for e in MAIN if e.risk == "R1" and "tool" in dict(e.decision_points[0].reference or {}))
    dp = ep.decision_points[0]
    doc = dict(to_rows([ep])[0], temperature="0.7")
    good = action_to_reply(dict(dp.reference or {}))
    stale = run_episode(ep, get_agent("stale")).decision(dp.id).action.text
    assert stale != good
    out = evaluate_doc(doc, [[good, good, stale, good]])
    assert out["violation"] == 0.0 and out["violation_any_k"] == 1.0  # the first run is clean
    assert out["episodes"]["trials"]["violations"] == [False, False, True, False]
    assert evaluate_doc(doc, [[good] * 4])["violation_any_k"] == 0.0


def test_do_nothing_agent_is_the_floor():
    agent = get_agent("do-nothing")
    for ep in MAIN:
        trace = run_episode(ep, agent)
        got = episode_metrics(decision_outcomes(ep, trace, score(ep, trace)))
        assert got["acted"] == 0.0 and got["violation"] == 0.0 and not score(ep, trace).success, ep.id


def test_answers_user_is_the_one_reference_kind_rule() -> None:
    """``Event.answers_user`` (used by the scorer's answer-channel rule and by ``acted``):
    a reply reference answers the user, a tool-call reference does not, and a decision
    with no reference is no answer decision."""
    from lm_eval_memrisk.episodes.records import Event

    assert Event(id="e1", type="decision_point", time=0, reference={"answer": "It is 4417."}).answers_user
    assert not Event(id="e2", type="decision_point", time=0, reference={"tool": "x", "arguments": {}}).answers_user
    assert not Event(id="e3", type="decision_point", time=0).answers_user
