"""``memrisk-agent``: reference agents, or any lm-eval model wrapped as an agent.

* ``--model_args agent=oracle`` (or stale, leaky, ...): answers with a reference
  agent, so the whole lm-eval path can be checked without a language model.
* ``--model_args base=llama-cpp,model=smollm2-135m,mode=interactive`` (any other
  keys go to the base model): runs the base model as an agent in ``mode``
  ``scripted`` or ``interactive`` with an optional ``memory_policy`` and
  ``max_steps``.  lm-eval answers each request once, so the wrapper runs the whole
  episode itself and returns, for each decision point, an envelope holding the
  decision record; the task's process_results scores the recorded steps.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from lm_eval.api.model import LM
from lm_eval.api.registry import register_model
from tqdm import tqdm

from lm_eval_memrisk.episodes.jsonl import json_line
from lm_eval_memrisk.episodes.render import render
from lm_eval_memrisk.harness.docs import episode_of
from lm_eval_memrisk.running.agent_registry import get_agent
from lm_eval_memrisk.running.runner import call_agent

_LM_EVAL_KWARGS = ("batch_size", "max_batch_size", "device")


def _request_gen_kwargs(requests: list[Any]) -> dict[str, Any] | None:
    """The generation settings the requests carry (one set for the whole run).

    lm-eval puts each task's ``generation_kwargs``, with ``--gen_kwargs`` applied, into
    every request; a base model must run with them, as it would without the agent.
    """
    from lm_eval_memrisk.episodes.errors import MemriskError

    found = [dict(req.args[1]) for req in requests if len(getattr(req, "args", ())) > 1 and isinstance(req.args[1], dict)]
    if not found:
        return None
    first = found[0]
    if any(k != first for k in found[1:]):
        raise MemriskError("memrisk-agent: the requests carry different generation settings; "
                           "run tasks with different generation_kwargs separately")
    return first


@register_model("memrisk-agent")
class MemriskAgentLM(LM):  # type: ignore[misc]
    """Answers MemRiskBench requests with a reference agent or a wrapped model."""

    def __init__(
        self, agent: str = "oracle", base: str | None = None, mode: str = "scripted",
        max_steps: int = 4, memory_policy: str = "full", presentation: str | None = None, tools: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__()
        from lm_eval_memrisk.episodes.render import make_presentation
        from lm_eval_memrisk.running.policies import make_policy

        if mode not in ("scripted", "interactive"):
            raise ValueError(f"mode must be scripted or interactive, not {mode!r}")
        self.mode, self.max_steps = mode, int(max_steps)
        self.policy_spec, self.policy = memory_policy, make_policy(memory_policy)
        self.presentation = make_presentation(presentation, tools)
        self.base_name = base
        if base:
            from lm_eval_memrisk.harness.lm_adapter import load_lm

            base_args = ",".join(f"{k}={v}" for k, v in kwargs.items() if k not in _LM_EVAL_KWARGS and v is not None)
            self.base = load_lm(base, base_args)
            self.agent_name = f"{base}({base_args})"
        else:
            self.base, self.agent_name = None, agent
            self.agent = get_agent(agent)
        self.model = kwargs.get("model") or f"memrisk-agent-{agent}"

    # -- generation -------------------------------------------------------------
    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        if self.base is None and self.mode == "scripted" and self.policy is None:
            return self._reference_replies(requests, disable_tqdm)
        return self._episode_replies(requests, disable_tqdm)

    def _reference_replies(self, requests: list[Any], disable_tqdm: bool) -> list[str]:
        out = []
        for req in tqdm(requests, disable=disable_tqdm, desc=f"memrisk-agent {self.agent_name}"):
            episode = episode_of(req.doc)
            dp_id = episode.decision_points[req.idx].id  # render only this decision point
            messages = render(episode, dp_id, presentation=self.presentation)
            out.append(call_agent(self.agent, messages, episode, dp_id))
        return out

    def _generate_fn(self, gen_kwargs: dict[str, Any] | None = None) -> Any:
        """The batch generate function; a base model gets the requests' generation settings
        (the task's ``generation_kwargs`` with lm-eval's ``--gen_kwargs`` applied)."""
        from lm_eval_memrisk.harness.lm_adapter import lm_generate
        from lm_eval_memrisk.running.interactive import agent_generate

        if self.base is not None:
            return lm_generate(self.base, gen_kwargs, tools=self.presentation.tools)
        return agent_generate(self.agent)

    def _episode_replies(self, requests: list[Any], disable_tqdm: bool) -> list[str]:
        """Run each requested episode as an agent; one envelope per decision point."""
        from lm_eval_memrisk.running.interactive import run_interactive
        from lm_eval_memrisk.running.runner import run_scripted
        from lm_eval_memrisk.scoring.sample_record import ENVELOPE

        episodes: dict[str, Any] = {}
        for req in requests:
            episodes.setdefault(req.doc["episode_id"], episode_of(req.doc))
        generate = self._generate_fn(_request_gen_kwargs(requests))
        if self.mode == "interactive":
            traces = run_interactive(
                list(episodes.values()), generate, self.agent_name, max_steps=self.max_steps,
                policy=self.policy, episode_major=self.base_name == "llama-cpp", progress=not disable_tqdm,
                presentation=self.presentation,
            )
        else:
            traces = run_scripted(
                list(episodes.values()), generate, self.agent_name, self.policy, progress=not disable_tqdm,
                presentation=self.presentation,
            )
        by_id = {t.episode_id: t for t in traces}
        out = []
        for req in requests:
            trace = by_id[req.doc["episode_id"]]
            envelope = {"mode": trace.mode, "memory_policy": trace.memory_policy,
                        "presentation": trace.presentation, "tools": trace.tools,
                        "decision": asdict(trace.decisions[req.idx])}
            out.append(ENVELOPE + json_line(envelope))  # UTF-8 safe: untrusted text
        return out

    # -- the rest of the LM interface --------------------------------------------
    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        raise NotImplementedError("memrisk-agent only answers generate_until requests (MemRiskBench tasks)")

    def loglikelihood_rolling(self, requests: list[Any], disable_tqdm: bool = False) -> list[float]:
        raise NotImplementedError("memrisk-agent only answers generate_until requests (MemRiskBench tasks)")

    def apply_chat_template(
        self, chat_history: list[dict[str, str]], add_generation_prompt: bool = True, tools: Any = None,
    ) -> str:
        if self.base is not None:
            if tools is not None:
                return str(self.base.apply_chat_template(chat_history, add_generation_prompt, tools=tools))
            return str(self.base.apply_chat_template(chat_history, add_generation_prompt))
        return json.dumps(chat_history if tools is None else {"messages": chat_history, "tools": tools},
                          ensure_ascii=False)

    @property
    def tokenizer_name(self) -> str:
        return f"memrisk-agent-{self.agent_name}"

    def chat_template(self, chat_template: bool | str = False) -> str | None:
        if self.base is not None:
            template = self.base.chat_template(chat_template)
            return None if template is None else str(template)
        return "json-messages" if chat_template else None

    def get_model_info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"memrisk_agent": self.agent_name, "mode": self.mode,
                                "memory_policy": self.policy_spec, "max_steps": self.max_steps,
                                "presentation": self.presentation.name, "tools": self.presentation.tools}
        if self.base is not None and hasattr(self.base, "get_model_info"):
            base_info = dict(self.base.get_model_info() or {})
            base_args = base_info.pop("model_args", None)  # portable (no absolute paths)
            info.update(base_info)
            if isinstance(base_args, dict):
                info["model_args"] = {"base": self.base_name, **base_args}
        return info
