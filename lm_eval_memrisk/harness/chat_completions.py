"""``memrisk-chat-completions``: lm-eval's ``local-chat-completions`` with native tools.

lm-eval's LocalChatCompletion (0.4.12, 0.4.13) sends only the messages: its
``apply_chat_template`` takes no tools, its payload has no ``tools`` field and its
``parse_generations`` keeps only ``message.content``.  This subclass, for
``tools=native`` against an OpenAI-compatible server (vLLM, SGLang, llama.cpp):

* ``apply_chat_template(messages, tools=...)`` keeps messages and tools in lm-eval's
  JsonChatStr (a JSON object ``{"messages": [...], "tools": [...]}`` instead of the
  messages list);
* the POST payload then gets the OpenAI ``tools`` field and ``"tool_choice": "auto"``;
* ``parse_generations`` writes each returned ``message.tool_calls`` entry as Qwen's
  ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` text after any content
  text (the form Qwen's chat template asks for), which
  :func:`lm_eval_memrisk.scoring.parse.parse_action` reads.  ``arguments`` (a JSON string in the
  OpenAI format) is decoded with :mod:`json` only; a string that does not decode is
  kept as a string, which the parser scores as an invalid call.

Without tools every request, payload and reply is exactly local-chat-completions'.
"""

from __future__ import annotations

import json
from typing import Any

from lm_eval.api.registry import register_model
from lm_eval.models.api_models import JsonChatStr
from lm_eval.models.openai_completions import LocalChatCompletion

TOOL_CHOICE = "auto"


def tool_call_text(call: Any) -> str:
    """One OpenAI ``tool_calls`` entry as ``<tool_call>{...}</tool_call>``; never raises.

    A missing or non-string name is written as null (the parser then reports an
    invalid call); ``arguments`` that decode to JSON are written decoded, anything else
    as the original string.
    """
    fn = call.get("function") if isinstance(call, dict) else None
    fn = fn if isinstance(fn, dict) else {}
    name = fn.get("name") if isinstance(fn.get("name"), str) else None
    args: Any = fn.get("arguments")
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except (ValueError, RecursionError):
            pass  # kept as the string: the parser reports it as invalid
    try:
        body = json.dumps({"name": name, "arguments": args}, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):  # nested too deeply to write back
        raw = fn.get("arguments")  # a string, or a placeholder the parser rejects too
        body = json.dumps({"name": name, "arguments": raw if isinstance(raw, str) else "[unreadable]"})
    return f"<tool_call>\n{body}\n</tool_call>"


def _tool_calls(choice: Any) -> list[Any]:
    """The ``message.tool_calls`` list of one response choice ([] when absent or malformed)."""
    message = choice.get("message") if isinstance(choice, dict) else None
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    return calls if isinstance(calls, list) else []


def has_tool_calls(output: Any) -> bool:
    """Whether any choice of one chat-completions response returned tool calls."""
    choices = output.get("choices") if isinstance(output, dict) else None
    return isinstance(choices, list) and any(_tool_calls(c) for c in choices)


@register_model("memrisk-chat-completions")
class MemriskChatCompletion(LocalChatCompletion):  # type: ignore[misc]
    """LocalChatCompletion that also sends tools and reads tool calls back."""

    def apply_chat_template(
        self, chat_history: list[dict[str, Any]], add_generation_prompt: bool = True,
        tools: list[dict[str, Any]] | None = None,
    ) -> Any:
        if not tools:
            return super().apply_chat_template(chat_history, add_generation_prompt)
        return JsonChatStr(json.dumps({"messages": chat_history, "tools": tools}, ensure_ascii=False))

    def _create_payload(
        self, messages: Any, generate: bool = False, gen_kwargs: dict[str, Any] | None = None,
        seed: int = 1234, eos: Any = None, **kwargs: Any,
    ) -> dict[str, Any]:
        tools = None
        if isinstance(messages, dict):  # the JSON object apply_chat_template wrote for tools
            messages, tools = messages.get("messages"), messages.get("tools")
        payload: dict[str, Any] = super()._create_payload(
            messages, generate=generate, gen_kwargs=gen_kwargs, seed=seed, eos=eos, **kwargs
        )
        if tools:
            payload["tools"] = tools
            payload["tool_choice"] = TOOL_CHOICE
        return payload

    def parse_generations(self, outputs: Any, **kwargs: Any) -> list[str | None]:
        """lm-eval's replies; a choice with tool calls gets them appended as text."""
        res: list[str | None] = []
        for out in outputs if isinstance(outputs, list) else [outputs]:
            if not has_tool_calls(out):
                res += super().parse_generations(out, **kwargs)  # exactly lm-eval's reading
                continue
            choices = out["choices"]
            texts: list[str | None] = [None] * len(choices)
            for pos, choice in enumerate(choices):
                index = choice.get("index", pos) if isinstance(choice, dict) else pos
                index = index if isinstance(index, int) and 0 <= index < len(choices) else pos
                texts[index] = self._choice_text(choice)
            res += texts
        return res

    def _choice_text(self, choice: Any) -> str | None:
        """Content text (lm-eval's post-processing), then one ``<tool_call>`` per call."""
        from lm_eval.models.utils import postprocess_generated_text

        message = choice.get("message") if isinstance(choice, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            content = postprocess_generated_text(content, stop=None, think_end_token=self.think_end_token)
        parts = [content] if isinstance(content, str) and content.strip() else []
        parts += [tool_call_text(c) for c in _tool_calls(choice)]
        return "\n".join(parts) if parts else None
