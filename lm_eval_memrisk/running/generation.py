"""Generation limits shared by the lm-eval tasks and ``memrisk run``.

* ``MAX_GEN_TOKS`` is set from the reference actions: the longest reference reply
  is 183 UTF-8 bytes (native ``<tool_call>`` form; 158 as a text-protocol call),
  and a byte-level tokenizer never needs more tokens than bytes, so 192 tokens never
  cut a reference action (tests/test_generation_limits.py checks every reply; with
  the real tokenizers the longest is far shorter).  Longer replies are the model's
  own run-on, which the stop sequences end.
* ``STOP_SEQUENCES`` end a reply that runs on into a made-up next turn, whichever
  presentation is in use: a chat-template turn marker, a ``User:``/``USER:`` line
  (history transcript / flattened prompt), an invented tool result.  lm-eval's API
  models send only the first four, so those come first.
* ``generation_settings`` normalises a run's effective settings (task defaults,
  ``--gen_kwargs``, model_args, lm-eval's ``--seed``) for the result signature.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lm_eval_memrisk.scoring.signature import GENERATION_KEYS

MAX_GEN_TOKS = 192
STOP_SEQUENCES: tuple[str, ...] = (
    "\nUser:", "\nUSER:", "\n[tool result", "<|im_start|>",
    "<|im_end|>", "<|endoftext|>", "<|eot_id|>", "\nAssistant:",
)


def default_gen_kwargs() -> dict[str, Any]:
    """The task's generation settings (greedy)."""
    return {"until": list(STOP_SEQUENCES), "max_gen_toks": MAX_GEN_TOKS, "do_sample": False, "temperature": 0.0}


def cut_at_stop(text: str, stops: tuple[str, ...] | list[str] = STOP_SEQUENCES) -> str:
    """``text`` up to the first stop sequence (what a backend that honours ``until`` returns)."""
    cut = len(text)
    for s in stops:
        at = text.find(s) if s else -1
        if at != -1:
            cut = min(cut, at)
    return text[:cut]


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in {"1", "true", "yes", "on"}
    return bool(value)


def _number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def generation_settings(
    gen_kwargs: Mapping[str, Any] | None = None, model_args: Mapping[str, Any] | None = None,
    run_seed: int | str | None = None,
) -> dict[str, Any]:
    """The effective generation settings of a run, normalised for
    :func:`lm_eval_memrisk.scoring.signature.signature`.

    ``gen_kwargs``: the task's ``generation_kwargs`` as they ran (lm-eval's
    ``--gen_kwargs`` and ``--metadata`` applied; missing keys take the task defaults,
    :func:`default_gen_kwargs`).  ``model_args``: the model's
    own ``temperature``/``max_gen_toks``/``seed``/``top_p``/``top_k`` win over the task's
    (as the llama-cpp model applies them; a ``temperature`` there samples whatever
    ``do_sample`` says).  ``run_seed``: lm-eval's ``--seed`` (its torch slot), the seed
    of a sampled run that sets none itself.

    Returns ``{}`` for greedy decoding at the default ``max_gen_toks``; a sampled run
    gives ``do_sample``, ``temperature``, ``top_p``/``top_k`` (when set) and ``seed``;
    a non-default ``max_gen_toks`` is kept either way.  Greedy decoding ignores
    temperature, top_p, top_k and seed, so two greedy runs that differ only there share
    a signature, and two runs that sampled differently never do.
    """
    gen = {**default_gen_kwargs(), **dict(gen_kwargs or {})}
    args = {k: v for k, v in dict(model_args or {}).items() if v is not None and v != ""}
    for key in GENERATION_KEYS:
        if key in args:
            gen[key] = args[key]
    temperature = _number(gen.get("temperature")) or 0.0
    sampled = temperature > 0.0 and ("temperature" in args or _truthy(gen.get("do_sample", False)))
    out: dict[str, Any] = {}
    if sampled:
        out["do_sample"] = True
        out["temperature"] = temperature
        for key in ("top_p", "top_k"):
            value = _number(gen.get(key))
            if value is not None:
                out[key] = int(value) if key == "top_k" else value
        seed = gen.get("seed", run_seed)
        if _number(seed) is not None:
            out["seed"] = int(float(seed))  # type: ignore[arg-type]
    max_gen = _number(gen.get("max_gen_toks"))
    if max_gen is not None and int(max_gen) != default_gen_kwargs()["max_gen_toks"]:
        out["max_gen_toks"] = int(max_gen)
    return out
