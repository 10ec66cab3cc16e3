"""Leaderboard: collection, Wilson columns, flags, refusals, bad input, MD/CSV/HTML output.

The run folders in tests/data/leaderboard/ are hand-made (see make_runs.py for the
pass patterns); every expected number below can be worked out on paper.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path

import pytest

from lm_eval_memrisk.cli import main as cli_main
from lm_eval_memrisk.episodes.errors import MemriskError, SamplesError
from lm_eval_memrisk.episodes.loader import dataset_hash
from lm_eval_memrisk.leaderboard import bottom_flags, build, collect, html, table, write_leaderboard
from lm_eval_memrisk.leaderboard.selector_report import read_selector_report
from lm_eval_memrisk.leaderboard.summary import Leaderboard, Row
from lm_eval_memrisk.scoring.scorer import SCORER_VERSION

DATA = Path(__file__).parent / "data" / "leaderboard"
RUNS = [DATA / "runs", DATA / "extra" / "delta"]
DATE = "2026-02-01T10-00-00.000000"
#: The runs' dataset (make_runs.py): 22 packaged episodes; every run is a complete run of it.
EPISODES = DATA / "episodes.jsonl"
OTHER_EPISODES = DATA / "other_dataset" / "episodes.jsonl"


def quiet(_: str) -> None:
    pass


@pytest.fixture(scope="module")
def board() -> Leaderboard:
    return build(collect(RUNS, quiet, [EPISODES]))


def row(board: Leaderboard, name: str) -> Row:
    return next(r for r in board.rows if r.system.name == name)


# --- collection --------------------------------------------------------------


def test_output_folder_and_model_folder_both_give_systems(board: Leaderboard) -> None:
    assert sorted(r.system.name for r in board.rows) == ["alpha", "beta", "delta", "gamma"]
    assert row(board, "delta").system.folder == DATA / "extra" / "delta"


def test_newest_results_file_wins_and_is_reported() -> None:
    said: list[str] = []
    systems = collect([DATA / "runs"], said.append, [EPISODES])
    beta = next(s for s in systems if s.name == "beta")
    assert beta.results_file is not None and beta.results_file.name == f"results_{DATE}.json"
    assert sum(e.passed for e in beta.episodes) == 14  # the older run passed all 20
    assert any("using the newest" in m and DATE in m for m in said)


def test_signature_fields(board: Leaderboard) -> None:
    alpha, gamma = row(board, "alpha").system.signature, row(board, "gamma").system.signature
    assert alpha.model_hash == "sha256:" + "1" * 64  # results["config"]["gguf_sha256"]
    assert gamma.model_hash is None
    assert (gamma.memory_policy, gamma.mode, gamma.variant) == ("recency:3", "interactive", "default")
    assert alpha.dataset_hash == dataset_hash(EPISODES) and alpha.scorer_version == SCORER_VERSION
    assert not alpha.flagged and "FLAGGED" not in table.signature_text(alpha)


def test_refuses_mixed_dataset_versions() -> None:
    with pytest.raises(MemriskError) as err:
        collect([DATA / "runs", DATA / "other_dataset"], quiet, [EPISODES, OTHER_EPISODES])
    msg = str(err.value)
    assert "different dataset versions" in msg
    assert str(DATA / "runs" / "alpha") in msg and dataset_hash(EPISODES) in msg
    assert str(DATA / "other_dataset" / "epsilon") in msg and dataset_hash(OTHER_EPISODES) in msg


def test_an_unknown_dataset_is_refused() -> None:
    with pytest.raises(SamplesError, match="is not a known dataset .*--episodes FILE"):
        collect([DATA / "other_dataset"], quiet, [EPISODES])


def test_cli_refusal_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = cli_main(
        ["leaderboard", str(DATA / "runs"), str(DATA / "other_dataset"), "--out", str(tmp_path),
         "--episodes", str(EPISODES), "--episodes", str(OTHER_EPISODES)]
    )
    assert rc == 2
    assert "error: systems were run on different dataset versions" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # nothing half-written


def test_every_command_reading_runs_takes_the_fixture_dataset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The fixture runs are complete runs of their own small dataset: given it with
    ``--episodes``, every command that reads run folders reads them and ranks them all
    (``complete``); without it, each refuses them as an unknown dataset."""
    runs, given = [str(r) for r in RUNS], ["--episodes", str(EPISODES)]
    assert cli_main(["runs", *runs, *given, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {x["system"]: x["status"] for x in listed} == dict.fromkeys(("alpha", "beta", "delta", "gamma"), "complete")
    assert {x["dataset_hash"] for x in listed} == {dataset_hash(EPISODES)}
    alpha = tmp_path / "alpha"
    shutil.copytree(DATA / "runs" / "alpha", alpha)
    commands = [
        ["report", *runs], ["stats", *runs, "--json"], ["rescore", str(alpha), "--json"],
        ["leaderboard", *runs, "--out", str(tmp_path / "board")],
        ["select", *runs, "--fraction", "0.5", "--bootstrap", "2", "--no-plots", "--no-progress", "--out", str(tmp_path / "select")],
    ]
    for command in commands:
        assert cli_main([*command, *given]) == 0, command
    capsys.readouterr()
    for command in [["runs", *runs], *commands]:
        assert cli_main(command) == 2, command
        assert "is not a known dataset" in capsys.readouterr().err, command


def test_same_model_name_twice_is_named_by_folder(tmp_path: Path) -> None:
    shutil.copytree(DATA / "runs" / "alpha", tmp_path / "variant_a" / "alpha")
    shutil.copytree(DATA / "runs" / "alpha", tmp_path / "variant_b" / "alpha")
    names = [s.name for s in collect([tmp_path / "variant_a", tmp_path / "variant_b"], quiet, [EPISODES])]
    assert names == ["variant_a/alpha", "variant_b/alpha"]


def test_same_folder_twice_is_refused() -> None:
    with pytest.raises(MemriskError, match="given twice"):
        collect([DATA / "runs", DATA / "runs" / "alpha"], quiet, [EPISODES])


def test_empty_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(MemriskError, match="no samples_memriskbench"):
        collect([tmp_path], quiet, [EPISODES])


def test_results_without_samples_is_refused(tmp_path: Path) -> None:
    shutil.copy(DATA / "runs" / "alpha" / f"results_{DATE}.json", tmp_path)
    with pytest.raises(MemriskError, match="--log_samples"):
        collect([tmp_path], quiet, [EPISODES])


def _corrupt(tmp_path: Path, lineno: int, edit) -> Path:
    """A copy of alpha whose R2 samples file has line ``lineno`` replaced by edit(obj)."""
    folder = tmp_path / "alpha"
    shutil.copytree(DATA / "runs" / "alpha", folder)
    path = folder / f"samples_memriskbench_r2_{DATE}.jsonl"
    lines = path.read_text().splitlines()
    lines[lineno - 1] = edit(json.loads(lines[lineno - 1]))
    path.write_text("\n".join(lines) + "\n")
    return path


def _set(obj: dict, dotted: str, value: object) -> str:
    *parents, last = dotted.split(".")
    target = obj
    for p in parents:
        target = target[p]
    if value is KeyError:
        del target[last]
    else:
        target[last] = value
    return json.dumps(obj)


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda o: json.dumps(o)[:-5], "not valid JSON"),
        (lambda o: "[1, 2]", "must be a JSON object"),
        (lambda o: _set(o, "episodes", KeyError), "missing the 'episodes' record"),
        (lambda o: _set(o, "doc.episode_id", ""), "doc.episode_id must be a non-empty string"),
        (lambda o: _set(o, "episodes.dataset_hash", "sha256:0"), "is not a known dataset"),
        (lambda o: _set(o, "doc.episode_json", "{}"), "differs from that episode"),
        (lambda o: _set(o, "episodes.trace", KeyError), "episodes.trace must be an object"),
        (
            lambda o: _set(o, "episodes.trace.decisions", [{"raw_reply": 3}]),
            "episodes.trace.decisions[0] must be an object with a string 'raw_reply'",
        ),
    ],
)
def test_malformed_sample_line_names_file_and_line(tmp_path: Path, edit, message: str) -> None:
    path = _corrupt(tmp_path, 3, edit)
    with pytest.raises(SamplesError) as err:
        collect([tmp_path / "alpha"], quiet, [EPISODES])
    assert str(err.value).startswith(f"{path}:3: ")
    assert message in str(err.value)


def test_duplicate_episode_names_both_places(tmp_path: Path) -> None:
    folder = tmp_path / "alpha"
    shutil.copytree(DATA / "runs" / "alpha", folder)
    r1 = folder / f"samples_memriskbench_r1_{DATE}.jsonl"
    first = r1.read_text().splitlines()[0]
    r1.write_text(r1.read_text() + first + "\n")
    with pytest.raises(
        SamplesError, match=re.escape(f"{r1}:5: duplicate episode R1-easy-01 (also at {r1}:1)")
    ):
        collect([folder], quiet, [EPISODES])


# --- numbers -----------------------------------------------------------------


@pytest.mark.parametrize(
    "system, risk, k, n, lo, hi",
    [  # Wilson 95% (z = 1.959964), worked out by hand
        ("alpha", "R3", 3, 4, 0.3006, 0.9544),
        ("alpha", "R1", 4, 4, 0.5101, 1.0000),
        ("beta", "R3", 2, 4, 0.1500, 0.8500),
        ("gamma", "R3", 1, 4, 0.0456, 0.6994),
        ("gamma", "R6", 0, 2, 0.0000, 0.6576),
    ],
)
def test_wilson_columns(
    board: Leaderboard, system: str, risk: str, k: int, n: int, lo: float, hi: float
) -> None:
    rate = row(board, system).risks[risk].default
    assert (rate.k, rate.n) == (k, n)
    assert rate.lo == pytest.approx(lo, abs=1e-4) and rate.hi == pytest.approx(hi, abs=1e-4)


def test_safety_aware_side_by_side(board: Leaderboard) -> None:
    gamma = row(board, "gamma")
    assert (gamma.risks["R3"].default.k, gamma.risks["R3"].safety.k) == (1, 3)
    assert (gamma.risks["R5"].default.k, gamma.risks["R5"].safety.k) == (3, 4)
    assert (gamma.overall.default.k, gamma.overall.safety.k) == (12, 15)


def test_overall_tiers_and_score_cover_the_main_track_only(board: Leaderboard) -> None:
    assert board.risks == ("R1", "R2", "R3", "R4", "R5", "R6")
    gamma = row(board, "gamma")  # R6 0/2 must not pull the overall down
    assert (gamma.overall.default.k, gamma.overall.default.n) == (12, 20)
    # mean fraction of checks passed, recomputed by the scorer from gamma's replies
    assert gamma.mean_score == pytest.approx(sum(
        e.score for e in gamma.system.episodes if e.risk != "R6") / 20)
    assert 12 / 20 < gamma.mean_score < 1
    assert [(gamma.tiers[t].k, gamma.tiers[t].n) for t in ("easy", "medium", "hard")] == [
        (9, 10),
        (2, 5),
        (1, 5),
    ]
    assert row(board, "beta").risks["R6"].default.n == 0


def test_r6_column_only_when_present() -> None:
    assert build(collect([DATA / "runs" / "beta"], quiet, [EPISODES])).risks == ("R1", "R2", "R3", "R4", "R5")


def test_ranks_share_ties(board: Leaderboard) -> None:
    assert sorted((r.rank, r.system.name) for r in board.rows) == [
        (1, "alpha"),
        (2, "beta"),
        (3, "delta"),
        (3, "gamma"),
    ]


def test_flags_on_the_fixture_come_from_violations(board: Leaderboard) -> None:
    # the fixture's failing replies come from adversary agents (stale, leaky, ...): every
    # flag sits on a column where that system has violations
    for r in board.rows:
        assert all(r.violations[c].k > 0 for c in r.flag_risks)
        assert not r.flag_overall or r.violations["overall"].k > 0
    assert any(r.flagged for r in board.rows)


def _system(name: str, outcomes: list[tuple[str, bool, str | None, int]]):
    """A SystemRun from (risk, passed, failed check kind or None, acted decisions)."""
    from lm_eval_memrisk.leaderboard.records import (
        EpisodeOutcome,
        FailedCheck,
        Signature,
        SystemRun,
    )
    from lm_eval_memrisk.scoring.scorer import NEGATIVE_KINDS

    eps = tuple(
        EpisodeOutcome(
            episode_id=f"{risk}-{i}", risk=risk, tier="easy", passed=passed, passed_safety_aware=passed,
            score=1.0 if passed else 0.5, source="x:1",
            failed_checks=() if kind is None else (FailedCheck("c1", kind, kind.split("_")[0], "dp1", "e"),),
            violations=() if kind is None else ("dp1/c1",), violation=kind in NEGATIVE_KINDS,
            decisions=1, acted=acted, acted_violations=int(acted == 1 and kind in NEGATIVE_KINDS),
        )
        for i, (risk, passed, kind, acted) in enumerate(outcomes)
    )
    sig = Signature(name, None, "sha256:x", "1.0", "default", "full", "scripted", "")
    return SystemRun(name, Path(name), Path(name) / "results.json", (), sig, eps)


def test_high_risk_flags_come_from_violations() -> None:
    inactive = _system("inactive", [("R4", False, "tool_called", 0)] * 4)  # never acts, never violates
    violator = _system("violator", [("R4", True, None, 1)] * 3 + [("R4", False, "memory_not_used", 1)])
    careful = _system("careful", [("R4", True, None, 1)] * 4)
    board = build([inactive, violator, careful])
    rows = {r.system.name: r for r in board.rows}
    assert rows["violator"].flag_risks == ("R4",) and rows["violator"].flag_overall
    assert not rows["inactive"].flagged and not rows["careful"].flagged
    assert (rows["violator"].acted_violations["R4"].k, rows["violator"].acted_violations["R4"].n) == (1, 4)
    assert rows["inactive"].acted_violations["R4"].n == 0
    md = table.to_markdown(board)
    assert "R4 viol./acted" in md and "| 1/4 |" in md


@pytest.mark.parametrize(
    "values, expected",
    [
        ({"a": 0.0, "b": 0.5, "c": 0.4, "d": 0.1}, {"b", "c"}),
        ({"a": 0.0, "b": 0.5, "c": 0.5, "d": 0.1}, {"b", "c"}),
        ({"a": 0.1, "b": 0.5, "c": 0.4, "d": 0.4}, {"b", "c", "d"}),  # tie at the boundary: both
        ({"a": 0.0, "b": 0.0}, set()),  # no violations: no one is flagged
        ({"a": None, "b": 0.2}, {"b"}),
        ({}, set()),
    ],
)
def test_top_flags_table(values: dict[str, float | None], expected: set[str]) -> None:
    from lm_eval_memrisk.leaderboard.summary import top_flags

    assert top_flags(values) == expected


@pytest.mark.parametrize(
    "values, expected",
    [
        ({"a": 0.9, "b": 0.5, "c": 0.4, "d": 0.1}, {"c", "d"}),
        ({"a": 0.9, "b": 0.5, "c": 0.5, "d": 0.1}, {"b", "c", "d"}),  # tie at the boundary: both
        ({"a": 0.9, "b": 0.1, "c": 0.1, "d": 0.1}, {"b", "c", "d"}),
        ({"a": 0.5, "b": 0.5, "c": 0.5}, set()),  # all tie: no one is worse
        ({"a": 0.9, "b": 0.2}, {"b"}),  # the best is never flagged
        ({"a": 0.9, "b": None, "c": 0.1, "d": 0.5}, {"c", "d"}),  # no episodes: left out
        ({}, set()),
    ],
)
def test_bottom_flags_table(values: dict[str, float | None], expected: set[str]) -> None:
    assert bottom_flags(values) == expected


# --- outputs -----------------------------------------------------------------


def test_csv_content(board: Leaderboard) -> None:
    rows = list(csv.DictReader(io.StringIO(table.to_csv(board))))
    assert [r["system"] for r in rows] == [r.system.name for r in board.rows]
    alpha = next(r for r in rows if r["system"] == "alpha")
    assert (alpha["R3_k"], alpha["R3_n"], alpha["R3_pass"], alpha["R3_lo"], alpha["R3_hi"]) == (
        "3",
        "4",
        "0.7500",
        "0.3006",
        "0.9544",
    )
    assert alpha["model_hash"] == "sha256:" + "1" * 64 and alpha["high_risk"] == "R3"
    gamma = next(r for r in rows if r["system"] == "gamma")
    assert (gamma["R3_sa_k"], gamma["overall_k"], gamma["overall_n"], gamma["mean_score"]) == (
        "3",
        "12",
        "20",
        f"{row(board, 'gamma').mean_score:.4f}",
    )
    assert (
        gamma["high_risk"] == "overall, R1, R2, R3, R6" and gamma["memory_policy"] == "recency:3"
    )
    beta = next(r for r in rows if r["system"] == "beta")
    assert beta["R6_n"] == "0" and beta["R6_pass"] == ""
    assert gamma["failures"] == "10"


def test_markdown_content(board: Leaderboard) -> None:
    md = table.to_markdown(board)
    lines = md.splitlines()
    head = next(ln for ln in lines if ln.startswith("| Rank"))
    assert (
        "| R1 | R1 SA |" in head
        and "| R6 | R6 SA |" in head
        and "| Overall | Overall SA | Mean score |" in head
    )
    body = [ln for ln in lines if re.match(r"\| \d ", ln)]
    assert [ln.split(" | ")[1] for ln in body] == [r.system.name for r in board.rows]
    assert "| 3/4 0.75 [0.30, 0.95] |" in body[0]
    gamma = next(ln for ln in body if ln.split(" | ")[1] == "gamma")
    assert gamma.count(" | ") == head.count(" | ")
    assert "overall, R1, R2, R3, R6" in gamma
    assert (
        "- **gamma**: `model=gamma | data=sha256:" in md
        and "policy=recency:3 | mode=interactive | presentation=" in md
    )


def test_html_is_self_contained_and_escaped(board: Leaderboard) -> None:
    page = html.render(board, {"heatmap.png": b"\x89PNG fake"})
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.IGNORECASE)
    assert not re.search(r"@import|url\(", page)
    assert re.findall(r'<img[^>]*src="([^"]{0,22})', page) == ["data:image/png;base64,"]
    assert (
        "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    )
    assert page.count("<script>") == 1


def test_html_rows_link_to_their_failures(board: Leaderboard) -> None:
    page = html.render(board)
    for r in board.rows:
        m = re.search(rf'<tr id="([^"]+)"[^>]*data-system="{r.system.name}".*?</tr>', page)
        assert m, r.system.name
        assert (f'href="#fail-{m.group(1)}"' in m.group(0)) == bool(r.failures)
        assert f'<section id="fail-{m.group(1)}">' in page
        for e in r.failures:
            assert f'id="fail-{m.group(1)}-{e.episode_id}"' in page
        assert f'data-signature="{table.signature_text(r.system.signature)}"' in page
    assert "book_ride must not be called" in page  # beta's R4 evidence


def test_selector_report_shapes(tmp_path: Path) -> None:
    points = read_selector_report(DATA / "selector_report.json")
    assert [(p.method, p.fraction) for p in points][:3] == [
        ("difficulty", 0.2),
        ("difficulty", 0.3),
        ("difficulty", 0.5),
    ]
    psi = next(p for p in points if p.method == "psi")
    assert (psi.rho, psi.lo, psi.hi) == (0.9, 0.8, 1.0)
    bad = tmp_path / "report.json"
    bad.write_text(json.dumps({"summary": "nothing here"}))
    with pytest.raises(MemriskError, match="no method comparison found"):
        read_selector_report(bad)
    bad.write_text(json.dumps([{"method": "psi", "fraction": 0.2, "spearman": "high"}]))
    with pytest.raises(MemriskError, match=r"rows\[0\]: spearman must be a number"):
        read_selector_report(bad)


def test_cli_writes_every_file_deterministically(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("matplotlib", reason="figures need the plots extra")
    args = ["leaderboard", *map(str, RUNS), "--selector-report", str(DATA / "selector_report.json"),
            "--episodes", str(EPISODES)]
    assert cli_main([*args, "--out", str(tmp_path / "a")]) == 0
    assert "using the newest" in capsys.readouterr().err
    names = [
        "heatmap.png",
        "leaderboard.csv",
        "leaderboard.html",
        "leaderboard.md",
        "ranking.png",
        "tiers.png",
    ]
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == names
    for png in ("heatmap.png", "tiers.png", "ranking.png"):
        assert (tmp_path / "a" / png).read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    page = (tmp_path / "a" / "leaderboard.html").read_text()
    assert page.count('src="data:image/png;base64,') == 3
    write_leaderboard(RUNS, tmp_path / "b", DATA / "selector_report.json", warn=quiet, episodes=[EPISODES])
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_tier_and_subset_files_of_the_same_run_are_not_counted_twice(tmp_path: Path) -> None:
    folder = tmp_path / "alpha"
    shutil.copytree(DATA / "runs" / "alpha", folder)
    r1 = folder / f"samples_memriskbench_r1_{DATE}.jsonl"
    shutil.copy(r1, folder / f"samples_memriskbench_r1_easy_{DATE}.jsonl")
    shutil.copy(r1, folder / f"samples_memriskbench_subset20_{DATE}.jsonl")
    (alpha,) = collect([folder], quiet, [EPISODES])
    assert len(alpha.episodes) == 22  # an episode logged by several tasks counts once
    for f in folder.glob("samples_memriskbench_r?_*"):
        f.unlink()
    (alpha,) = collect([folder], quiet, [EPISODES])  # only the subset file left: it is read
    assert [e.episode_id for e in alpha.episodes] == [
        "R1-easy-01",
        "R1-easy-02",
        "R1-hard-04",
        "R1-medium-03",
    ]


def test_reference_agents_are_named_by_agent(tmp_path: Path) -> None:
    folder = tmp_path / "qdpv68r5"  # lm-eval names memrisk-agent runs by a hash
    shutil.copytree(DATA / "runs" / "alpha", folder)
    results = folder / f"results_{DATE}.json"
    data = json.loads(results.read_text())
    data["model_name"] = "qdpv68r5"
    data["config"] = {
        "model": "memrisk-agent",
        "model_args": {"agent": "stale"},
        "memrisk_agent": "stale",
    }
    results.write_text(json.dumps(data))
    (system,) = collect([folder], quiet, [EPISODES])
    assert system.name == system.signature.model == "memrisk-agent:stale"


# --- hostile system names (#29 item 2) ---------------------------------------------

HOSTILE = '<img src=x onerror=alert(1)>\n| evil | =HYPERLINK("http://x") `tick`'


def _renamed(board: Leaderboard, name: str) -> Leaderboard:
    import dataclasses

    first = board.rows[0]
    system = dataclasses.replace(first.system, name=name)
    return dataclasses.replace(board, rows=(dataclasses.replace(first, system=system), *board.rows[1:]))


def test_a_hostile_system_name_stays_inside_its_markdown_cell(board: Leaderboard) -> None:
    md = table.to_markdown(_renamed(board, HOSTILE))
    assert "<img" not in md and "&lt;img src=x onerror=alert(1)&gt;" in md
    head = next(ln for ln in md.splitlines() if ln.startswith("| Rank"))
    body = [ln for ln in md.splitlines() if re.match(r"\| \d ", ln)]
    assert len(body) == len(board.rows)  # the newline did not split the row
    cells = re.split(r"(?<!\\)\|", body[0])
    assert len(cells) == len(re.split(r"(?<!\\)\|", head))  # the pipe did not add a column


def test_a_hostile_system_name_is_not_a_csv_formula(board: Leaderboard) -> None:
    for name in ("=HYPERLINK(\"http://x\")", "+1", "-2", "@SUM(A1)"):
        rows = list(csv.DictReader(io.StringIO(table.to_csv(_renamed(board, name)))))
        assert rows[0]["system"] == "'" + name
    alpha = next(r for r in csv.DictReader(io.StringIO(table.to_csv(board))) if r["system"] == "alpha")
    assert alpha["system"] == "alpha"  # plain names are unchanged


def test_a_hostile_system_name_is_escaped_in_html(board: Leaderboard) -> None:
    page = html.render(_renamed(board, HOSTILE))
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
