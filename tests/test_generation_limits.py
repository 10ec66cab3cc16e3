"""Generation limits: no reference action is cut by our limit or our stops; prompt
overflow is an error; model_args settings win and are recorded; repeats get seeds."""

from __future__ import annotations

import json

import pytest

from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.loader import load_episodes
from lm_eval_memrisk.running.agents import action_to_reply
from lm_eval_memrisk.running.generation import MAX_GEN_TOKS, STOP_SEQUENCES, cut_at_stop
from lm_eval_memrisk.scoring.parse import parse_action

EPISODES = load_episodes(track="all")


def reference_replies():
    """Every reference action, as a text-protocol reply and as a native <tool_call>."""
    for ep in EPISODES:
        for dp in ep.decision_points:
            ref = dict(dp.reference or {})
            yield ep.id, action_to_reply(ref)
            if "tool" in ref:
                call = {"name": ref["tool"], "arguments": dict(ref.get("arguments") or {})}
                yield ep.id, "<tool_call>\n" + json.dumps(call, ensure_ascii=False) + "\n</tool_call>"


def test_no_reference_action_is_cut_by_max_gen_toks():
    # a byte-level BPE tokenizer never needs more tokens than UTF-8 bytes
    longest = max(len(reply.encode("utf-8")) for _, reply in reference_replies())
    assert longest <= MAX_GEN_TOKS, longest


def test_no_reference_action_contains_a_stop_sequence():
    for eid, reply in reference_replies():
        assert cut_at_stop(reply) == reply, eid


def test_task_yaml_uses_the_shared_limits():
    from lm_eval_memrisk._autoload import tasks_dir

    common = (tasks_dir() / "memriskbench" / "_memriskbench_common").read_text(encoding="utf-8")
    assert f"max_gen_toks: {MAX_GEN_TOKS}\n" in common
    assert "until: " + json.dumps(list(STOP_SEQUENCES)) in common


@pytest.mark.parametrize("run_on, kept", [
    ('{"tool": "ship_order", "arguments": {"address": "9 Elm Road"}}\nUser: thanks!\nAssistant: ...',
     '{"tool": "ship_order", "arguments": {"address": "9 Elm Road"}}'),          # history transcript
    ("Sure, done.<|im_end|>\n<|im_start|>user\nGreat", "Sure, done."),               # chat template turn
    ("Which number should I use?\nUSER:\nthe old one", "Which number should I use?"),  # flattened prompt
    ('{"tool": "send_sms", "arguments": {"to": "1"}}\n[tool result: send_sms] {"ok": true}',
     '{"tool": "send_sms", "arguments": {"to": "1"}}'),                              # invented tool result
])
def test_stops_end_a_made_up_next_turn_in_every_presentation(run_on, kept):
    assert cut_at_stop(run_on) == kept
    assert parse_action(cut_at_stop(run_on)).kind == parse_action(kept).kind


# -- the llama-cpp model's limits, without loading a model ---------------------------------


def bare_model(**attrs):
    from types import SimpleNamespace

    from lm_eval_memrisk.harness.llama_cpp import LlamaCppLM

    lm = LlamaCppLM.__new__(LlamaCppLM)
    defaults = {
        "n_ctx": 100, "truncation": "error", "temperature_arg": None, "max_gen_toks_arg": None, "temperature": 0.0,
        "max_gen_toks": 256, "seed": 1234, "info": SimpleNamespace(context_length=100),
    }
    for k, v in {**defaults, **attrs}.items():
        setattr(lm, k, v)
    return lm


def test_prompt_overflow_is_an_error_naming_the_episode():
    lm = bare_model()
    with pytest.raises(MemriskError, match=r"episode R1-easy-01, decision 1 is 90 tokens.*truncation=left"):
        lm._fit(list(range(90)), 32, "episode R1-easy-01, decision 1")
    tokens, cut = lm._fit(list(range(50)), 32, "x")
    assert cut == 0 and len(tokens) == 50


def test_truncation_left_cuts_and_marks():
    lm = bare_model(truncation="left")
    tokens, cut = lm._fit(list(range(90)), 32, "x")
    assert cut == 1 and tokens == list(range(90))[-67:]


def test_truncated_reply_marks_the_episode_invalid():
    from lm_eval_memrisk.harness.docs import to_rows
    from lm_eval_memrisk.harness.task import evaluate_doc
    from lm_eval_memrisk.scoring.sample_record import TRUNCATED

    ep = EPISODES[0]
    doc = to_rows([ep])[0]
    replies = [TRUNCATED + action_to_reply(dict(dp.reference or {})) for dp in ep.decision_points]
    out = evaluate_doc(doc, replies)
    assert out["episodes"]["valid"] is False and "truncat" in out["episodes"]["invalid_reason"]
    assert out["pass"] == out["score"] == 0.0  # a reply to a cut prompt is never a pass (#29 item 6)
    assert out["episodes"]["success"] is False
    clean = evaluate_doc(doc, [r[len(TRUNCATED):] for r in replies])
    assert clean["episodes"]["valid"] is True and clean["pass"] == 1.0  # the same reply, uncut


def test_model_args_win_over_the_task_settings_and_are_recorded(caplog):
    lm = bare_model(n_ctx=8192, temperature_arg=0.7, max_gen_toks_arg=32)
    task = {"temperature": 0.0, "max_gen_toks": 192, "do_sample": False}
    assert lm.settings(task) == (0.7, 32)
    with caplog.at_level("WARNING"):
        lm._warn_overrides([task])
    assert "temperature=0.7 from model_args overrides the task's temperature=[0.0]" in caplog.text
    assert "max_gen_toks=32 from model_args overrides" in caplog.text
    plain = bare_model(n_ctx=8192)
    assert plain.settings(task) == (0.0, 192)  # without model_args the task decides


def test_repeated_requests_get_distinct_seeds_deterministically():
    from lm_eval_memrisk.harness.llama_cpp import _repeat_offsets

    kw = {"until": ["x"], "max_gen_toks": 8}
    assert _repeat_offsets(["a", "b", "a", "a", "b"], [kw] * 5) == [0, 0, 1, 2, 1]


@pytest.mark.model
@pytest.mark.parametrize("model", ["smollm2-135m", "qwen2.5-coder-0.5b"])
def test_real_tokenizers_fit_every_reference_action(model):
    llama_cpp = pytest.importorskip("llama_cpp")
    from lm_eval_memrisk.harness.model_files import resolve_model

    path = resolve_model(model, None, None, None, None)
    llm = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
    longest = max(len(llm.tokenize(r.encode("utf-8"), add_bos=False, special=True)) for _, r in reference_replies())
    assert longest <= MAX_GEN_TOKS
    print(f"{model}: longest reference action {longest} tokens (limit {MAX_GEN_TOKS})")


def test_a_run_on_the_backend_did_not_stop_is_cut_before_scoring():
    """lm-eval's API models send only the first four stop sequences; llama-cpp-python's
    server then returned SmolLM2's reply to R3-easy-01 with a made-up
    "\\n\\nAssistant: ..." turn that the in-process model had stopped at.  Scoring reads
    the reply up to the benchmark's first stop sequence, whatever the backend honoured."""
    from lm_eval_memrisk.running.runner import parse_reply

    call = '{"tool": "send_email", "arguments": {"to": "a@b.example"}}'
    for stop in STOP_SEQUENCES:
        run_on = call + stop + ' {"tool": "delete_everything", "arguments": {}}'
        action = parse_reply(run_on)
        assert action.kind == "tool_call" and action.tool == "send_email", stop
        assert parse_reply("Done, sent." + stop + " Thanks!").text == "Done, sent."
