"""The memrisk CLI: run/score/show summaries, errors without tracebacks, determinism."""

from __future__ import annotations

import json

import pytest

from lm_eval_memrisk.cli import main


def run_json(capsys, *argv):
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_run_oracle_summary(capsys):
    s = run_json(capsys, "run", "--agent", "oracle", "--json")
    assert s["n"] == 120 and s["passed"] == 120 and s["score"] == 1.0
    assert set(s["by_risk"]) == {"R1", "R2", "R3", "R4", "R5"}
    assert all(v == {"n": 24, "passed": 24, "pass_rate": 1.0} for v in s["by_risk"].values())
    assert s["variant"] == "default" and s["signature"].startswith("memrisk:v1|data=sha256:")


def test_run_then_score_is_identical_and_byte_stable(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    s1 = run_json(capsys, "run", "--agent", "leaky", "--risk", "R3", "--out", str(a), "--json")
    run_json(capsys, "run", "--agent", "leaky", "--risk", "R3", "--out", str(b), "--json")
    assert (a / "traces.jsonl").read_bytes() == (b / "traces.jsonl").read_bytes()
    assert (a / "scores.jsonl").read_bytes() == (b / "scores.jsonl").read_bytes()
    s2 = run_json(capsys, "score", str(a / "traces.jsonl"), "--json")
    assert s2["by_risk"] == s1["by_risk"] == {"R3": {"n": 24, "passed": 0, "pass_rate": 0.0}}


def test_score_variants(tmp_path, capsys):
    run_json(capsys, "run", "--agent", "refuser", "--out", str(tmp_path), "--json")
    default = run_json(capsys, "score", str(tmp_path / "traces.jsonl"), "--json")
    safety = run_json(capsys, "score", str(tmp_path / "traces.jsonl"), "--variant", "safety_aware", "--json")
    # scorer 3.0: refusing passes exactly the episodes where declining is the right move
    # at every decision (a standing rule at stake), nowhere else
    from lm_eval_memrisk.episodes.loader import load_episodes
    from lm_eval_memrisk.scoring.checks import episode_values

    decline_only = sum(
        all(dp.answers_user and dp.id in episode_values(ep).declines_allowed for dp in ep.decision_points)
        for ep in load_episodes(track="main")
    )
    assert default["passed"] == decline_only and default["by_risk"].get("R5", {}).get("passed", 0) == decline_only
    assert safety["by_risk"]["R3"]["passed"] == 24 and safety["by_risk"]["R5"]["passed"] == 24
    assert safety["by_risk"]["R1"]["passed"] == 0
    assert "variant=safety_aware" in safety["signature"]


def test_run_refuses_to_overwrite(tmp_path, capsys):
    run_json(capsys, "run", "--agent", "oracle", "--risk", "R1", "--out", str(tmp_path), "--json")
    assert main(["run", "--agent", "oracle", "--risk", "R1", "--out", str(tmp_path)]) == 2
    assert "already exists" in capsys.readouterr().err


def test_score_bad_trace_file_is_a_clear_error(tmp_path, capsys):
    bad = tmp_path / "traces.jsonl"
    bad.write_text('{"episode_id": "R1-easy-01"}\nnot json\n', encoding="utf-8")
    assert main(["score", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:1" in err and "Traceback" not in err


def test_show_prints_messages_without_oracle_labels(capsys):
    assert main(["show", "R4-easy-01"]) == 0
    out = capsys.readouterr().out
    assert "decision point" in out and "Memory notes" in out
    for label in ("revoked", "superseded", "stale"):
        assert f"status {label}" not in out and f"[{label}]" not in out


def test_show_unknown_episode(capsys):
    assert main(["show", "R9-nope"]) == 2
    assert "no episode" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["run", "--agent", "oracle", "--memory-policy", "magic:3"],
                                  ["run", "--agent", "oracle", "--resume"]])
def test_bad_options_are_clear_errors(argv, capsys):
    assert main(argv) == 2
    assert "error:" in capsys.readouterr().err
