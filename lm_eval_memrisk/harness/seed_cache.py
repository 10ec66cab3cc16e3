"""Seed lm-eval's request cache (``--use_cache``) from a logged run's samples.

A run of another dataset version whose prompts are partly unchanged (dataset v8 keeps
v7's prompts outside R2 and R3) need not generate those replies again: lm-eval's
``CachingLM`` serves a request whose ``(context, generation kwargs)`` it has seen, and
generates the rest.  A logged sample keeps, for each decision of its episode, the chat
messages the model saw and its raw reply (``episodes.trace.decisions``), and for the
first decision the context string lm-eval sent (``arguments.gen_args_0``).  The context of
every decision is rebuilt with the model's chat template (the adapter's
``apply_chat_template``) and checked against the logged one where the log has it, so a
template that renders differently stops the seeding rather than seeding keys no run will
ask for.  A sample whose prompt was cut (``invalid_reason``) is left out: its reply is
generated again.  The cache key hashes the generation kwargs in the order the task sends
them (its YAML's ``generation_kwargs``): a rescored log writes them with sorted keys, so
they are put back in that order (``order``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from lm_eval_memrisk.episodes.errors import MemriskError

__all__ = ["cache_entries", "seed"]

#: Chat messages -> the context string lm-eval sends (the model's chat template).
Template = Callable[[list[dict[str, Any]]], str]


def _hash(context: str, generation: Mapping[str, Any]) -> str:
    from lm_eval.api.model import hash_args

    return str(hash_args("generate_until", (context, generation)))


def cache_entries(
    samples: Iterable[tuple[str, Mapping[str, Any]]], template: Template, order: Sequence[str] = (),
) -> Iterator[tuple[str, str]]:
    """``(cache key, reply)`` for every decision of every sample that can be seeded
    (``samples``: ``(where, sample)`` as :func:`~lm_eval_memrisk.episodes.jsonl.read_sample_objects`
    reads them); ``order``: the generation kwargs' keys in the order the task sends them
    (others after)."""
    for where, sample in samples:
        record = sample.get("episodes") or {}
        if record.get("invalid_reason"):
            continue
        try:
            logged = sample["arguments"]["gen_args_0"]
            generation = _ordered(logged["arg_1"], order)
            decisions: Sequence[Mapping[str, Any]] = record["trace"]["decisions"]
        except (KeyError, TypeError):
            raise MemriskError(f"{where}: not a logged MemRiskBench sample (no arguments or trace)") from None
        for i, decision in enumerate(decisions):
            try:
                messages, reply = decision["messages"], decision["raw_reply"]
            except (KeyError, TypeError):
                raise MemriskError(f"{where}: decision {i + 1} of the trace has no logged messages or reply") from None
            context = template([dict(m) for m in messages])
            if i == 0 and context != logged["arg_0"]:
                raise MemriskError(
                    f"{where}: the chat template renders decision {decision.get('decision_id')} differently "
                    "from the logged context (another model or template?)"
                )
            yield _hash(context, generation), str(reply)


def _ordered(generation: Mapping[str, Any], order: Sequence[str]) -> dict[str, Any]:
    first = {k: generation[k] for k in order if k in generation}
    return first | {k: v for k, v in generation.items() if k not in first}


def seed(cache_db: str | Path, entries: Iterable[tuple[str, str]]) -> int:
    """Write ``entries`` into the sqlite cache ``cache_db`` (lm-eval's ``<prefix>_rank0.db``);
    returns how many.  An entry already there with another reply is an error."""
    from sqlitedict import SqliteDict

    n = 0
    with SqliteDict(str(cache_db), autocommit=False) as db:
        for key, reply in entries:
            if key in db and db[key] != reply:
                raise MemriskError(f"{cache_db}: cache entry {key[:12]} already holds another reply")
            db[key] = reply
            n += 1
        db.commit()
    return n
