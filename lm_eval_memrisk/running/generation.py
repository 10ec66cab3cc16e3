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
"""

from __future__ import annotations

from typing import Any

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
