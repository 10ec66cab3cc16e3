"""Real systems and reference systems (issue #27, 3b): the group comes from what the run
recorded, real systems come first, each group is ranked within itself, and every output
(Markdown, CSV, HTML) says which group a system is in.

The run folders are the hand-made ones of tests/data/leaderboard/ (alpha passes most,
then beta, then gamma and delta); ``alpha`` is copied and its results config rewritten
into a planted-weakness profile run, so the best system by pass rate is a reference one.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from lm_eval_memrisk.leaderboard import build, collect, html, table
from lm_eval_memrisk.leaderboard.groups import system_group, system_note
from lm_eval_memrisk.leaderboard.summary import Leaderboard

DATA = Path(__file__).parent / "data" / "leaderboard"
EPISODES = [DATA / "episodes.jsonl"]  # the runs' dataset (make_runs.py)
CAREFUL = "replies written blind by a capable assistant, not a model run"


def quiet(_: str) -> None:
    pass


def _rewrite_config(folder: Path, config: dict[str, Any]) -> None:
    for results in folder.glob("results_*.json"):
        data = json.loads(results.read_text(encoding="utf-8"))
        data["config"] = config
        results.write_text(json.dumps(data), encoding="utf-8")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """alpha: a weak profile run; delta: replayed careful-assistant replies; beta, gamma: llama-cpp."""
    root = tmp_path_factory.mktemp("groups")
    shutil.copytree(DATA / "runs" / "alpha", root / "alpha")
    _rewrite_config(root / "alpha", {
        "model": "memrisk-agent", "memrisk_agent": "weak:churn1:p=0.7:seed=0",
        "model_args": {"agent": "weak:churn1:p=0.7:seed=0", "model": "alpha"}, "mode": "scripted",
    })
    shutil.copytree(DATA / "extra" / "delta", root / "delta")
    _rewrite_config(root / "delta", {
        "model": "memrisk-agent", "memrisk_agent": "replay:tests/data/careful_assistant/replies_v5.jsonl",
        "model_args": {"agent": "replay:tests/data/careful_assistant/replies_v5.jsonl", "model": "delta"},
    })
    return [str(root / "alpha"), str(DATA / "runs" / "beta"), str(DATA / "runs" / "gamma"), str(root / "delta")]


@pytest.fixture(scope="module")
def board(runs: list[str]) -> Leaderboard:
    return build(collect(runs, quiet, EPISODES))


# --- classification from the run's settings ----------------------------------


@pytest.mark.parametrize(("config", "group"), [
    ({"model": "llama-cpp", "model_args": {"model": "qwen2.5-coder-0.5b"}}, "real"),
    ({"model": "hf", "model_args": "pretrained=Qwen/Qwen2.5-0.5B-Instruct"}, "real"),
    # the name is never read: a model named like a weak profile is a model
    ({"model": "llama-cpp", "model_args": {"model": "weak-churn1-p0.7"}}, "real"),
    ({"model": "memrisk-agent", "model_args": {"agent": "stale", "model": "agent-stale"}}, "reference"),
    # ... and a scripted agent named like a model is a reference system
    ({"model": "memrisk-agent", "model_args": {"agent": "leaky", "model": "qwen2.5-coder-0.5b"}}, "reference"),
    ({"model": "memrisk-agent", "model_args": "agent=weak:gap6:p=0.8:seed=0,model=g"}, "reference"),
    ({"model": "memrisk-agent", "memrisk_agent": "constraint-blind", "model_args": {}}, "reference"),
    ({"model": "memrisk-agent", "model_args": {}}, "reference"),  # memrisk-agent's default: the oracle
    ({"system": "oracle", "agent": "oracle", "mode": "scripted"}, "reference"),  # memrisk run --agent oracle
    ({"model": "memrisk-agent", "model_args": {"agent": "replay:r.jsonl", "model": "careful"}}, "real"),
    # memrisk-agent wrapping a model (a memory policy around llama.cpp) is a model run
    ({"model": "memrisk-agent", "memrisk_agent": "oracle",
      "model_args": {"base": "llama-cpp", "model": "qwen2.5-coder-0.5b"}}, "real"),
    ({"system": "llama-cpp-model-x", "model": "llama-cpp", "model_args": "model=x"}, "real"),  # memrisk run --model
    ({}, "real"),  # nothing recorded: the safer default
    ({"model": "some-new-backend"}, "real"),
])
def test_system_group_reads_the_run_settings(config: dict[str, Any], group: str) -> None:
    assert system_group(config) == group


def test_only_replays_get_a_note() -> None:
    careful = {"model": "memrisk-agent",
               "model_args": {"agent": "replay:tests/data/careful_assistant/replies_v5.jsonl"}}
    assert system_note(careful) == CAREFUL
    other = {"model": "memrisk-agent", "model_args": {"agent": "replay:/tmp/mine/replies.jsonl"}}
    assert system_note(other) == "replayed replies (replies.jsonl), not a model run"
    for config in ({"model": "memrisk-agent", "model_args": {"agent": "stale"}},
                   {"model": "llama-cpp", "model_args": {"model": "careful-assistant"}}, {}):
        assert system_note(config) == ""


def test_collect_groups_each_run_by_what_it_recorded(board: Leaderboard) -> None:
    systems = {r.system.name: r.system for r in board.rows}
    assert {n: s.group for n, s in systems.items()} == {
        "alpha": "reference", "beta": "real", "gamma": "real", "delta": "real"}
    assert systems["delta"].note == CAREFUL and systems["alpha"].note == systems["beta"].note == ""


# --- order and ranks ------------------------------------------------------------


def test_real_systems_come_first_and_each_group_is_ranked_within_itself(board: Leaderboard) -> None:
    assert [(r.system.group, r.system.name, r.rank) for r in board.rows] == [
        ("real", "beta", 1), ("real", "gamma", 2), ("real", "delta", 2), ("reference", "alpha", 1)]
    assert [r.system.name for r in board.group_rows("real")] == ["beta", "gamma", "delta"]
    assert [r.system.name for r in board.group_rows("reference")] == ["alpha"]
    # alpha passes more than any real system: it would be rank 1 of one table
    alpha = board.group_rows("reference")[0].overall.default.value
    assert all(alpha is not None and (v := r.overall.default.value) is not None and v < alpha
               for r in board.group_rows("real"))


def test_high_risk_flags_still_compare_both_groups_together(board: Leaderboard, runs: list[str]) -> None:
    """Grouping changes the order and the ranks, never the flags (computed over every
    ranked system, as before the groups)."""
    ungrouped = build([dataclasses.replace(s, group="real") for s in collect(runs, quiet, EPISODES)])
    flags = {r.system.name: (r.flag_overall, r.flag_risks) for r in board.rows}
    assert flags == {r.system.name: (r.flag_overall, r.flag_risks) for r in ungrouped.rows}
    assert flags["gamma"] == (True, ("R1", "R2", "R3", "R6"))


# --- outputs --------------------------------------------------------------------


def test_csv_has_a_group_column_and_ranks_within_groups(board: Leaderboard) -> None:
    text = table.to_csv(board)
    assert text.splitlines()[0].startswith("group,rank,system,note,")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [(r["group"], r["rank"], r["system"]) for r in rows] == [
        ("real", "1", "beta"), ("real", "2", "gamma"), ("real", "2", "delta"), ("reference", "1", "alpha")]
    notes = {r["system"]: r["note"] for r in rows}
    assert notes == {"beta": "", "gamma": "", "delta": CAREFUL, "alpha": ""}


def test_markdown_has_both_group_headings_real_first(board: Leaderboard) -> None:
    md = table.to_markdown(board)
    real, reference = md.index("\n## Real systems\n"), md.index("\n## Reference systems\n")
    assert real < reference < md.index("\n## Signatures\n")
    assert "18 systems" not in md and "4 systems (3 real, 1 reference)" in md

    def names(section: str) -> list[str]:
        return [ln.split(" | ")[1] for ln in section.splitlines() if re.match(r"\| \d ", ln)]

    assert names(md[real:reference]) == ["beta", "gamma", f"delta *({CAREFUL})*"]
    assert names(md[reference:]) == ["alpha"]
    assert re.search(r"^\| 1 \| alpha \|", md[reference:], re.MULTILINE)
    assert md[real:reference].count("| Rank | System |") == md[reference:].count("| Rank | System |") == 1


def test_html_has_one_table_per_group_real_first(board: Leaderboard) -> None:
    page = html.render(board)
    real = page.index('<table class="lb" id="leaderboard" data-group="real">')
    reference = page.index('<table class="lb" id="leaderboard-reference" data-group="reference">')
    assert page.index(">Real systems</h2>") < real < page.index(">Reference systems</h2>") < reference
    real_rows = re.findall(r'<tr id="[^"]+" data-order="\d+" data-system="([^"]+)"', page[real:reference])
    reference_rows = re.findall(r'<tr id="[^"]+" data-order="\d+" data-system="([^"]+)"', page[reference:])
    assert (real_rows, reference_rows) == (["beta", "gamma", "delta"], ["alpha"])
    assert f'<div class="note">({CAREFUL})</div>' in page[real:reference]
    # each row still links to its failures, in one section after the tables
    for i, r in enumerate(board.rows):
        assert page.count(f'<section id="fail-{html.slug(i, r.system.name)}">') == 1


def test_a_board_of_one_group_shows_only_that_group() -> None:
    board = build(collect([DATA / "runs", DATA / "extra" / "delta"], quiet, EPISODES))
    md = table.to_markdown(board)
    assert "## Real systems" in md and "## Reference systems" not in md
    assert 'id="leaderboard-reference"' not in html.render(board)
