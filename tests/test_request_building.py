"""Our task configs build valid requests for a chat-completions backend, without a server.

lm-eval's own request building (``Task.build_all_requests`` with ``--apply_chat_template``)
followed by the JSON payload that its API model ``local-chat-completions``
(``lm_eval.models.openai_completions.LocalChatCompletion``, what a vLLM or SGLang
OpenAI-compatible endpoint is driven with) would POST: its ``create_message`` and
``_create_payload``, the two calls ``TemplateAPI.model_call`` makes before sending.
"""

from __future__ import annotations

import copy
import importlib.util
import itertools
import json

import pytest

pytest.importorskip("lm_eval")
_missing = [m for m in ("aiohttp", "tenacity", "requests") if importlib.util.find_spec(m) is None]
pytestmark = pytest.mark.skipif(
    bool(_missing), reason=f"lm-eval's API models need {_missing}: pip install 'lm-eval[api]'"
)

from lm_eval_memrisk._autoload import tasks_dir  # noqa: E402 (after the importorskip)
from lm_eval_memrisk.harness.docs import episode_of  # noqa: E402 (after the importorskip)
from lm_eval_memrisk.running.generation import MAX_GEN_TOKS, STOP_SEQUENCES  # noqa: E402
from lm_eval_memrisk.running.policies import make_policy  # noqa: E402 (after the importorskip)
from lm_eval_memrisk.running.runner import prompts  # noqa: E402 (after the importorskip)

SERVED_NAME = "Qwen/Qwen2.5-7B-Instruct"
TASKS = [f"memriskbench_r{i}" for i in range(1, 7)] + ["memriskbench_r1_hard"]


@pytest.fixture(scope="module")
def chat_lm():  # type: ignore[no-untyped-def]
    import lm_eval.models  # noqa: F401  (lm-eval's built-in models)
    from lm_eval.api.registry import get_model

    # nothing listens on port 9 (discard): the object is built, never connected
    return get_model("local-chat-completions")(
        base_url="http://127.0.0.1:9/v1/chat/completions", model=SERVED_NAME,
        tokenizer_backend=None, max_retries=1,
    )  # fmt: skip


@pytest.fixture(scope="module")
def task_manager():  # type: ignore[no-untyped-def]
    from lm_eval.tasks import TaskManager

    return TaskManager(include_path=str(tasks_dir()), include_defaults=False)


@pytest.mark.parametrize("task_name", TASKS)
def test_requests_become_valid_chat_completion_payloads(chat_lm, task_manager, task_name):  # type: ignore[no-untyped-def]
    task = task_manager.load([task_name])["tasks"][task_name]
    task.build_all_requests(
        limit=6, apply_chat_template=True, chat_template=chat_lm.apply_chat_template,
        tokenizer_name=chat_lm.tokenizer_name if hasattr(chat_lm, "tokenizer_name") else "",
    )  # fmt: skip
    configured = task.config.generation_kwargs
    assert task.instances, task_name
    n_multi = 0
    for inst in task.instances:
        assert inst.request_type == "generate_until"
        ctx, gen_kwargs = inst.args[0], inst.args[1]
        # exactly what TemplateAPI.model_call / amodel_call POST as JSON
        payload = chat_lm._create_payload(
            chat_lm.create_message([ctx]), generate=True, gen_kwargs=copy.deepcopy(gen_kwargs),
            seed=chat_lm._seed, eos=chat_lm.eos_string,
        )  # fmt: skip
        assert json.loads(json.dumps(payload)) == payload  # plain JSON
        episode = episode_of(inst.doc)
        n_multi += len(episode.decision_points) > 1
        _, expected = prompts(episode, make_policy(inst.doc.get("memory_policy")))[inst.idx]
        assert payload["messages"] == expected  # our rendered multi-turn chat, unflattened
        roles = [m["role"] for m in payload["messages"]]
        assert roles[0] == "system" and roles[-1] == "user"
        assert all(r in ("user", "assistant") for r in roles[1:])
        assert all(a != b for a, b in itertools.pairwise(roles[1:]))  # turns alternate
        assert all(isinstance(m["content"], str) and m["content"] for m in payload["messages"])
        assert payload["model"] == SERVED_NAME
        assert payload["max_tokens"] == configured["max_gen_toks"] == MAX_GEN_TOKS
        assert payload["temperature"] == configured["temperature"] == 0
        # lm-eval's chat-completions payload keeps the first 4 stops (the OpenAI limit):
        # ours are ordered so that those 4 end a reply that runs on into a made-up turn
        assert payload["stop"] == list(configured["until"])[:4] == list(STOP_SEQUENCES[:4])
        assert {"\nUser:", "\n[tool result"} <= set(payload["stop"])
        assert "do_sample" not in payload and "until" not in payload
        assert payload["seed"] == 1234
    if task_name == "memriskbench_r1_hard":
        assert n_multi, "expected episodes with several decision points (one request each)"
