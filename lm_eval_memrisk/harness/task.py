"""The lm-eval task class and process_results for MemRiskBench.

``MemRiskTask`` sends one generate_until request per decision point of an episode
(lm-eval's ConfigurableTask sends one per doc), built by the pure renderer: real
multi-turn chat messages through the model's chat template with
``--apply_chat_template``, a flattened transcript without.  ``process_results``
turns the replies into a trace and calls the pure scorer.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

from lm_eval.api.instance import Instance
from lm_eval.api.task import ConfigurableTask

from lm_eval_memrisk.harness.docs import episode_of
from lm_eval_memrisk.policies import make_policy
from lm_eval_memrisk.rederive import trace_from_texts
from lm_eval_memrisk.render import flatten, render
from lm_eval_memrisk.runner import prompts
from lm_eval_memrisk.sample_record import sample_metrics

AGENT_LABEL = "lm-eval"


def decision_contexts(
    doc: dict[str, Any], system_instruction: str | None, chat_template: Callable[..., Any] | None
) -> list[Any]:
    """One context per decision point: chat-templated when a template is given."""
    contexts = []
    for _, messages in prompts(episode_of(doc), make_policy(doc.get("memory_policy"))):
        if system_instruction:
            messages[0] = {"role": "system", "content": system_instruction + "\n\n" + messages[0]["content"]}
        contexts.append(chat_template(messages) if chat_template else flatten(messages))
    return contexts


class MemRiskTask(ConfigurableTask):  # type: ignore[misc]
    """A ConfigurableTask whose docs are episodes with one request per decision point."""

    def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
        config = dict(config or {})
        config.pop("class", None)
        super().__init__(config=config, **kwargs)

    def fewshot_context(
        self, doc: dict[str, Any], num_fewshot: int, system_instruction: str | None = None,
        apply_chat_template: bool = False, fewshot_as_multiturn: bool = False,
        chat_template: Callable[..., Any] | None = None, gen_prefix: str | None = None,
    ) -> list[Any]:
        if num_fewshot:
            raise ValueError("memriskbench tasks are zero-shot: drop --num_fewshot")
        return decision_contexts(doc, system_instruction, chat_template if apply_chat_template else None)

    def construct_requests(self, doc: dict[str, Any], ctx: Any, **kwargs: Any) -> list[Instance]:
        kwargs.pop("apply_chat_template", None)
        kwargs.pop("chat_template", None)
        contexts = ctx if isinstance(ctx, list) else [ctx]
        return [
            Instance(
                request_type="generate_until", doc=doc,
                arguments=(c, copy.deepcopy(self.config.generation_kwargs)), idx=i, **kwargs,
            )
            for i, c in enumerate(contexts)
        ]


def _reply_text(result: Any) -> str:
    if isinstance(result, (list, tuple)):
        result = result[0] if result else ""
    return result if isinstance(result, str) else ("" if result is None else str(result))


def evaluate_doc(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """Score the replies for one episode; returns lm-eval per-sample metrics.

    Replies may be interactive envelopes (``<memrisk-decision>`` + a decision record,
    from the ``memrisk-agent`` wrapper): only their reply texts are used, and the trace
    is replayed from the episode (:func:`lm_eval_memrisk.rederive.trace_from_texts`);
    a malformed or forged envelope is an invalid reply, never an exception.
    """
    episode = episode_of(doc)
    texts = [_reply_text(r) for r in results]
    trace = trace_from_texts(episode, texts, agent=AGENT_LABEL, policy_spec=doc.get("memory_policy"))
    return sample_metrics(episode, trace, doc.get("dataset_hash", ""))


def process_results(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """lm-eval hook: a two-line call into the pure scorer."""
    return evaluate_doc(doc, results)


def count(items: Sequence[Any]) -> int:
    """Aggregation for the per-episode record: the number of episodes scored."""
    return len(items)


def load_docs(**kwargs: Any) -> Any:
    """custom_dataset hook: see :func:`lm_eval_memrisk.harness.dataset.load_docs`."""
    from lm_eval_memrisk.harness.dataset import load_docs as _load

    return _load(**kwargs)


def doc_to_text(doc: dict[str, Any]) -> str:
    """Flattened transcript of the first decision point (for logs and generic checks)."""
    episode = episode_of(doc)
    return flatten(render(episode, episode.decision_points[0].id)).rstrip()


def doc_to_target(doc: dict[str, Any]) -> str:
    """The reference (ground-truth) reply of each decision point, for the sample log."""
    from lm_eval_memrisk.agents import action_to_reply

    return "\n".join(action_to_reply(dict(dp.reference or {})) for dp in episode_of(doc).decision_points)
