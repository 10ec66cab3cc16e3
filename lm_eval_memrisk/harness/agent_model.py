"""The reference agents as an lm-eval model: ``--model memrisk-agent --model_args agent=oracle``.

Lets the whole lm-eval path be checked without a language model: each
generate_until request carries its doc (the episode) and its index (the decision
point), so a reference agent can answer it.
"""

from __future__ import annotations

from typing import Any

from lm_eval.api.model import LM
from lm_eval.api.registry import register_model
from tqdm import tqdm

from lm_eval_memrisk.agents import AGENT_NAMES, get_agent
from lm_eval_memrisk.harness.docs import episode_of
from lm_eval_memrisk.runner import call_agent, prompts


@register_model("memrisk-agent")
class MemriskAgentLM(LM):
    """Answers MemRiskBench requests with a reference agent (oracle, stale, ...)."""

    def __init__(self, agent: str = "oracle", **kwargs: Any) -> None:
        super().__init__()
        self.agent_name = agent
        self.agent = get_agent(agent)
        self.model = f"memrisk-agent-{agent}"  # names the output folder

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        out = []
        for req in tqdm(requests, disable=disable_tqdm, desc=f"memrisk-agent {self.agent_name}"):
            episode = episode_of(req.doc)
            dp_id, messages = prompts(episode)[req.idx]
            out.append(call_agent(self.agent, messages, episode, dp_id))
        return out

    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        raise NotImplementedError("memrisk-agent only answers generate_until requests (MemRiskBench tasks)")

    def loglikelihood_rolling(self, requests: list[Any], disable_tqdm: bool = False) -> list[float]:
        raise NotImplementedError("memrisk-agent only answers generate_until requests (MemRiskBench tasks)")

    def apply_chat_template(self, chat_history: list[dict[str, str]], add_generation_prompt: bool = True) -> str:
        import json

        return json.dumps(chat_history, ensure_ascii=False)

    @property
    def tokenizer_name(self) -> str:
        return f"memrisk-agent-{self.agent_name}"

    def chat_template(self, chat_template: bool | str = False) -> str | None:
        return "json-messages" if chat_template else None

    def get_model_info(self) -> dict[str, Any]:
        return {"memrisk_agent": self.agent_name, "agents_available": list(AGENT_NAMES)}
