"""The replay agent: replies written beforehand, run through the same readers (#27)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.loader import load_episodes
from lm_eval_memrisk.episodes.render import render
from lm_eval_memrisk.running.agent_registry import get_agent
from lm_eval_memrisk.running.agents import action_to_reply
from lm_eval_memrisk.running.replay import prompt_sha256
from lm_eval_memrisk.running.runner import run_episode
from lm_eval_memrisk.scoring.scorer import score


def _write(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_replayed_oracle_replies_score_like_the_oracle(tmp_path: Path) -> None:
    episodes = load_episodes(track="main")[:6]
    rows = [
        {"episode": ep.id, "decision": dp.id, "reply": action_to_reply(dict(dp.reference or {})),
         "prompt_sha256": prompt_sha256(render(ep, dp.id))}
        for ep in episodes for dp in ep.decision_points
    ]  # fmt: skip
    agent = get_agent(f"replay:{_write(tmp_path / 'r.jsonl', rows)}")
    for ep in episodes:
        assert score(ep, run_episode(ep, agent)).success, ep.id


def test_a_missing_reply_or_a_changed_prompt_is_an_error(tmp_path: Path) -> None:
    ep = load_episodes(track="main")[0]
    dp = ep.decision_points[0]
    agent = get_agent(f"replay:{_write(tmp_path / 'none.jsonl', [])}")
    with pytest.raises(MemriskError, match=f"no reply for {ep.id} {dp.id}"):
        run_episode(ep, agent)
    stale = [{"episode": ep.id, "decision": d.id, "reply": "ok", "prompt_sha256": "0" * 64} for d in ep.decision_points]
    with pytest.raises(MemriskError, match="not the one its reply"):
        run_episode(ep, get_agent(f"replay:{_write(tmp_path / 'stale.jsonl', stale)}"))


@pytest.mark.parametrize(
    ("line", "field"),
    [('{"episode": "a", "decision": "b"}', "'reply'"), ("[1]", "JSON object"), ("{oops", "not valid JSON"),
     ('{"episode": "a", "decision": "b", "reply": "x", "prompt_sha256": 3}', "prompt_sha256")],
)
def test_a_bad_line_names_the_file_line_and_field(tmp_path: Path, line: str, field: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"episode": "x", "decision": "y", "reply": "z"}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(MemriskError, match=rf"bad.jsonl:2: .*{field}"):
        get_agent(f"replay:{path}")
