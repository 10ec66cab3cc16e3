"""A margin campaign on the embedded SmolLM2-135M, end to end (``memrisk fuzz --model
llama-cpp --strategy margin``): three mutants, their margins and costs recorded, and a
recorded margin close to one computed afresh on another copy of the model.  Marked
``model``; skips without llama-cpp-python or the model file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_fuzz_episodes import all_seed_episodes

from lm_eval_memrisk.episodes.codec import dumps_episode
from lm_eval_memrisk.fuzz.model_margins import lm_source, scaled
from lm_eval_memrisk.fuzz.pipeline import FuzzOptions, run_fuzz

llama_cpp = pytest.importorskip("llama_cpp")
pytestmark = pytest.mark.model

MODEL_ARGS = "model=smollm2-135m,n_threads=1,n_ctx=4096"


def test_a_margin_campaign_on_smollm2(tmp_path: Path, smollm2_file: Path) -> None:
    from lm_eval_memrisk.harness.lm_adapter import load_lm

    episodes = tmp_path / "seeds.jsonl"
    episodes.write_text("".join(dumps_episode(e) + "\n" for e in all_seed_episodes()), encoding="utf-8")
    options = FuzzOptions(budget=3, out=str(tmp_path / "out"), model="llama-cpp", model_args=MODEL_ARGS,
                          episodes=str(episodes), strategies=("margin",), batch=3, max_gen_toks=48)
    report, (run,) = run_fuzz(options)
    assert len(run.executed) == 3
    lines = [json.loads(x) for x in (tmp_path / "out" / "mutants.jsonl").read_text().splitlines()]
    assert len(lines) == 3
    for line in lines:
        margin, cost = line["margin"], line["margin_cost"]
        assert margin["nats_after"] is not None  # every mutant of these seeds has a target
        assert margin["after"] == scaled(margin["nats_after"]) and -1.0 <= margin["after"] <= 1.0
        assert cost["prompt_tokens"] > 0 and cost["tokens_scored"] > 0
    summed = {k: sum(x["margin_cost"][k] for x in lines) for k in ("prompt_tokens", "tokens_scored")}
    recorded = report["runs"][0]["margin_cost"]
    assert recorded["mutants"] == summed
    assert recorded["all"]["prompt_tokens"] > summed["prompt_tokens"]  # parents and probes too
    assert report["config"]["command"].startswith("memrisk fuzz --model llama-cpp")
    # a margin computed afresh on another copy of the model: the campaign's copy reused
    # the KV cache of the prompt prefix it shared with what it evaluated before, which
    # moves a margin by float rounding only (up to 0.12 nats measured on Qwen-0.5B,
    # docs/fuzzer.md); the cost counts the whole prompt either way
    first = run.executed[0]
    assert first.margin is not None and first.margin.nats_after is not None
    again = lm_source(load_lm("llama-cpp", MODEL_ARGS))(first.episode)
    assert again.nats == pytest.approx(first.margin.nats_after, abs=0.25)
    assert again.cost == first.margin.cost
