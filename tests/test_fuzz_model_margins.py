"""A model's margins in fuzz campaigns (issue #30 item 1), on a fake llama.cpp model
with deterministic log-probabilities: the decision targets, the value and ask/decline
margins, the minimum over decisions, the campaign wiring, the cost records and
determinism.  No model file."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest
from episode_factory import item, r1_episode
from fake_token_model import VOCAB, FakeTokens
from test_fuzz_episodes import all_seed_episodes

from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.records import Check, Episode
from lm_eval_memrisk.episodes.render import flatten
from lm_eval_memrisk.fuzz.campaign import RunResult, run_campaign
from lm_eval_memrisk.fuzz.decision_targets import (
    CLAIM,
    TOOL_CALL,
    VALUE,
    WITHHOLD,
    decision_targets,
)
from lm_eval_memrisk.fuzz.execute import Executor
from lm_eval_memrisk.fuzz.margins import MarginCost
from lm_eval_memrisk.fuzz.model_margins import (
    MODEL_MARGIN_SCALE,
    ModelSource,
    episode_margins,
    measure,
    scaled,
)
from lm_eval_memrisk.fuzz.pipeline import FuzzOptions, margin_source
from lm_eval_memrisk.fuzz.reply_start import (
    BLANK,
    CLAIM_OPENERS,
    SILENT,
    TEXT,
    TOOL,
    WITHHOLD_OPENERS,
    opener_margin,
    token_class,
)
from lm_eval_memrisk.fuzz.report import write_all
from lm_eval_memrisk.fuzz.seeds import make_seeds
from lm_eval_memrisk.running.agent_registry import get_agent
from lm_eval_memrisk.running.interactive import agent_generate
from lm_eval_memrisk.running.runner import decision_prompts

CURRENT, STALE = "9 Elm Road, Leeds", "12 Oak Street, York"


def render(messages: list[dict[str, str]]) -> str:
    return flatten(messages)


def prompt_of(episode: Episode, decision_id: str) -> str:
    return render(next(p for p in decision_prompts(episode) if p.decision_id == decision_id).messages)


def seen_as(model: FakeTokens, text: str) -> str:
    """``text`` as the fake model reads it (characters outside its vocabulary are one token)."""
    return "".join(VOCAB[t] for t in model.prompt_tokens(text))


def asking_episode() -> Episode:
    """The R1 episode where the address was revoked: the reference asks the user."""
    ep = r1_episode(
        checks=(Check(id="c1", kind="tool_not_called", tool="ship_order"),
                Check(id="c2", kind="memory_not_used", item="m3")),
        extra_events=({"type": "memory_revoke", "target": "m3", "text": "Alice: forget my address."},),
    )
    events = tuple(
        replace(e, reference={"answer": "Which shipping address should I use?"}, naive=None)
        if e.type == "decision_point" else e
        for e in ep.events
    )
    return replace(ep, id="T-ASK-1", events=events)


def two_request_episode() -> Episode:
    """The R1 episode with an earlier question about the address (two decisions)."""
    early = (
        {"type": "user_message", "text": "Where do you have me living?"},
        {"id": "dp0", "type": "decision_point",
         "checks": (Check(id="c1", kind="text_contains", value=CURRENT),),
         "reference": {"answer": f"You live at {CURRENT}."}},
    )
    return replace(r1_episode(extra_events=early), id="T-R1-TWO")


# -- decision targets -----------------------------------------------------------------


def test_targets_hold_the_wrong_values_of_each_kind_of_decision() -> None:
    (tool,) = decision_targets(r1_episode())
    assert tool.kind == VALUE and tool.reference == CURRENT and tool.suffix == '"'
    assert tool.prefix == '{"tool": "ship_order", "arguments": {"address": "'
    assert [(c.role, c.text) for c in tool.wrong] == [("superseded", STALE)]
    (ask,) = decision_targets(asking_episode())
    assert ask.kind == WITHHOLD and ask.wrong == ()
    answer = [t for t in decision_targets(two_request_episode()) if t.decision_id == "dp0"][0]
    # the space before the value starts every candidate; the full stop ends the value
    assert (answer.prefix, answer.reference, answer.suffix) == ("You live at", f" {CURRENT}", ".")
    assert [c.text for c in answer.wrong] == [f" {STALE}"]


def test_a_constraint_value_and_another_scope_are_wrong_candidates() -> None:
    """An e-mail to a work address: another user's address of the same key, and the
    address a standing constraint forbids for this tool and argument."""
    mine = {"type": "memory_write", "item": item("m9", "work email", "ops@acme.test", t=8)}
    bobs = {"type": "memory_write",
            "item": item("m8", "work email", "bob@acme.test", scope="user:bob", t=8)}
    ep2 = r1_episode(extra_events=(mine, bobs))
    events = tuple(
        replace(e, reference={"tool": "send_email", "arguments": {"to": "ops@acme.test", "body": "Hi"}})
        if e.type == "decision_point" else e
        for e in ep2.events
    )
    (target,) = decision_targets(replace(ep2, events=events))
    assert target.prefix == '{"tool": "send_email", "arguments": {"to": "'
    roles = {c.role: c.text for c in target.wrong}
    assert roles == {"other-scope": "bob@acme.test", "forbidden": "marketing@acme.test"}


# -- margins of one decision --------------------------------------------------------------


@pytest.mark.parametrize("favoured, sign", [(CURRENT, 1), (STALE, -1)])
def test_the_value_margin_follows_the_preferred_value(favoured: str, sign: int) -> None:
    ep = r1_episode()
    (target,) = decision_targets(ep)
    model = FakeTokens(favoured + '"')
    prompt = prompt_of(ep, "dp1")
    result = measure(model, prompt, target)
    (cause, nats), = result.parts
    assert cause == "dp1:superseded" and sign * nats > 0
    # the prompt is the decision's rendered prompt plus the call prefix, evaluated once
    assert model.starts == [seen_as(model, prompt + target.prefix)]
    assert result.cost == MarginCost(len(prompt + target.prefix), len(CURRENT + '"') + len(STALE + '"'))


@pytest.mark.parametrize("favoured, sign, blank", [
    ("Which address?", 1, False), ('{"tool": "ship_order"}', -1, False),
    ("\nWhich address?", 1, True), ('\n{"tool": "ship_order"}', -1, True),
])
def test_the_ask_margin_reads_how_the_reply_starts(favoured: str, sign: int, blank: bool) -> None:
    """Plain text against a tool call on the first token(s); a blank first token is
    resolved by the token after it (one token more)."""
    ep = asking_episode()
    (target,) = decision_targets(ep)
    prompt = prompt_of(ep, "dp1")
    result = measure(FakeTokens(favoured), prompt, target)
    (cause, nats), (claim_cause, _) = result.parts
    assert cause == f"dp1:{TOOL_CALL}" and sign * nats > 0
    assert claim_cause == f"dp1:{CLAIM}"
    # every fake distribution has blank mass (one look-ahead token); each opener costs
    # its own characters, the reference's own opening words among them
    assert target.reference == "Which shipping address"
    openers = sum(len(o) for o in (*WITHHOLD_OPENERS, *CLAIM_OPENERS, target.reference))
    assert result.cost == MarginCost(len(prompt), openers + 1)
    # with a blank favoured first, the blank's mass decides the sign (the look-ahead)
    if blank:
        assert abs(nats) > 1.0


@pytest.mark.parametrize("favoured, claim_sign", [
    ("Which address should I use?", 1), ("I can't ship without an address.", 1),
    ("Done, shipped.", -1), ("Sent to your address.", -1),
])
def test_the_claim_margin_tells_asking_from_reporting_an_action(favoured: str, claim_sign: int) -> None:
    """"Done, shipped." starts as plain text (the tool-call part is content) but asks
    nothing: the claim part goes below 0 where the reply opens by reporting an action."""
    ep = asking_episode()
    (target,) = decision_targets(ep)
    parts = dict(measure(FakeTokens(favoured), prompt_of(ep, "dp1"), target).parts)
    assert parts[f"dp1:{TOOL_CALL}"] > 0
    assert claim_sign * parts[f"dp1:{CLAIM}"] > 0


def test_opener_margin_names_the_best_opener_of_each_list() -> None:
    model = FakeTokens("Sorry, no.")
    prompt = model.prompt_tokens("Ship it?")
    model.start(prompt)
    result = opener_margin(model, len(prompt), model.logprobs())
    # "Sorry" is the favoured text's opening; of the claims, "Sent" shares its first
    # character and is the shortest such (every other character is equally unlikely)
    assert (result.best_withhold, result.best_claim) == ("Sorry", "Sent") and result.margin > 0
    assert result.tokens_scored == sum(len(o) for o in WITHHOLD_OPENERS + CLAIM_OPENERS)


class Recording(FakeTokens):
    """A fake model that records the text each next-token distribution was read after."""

    def __init__(self, favour: str):
        super().__init__(favour)
        self.read: list[str] = []

    def logprobs(self) -> list[float]:
        self.read.append(self.text())
        return list(super().logprobs())


def test_the_blank_look_ahead_reads_the_token_after_the_prompt_and_the_blank() -> None:
    """The openers are scored first (they move the model on); the look-ahead must rewind
    to the prompt before it adds the blank."""
    ep = asking_episode()
    (target,) = decision_targets(ep)
    model = Recording("\nWhich address?")
    prompt = prompt_of(ep, "dp1")
    measure(model, prompt, target)
    start, last = seen_as(model, prompt), model.read[-1]
    assert model.read[0] == start
    assert last[: len(start)] == start and len(last) == len(start) + 1 and last[-1].isspace()


def test_token_classes() -> None:
    assert [token_class(t) for t in ("", " ", "\n", "{", ' {"', "[", "`", "<", "Which", " I")] == [
        SILENT, BLANK, BLANK, TOOL, TOOL, TOOL, TOOL, TOOL, TEXT, TEXT,
    ]


# -- the episode margin ------------------------------------------------------------------


def test_the_episode_margin_is_the_minimum_over_its_decisions() -> None:
    ep = two_request_episode()
    # the model writes the current address when asked where the user lives, the old
    # one when asked to ship
    model = FakeTokens(lambda text: (STALE if "Use my address" in text else CURRENT) + '"')
    margins = episode_margins(model, render, ep)
    alone = {t.decision_id: measure(FakeTokens(model.favour), prompt_of(ep, t.decision_id), t)
             for t in decision_targets(ep)}
    assert set(alone) == {"dp0", "dp1"}
    early, late = (dict(alone[d].parts) for d in ("dp0", "dp1"))
    assert early["dp0:superseded"] > 0 > late["dp1:superseded"]
    assert margins.nats == min(early["dp0:superseded"], late["dp1:superseded"])
    assert margins.value == min(m for _, m in margins.parts) == scaled(margins.nats) < 0
    assert dict(margins.parts) == {
        cause: scaled(m) for d in alone.values() for cause, m in d.parts
    }
    assert margins.cost == alone["dp0"].cost + alone["dp1"].cost
    assert margins.fired


def test_the_scale_keeps_the_sign_and_is_bounded() -> None:
    assert scaled(0.0) == 0.0 and scaled(-0.5) < 0 < scaled(0.5)
    assert scaled(MODEL_MARGIN_SCALE) == round(math.tanh(1.0), 6)
    assert -1.0 <= scaled(-1e9) < scaled(-3) < scaled(3) < scaled(1e9) <= 1.0


def test_a_checkpoint_without_targets_costs_nothing() -> None:
    ep = r1_episode()
    no_stale = replace(ep, events=tuple(e for e in ep.events
                                        if not (e.item and e.item.id == "m1")))
    no_stale = replace(no_stale, events=tuple(
        replace(e, supersedes=None, type="memory_write") if e.type == "memory_update" else e
        for e in no_stale.events))
    model = FakeTokens(STALE)
    margins = episode_margins(model, render, no_stale)
    assert margins.parts == () and margins.value == 1.0 and margins.nats is None
    assert margins.cost == MarginCost() and model.starts == []


# -- campaigns -------------------------------------------------------------------------------


def leeds_or_york(text: str) -> str:
    """A model that writes the current address when Leeds was mentioned lately."""
    return CURRENT if "Leeds" in text[-400:] else STALE


def campaign(strategy: str = "margin", budget: int = 6, seed: int = 0) -> RunResult:
    seeds, _ = make_seeds(all_seed_episodes())
    executor = Executor(agent_generate(get_agent("stale")), "stale", chunk=2)
    source = ModelSource(FakeTokens(leeds_or_york), render)
    return run_campaign(seeds, executor, strategy, budget, seed, batch=2, progress=False,
                        margins=source)


def test_a_campaign_records_the_model_margin_and_its_cost_per_mutant(tmp_path: Path) -> None:
    run = campaign()
    assert len(run.executed) == 6
    for e in run.executed:
        change = e.margin
        assert change is not None and change.cost is not None
        fresh = episode_margins(FakeTokens(leeds_or_york), render, e.episode)
        # the recorded margin is the mutant's own, in nats and on the planted scale
        assert (change.after, change.nats_after, change.cost) == (fresh.value, fresh.nats, fresh.cost)
        if change.nats_after is not None:
            assert change.after == scaled(change.nats_after)
    report = write_all(tmp_path, [run], {"command": "test"})
    lines = [json.loads(x) for x in (tmp_path / "mutants.jsonl").read_text().splitlines()]
    summed = MarginCost(sum(x["margin_cost"]["prompt_tokens"] for x in lines),
                        sum(x["margin_cost"]["tokens_scored"] for x in lines))
    cost = report["runs"][0]["margin_cost"]
    assert cost["mutants"] == summed.to_json() and summed.prompt_tokens > 0
    # every margin the run computed: the mutants' and the parents' and probes'
    assert run.margin_cost is not None and cost["all"] == run.margin_cost.to_json()
    assert run.margin_cost.prompt_tokens > summed.prompt_tokens
    assert all("nats_after" in x["margin"] for x in lines)
    assert "## Margin cost (model margins)" in (tmp_path / "report.md").read_text()


def test_model_margin_campaigns_are_deterministic(tmp_path: Path) -> None:
    outs = []
    for n in range(2):
        out = tmp_path / f"run{n}"
        write_all(out, [campaign(budget=5, seed=3)], {"command": "test"})
        outs.append(out)
    for name in ("mutants.jsonl", "report.json", "report.md"):
        a, b = ((o / name).read_text().replace(str(o), "OUT") for o in outs)
        assert a == b, name
    assert "margin_cost" in (outs[0] / "mutants.jsonl").read_text()


def test_the_pipeline_builds_model_margins_only_for_a_token_model() -> None:
    opts = FuzzOptions(budget=1, out="x", model="hf", strategies=("margin",))
    with pytest.raises(MemriskError, match="llama-cpp"):
        margin_source(opts, None, None, None)  # an agent that is not planted
    with pytest.raises(MemriskError, match="llama-cpp"):
        margin_source(opts, None, object(), None)  # a model that hands out no token model
    guided = FuzzOptions(budget=1, out="x", model="llama-cpp", strategies=("guided",))
    assert margin_source(guided, None, object(), None) is None  # no margin strategy: no cost


class _LM:
    """Enough of ``LlamaCppLM`` for the pipeline: a chat template and a token model."""

    def __init__(self) -> None:
        self.model = FakeTokens(leeds_or_york)

    def token_model(self) -> FakeTokens:
        return self.model

    def apply_chat_template(self, messages: list[dict[str, str]]) -> str:
        return "<chat>" + flatten(messages)


@pytest.mark.parametrize("chat_template", [True, False])
def test_the_pipeline_scores_the_prompt_the_model_gets(chat_template: bool) -> None:
    lm = _LM()
    opts = FuzzOptions(budget=1, out="x", model="llama-cpp", strategies=("margin",),
                       chat_template=chat_template)
    source = margin_source(opts, None, lm, None)
    assert source is not None
    ep = r1_episode()
    margins = source(ep)
    (target,) = decision_targets(ep)
    expected = ("<chat>" if chat_template else "") + prompt_of(ep, "dp1") + target.prefix
    assert lm.model.starts == [seen_as(lm.model, expected)]
    assert margins == episode_margins(FakeTokens(leeds_or_york), lambda m: expected[: -len(target.prefix)], ep)
