"""Use any lm-eval model (hf, vllm, local-chat-completions, llama-cpp, ...) as an agent.

``load_lm`` builds the model from the same ``--model``/``--model_args`` strings as
lm_eval; ``lm_generate`` turns it into the batch ``Generate`` function of
:mod:`lm_eval_memrisk.running.interactive`, one ``generate_until`` call per round.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.render import flatten, tool_specs
from lm_eval_memrisk.harness.docs import to_rows
from lm_eval_memrisk.running.generation import default_gen_kwargs
from lm_eval_memrisk.running.runner import Generate, Request

DEFAULT_GEN_KWARGS: dict[str, Any] = default_gen_kwargs()


def load_lm(model: str, model_args: str = "") -> Any:
    import lm_eval_memrisk._autoload as autoload

    autoload.install()
    from lm_eval.api.registry import get_model

    try:
        cls = get_model(model)
    except ValueError as exc:
        raise MemriskError(str(exc)) from exc
    return cls.create_from_arg_string(model_args, {"batch_size": 1, "device": "cpu"})


def _decision_index(req: Request) -> int:
    return [dp.id for dp in req.episode.decision_points].index(req.decision_id)


def lm_generate(
    lm: Any, gen_kwargs: dict[str, Any] | None = None, apply_chat_template: bool = True, tools: str = "text",
) -> Generate:
    """A batch Generate function backed by an lm-eval LM.

    ``tools="native"`` passes each episode's tools to the model's chat template
    (``apply_chat_template(..., tools=...)``, as the llama-cpp and
    memrisk-chat-completions models take them).
    """
    from lm_eval.api.instance import Instance

    kwargs = dict(DEFAULT_GEN_KWARGS, **(gen_kwargs or {}))

    def context(messages: list[dict[str, str]], req: Request) -> Any:
        if tools == "native":
            try:
                return lm.apply_chat_template(messages, tools=tool_specs(req.episode.tools))
            except (TypeError, NotImplementedError) as exc:
                raise MemriskError(
                    f"tools=native: {type(lm).__name__} cannot pass tools to its chat template ({exc}); "
                    f"use tools=text, or the llama-cpp model, or memrisk-chat-completions for an "
                    f"OpenAI-compatible server (local-chat-completions sends no tools)"
                ) from None
        if apply_chat_template:
            try:
                return lm.apply_chat_template(messages)
            except NotImplementedError:
                pass
        return flatten(messages)

    def generate(batch: Sequence[Request]) -> list[str]:
        instances = [
            Instance(
                request_type="generate_until",
                doc=to_rows([req.episode])[0],
                arguments=(context(req.messages, req), dict(kwargs)),
                idx=_decision_index(req),
                metadata=("memrisk_interactive", i, 1),
            )
            for i, req in enumerate(batch)
        ]
        return [str(r) for r in lm.generate_until(instances)]

    return generate
