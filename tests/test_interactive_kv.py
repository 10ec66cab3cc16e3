"""KV-cache reuse across the steps of an interactive episode on the real embedded model.

The ``llama-cpp`` model keeps its KV cache when a call's prompt extends the previous
call's prompt (the next step of an episode) and resets it otherwise; the reply is the
same as from a fresh cache.  ``run_benchmark`` reads ``llama_cpp_stats`` after the run.
Marked ``model``: they load SmolLM2-135M-Instruct (skipped when unavailable).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("lm_eval")
pytest.importorskip("llama_cpp")
pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def lm(smollm2_file: Path) -> Any:
    from lm_eval_memrisk.harness.lm_adapter import load_lm

    return load_lm("llama-cpp", "model=smollm2-135m,n_ctx=2048,n_threads=1")


def _req(ctx: str) -> Any:
    from lm_eval.api.instance import Instance

    return Instance(request_type="generate_until", doc={}, arguments=(ctx, {"max_gen_toks": 6}), idx=0)


def _call(lm: Any, ctx: str) -> tuple[str, dict[str, int]]:
    before = dict(lm.stats)
    text = lm.generate_until([_req(ctx)])[0]
    return text, {k: lm.stats[k] - before[k] for k in ("prompt_tokens", "prompt_tokens_evaluated")}


def test_a_continuing_prompt_reuses_the_cache_and_gives_the_fresh_reply(lm):
    system = {"role": "system", "content": "Notes: " + "the user lives at 9 Elm Road, Leeds. " * 30}
    step1 = [system, {"role": "user", "content": "Where do I live?"}]
    first = lm.apply_chat_template(step1)
    _call(lm, "An unrelated prompt.")  # whatever ran before, the first step starts fresh
    _, st1 = _call(lm, first)
    assert st1["prompt_tokens_evaluated"] == st1["prompt_tokens"]
    step2 = step1 + [{"role": "assistant", "content": '{"tool": "lookup", "arguments": {}}'},
                     {"role": "user", "content": "[tool result: lookup] {\"ok\": true, \"records\": []}"}]
    second = lm.apply_chat_template(step2)
    reused_text, st2 = _call(lm, second)
    assert st2["prompt_tokens_evaluated"] < 0.3 * st2["prompt_tokens"]  # only the new turn
    lm.llm.reset()
    lm._last_prompt = []
    fresh_text, st_fresh = _call(lm, second)
    assert st_fresh["prompt_tokens_evaluated"] == st_fresh["prompt_tokens"]
    assert reused_text == fresh_text


def test_run_benchmark_records_the_runs_llama_cpp_stats(tmp_path: Path, smollm2_file: Path) -> None:
    from lm_eval_memrisk.episodes.loader import load_episodes
    from lm_eval_memrisk.running.pipeline import run_benchmark
    from lm_eval_memrisk.running.systems import build_system

    system = build_system(model="llama-cpp", model_args="model=smollm2-135m,n_ctx=4096,n_threads=1",
                          gen_kwargs={"max_gen_toks": 8})
    assert system.episode_major
    episodes = load_episodes(None, track="main")[:1]
    result = run_benchmark(system, episodes, dataset_hash="h", mode="interactive", max_steps=2,
                           out=tmp_path, progress=False)
    results_file, = next(p for p in tmp_path.iterdir() if p.is_dir()).glob("results_*.json")
    stats = json.loads(results_file.read_text())["config"]["llama_cpp_stats"]
    calls = sum(len(d.steps) for d in result.traces[0].decisions)
    assert stats["n_requests"] == calls >= 1  # read after the run, not at load time
    assert stats["prompt_tokens"] > 0 and stats["generated_tokens"] > 0
