"""Seeding lm-eval's request cache from a logged run (lm_eval_memrisk.harness.seed_cache):
lm-eval's own CachingLM serves the seeded replies and generates nothing for them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lm_eval.api.instance import Instance
from lm_eval.api.model import LM, CachingLM

from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.jsonl import read_sample_objects
from lm_eval_memrisk.harness.seed_cache import cache_entries, seed

GENERATION = {"until": ["<|im_end|>"], "do_sample": False, "temperature": 0.0, "max_gen_toks": 192}


def template(messages: list[dict[str, Any]]) -> str:
    return "".join(f"<{m['role']}>{m['content']}" for m in messages) + "<assistant>"


def sample(replies: list[str], invalid: str | None = None, logged: str | None = None) -> dict[str, Any]:
    decisions = [{"decision_id": f"e{i}", "messages": [{"role": "system", "content": "rules"},
                                                      {"role": "user", "content": f"request {i}"}],
                  "raw_reply": r} for i, r in enumerate(replies)]  # fmt: skip
    record: dict[str, Any] = {"trace": {"decisions": decisions}}
    if invalid:
        record["invalid_reason"] = invalid
    first = template(decisions[0]["messages"]) if logged is None else logged
    return {"arguments": {"gen_args_0": {"arg_0": first, "arg_1": GENERATION}}, "episodes": record}


class Refuses(LM):
    """A model that must not be asked: every request has to come from the cache."""

    def generate_until(self, requests: list[Instance], disable_tqdm: bool = False) -> list[str]:
        if requests:
            raise AssertionError(f"generated {len(requests)} requests the cache should serve")
        return []

    def loglikelihood(self, requests: list[Instance], disable_tqdm: bool = False) -> list[Any]:
        raise NotImplementedError

    def loglikelihood_rolling(self, requests: list[Instance], disable_tqdm: bool = False) -> list[Any]:
        raise NotImplementedError


def _request(i: int) -> Instance:
    context = template([{"role": "system", "content": "rules"}, {"role": "user", "content": f"request {i}"}])
    return Instance(request_type="generate_until", doc={}, arguments=(context, dict(GENERATION)), idx=i)


def test_lm_eval_serves_every_seeded_decision(tmp_path: Path) -> None:
    samples = tmp_path / "samples_memriskbench_r1_x.jsonl"
    samples.write_text(json.dumps(sample(["first reply", "second reply"])) + "\n", encoding="utf-8")
    db = tmp_path / "cache_rank0.db"
    assert seed(db, cache_entries(read_sample_objects(samples), template)) == 2
    lm = CachingLM(Refuses(), str(db))
    assert lm.generate_until([_request(0), _request(1)]) == ["first reply", "second reply"]


def test_a_template_that_renders_differently_stops_the_seeding(tmp_path: Path) -> None:
    rows = [("run/samples.jsonl:3", sample(["x"], logged="<user>something else<assistant>"))]
    with pytest.raises(MemriskError, match=r"run/samples.jsonl:3: the chat template renders decision e0 differently"):
        list(cache_entries(rows, template))


def test_a_cut_prompt_is_not_seeded_and_a_conflicting_reply_is_an_error(tmp_path: Path) -> None:
    assert list(cache_entries([("f:1", sample(["x"], invalid="prompt cut"))], template)) == []
    db = tmp_path / "c_rank0.db"
    seed(db, cache_entries([("f:1", sample(["x"]))], template))
    with pytest.raises(MemriskError, match="already holds another reply"):
        seed(db, cache_entries([("f:2", sample(["y"]))], template))
    with pytest.raises(MemriskError, match="not a logged MemRiskBench sample"):
        list(cache_entries([("f:3", {"episodes": {}})], template))
    bare = sample(["x"])
    del bare["episodes"]["trace"]["decisions"][0]["raw_reply"]
    with pytest.raises(MemriskError, match="f:4: decision 1 of the trace has no logged messages or reply"):
        list(cache_entries([("f:4", bare)], template))


def test_a_rescored_log_with_sorted_generation_kwargs_seeds_the_keys_the_task_sends(tmp_path: Path) -> None:
    """A rescored log writes the generation kwargs with sorted keys; lm-eval's key hashes
    them in the task's order, which ``order`` restores."""
    logged = sample(["reply"])
    logged["arguments"]["gen_args_0"]["arg_1"] = dict(sorted(GENERATION.items()))
    db = tmp_path / "c_rank0.db"
    seed(db, cache_entries([("f:1", logged)], template, order=list(GENERATION)))
    assert CachingLM(Refuses(), str(db)).generate_until([_request(0)]) == ["reply"]
    unordered = tmp_path / "u_rank0.db"
    seed(unordered, cache_entries([("f:1", logged)], template))
    with pytest.raises(AssertionError, match="generated 1 requests"):
        CachingLM(Refuses(), str(unordered)).generate_until([_request(0)])
