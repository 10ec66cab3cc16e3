"""The README is a front door (issue #28): short, the install and run commands in its
first screen, its own-model ``lm_eval`` commands valid, and every link in it and in
docs/ resolving to a file and, for Markdown targets, to a heading."""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from task_yamls import TASKS, yaml_task_names

# the lm-eval hook before any lm-eval import (as the installed .pth file does at start-up)
from lm_eval_memrisk._autoload import install

install()

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
FIRST_SCREEN = 80
MAX_LINES = 400
OWN_MODELS = ("hf", "vllm", "local-chat-completions")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def _lines() -> list[str]:
    return README.read_text(encoding="utf-8").splitlines()


def _code_blocks(lines: list[str]) -> list[tuple[int, list[str]]]:
    """(index of the first line, lines) of every fenced code block."""
    blocks, start = [], None
    for i, line in enumerate(lines):
        if line.startswith("```"):
            if start is None:
                start = i + 1
            else:
                blocks.append((start, lines[start:i]))
                start = None
    return blocks


def _commands(lines: list[str]) -> list[tuple[int, str]]:
    """(line index, command) of every shell command in the code blocks, continuations
    joined and trailing ``# comments`` dropped."""
    out = []
    for start, block in _code_blocks(lines):
        i = 0
        while i < len(block):
            first = i
            text = block[i]
            while text.rstrip().endswith("\\") and i + 1 < len(block):
                i += 1
                text = text.rstrip()[:-1] + " " + block[i].strip()
            i += 1
            text = re.sub(r"\s+#.*$", "", text).strip()
            if text and not text.startswith("#"):
                out.append((start + first, text))
    return out


def _own_model_commands() -> dict[str, tuple[int, list[str]]]:
    found: dict[str, tuple[int, list[str]]] = {}
    for index, command in _commands(_lines()):
        argv = shlex.split(command)
        if argv[:2] == ["lm_eval", "--model"] and argv[2] in OWN_MODELS:
            found.setdefault(argv[2], (index, argv[1:]))
    return found


def test_the_readme_is_at_most_400_lines() -> None:
    assert len(_lines()) <= MAX_LINES, f"README.md has {len(_lines())} lines; move detail to docs/"


def test_install_and_the_two_scripts_are_in_the_first_screen() -> None:
    commands = [c for i, c in _commands(_lines()) if i < FIRST_SCREEN]
    assert "pip install ." in commands
    assert "bash scripts/main.sh" in commands and (ROOT / "scripts/main.sh").is_file()
    assert "bash scripts/test.sh" in commands and (ROOT / "scripts/test.sh").is_file()


def test_the_readme_test_command_is_what_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    steps = [line.strip() for line in ci
             if line.strip() and not line.startswith("#") and not line.startswith(("set ", "cd "))]
    assert steps == ["bash scripts/test.sh"], steps
    assert steps[0] in [c for _, c in _commands(_lines())]


@pytest.mark.parametrize("model", OWN_MODELS)
def test_the_own_model_command_is_in_the_first_screen(model: str) -> None:
    found = _own_model_commands()
    assert model in found, f"no `lm_eval --model {model} ...` command in README.md"
    assert found[model][0] < FIRST_SCREEN, f"`lm_eval --model {model}` is at line {found[model][0] + 1}"


@pytest.mark.parametrize("model", OWN_MODELS)
def test_the_own_model_command_parses_with_lm_evals_cli_and_names_real_tasks(
    model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("lm_eval")
    import lm_eval.models  # noqa: F401  (registers lm-eval's own models)
    from lm_eval._cli import HarnessCLI
    from lm_eval.api.registry import MODEL_REGISTRY

    _, argv = _own_model_commands()[model]
    monkeypatch.setattr(sys, "argv", ["lm_eval", *argv])
    args = HarnessCLI().parse_args()  # lm-eval's own parser: an unknown flag exits
    assert args.model == model and model in MODEL_REGISTRY
    assert args.apply_chat_template and args.log_samples and args.output_path
    assert args.include_path is None  # the installed hook finds the tasks
    tasks = [t for arg in args.tasks for t in arg.split(",")]
    assert tasks and set(tasks) <= yaml_task_names(), tasks


def test_the_metric_table_lists_the_task_metrics() -> None:
    yaml_metrics = re.findall(r"- metric: (\w+)", (TASKS / "_memriskbench_common").read_text(encoding="utf-8"))
    text = README.read_text(encoding="utf-8")
    table = text[text.index("## Metrics"):text.index("## Results")]
    assert re.findall(r"^\| `(\w+)` \|", table, re.M) == yaml_metrics


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    code = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            code = not code
        m = None if code else re.match(r"^#{1,6} (.*)$", line)
        if m:
            slug = _slug(m.group(1))
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            anchors.add(slug if n == 0 else f"{slug}-{n}")
    return anchors


def _pages() -> list[Path]:
    return [README, *sorted((ROOT / "docs").rglob("*.md")), TASKS / "README.md"]


def test_every_relative_link_resolves_to_a_file_and_heading() -> None:
    broken = []
    for page in _pages():
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if re.match(r"^[a-z]+:", target):
                continue
            path_part, _, anchor = target.partition("#")
            path = (page.parent / path_part).resolve() if path_part else page
            where = f"{page.relative_to(ROOT)}: {target}"
            if not path.exists():
                broken.append(f"{where} (no such file)")
            elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
                broken.append(f"{where} (no such heading)")
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_the_link_check_sees_a_broken_anchor(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text("# Scorer 3.0: a reply is judged\n\n## Dataset v5 (the default)\n## Dataset v5 (the default)\n")
    assert _anchors(page) == {"scorer-30-a-reply-is-judged", "dataset-v5-the-default",
                              "dataset-v5-the-default-1"}


def test_the_docs_index_links_every_docs_page() -> None:
    text = README.read_text(encoding="utf-8")
    linked = {t.split("#")[0] for t in LINK.findall(text)}
    pages = {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")}
    assert pages <= linked, sorted(pages - linked)


# -- the local-chat-completions command, run against a local stand-in server -------------


_missing = [m for m in ("aiohttp", "tenacity", "requests") if importlib.util.find_spec(m) is None]


@pytest.fixture
def oracle_server() -> Iterator[str]:
    """An OpenAI-compatible endpoint on 127.0.0.1 answering R3's prompts with the oracle's
    reference action as text (the default presentation's reply protocol)."""
    from lm_eval_memrisk.episodes.loader import load_episodes
    from lm_eval_memrisk.running.agents import action_to_reply
    from lm_eval_memrisk.running.runner import prompts

    known: dict[str, str] = {}
    for episode in load_episodes():
        if episode.risk == "R3":
            for dp_id, messages in prompts(episode):
                ref = dict(episode.event(dp_id).reference or {})
                known[json.dumps(messages, sort_keys=True)] = action_to_reply(ref)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            payload = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            text = known.get(json.dumps(payload.get("messages"), sort_keys=True), "Done.")
            body = json.dumps({"id": "x", "object": "chat.completion", "choices": [
                {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1/chat/completions"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.skipif(bool(_missing), reason=f"lm-eval's API models need {_missing}")
def test_the_readme_server_command_runs(oracle_server: str, tmp_path: Path) -> None:
    """The README's own-model command for a server, run as written: only the URL, the
    task (R3), a --limit and the output folder are changed."""
    from lm_eval_memrisk.cli import eval as eval_cli

    _, argv = _own_model_commands()["local-chat-completions"]
    argv = [re.sub(r"base_url=[^,]+", f"base_url={oracle_server}", a) for a in argv]
    argv[argv.index("--tasks") + 1] = "memriskbench_r3"
    argv[argv.index("--output_path") + 1] = str(tmp_path)
    assert eval_cli.main([*argv, "--limit", "3"]) == 0
    samples = [json.loads(line) for f in sorted(tmp_path.rglob("samples_*.jsonl"))
               for line in f.read_text(encoding="utf-8").splitlines()]
    assert len(samples) == 3 and all(s["pass"] == 1.0 for s in samples), [s["resps"] for s in samples]
