"""The system under test: one builder for ``--agent NAME`` and ``--model M --model_args A``.

:func:`build_system` returns a :class:`System`: the batch ``Generate`` function the
runners call, the system's name, the settings that identify it (written into the
run manifest and the results config), whether its episodes should run one at a
time (in-process llama.cpp: consecutive turns of one episode then extend the
previous prompt and reuse the KV cache), and :meth:`System.info`, the model's
provenance read *when called* (so counters such as ``llama_cpp_stats`` are read
after the run, not at load time).

``memrisk run`` builds its system here; other commands (e.g. ``memrisk fuzz``) can
do the same.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.running.runner import Generate

__all__ = ["System", "build_system", "model_system_name"]


def model_system_name(model: str, model_args: str = "") -> str:
    """``llama-cpp-model-smollm2-135m``: a stable name from the model and its args."""
    return (model + "-" + model_args.replace("=", "-").replace(",", "_")).strip("-")


@dataclass(frozen=True)
class System:
    """A built system under test (see the module docstring)."""

    name: str
    generate: Generate
    settings: Mapping[str, Any]
    """What identifies it: ``{"agent": NAME}`` or ``{"model", "model_args", "chat_template"}``."""
    episode_major: bool = False
    backend: Any = field(default=None, repr=False, compare=False)
    """The loaded lm-eval model (None for an agent): for callers that need more than
    generation, e.g. the fuzzer's model margins (``LlamaCppLM``'s ``Llama``)."""
    _info: Callable[[], Mapping[str, Any]] = field(default=dict, repr=False)

    def info(self) -> dict[str, Any]:
        """The model's provenance now (lm-eval ``get_model_info``); {} for an agent."""
        return dict(self._info() or {})


def build_system(
    agent: str | None = None,
    model: str | None = None,
    model_args: str = "",
    *,
    chat_template: bool = True,
    gen_kwargs: Mapping[str, Any] | None = None,
    tools: str = "text",
) -> System:
    """Build the system under test from exactly one of ``agent`` or ``model``.

    ``agent``: a reference agent name (:data:`lm_eval_memrisk.running.agents.AGENT_NAMES`).
    ``model`` + ``model_args``: any lm-eval model, loaded as ``lm_eval`` would;
    ``chat_template=False`` sends flattened transcripts; ``gen_kwargs`` overrides the
    generation settings (e.g. ``{"max_gen_toks": 64}``); ``tools="native"`` passes each
    episode's tools to the model's chat template instead of the system message.
    """
    if (agent is None) == (model is None):
        raise MemriskError("give exactly one of an agent name or a model")
    if agent is not None:
        from lm_eval_memrisk.running.agent_registry import get_agent
        from lm_eval_memrisk.running.interactive import agent_generate

        return System(agent, agent_generate(get_agent(agent)), {"agent": agent})
    assert model is not None
    from lm_eval_memrisk.harness.lm_adapter import lm_generate, load_lm

    lm = load_lm(model, model_args)
    settings: dict[str, Any] = {"model": model, "model_args": model_args, "chat_template": chat_template}
    if tools != "text":
        settings["tools"] = tools
    if gen_kwargs:
        settings["gen_kwargs"] = dict(gen_kwargs)
    return System(
        name=model_system_name(model, model_args),
        generate=lm_generate(lm, dict(gen_kwargs or {}), apply_chat_template=chat_template, tools=tools),
        settings=settings,
        episode_major=model == "llama-cpp",
        backend=lm,
        _info=getattr(lm, "get_model_info", dict),
    )
