"""Rankings need the whole episode set (issue 29, item 1).

A system is ranked only when it holds every main-track episode of the comparison
(:func:`lm_eval_memrisk.logs.runs.standings`); per task the newest samples file that holds
every doc of its task counts.  The leaderboard lists an incomplete system apart and never
ranks it; ``memrisk select`` and ``memrisk stats`` refuse it.  All three agree.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from lm_eval_memrisk.cli import main
from lm_eval_memrisk.episodes.errors import SamplesError
from lm_eval_memrisk.harness.docs import subset_ids
from lm_eval_memrisk.leaderboard import build, collect
from lm_eval_memrisk.logs.runs import known_datasets, read_runs, standings, task_episode_ids
from selector.io import load_runs
from selector.reference import unpack

NEWER = "2099-01-01T00-00-00.000000"  # newer than any committed reference run


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("ref")
    keep = ("agent-stale", "agent-leaky", "careful-assistant")
    return {p.name: p for p in unpack(root / "ref") if p.name in keep}


def _lines(path: Path) -> list[dict]:
    return [json.loads(s) for s in path.read_text(encoding="utf-8").splitlines()]


def _write(path: Path, lines: list[dict]) -> None:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")


def _failed_ids(folder: Path) -> set[str]:
    (log,) = read_runs([folder])
    return {s.episode_id for s in log.samples if not s.passed}


def _cherry_picked(stale: Path, dest: Path) -> tuple[Path, int]:
    """The stale agent's run with the rows of its failed episodes deleted; its passes."""
    shutil.copytree(stale, dest)
    failed = _failed_ids(stale)
    for path in dest.glob("samples_*.jsonl"):
        _write(path, [x for x in _lines(path) if x["doc"]["episode_id"] not in failed])
    assert 0 < len(failed) < 120
    return dest, 120 - len(failed)


def test_task_names_map_to_every_doc_of_the_task() -> None:
    (dataset,) = [d for d in known_datasets().values() if d.path.name == "episodes_v5.jsonl"]
    assert len(task_episode_ids("memriskbench_r1", dataset) or ()) == 24
    easy = task_episode_ids("memriskbench_r3_easy", dataset) or frozenset()
    assert easy and all(dataset.episodes[i].tier == "easy" and dataset.episodes[i].risk == "R3" for i in easy)
    assert len(task_episode_ids("memriskbench_r6", dataset) or ()) == sum(
        e.risk == "R6" for e in dataset.episodes.values())
    assert task_episode_ids("memriskbench_subset20", dataset) == frozenset(subset_ids("subset20"))
    assert task_episode_ids("memriskbench_custom", dataset) is None


def test_cherry_picked_stale_agent_is_listed_incomplete_never_ranked_first(
    reference: dict[str, Path], tmp_path: Path, capsys
) -> None:
    forged, passes = _cherry_picked(reference["agent-stale"], tmp_path / "forged" / "agent-stale")
    runs = [f"stale={forged}", f"leaky={reference['agent-leaky']}", f"careful={reference['careful-assistant']}"]
    warned: list[str] = []
    board = build(collect(runs, warned.append))
    assert [r.system.name for r in board.incomplete] == ["stale"]
    assert board.incomplete[0].rank == 0 and board.incomplete[0].system.status == f"incomplete ({passes}/120)"
    assert board.rows[0].system.name == "careful" and board.rows[0].rank == 1
    assert "stale" not in [r.system.name for r in board.rows]
    assert any(w.startswith(f"INCOMPLETE stale: incomplete ({passes}/120), not ranked") for w in warned)

    out = tmp_path / "board"
    assert main(["leaderboard", *runs, "--out", str(out)]) == 0
    md = (out / "leaderboard.md").read_text(encoding="utf-8")
    assert "## Incomplete (not ranked)" in md and f"| stale | incomplete ({passes}/120) |" in md
    ranked_table = md.split("## Incomplete")[0]
    assert "| stale |" not in ranked_table
    rows = {r["system"]: r for r in csv.DictReader(io.StringIO((out / "leaderboard.csv").read_text("utf-8")))}
    assert rows["stale"]["rank"] == "" and rows["stale"]["status"] == f"incomplete ({passes}/120)"
    assert rows["careful"]["rank"] == "1" and rows["careful"]["status"] == "complete"
    assert "Ranked on a subset" not in md
    html = (out / "leaderboard.html").read_text(encoding="utf-8")
    assert "Incomplete (not ranked)" in html and f"incomplete ({passes}/120)" in html
    capsys.readouterr()

    # runs and report say so; select and stats refuse it, naming it the same way
    assert main(["runs", *runs, "--json"]) == 0
    assert {x["system"]: x["status"] for x in json.loads(capsys.readouterr().out)} == {
        "stale": f"incomplete ({passes}/120)", "leaky": "complete", "careful": "complete"}
    assert main(["report", *runs, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"]["stale"] == f"incomplete ({passes}/120)"
    assert main(["select", *runs, "--out", str(tmp_path / "sel"), "--no-plots", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert f"system 'stale' is incomplete ({passes}/120)" in err and "leaky" not in err
    assert main(["stats", *runs, "--json"]) == 2
    err = capsys.readouterr().err
    assert f"system 'stale' is incomplete ({passes}/120)" in err and "leaky" not in err


def test_a_newer_partial_r1_file_does_not_shrink_r1(reference: dict[str, Path], tmp_path: Path) -> None:
    folder = tmp_path / "stale"
    shutil.copytree(reference["agent-stale"], folder)
    (r1,) = folder.glob("samples_memriskbench_r1_*.jsonl")
    kept = _lines(r1)[:6]  # a newer run of R1 that logged 6 of its 24 docs
    partial = folder / f"samples_memriskbench_r1_{NEWER}.jsonl"
    _write(partial, kept)

    (log,) = read_runs([folder])
    assert sum(s.episode.risk == "R1" for s in log.samples) == 24  # the complete, older file counts
    assert r1 in log.files and partial not in log.files
    assert any(str(partial) in n and f"partial: it holds {len(kept)} of the 24 docs of memriskbench_r1" in n
               for n in log.notes)
    assert standings([log])[log.name].status == "complete"
    assert standings([log])[log.name].complete

    r1.unlink()  # no complete R1 file left: the system is incomplete, and says so
    (log,) = read_runs([folder])
    assert any("no samples file of memriskbench_r1 holds every doc" in n for n in log.notes)
    alone = standings([log])[log.name]  # alone too: it owes R1's other docs (issue 29 item 1)
    assert alone.status == f"incomplete ({96 + len(kept)}/120)" and not alone.ranked
    assert set(log.owed) >= {s.episode_id for s in log.samples if s.episode.risk == "R1"}
    (full,) = read_runs([reference["agent-stale"]])
    beside = standings([log, replace(full, name="whole")])[log.name]  # beside a whole run it is incomplete, not ranked
    assert beside.status == f"incomplete ({96 + len(kept)}/120)" and not beside.ranked


def test_leaderboard_select_and_stats_agree_on_who_is_complete(
    reference: dict[str, Path], tmp_path: Path, capsys
) -> None:
    forged, _ = _cherry_picked(reference["agent-stale"], tmp_path / "forged" / "agent-stale")
    short = tmp_path / "short" / "agent-leaky"  # one whole task missing
    shutil.copytree(reference["agent-leaky"], short)
    next(short.glob("samples_memriskbench_r5_*.jsonl")).unlink()
    runs = [f"stale={forged}", f"leaky={short}", f"careful={reference['careful-assistant']}"]

    board = build(collect(runs, lambda _: None))
    on_board = {r.system.name for r in board.incomplete}
    with pytest.raises(SamplesError) as err:
        load_runs(runs)
    refused_by_matrix = {n for n in ("stale", "leaky", "careful") if f"system '{n}' is incomplete" in str(err.value)}
    capsys.readouterr()
    assert main(["stats", *runs]) == 2
    stats_err = capsys.readouterr().err
    refused_by_stats = {n for n in ("stale", "leaky", "careful") if f"system '{n}' is incomplete" in stats_err}
    assert on_board == refused_by_matrix == refused_by_stats == {"stale", "leaky"}

    # the complete systems alone: ranked by the leaderboard, accepted by the pass matrix and stats
    whole = [f"leaky={reference['agent-leaky']}", f"careful={reference['careful-assistant']}"]
    board = build(collect(whole, lambda _: None))
    # careful replays written replies (a real system), leaky is a scripted agent: each first of its group
    assert not board.incomplete and [(r.system.name, r.system.group, r.rank) for r in board.rows] == [
        ("careful", "real", 1), ("leaky", "reference", 1)]
    assert load_runs(whole).passed.shape == (120, 2)
    assert main(["stats", *whole, "--json"]) == 0


def _cut(source: Path, dest: Path, keep: int | None, tasks: tuple[str, ...] | None = None) -> Path:
    """A copy of ``source`` whose samples files keep their first ``keep`` rows (doc_ids
    0..keep-1, what ``--limit`` writes; None: every row), only for ``tasks`` if given."""
    shutil.copytree(source, dest)
    for path in dest.glob("samples_memriskbench_*.jsonl"):
        task = path.name.split("_20")[0].removeprefix("samples_")
        if tasks is not None and task not in tasks:
            path.unlink()
        elif keep is not None:
            _write(path, _lines(path)[:keep])
    return dest


def test_runs_cut_the_same_way_are_never_ranked_on_what_is_left(
    reference: dict[str, Path], tmp_path: Path, capsys
) -> None:
    """Two systems whose every task file stops after 3 docs (``--limit 3``, or the tail
    deleted so the doc_ids stay 0..n-1): no one ran the whole track, but each owes its
    tasks' other docs, so both are incomplete and unranked, alone or together, by the
    leaderboard, select and stats alike."""
    stale = _cut(reference["agent-stale"], tmp_path / "a" / "agent-stale", 3)
    leaky = _cut(reference["agent-leaky"], tmp_path / "b" / "agent-leaky", 3)
    runs = [f"stale={stale}", f"leaky={leaky}"]
    logs = read_runs(runs)
    assert {len(x.samples) for x in logs} == {15}
    table = standings(logs)
    assert {n: st.status for n, st in table.items()} == {"stale": "incomplete (15/120)", "leaky": "incomplete (15/120)"}
    assert standings(logs[:1])["stale"].status == "incomplete (15/120)"  # alone as well
    board = build(collect(runs, lambda _: None))
    assert not board.rows and {r.system.name for r in board.incomplete} == {"stale", "leaky"}
    with pytest.raises(SamplesError, match="is incomplete"):
        load_runs(runs)
    capsys.readouterr()
    assert main(["stats", *runs]) == 2
    assert "is incomplete (15/120)" in capsys.readouterr().err


def test_whole_declared_tasks_rank_on_their_docs(reference: dict[str, Path], tmp_path: Path) -> None:
    """Systems that each ran the whole of one declared task (here R1, all 24 docs) are
    ranked on it, and the status says so: never "complete"."""
    runs = [f"stale={_cut(reference['agent-stale'], tmp_path / 'a' / 's', None, ('memriskbench_r1',))}",
            f"careful={_cut(reference['careful-assistant'], tmp_path / 'b' / 'c', None, ('memriskbench_r1',))}"]
    table = standings(read_runs(runs))
    assert {n: st.status for n, st in table.items()} == {"stale": "subset (24/120)", "careful": "subset (24/120)"}
    assert all(st.ranked and not st.complete for st in table.values())


def test_an_r6_only_run_is_reported_not_ranked_and_never_crashes(tmp_path: Path, capsys) -> None:
    """A run of the R6 track alone (``--tasks memriskbench_r6``) holds no main-track
    episode: ``report`` and ``runs`` show its R6 row and say why it is not ranked
    (this raised IndexError before)."""
    data = Path(__file__).parent / "data" / "leaderboard"
    r6 = tmp_path / "alpha"
    r6.mkdir()
    for f in (data / "runs" / "alpha").iterdir():
        if f.name.startswith("results_") or "_r6_" in f.name:
            shutil.copy(f, r6 / f.name)
    episodes = ["--episodes", str(data / "episodes.jsonl")]
    (log,) = read_runs([r6], episodes=[data / "episodes.jsonl"])
    st = standings([log], known_datasets([data / "episodes.jsonl"]))[log.name]
    assert not st.ranked and st.status == "no main-track episode" and "R6-only" in st.reason
    assert main(["report", f"a={r6}", *episodes, "--markdown"]) == 0
    out = capsys.readouterr()
    assert "| a | 2/2 (100%) |" in out.out  # alpha passes both R6 episodes of the fixture
    assert "INCOMPLETE a: no main-track episode, not ranked (an R6-only run" in out.err
    assert main(["runs", f"a={r6}", *episodes]) == 0
