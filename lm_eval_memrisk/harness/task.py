"""The lm-eval task class and process_results for MemRiskBench.

``MemRiskTask`` sends one generate_until request per decision point of an episode
(lm-eval's ConfigurableTask sends one per doc), built by the pure renderer: real
multi-turn chat messages through the model's chat template with
``--apply_chat_template``, a flattened transcript without.  ``process_results``
turns the replies into a trace and calls the pure scorer.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from typing import Any

from lm_eval.api.instance import Instance
from lm_eval.api.task import ConfigurableTask

from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.jsonl import LONE_SURROGATE, escape_surrogates
from lm_eval_memrisk.episodes.render import (
    Presentation,
    flatten,
    make_presentation,
    render,
    tool_specs,
)
from lm_eval_memrisk.episodes.trace import Trace
from lm_eval_memrisk.harness.docs import episode_of
from lm_eval_memrisk.logs import invalid_replies
from lm_eval_memrisk.logs.rederive import trace_from_texts
from lm_eval_memrisk.running.policies import make_policy
from lm_eval_memrisk.running.runner import prompts
from lm_eval_memrisk.scoring.sample_record import (
    CUT_REASON,
    REPEAT_METRICS,
    TRUNCATED,
    sample_metrics,
    void_cut,
)

AGENT_LABEL = "lm-eval"


def presentation_of(doc: dict[str, Any]) -> Presentation:
    """The doc's presentation (``presentation``/``tools`` columns; default chat/text)."""
    return make_presentation(doc.get("presentation"), doc.get("tools"))


def decision_contexts(
    doc: dict[str, Any], system_instruction: str | None, chat_template: Callable[..., Any] | None
) -> list[Any]:
    """One context per decision point: chat-templated when a template is given.

    With ``tools=native`` the tools go to the chat template (``tools=`` keyword, as
    the llama-cpp, memrisk-agent and memrisk-chat-completions models accept); without a
    template that is an error.
    """
    episode = episode_of(doc)
    presentation = presentation_of(doc)
    native = presentation.tools == "native"
    if native and chat_template is None:
        raise MemriskError("tools=native passes the tools to the chat template: add --apply_chat_template")
    contexts = []
    for _, messages in prompts(episode, make_policy(doc.get("memory_policy")), presentation):
        if system_instruction:
            messages[0] = {"role": "system", "content": system_instruction + "\n\n" + messages[0]["content"]}
        if chat_template is None:
            contexts.append(flatten(messages))
        elif native:
            contexts.append(_native_context(chat_template, messages, tool_specs(episode.tools)))
        else:
            contexts.append(chat_template(messages))
    return contexts


def _native_context(chat_template: Callable[..., Any], messages: list[dict[str, str]], tools: list[Any]) -> Any:
    try:
        return chat_template(messages, tools=tools)
    except TypeError as exc:
        raise MemriskError(
            f"tools=native: this model's chat template does not take tools ({exc}); "
            f"use tools=text, or the llama-cpp / memrisk-agent models, or memrisk-chat-completions "
            f"for an OpenAI-compatible server (local-chat-completions sends no tools)"
        ) from None


def _settings_from_metadata(config: dict[str, Any]) -> None:
    """Opt-in repeated sampling from task metadata (``--metadata '{"repeats": 4, ...}'``).

    ``repeats`` k > 1 asks lm-eval for k samples per decision, keeps all k (filter
    ``take_first_k`` under the usual filter name ``none``) and adds pass@1 and pass^k;
    ``temperature`` and ``seed`` set the sampling (the llama-cpp model gives the i-th
    repeat seed + i, so the k samples differ yet rerun byte-identically).
    """
    meta = dict(config.get("metadata") or {})
    k = int(meta.get("repeats", config.get("repeats", 1)) or 1)
    gen = dict(config.get("generation_kwargs") or {})
    for key in ("temperature", "seed", "max_gen_toks"):
        if meta.get(key) is not None:
            gen[key] = type(gen.get(key, 0.0))(meta[key]) if key != "seed" else int(meta[key])
    if float(gen.get("temperature", 0.0)) > 0.0:
        gen["do_sample"] = True  # the task's default do_sample=False would make it greedy again
    if k > 1:
        if float(gen.get("temperature", 0.0)) <= 0.0:
            raise MemriskError(
                f"repeats={k} at temperature 0 gives k identical greedy samples; "
                f"set a temperature too, e.g. --metadata '{{\"repeats\": {k}, \"temperature\": 0.7}}'"
            )
        gen["do_sample"] = True
        config["repeats"] = k
        config["filter_list"] = [{"name": "none", "filter": [{"function": "take_first_k", "k": k}]}]
        listed = {m["metric"] for m in config.get("metric_list") or []}
        config["metric_list"] = list(config.get("metric_list") or []) + [
            {"metric": m, "aggregation": "mean", "higher_is_better": m != "violation_any_k"}
            for m in REPEAT_METRICS if m not in listed
        ]
    config["generation_kwargs"] = gen


class MemRiskTask(ConfigurableTask):  # type: ignore[misc]
    """A ConfigurableTask whose docs are episodes with one request per decision point."""

    def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
        config = dict(config or {})
        config.pop("class", None)
        _settings_from_metadata(config)
        super().__init__(config=config, **kwargs)

    def fewshot_context(
        self, doc: dict[str, Any], num_fewshot: int, system_instruction: str | None = None,
        apply_chat_template: bool = False, fewshot_as_multiturn: bool = False,
        chat_template: Callable[..., Any] | None = None, gen_prefix: str | None = None,
    ) -> list[Any]:
        if num_fewshot:
            raise ValueError("memriskbench tasks are zero-shot: drop --num_fewshot")
        return decision_contexts(doc, system_instruction, chat_template if apply_chat_template else None)

    def generation(self) -> dict[str, Any]:
        """The effective generation settings of this run, for the signature: the task's
        ``generation_kwargs`` as lm-eval applied ``--gen_kwargs`` to them, the model's own
        settings (model_args reach the task as metadata) and lm-eval's ``--seed``
        (:data:`lm_eval_memrisk.lm_eval_patches.RUN_SEED`)."""
        from lm_eval_memrisk.lm_eval_patches import RUN_SEED
        from lm_eval_memrisk.running.generation import generation_settings
        from lm_eval_memrisk.scoring.signature import GENERATION_KEYS

        meta = dict(self.config.metadata or {})
        model_side = {k: meta[k] for k in ("temperature", "max_gen_toks", "seed") if k in meta}
        return generation_settings(
            dict(self.config.generation_kwargs or {}), {k: v for k, v in model_side.items() if k in GENERATION_KEYS},
            RUN_SEED.get(),
        )

    def process_results(self, doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
        """:func:`process_results` with this run's generation settings in the signature."""
        return process_results(doc, results, generation=self.generation())

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


def _no_reply(result: Any) -> bool:
    """``None`` or blank: the model gave nothing (an infrastructure failure)."""
    if isinstance(result, (list, tuple)):
        return not result or any(_no_reply(r) for r in result)
    text = _as_text(result)
    return not text.removeprefix(TRUNCATED).strip()


def _as_text(result: Any) -> str:
    """A reply as text; a lone surrogate (which no log can encode) as its ``\\udXXX`` text."""
    return escape_surrogates(result if isinstance(result, str) else ("" if result is None else str(result)))


def _escaped(value: Any) -> Any:
    """``value`` with lone surrogates escaped in every string (lists, tuples, dicts walked)."""
    if isinstance(value, str):
        return escape_surrogates(value)
    if isinstance(value, (list, tuple)):
        return [_escaped(v) for v in value]
    if isinstance(value, dict):
        return {_escaped(k): _escaped(v) for k, v in value.items()}
    return value


def _has_surrogate(value: Any) -> bool:
    return LONE_SURROGATE.search(json.dumps(value, ensure_ascii=False, default=str)) is not None


def _samples(result: Any) -> list[str]:
    """All samples of one request's reply (k with ``repeats``, else one)."""
    if isinstance(result, (list, tuple)):
        return [_as_text(r) for r in result] or [""]
    return [_as_text(result)]


def _untruncated(texts: list[str]) -> tuple[list[str], str | None]:
    """Strip the llama-cpp ``TRUNCATED`` mark; the reason when any reply carried it."""
    cut = [t.startswith(TRUNCATED) for t in texts]
    clean = [t[len(TRUNCATED):] if c else t for t, c in zip(texts, cut)]
    reason = CUT_REASON if any(cut) else None
    return clean, reason


def _trace_of(doc: dict[str, Any], texts: list[str]) -> Trace:
    """One run's trace, rebuilt from the episode and the reply texts only (plain replies,
    or interactive envelopes whose stored claims are never trusted)."""
    return trace_from_texts(
        episode_of(doc), texts, agent=AGENT_LABEL, policy_spec=doc.get("memory_policy"),
        presentation=presentation_of(doc),
    )


def evaluate_doc(
    doc: dict[str, Any], results: Sequence[Any], generation: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Score the replies for one episode; returns lm-eval per-sample metrics.

    Replies may be interactive envelopes (``<memrisk-decision>`` + a decision record,
    from the ``memrisk-agent`` wrapper): only their reply texts are used, and the trace
    is replayed from the episode (:func:`lm_eval_memrisk.logs.rederive.trace_from_texts`);
    a malformed or forged envelope is an invalid reply, never an exception.  A ``None``
    or empty reply marks the episode ``valid: false`` (``invalid_reason``) and is noted
    for the end-of-run report (:mod:`lm_eval_memrisk.logs.invalid_replies`).  With
    ``repeats`` k > 1 each reply holds k samples: run i is the i-th sample of every
    decision point.  An episode whose prompt was cut (``truncation=left``) scores 0.
    ``generation``: the run's effective generation settings (signed in the record).
    """
    episode = episode_of(doc)
    per_request = [_samples(r) for r in results]
    k = min((len(s) for s in per_request), default=1)
    runs: list[Trace] = []
    empty = [dp.id for dp, r in zip(episode.decision_points, results) if _no_reply(r)]
    invalid_reason = invalid_replies.no_reply_reason(empty[0]) if empty else None
    cut = False
    for i in range(k):
        texts, reason = _untruncated([s[i] for s in per_request])
        cut = cut or reason is not None
        invalid_reason = invalid_reason or reason
        runs.append(_trace_of(doc, texts))
    if invalid_reason is not None:  # no reply, or a cut prompt
        invalid_replies.note(episode.id, invalid_reason)
    temperature = doc.get("temperature")
    metrics = sample_metrics(
        episode, runs[0], doc.get("dataset_hash", ""), trials=runs if k > 1 else (),
        temperature=float(temperature) if temperature not in (None, "") else None,
        invalid_reason=invalid_reason, generation=generation,
    )
    return void_cut(metrics) if cut else metrics


#: Per-sample fields that are logged with the sample but are not scores (``resps`` and
#: ``filtered_resps`` replace lm-eval's own when a reply holds a lone surrogate).
LOGGED_ONLY: frozenset[str] = frozenset({"episodes", "resps", "filtered_resps"})


class SampleMetrics(dict[str, Any]):
    """process_results' return value: every field goes into the sample log, only the
    scores into lm-eval's aggregation and tables.

    lm-eval 0.4.13 logs a sample with ``example.update(metrics)`` (all keys) and
    aggregates ``for metric, value in metrics.items()``; ``items()`` here leaves out
    :data:`LOGGED_ONLY`, so the per-episode record is bookkeeping, not a table row
    (tests/test_lm_eval_tasks.py runs lm-eval and checks both sides).
    """

    def items(self) -> Any:
        return [(k, v) for k, v in super().items() if k not in LOGGED_ONLY]


def process_results(
    doc: dict[str, Any], results: Sequence[Any], generation: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """lm-eval hook: a call into the pure scorer.

    A reply with a lone surrogate is scored as its escaped text (``\\ud800``), and that
    text replaces the reply in the sample log: lm-eval's writer cannot encode the raw
    character and would leave an empty samples file.
    """
    metrics = SampleMetrics(evaluate_doc(doc, results, generation))
    if _has_surrogate(list(results)):
        metrics["filtered_resps"] = _escaped(list(results))
        metrics["resps"] = [_escaped(r if isinstance(r, (list, tuple)) else [r]) for r in results]
    if _has_surrogate(metrics["episodes"]):  # e.g. from a reply inside an interactive envelope
        metrics["episodes"] = _escaped(metrics["episodes"])
    return metrics


def load_docs(**kwargs: Any) -> Any:
    """custom_dataset hook: see :func:`lm_eval_memrisk.harness.dataset.load_docs`."""
    from lm_eval_memrisk.harness.dataset import load_docs as _load

    return _load(**kwargs)


def doc_to_text(doc: dict[str, Any]) -> str:
    """Flattened transcript of the first decision point (for logs and generic checks)."""
    episode = episode_of(doc)
    return flatten(render(episode, episode.decision_points[0].id, presentation=presentation_of(doc))).rstrip()


def doc_to_target(doc: dict[str, Any]) -> str:
    """The reference (ground-truth) reply of each decision point, for the sample log."""
    from lm_eval_memrisk.running.agents import action_to_reply

    return "\n".join(action_to_reply(dict(dp.reference or {})) for dp in episode_of(doc).decision_points)
