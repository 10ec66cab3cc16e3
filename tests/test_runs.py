"""The one reader of run folders (lm_eval_memrisk.logs.runs) and every command that reads through it."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest

from lm_eval_memrisk.cli import main
from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.leaderboard import build, collect
from lm_eval_memrisk.logs.rescore import rescore_dir
from lm_eval_memrisk.logs.runs import read_runs, system_name
from selector.io import load_systems
from selector.reference import unpack


def quiet(_: str) -> None:
    pass


def _memrisk_run(out: Path, *extra: str) -> None:
    assert main(["run", "--out", str(out), "--json", *extra]) == 0


@pytest.fixture(scope="module")
def mixed_folder(tmp_path_factory) -> Path:
    """One model folder holding a full run (stale agent) and a newer R1-only run (oracle),
    on dataset v1 (the pass counts below are v1's)."""
    root = tmp_path_factory.mktemp("mixed")
    _memrisk_run(root / "full", "--agent", "stale", "--episodes", "v1")
    _memrisk_run(root / "r1", "--agent", "oracle", "--risk", "R1", "--episodes", "v1")
    folder = root / "full" / "stale"
    (newer,) = (root / "r1" / "oracle").glob("samples_memriskbench_r1_*.jsonl")
    shutil.copy(newer, folder / newer.name)
    return folder


def test_every_reader_sees_the_same_episodes(mixed_folder: Path, capsys) -> None:
    (system,) = read_runs([mixed_folder])
    assert len(system.samples) == 120
    r1 = [f for f in system.files if "_r1_" in f.name]
    assert len(r1) == 1 and len(list(mixed_folder.glob("samples_memriskbench_r1_*"))) == 2
    assert r1[0] == max(mixed_folder.glob("samples_memriskbench_r1_*"))  # the newest
    # oracle on R1 (24) + the stale agent's 13 R3 passes
    assert system.passed == 24 + 13
    want = {s.episode_id: s.passed for s in system.samples}

    rows, _ = load_systems([mixed_folder])
    (selector_rows,) = rows.values()
    assert {e: r.passed for e, r in selector_rows.items()} == want

    (board_system,) = collect([mixed_folder], quiet)
    assert {e.episode_id: e.passed for e in board_system.episodes} == want

    assert main(["report", str(mixed_folder), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    (row,) = report["rows"].values()
    assert row["overall"].startswith("37/120")

    assert main(["runs", str(mixed_folder), "--json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    assert (listed["episodes"], listed["passed"], listed["dataset_hash"]) == (120, 37, system.dataset_hash)
    assert listed["files"] == [str(f) for f in system.files] and listed["flagged"] == []

    audit, written = rescore_dir(mixed_folder.parent)
    assert sum(c["n"] for c in audit.rows.values()) == 120
    assert sum(c["pass->fail"] + c["fail->pass"] for c in audit.rows.values()) == 0
    for path in written:
        path.unlink()


def test_names_come_from_the_runs_own_settings() -> None:
    assert system_name({"model": "memrisk-agent", "model_args": "agent=stale"}) == "memrisk-agent:stale"
    assert system_name({"model_args": {"agent": "leaky", "model": "agent-leaky"}}) == "agent-leaky"
    assert system_name({"model_args": "pretrained=org/m,dtype=float16"}) == "org/m"
    assert system_name({"model_args": "base=llama-cpp,model=smollm2-135m,mode=interactive"}) == "smollm2-135m"
    assert system_name({"agent": "oracle"}) == "memrisk-agent:oracle"  # memrisk run --agent
    assert system_name({"model": "hf", "model_args": ""}) is None  # then: the folder name


def test_two_unnamed_agent_runs_get_distinct_names(tmp_path: Path, capsys) -> None:
    """lm-eval names both output folders by the same seeded id when model= is not given."""
    folders = []
    for agent in ("stale", "leaky"):
        out = tmp_path / agent
        assert main(["eval", "--model", "memrisk-agent", "--model_args", f"agent={agent}",
                     "--tasks", "memriskbench_r1_easy", "--output_path", str(out), "--log_samples"]) == 0
        (folder,) = [d for d in out.iterdir() if d.is_dir()]
        folders.append(folder)
    capsys.readouterr()
    assert main(["runs", *map(str, folders), "--json"]) == 0
    names = [s["system"] for s in json.loads(capsys.readouterr().out)]
    assert names == ["memrisk-agent:stale", "memrisk-agent:leaky"]
    assert main(["runs", f"a={folders[0]}", f"b={folders[1]}", "--json"]) == 0
    assert [s["system"] for s in json.loads(capsys.readouterr().out)] == ["a", "b"]


def _reference(tmp_path: Path) -> list[Path]:
    return [p for p in unpack(tmp_path / "ref") if p.name in ("agent-stale", "agent-leaky")]


def _edit_lines(folder: Path, edit) -> None:
    for path in folder.glob("samples_*.jsonl"):
        lines = [json.loads(s) for s in path.read_text(encoding="utf-8").splitlines()]
        for line in lines:
            edit(line)
        path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")


def _forge_passes(line: dict) -> None:
    line["pass"] = line["score"] = line["pass_safety_aware"] = 1.0
    line["episodes"]["success"], line["episodes"]["score"] = True, 1.0


def test_edited_stored_metrics_rank_the_same_and_are_flagged(tmp_path: Path, capsys) -> None:
    untouched = _reference(tmp_path)
    forged = tmp_path / "forged" / "agent-stale"
    shutil.copytree(untouched[1] if untouched[1].name == "agent-stale" else untouched[0], forged)
    leaky = next(p for p in untouched if p.name == "agent-leaky")
    stale = next(p for p in untouched if p.name == "agent-stale")
    _edit_lines(forged, _forge_passes)

    honest = build(collect([f"stale={stale}", f"leaky={leaky}"], quiet))
    warned: list[str] = []
    edited = build(collect([f"stale={forged}", f"leaky={leaky}"], warned.append))
    summary = [(r.rank, r.system.name, r.overall.default.k, r.overall.safety.k, r.mean_score) for r in honest.rows]
    assert [(r.rank, r.system.name, r.overall.default.k, r.overall.safety.k, r.mean_score)
            for r in edited.rows] == summary
    passes = {n: k for _, n, k, _, _ in summary}
    assert 0 < passes["stale"] < 120  # v2: the stale agent passes the R3 episodes without a stale choice
    forged_lines = 120 - passes["stale"]  # every line the forgery turned into a pass
    stale_row = next(r for r in edited.rows if r.system.name == "stale")
    assert stale_row.system.signature.flagged.startswith(f"{forged_lines} sample(s) store metrics")
    # an untouched log is flagged only where it was logged by another scorer version
    (stale_log,) = read_runs([stale])
    assert all(s.older_scorer for s in stale_log.flagged)
    assert any(w.startswith(f"FLAGGED stale: {forged_lines} sample(s)") for w in warned)

    out = tmp_path / "board"
    assert main(["leaderboard", f"stale={forged}", f"leaky={leaky}", "--out", str(out)]) == 0
    assert f"FLAGGED: {forged_lines} sample(s)" in (out / "leaderboard.md").read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(["report", f"stale={forged}", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["rows"]["stale"]["overall"].startswith(f"{passes['stale']}/120") and report["flagged"]["stale"]
    assert main(["runs", f"stale={forged}", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)[0]["flagged"]) == forged_lines
    assert main(["stats", f"stale={forged}", f"leaky={leaky}", "--json"]) == 0
    captured = capsys.readouterr()
    assert "FLAGGED stale" in captured.err
    stale_overall = [c for c in json.loads(captured.out)["intervals"] if c["model"] == "stale"]
    assert sum(c["passes"] for c in stale_overall if c["risk"] != "overall") == passes["stale"]


def test_edited_stored_states_leave_the_scores_unchanged(tmp_path: Path) -> None:
    (stale, *_) = sorted(_reference(tmp_path), key=lambda p: p.name != "agent-stale")
    forged = tmp_path / "forged" / "agent-stale"
    shutil.copytree(stale, forged)

    def revive(line: dict) -> None:  # claim every memory item is active and unused
        for d in line["episodes"]["trace"]["decisions"]:
            for item in d["state"]["memory"]:
                item["status"] = "active"
            d["memory_used"] = []

    _edit_lines(forged, revive)
    (honest,) = read_runs([stale])
    (edited,) = read_runs([forged])
    assert [(s.episode_id, s.passed, s.score) for s in edited.samples] == [
        (s.episode_id, s.passed, s.score) for s in honest.samples]
    assert edited.passed == honest.passed > 0
    assert not edited.flagged  # stored metrics are honest; only the (ignored) states were edited


def test_interactive_runs_are_replayed_from_their_replies(tmp_path: Path) -> None:
    _memrisk_run(tmp_path / "run", "--agent", "leaky", "--mode", "interactive", "--risk", "R3")
    (system,) = read_runs([tmp_path / "run"])
    assert system.mode == "interactive" and len(system.samples) == 24
    assert not system.flagged  # the recomputed scores equal what the run stored
    assert system.passed == 0


def test_select_and_leaderboard_leave_no_temporary_folder(tmp_path: Path, monkeypatch) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    assert main(["leaderboard", "--reference", "--out", str(tmp_path / "board")]) == 0
    assert list(scratch.iterdir()) == []
    rc = main(["select", "--reference", "--out", str(tmp_path / "sel"), "--bootstrap", "2",
               "--fractions", "0.2", "--no-plots", "--no-progress", "--held-out", "agent-stale"])
    assert rc == 0
    assert list(scratch.iterdir()) == []


def test_mixed_run_settings_in_one_folder_are_refused(tmp_path: Path) -> None:
    _memrisk_run(tmp_path / "a", "--agent", "stale", "--risk", "R1")
    _memrisk_run(tmp_path / "b", "--agent", "stale", "--risk", "R2", "--mode", "interactive")
    (r2,) = (tmp_path / "b" / "stale").glob("samples_memriskbench_r2_*.jsonl")
    shutil.copy(r2, tmp_path / "a" / "stale" / r2.name)
    with pytest.raises(MemriskError, match="mode 'scripted' differs from 'interactive'|mode 'interactive'"):
        read_runs([tmp_path / "a"])


def test_the_committed_reference_set_is_read_gzipped(capsys) -> None:
    """`memrisk runs selector/data/reference --json` lists the packed reference set (#28)."""
    from lm_eval_memrisk.cli import main as memrisk
    from selector.reference import REFERENCE_DIR, systems

    assert memrisk(["runs", str(REFERENCE_DIR), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert sorted(r["system"] for r in listed) == sorted(systems())
    assert all(r["episodes"] == 120 for r in listed)
