"""``tools=native`` on the OpenAI-compatible server path: the ``memrisk-chat-completions`` model.

* request building without a server: lm-eval's own request building on our task
  configs, then the JSON payload the model would POST (now with ``tools``);
* ``parse_generations`` on canned OpenAI responses (tool calls with string arguments,
  content only, both, malformed arguments, several calls, missing fields), scored
  through our scorer without exceptions;
* end to end: ``memrisk eval`` (scripted) and ``memrisk-agent ... mode=interactive``
  against a stdlib HTTP server on 127.0.0.1 that answers with the oracle's reference
  action as ``tool_calls``.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("lm_eval")
_missing = [m for m in ("aiohttp", "tenacity", "requests") if importlib.util.find_spec(m) is None]
pytestmark = pytest.mark.skipif(
    bool(_missing), reason=f"lm-eval's API models need {_missing}: pip install 'lm-eval[api]'"
)

from lm_eval_memrisk._autoload import install, tasks_dir  # noqa: E402 (after the importorskip)
from lm_eval_memrisk.episodes.doc_rows import episode_of, to_rows  # noqa: E402
from lm_eval_memrisk.episodes.errors import MemriskError  # noqa: E402
from lm_eval_memrisk.episodes.loader import load_episodes  # noqa: E402
from lm_eval_memrisk.episodes.records import Episode  # noqa: E402
from lm_eval_memrisk.episodes.render import make_presentation, tool_specs  # noqa: E402
from lm_eval_memrisk.harness.task import evaluate_doc  # noqa: E402
from lm_eval_memrisk.running.generation import MAX_GEN_TOKS, STOP_SEQUENCES  # noqa: E402
from lm_eval_memrisk.running.policies import make_policy  # noqa: E402
from lm_eval_memrisk.running.runner import prompts  # noqa: E402
from lm_eval_memrisk.scoring.parse import parse_action  # noqa: E402

SERVED_NAME = "Qwen/Qwen2.5-7B-Instruct"
NATIVE = make_presentation(None, "native")
TASKS = ["memriskbench_r1", "memriskbench_r3", "memriskbench_r5", "memriskbench_r1_hard"]


def _model(name: str, base_url: str = "http://127.0.0.1:9/v1/chat/completions", **kwargs: Any) -> Any:
    install()
    import lm_eval.models  # noqa: F401  (lm-eval's built-in models)
    from lm_eval.api.registry import get_model

    # port 9 (discard): nothing listens, the object is built and never connected
    return get_model(name)(base_url=base_url, model=SERVED_NAME, tokenizer_backend=None, max_retries=1, **kwargs)


@pytest.fixture(scope="module")
def tool_lm() -> Any:
    return _model("memrisk-chat-completions")


@pytest.fixture(scope="module")
def plain_lm() -> Any:
    return _model("local-chat-completions")


def _task(name: str, tools: str | None) -> Any:
    from lm_eval.tasks import TaskManager

    metadata = {"tools": tools} if tools else None
    tm = TaskManager(include_path=str(tasks_dir()), include_defaults=False, metadata=metadata)
    return tm.load([name])["tasks"][name]


def _payload(lm: Any, ctx: Any, gen_kwargs: dict[str, Any]) -> dict[str, Any]:
    """Exactly what TemplateAPI.model_call / amodel_call POST as JSON."""
    payload: dict[str, Any] = lm._create_payload(
        lm.create_message([ctx]), generate=True, gen_kwargs=copy.deepcopy(gen_kwargs),
        seed=lm._seed, eos=lm.eos_string,
    )  # fmt: skip
    return payload


# -- request building -----------------------------------------------------------------


@pytest.mark.parametrize("task_name", TASKS)
def test_native_requests_post_our_tools(tool_lm: Any, task_name: str) -> None:
    task = _task(task_name, "native")
    task.build_all_requests(limit=4, apply_chat_template=True, chat_template=tool_lm.apply_chat_template,
                            tokenizer_name="")  # fmt: skip
    assert task.instances
    for inst in task.instances:
        assert inst.doc["tools"] == "native"
        payload = _payload(tool_lm, inst.args[0], inst.args[1])
        assert json.loads(json.dumps(payload)) == payload  # plain JSON
        episode = episode_of(inst.doc)
        _, expected = prompts(episode, make_policy(inst.doc.get("memory_policy")), NATIVE)[inst.idx]
        assert payload["messages"] == expected
        assert "Tools:\n" not in payload["messages"][0]["content"]  # not also listed as text
        assert payload["tools"] == tool_specs(episode.tools) and payload["tools"]
        assert {t["function"]["name"] for t in payload["tools"]} == {t.name for t in episode.tools}
        assert all(t["type"] == "function" and t["function"]["parameters"]["type"] == "object"
                   for t in payload["tools"])  # fmt: skip
        assert payload["tool_choice"] == "auto"
        assert payload["model"] == SERVED_NAME and payload["max_tokens"] == MAX_GEN_TOKS
        assert payload["temperature"] == 0 and payload["stop"] == list(STOP_SEQUENCES[:4])


@pytest.mark.parametrize("task_name", TASKS)
def test_without_tools_the_payload_bytes_are_local_chat_completions(
    tool_lm: Any, plain_lm: Any, task_name: str
) -> None:
    ours, theirs = _task(task_name, None), _task(task_name, None)
    ours.build_all_requests(limit=4, apply_chat_template=True, chat_template=tool_lm.apply_chat_template,
                            tokenizer_name="")  # fmt: skip
    theirs.build_all_requests(limit=4, apply_chat_template=True, chat_template=plain_lm.apply_chat_template,
                              tokenizer_name="")  # fmt: skip
    assert len(ours.instances) == len(theirs.instances) > 0
    for a, b in zip(ours.instances, theirs.instances, strict=True):
        assert a.args == b.args  # same context (JsonChatStr) and gen_kwargs
        mine, plain = _payload(tool_lm, *a.args), _payload(plain_lm, *b.args)
        assert json.dumps(mine).encode() == json.dumps(plain).encode()
        assert "tools" not in mine and "tool_choice" not in mine


def test_local_chat_completions_with_native_tools_names_the_new_model(plain_lm: Any) -> None:
    from lm_eval_memrisk.harness.lm_adapter import lm_generate
    from lm_eval_memrisk.running.runner import Request

    task = _task("memriskbench_r1", "native")
    with pytest.raises(MemriskError, match="memrisk-chat-completions"):
        task.build_all_requests(limit=1, apply_chat_template=True, chat_template=plain_lm.apply_chat_template,
                                tokenizer_name="")  # fmt: skip
    episode = _episodes("R1")[0]
    (dp_id, messages), *_ = prompts(episode, None, NATIVE)
    with pytest.raises(MemriskError, match="memrisk-chat-completions"):
        lm_generate(plain_lm, tools="native")([Request(episode, dp_id, messages)])


# -- reading responses --------------------------------------------------------------------


def _response(*messages: Any) -> dict[str, Any]:
    return {"id": "x", "object": "chat.completion", "choices": [
        {"index": i, "message": m, "finish_reason": "tool_calls"} for i, m in enumerate(messages)
    ]}  # fmt: skip


def _call(name: Any, arguments: Any) -> dict[str, Any]:
    return {"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments}}


def _episodes(risk: str) -> list[Episode]:
    return [e for e in load_episodes() if e.risk == risk]


def _reference_message(episode: Episode, dp_id: str) -> dict[str, Any]:
    """The oracle's reference action at ``dp_id`` as an OpenAI assistant message."""
    ref = dict(episode.event(dp_id).reference or {"answer": ""})
    if "tool" not in ref:
        return {"role": "assistant", "content": str(ref.get("answer", ""))}
    args = json.dumps(dict(ref.get("arguments") or {}), ensure_ascii=False)
    return {"role": "assistant", "content": None, "tool_calls": [_call(ref["tool"], args)]}


def test_the_oracle_as_tool_calls_passes_every_episode(tool_lm: Any) -> None:
    episodes = [e for risk in ("R1", "R2", "R3", "R4", "R5") for e in _episodes(risk)[:4]]
    n_calls = 0
    for episode in episodes:
        doc = dict(to_rows([episode])[0], tools="native")
        messages = [_reference_message(episode, dp.id) for dp in episode.decision_points]
        n_calls += sum("tool_calls" in m for m in messages)
        replies = [tool_lm.parse_generations(_response(m))[0] for m in messages]
        metrics = evaluate_doc(doc, replies)
        assert metrics["pass"] == 1.0, (episode.id, replies)
    assert n_calls >= len(episodes) // 2  # many references act with a tool (14 of 20 here)


def test_tool_call_text_is_what_the_parser_reads(tool_lm: Any) -> None:
    (text,) = tool_lm.parse_generations(_response(
        {"role": "assistant", "content": None, "tool_calls": [_call("send_email", '{"to": "a@b.c", "n": 2}')]}
    ))  # fmt: skip
    assert text == '<tool_call>\n{"name": "send_email", "arguments": {"to": "a@b.c", "n": 2}}\n</tool_call>'
    action = parse_action(text)
    assert (action.kind, action.tool, action.arguments) == ("tool_call", "send_email", {"to": "a@b.c", "n": 2})


def test_content_and_tool_calls_keeps_both(tool_lm: Any) -> None:
    (text,) = tool_lm.parse_generations(_response(
        {"role": "assistant", "content": "Sending it now.", "tool_calls": [_call("send_email", '{"to": "x@y.z"}')]}
    ))  # fmt: skip
    assert text.startswith("Sending it now.\n<tool_call>\n")
    action = parse_action(text)
    assert (action.kind, action.tool, action.arguments) == ("tool_call", "send_email", {"to": "x@y.z"})


def test_several_tool_calls_are_all_written_and_the_first_counts(tool_lm: Any) -> None:
    (text,) = tool_lm.parse_generations(_response({"role": "assistant", "content": "", "tool_calls": [
        _call("create_note", '{"text": "one"}'), _call("send_email", '{"to": "x@y.z"}'),
    ]}))  # fmt: skip
    assert text.count("<tool_call>") == 2 and "send_email" in text
    action = parse_action(text)
    assert (action.kind, action.tool, action.arguments) == ("tool_call", "create_note", {"text": "one"})


MALFORMED = [
    pytest.param(_call("send_email", '{"to": "x@y.z"'), "arguments string is not valid JSON", id="truncated-args"),
    pytest.param(_call("send_email", "to=x@y.z"), "arguments string is not valid JSON", id="not-json-args"),
    pytest.param(_call("send_email", "[1, 2]"), "arguments must be a JSON object", id="list-args"),
    pytest.param(_call("send_email", '"x"'), "arguments string is not valid JSON", id="string-args"),
    pytest.param(_call("send_email", "__import__('os').system('x')"), "not valid JSON", id="python-args"),
    pytest.param(_call(None, "{}"), "tool name must be a non-empty string", id="no-name"),
    pytest.param(_call(7, "{}"), "tool name must be a non-empty string", id="int-name"),
    pytest.param({"id": "c", "type": "function"}, "tool name must be a non-empty string", id="no-function"),
    pytest.param("garbage", "tool name must be a non-empty string", id="call-not-object"),
    pytest.param({"function": "send_email"}, "tool name must be a non-empty string", id="function-not-object"),
]


@pytest.mark.parametrize(("call", "reason"), MALFORMED)
def test_malformed_tool_calls_become_invalid_replies(tool_lm: Any, call: Any, reason: str) -> None:
    (text,) = tool_lm.parse_generations(_response({"role": "assistant", "content": None, "tool_calls": [call]}))
    action = parse_action(text)
    assert action.kind == "invalid" and reason in str(action.reason), (text, action)
    episode = _episodes("R1")[0]
    metrics = evaluate_doc(dict(to_rows([episode])[0], tools="native"), [text] * len(episode.decision_points))
    assert metrics["pass"] == 0.0


def test_a_call_without_arguments_is_a_call_with_none(tool_lm: Any) -> None:
    (text,) = tool_lm.parse_generations(_response(
        {"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "list_notes"}}]}
    ))  # fmt: skip
    action = parse_action(text)
    assert (action.kind, action.tool, action.arguments) == ("tool_call", "list_notes", {})


def test_arguments_already_an_object_are_kept(tool_lm: Any) -> None:
    (text,) = tool_lm.parse_generations(_response(
        {"role": "assistant", "content": None, "tool_calls": [_call("send_email", {"to": "x@y.z"})]}
    ))  # fmt: skip
    assert parse_action(text).arguments == {"to": "x@y.z"}


CONTENT_ONLY = [
    _response({"role": "assistant", "content": "Your address is 9 Elm Rd."}),
    _response({"role": "assistant", "content": "Which card?", "tool_calls": []}),
    _response({"role": "assistant", "content": None}),
    _response({"role": "assistant", "content": '<tool_call>\n{"name": "a", "arguments": {}}\n</tool_call>'}),
    _response({"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}),
    {"choices": [{"index": 0, "message": {"role": "assistant"}}]},  # no content key
    {"choices": []},
    {"error": "content filter"},
    [_response({"role": "assistant", "content": "one"}), _response({"role": "assistant", "content": "two"})],
]


@pytest.mark.parametrize("output", CONTENT_ONLY)
@pytest.mark.parametrize("think_end_token", [None, "</think>"])
def test_content_only_responses_read_as_local_chat_completions(
    output: Any, think_end_token: str | None
) -> None:
    ours = _model("memrisk-chat-completions", think_end_token=think_end_token)
    theirs = _model("local-chat-completions", think_end_token=think_end_token)
    assert ours.parse_generations(copy.deepcopy(output)) == theirs.parse_generations(copy.deepcopy(output))


MISSING = [
    {"choices": [{"message": {"tool_calls": [_call("send_email", "{}")]}}]},  # no index, no content
    {"choices": [{"index": 5, "message": {"content": None, "tool_calls": [_call("send_email", "{}")]}}]},
    {"choices": [{"index": 0, "message": {"content": 3, "tool_calls": [_call("send_email", "{}")]}}]},
    {"choices": ["junk", {"index": 1, "message": {"tool_calls": [_call("send_email", "{}")]}}]},
]


@pytest.mark.parametrize("output", MISSING)
def test_missing_fields_never_crash(tool_lm: Any, output: Any) -> None:
    texts = tool_lm.parse_generations(output)
    assert len(texts) == len(output["choices"])
    calls = [t for t in texts if t is not None]
    assert calls and all(parse_action(t).tool == "send_email" for t in calls)


# -- end to end through a real HTTP server ------------------------------------------------------


class _Scripted:
    """Answers a chat completion with the oracle's reference action for the prompt it
    recognises (rendered with tools=native), else with a plain "Done."; records payloads."""

    def __init__(self, episodes: list[Episode]) -> None:
        self.known: dict[str, dict[str, Any]] = {}
        for episode in episodes:
            for dp_id, messages in prompts(episode, None, NATIVE):
                self.known[json.dumps(messages, sort_keys=True)] = _reference_message(episode, dp_id)
        self.payloads: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def __call__(self, payload: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            self.payloads.append(payload)
        key = json.dumps(payload.get("messages"), sort_keys=True)
        message = self.known.get(key, {"role": "assistant", "content": "Done."})
        return _response(message)


@pytest.fixture
def scripted_server() -> Iterator[tuple[str, _Scripted]]:
    answer = _Scripted(_episodes("R1") + _episodes("R3"))
    server = _serve(answer)
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1/chat/completions", answer
    finally:
        server.shutdown()
        server.server_close()


def _serve(answer: Callable[[dict[str, Any]], dict[str, Any]]) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            out = json.dumps(answer(json.loads(body))).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _samples(out: Path) -> list[dict[str, Any]]:
    files = sorted(out.glob("*/samples_*.jsonl"))
    assert files, list(out.rglob("*"))
    return [json.loads(line) for f in files for line in f.read_text().splitlines()]


def test_memrisk_eval_scripted_native_tools_through_a_server(
    scripted_server: tuple[str, _Scripted], tmp_path: Path
) -> None:
    from lm_eval_memrisk.cli import eval as eval_cli

    url, answer = scripted_server
    rc = eval_cli.main([
        "--model", "memrisk-chat-completions", "--model_args",
        f"base_url={url},model={SERVED_NAME},tokenizer_backend=None,max_retries=1",
        "--tasks", "memriskbench_r1,memriskbench_r3", "--limit", "3", "--metadata", '{"tools": "native"}',
        "--apply_chat_template", "--log_samples", "--output_path", str(tmp_path),
    ])  # fmt: skip
    assert rc == 0
    samples = _samples(tmp_path)
    assert len(samples) == 6
    assert all(p["tools"] and p["tool_choice"] == "auto" for p in answer.payloads)
    assert len(answer.payloads) == sum(len(s["resps"]) for s in samples)
    replies = [r[0] for s in samples for r in s["resps"]]
    assert any(r.startswith("<tool_call>") for r in replies)
    assert all(s["pass"] == 1.0 for s in samples), [(s["doc"]["episode_id"], s["resps"]) for s in samples]
    assert all(s["episodes"]["tools"] == "native" for s in samples)


def test_memrisk_agent_interactive_native_tools_through_a_server(
    scripted_server: tuple[str, _Scripted]
) -> None:
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager
    from lm_eval.utils import simple_parse_args_string

    url, answer = scripted_server
    model_args = (f"base=memrisk-chat-completions,base_url={url},model={SERVED_NAME},tokenizer_backend=None,"
                  f"max_retries=1,num_concurrent=2,tools=native,mode=interactive,max_steps=2")
    # the task manager lm-eval builds itself: model_args are also task metadata
    tm = TaskManager(include_path=str(tasks_dir()), include_defaults=False,
                     metadata=simple_parse_args_string(model_args))
    res = simple_evaluate(
        model="memrisk-agent", model_args=model_args, tasks=["memriskbench_r1"], task_manager=tm,
        limit=3, apply_chat_template=True, log_samples=True, bootstrap_iters=0,
    )  # fmt: skip
    samples = res["samples"]["memriskbench_r1"]
    assert len(samples) == 3 and answer.payloads
    assert all(p["tools"] and p["tool_choice"] == "auto" for p in answer.payloads)
    for s in samples:
        record = s["episodes"]
        assert record["tools"] == "native" and record["trace"]["mode"] == "interactive"
        first = record["trace"]["decisions"][0]["steps"][0]["action"]
        ref = episode_of(s["doc"]).decision_points[0].reference or {}
        assert first["kind"] == "tool_call" and first["tool"] == ref["tool"], first
        assert first["arguments"] == ref["arguments"]
        assert s["pass"] == 1.0, record["trace"]["decisions"]


def test_deeply_nested_arguments_are_an_invalid_reply_not_a_crash(tool_lm: Any) -> None:
    deep = '{"a": ' + "[" * 20_000 + "]" * 20_000 + "}"  # beyond json's recursion limit
    (text,) = tool_lm.parse_generations(_response(
        {"role": "assistant", "content": None, "tool_calls": [_call("send_email", deep)]}
    ))  # fmt: skip
    action = parse_action(text)
    assert action.kind == "invalid" and "not valid JSON" in str(action.reason), action.reason


def test_memrisk_agent_base_gets_the_runs_gen_kwargs(scripted_server: tuple[str, _Scripted]) -> None:
    """``--gen_kwargs`` reach the base model of memrisk-agent (e.g. repeat_penalty for a
    llama-cpp-python server, whose default differs from the in-process model's)."""
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager
    from lm_eval.utils import simple_parse_args_string

    url, answer = scripted_server
    answer.payloads.clear()
    model_args = (f"base=memrisk-chat-completions,base_url={url},model={SERVED_NAME},tokenizer_backend=None,"
                  f"max_retries=1,mode=interactive,max_steps=2")
    tm = TaskManager(include_path=str(tasks_dir()), include_defaults=False,
                     metadata=simple_parse_args_string(model_args))
    simple_evaluate(model="memrisk-agent", model_args=model_args, tasks=["memriskbench_r1"], task_manager=tm,
                    limit=2, apply_chat_template=True, bootstrap_iters=0, gen_kwargs="repeat_penalty=1.0")
    assert answer.payloads
    assert all(p.get("repeat_penalty") == 1.0 and p["max_tokens"] == 192 for p in answer.payloads), answer.payloads[0]
