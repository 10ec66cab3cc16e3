"""The experiments, the outputs of ``memrisk select`` (byte-stable), plots and the CLI."""

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from lm_eval_memrisk.cli import main
from lm_eval_memrisk.scoring.scorer import SCORER_VERSION
from selector.evaluate import (
    METHODS,
    Settings,
    drift_check,
    held_out,
    run_pipeline,
    select_order,
)
from selector.features import feature_matrix
from selector.io import build_matrix, load_runs, load_systems
from selector.objective import Weights
from selector.report import signature, write_outputs

SAMPLES = Path(__file__).parent / "data" / "samples"
RUNS = [SAMPLES / f"run_{n}" for n in ("alpha", "beta", "gamma", "omega")]
EPISODES = SAMPLES / "episodes.jsonl"  # the runs' dataset (make_samples.py)
WITH_EPISODES = ["--episodes", str(EPISODES)]
SETTINGS = Settings(fraction=0.4, bootstrap=40, progress=False)


@pytest.fixture(scope="module")
def matrix():
    return load_runs(RUNS, episodes=[EPISODES])


@pytest.fixture(scope="module")
def result(matrix):
    return run_pipeline(matrix, SETTINGS)


def test_comparison_rows(result):
    rows = result.comparison
    fractions = SETTINGS.all_fractions()
    assert fractions == (0.2, 0.3, 0.4, 0.5)
    assert len(rows) == 1 + len(METHODS) * len(fractions)
    assert rows[0]["method"] == "Full" and rows[0]["spearman"] == {"point": 1.0}
    for row in rows[1:]:
        for key in ("spearman", "fail_coverage", "risk_coverage", "high_risk"):
            cell = row[key]
            if row["stochastic"]:
                assert cell["lo"] <= cell["mean"] <= cell["hi"]
            else:
                assert set(cell) == {"point"}
    ours = [r for r in rows if r["method"] == "Risk-Preserving"]
    assert all(r["risk_coverage"]["point"] == 1.0 for r in ours if r["size"] >= 5)


def test_selector_row_matches_the_subset(result, matrix):
    row = next(r for r in result.comparison if r["method"] == "Risk-Preserving" and r["fraction"] == 0.4)
    assert row["size"] == len(result.subset) == 6
    assert result.subset.tolist() == sorted(result.order[:6].tolist())


def test_subset_does_not_depend_on_system_order(matrix):
    shuffled = matrix.with_systems([2, 0, 3, 1])
    a = run_pipeline(matrix, dataclasses.replace(SETTINGS, bootstrap=2))
    b = run_pipeline(shuffled, dataclasses.replace(SETTINGS, bootstrap=2))
    assert a.subset.tolist() == b.subset.tolist()


def test_ablation_has_every_family(result):
    dropped = {r["dropped"] for r in result.ablation}
    assert dropped == {"none", "difficulty", "discrimination", "failure_density", "complexity"}
    assert len(result.ablation) == 5 * 4


def test_held_out_selection_never_sees_the_held_out_system(matrix):
    rows = held_out(matrix, SETTINGS)
    assert [r["system"] for r in rows] == list(matrix.systems)
    h = 1
    ref = [0, 2, 3]
    before = select_order(matrix, feature_matrix(matrix, ref), Weights(), 6, reference=ref).order
    passed = matrix.passed.copy()
    passed[:, h] = ~passed[:, h]
    changed = dataclasses.replace(matrix, passed=passed)
    after = select_order(changed, feature_matrix(changed, ref), Weights(), 6, reference=ref).order
    assert before.tolist() == after.tolist()
    assert held_out(changed, dataclasses.replace(SETTINGS, held_out=("org/beta",)))[0]["size"] == 6


def test_drift_check_places_the_new_system():
    systems, _ = load_systems(RUNS + [SAMPLES / "run_delta"], episodes=[EPISODES])
    both = build_matrix(systems, "default")
    d = drift_check(both, "org/delta", np.arange(15), Weights())
    assert d["rank_subset"] == d["rank_full"] and d["spearman_all"] == 1.0 and d["rank_preserved"]
    assert d["pass_full"] == pytest.approx(9 / 15)


def test_outputs_are_complete_and_byte_identical(result, tmp_path):
    a = write_outputs(result, tmp_path / "a", plots=False)
    b = write_outputs(run_pipeline(result.matrix, SETTINGS), tmp_path / "b", plots=False)
    assert [p.name for p in a] == ["subset.json", "samples.json", "report.json", "report.md"]
    for pa, pb in zip(a, b):
        assert pa.read_bytes() == pb.read_bytes()
    sig = signature(result.matrix, SETTINGS)
    assert "data=sha256:" in sig and f"scorer={SCORER_VERSION}" in sig and "variant=default" in sig and "seed=0" in sig
    subset = json.loads((tmp_path / "a" / "subset.json").read_text())
    ids = [e["episode_id"] for e in subset["episodes"]]
    assert subset["signature"] == sig and ids == sorted(ids) and len(ids) == 6
    assert all({"risk", "tier"} <= set(e) for e in subset["episodes"])
    samples = json.loads((tmp_path / "a" / "samples.json").read_text())
    assert sorted(samples) == [f"memriskbench_r{i}" for i in range(1, 6)]
    m = result.matrix
    want = {t: sorted(int(m.doc_ids[i]) for i in result.subset if m.tasks[i] == t) for t in samples}
    assert samples == want
    report = json.loads((tmp_path / "a" / "report.json").read_text())
    assert report["signature"] == sig and report["comparison"] and report["held_out"]
    md = (tmp_path / "a" / "report.md").read_text()
    assert sig in md and "| Risk-Preserving (ours) |" in md and "## Feature ablation" in md


def test_report_json_is_readable_by_the_leaderboard(result, tmp_path):
    reader = pytest.importorskip("lm_eval_memrisk.leaderboard.selector_report")
    write_outputs(result, tmp_path, plots=False)
    points = reader.read_selector_report(tmp_path / "report.json")
    assert {p.method for p in points} >= set(METHODS)


def test_plots_render(result, tmp_path):
    pytest.importorskip("matplotlib")
    written = write_outputs(result, tmp_path, plots=True)
    pngs = [p for p in written if p.suffix == ".png"]
    assert {p.name for p in pngs} == {"ranking.png", "heatmap.png", "ablation.png"}
    for p in pngs:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 5000
    from selector.plots import write_plots

    (tmp_path / "again").mkdir()
    again = write_plots(result, tmp_path / "again")
    assert [p.read_bytes() for p in again] == [p.read_bytes() for p in pngs]  # no timestamps


def test_select_cli_end_to_end(tmp_path, capsys):
    args = ["select", *map(str, RUNS), "--fraction", "0.4", "--bootstrap", "20", "--no-plots",
            "--new-system", str(SAMPLES / "run_delta"), "--out", str(tmp_path), *WITH_EPISODES]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "selected 6 of 15 episodes (4 systems)" in out and "memrisk-select:v1|" in out
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["drift"]["system"] == "org/delta" and report["dataset"]["systems"] == [
        "org/alpha", "org/beta", "org/gamma", "org/omega"]


def test_select_cli_reports_bad_input(tmp_path, capsys):
    assert main(["select", str(RUNS[0]), str(tmp_path), "--out", str(tmp_path / "o"), *WITH_EPISODES]) == 2
    err = capsys.readouterr().err
    assert "memrisk select: error:" in err and str(tmp_path) in err
    assert main(["select", *map(str, RUNS), "--fraction", "1.5", "--out", str(tmp_path / "o"), *WITH_EPISODES]) == 2
    assert main(["select", *map(str, RUNS), "--held-out", "nobody", "--out", str(tmp_path / "o"),
                 "--bootstrap", "2", "--no-plots", *WITH_EPISODES]) == 2
    assert "nobody" in capsys.readouterr().err


def test_select_cli_without_matplotlib_skips_plots(tmp_path, capsys, monkeypatch):
    import selector.plots

    def missing():
        raise ModuleNotFoundError("plots need matplotlib")

    monkeypatch.setattr(selector.plots, "_pyplot", missing)
    assert main(["select", *map(str, RUNS), "--bootstrap", "2", "--fraction", "0.4", "--out", str(tmp_path),
                 *WITH_EPISODES]) == 0
    assert "the plots were skipped" in capsys.readouterr().err
    assert (tmp_path / "report.md").exists() and not (tmp_path / "ranking.png").exists()


def test_psi_steps_counts_raised_and_tied_greedy_picks(result, matrix):
    from selector.evaluate import mask_of, psi_steps
    from selector.objective import TIE_TOL, Objective

    steps = result.psi_steps
    size = len(result.subset)
    assert steps["size"] == size and steps["seed_picks"] == len(matrix.risk_names)
    assert steps["raised"] + steps["tied"] == size - steps["seed_picks"]
    obj = Objective(matrix.passed, matrix.risk_codes, SETTINGS.weights)
    psi = [float(obj.psi(mask_of(len(matrix.episode_ids), result.order[:k])[None, :])[0]) for k in range(1, size + 1)]
    gains = np.diff(psi)[steps["seed_picks"] - 1:]
    assert steps["raised"] == int((gains > TIE_TOL).sum())
    assert steps["psi"] == psi[-1]
    # without coverage there is no seed phase: every pick is greedy
    no_cov = psi_steps(matrix, result.order, dataclasses.replace(SETTINGS.weights, beta=0.0), size)
    assert no_cov["seed_picks"] == 0 and no_cov["raised"] + no_cov["tied"] == size
