"""Wilson, McNemar, Fisher, Holm; the paper's Table 6.3 statistics; ``memrisk stats``."""

import json
from pathlib import Path

import numpy as np
import pytest

from lm_eval_memrisk.cli import main
from lm_eval_memrisk.episodes.errors import SamplesError
from selector.stats import (
    fisher_p,
    fisher_tests,
    holm,
    mcnemar_exact,
    read_counts,
    wilson_interval,
)

HERE = Path(__file__).parent
PAPER_FILE = HERE.parent.parent / "shared" / "papers" / "memriskbench_table_6_3.json"  # ../shared from the repo
COPY = HERE / "data" / "memriskbench_table_6_3.json"
SAMPLES = HERE / "data" / "samples"


def test_wilson_interval_hand_values():
    assert wilson_interval(5, 10) == pytest.approx((0.236593, 0.763407), abs=1e-6)
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.277533), abs=1e-6)
    assert wilson_interval(10, 10) == pytest.approx((0.722467, 1.0), abs=1e-6)
    lo, hi = wilson_interval(1, 24)
    assert lo < 1 / 24 < hi
    with pytest.raises(ValueError):
        wilson_interval(3, 0)
    with pytest.raises(ValueError):
        wilson_interval(5, 4)


def test_mcnemar_exact_uses_only_discordant_pairs():
    a = np.array([1, 1, 1, 1, 1, 0, 1, 0], dtype=bool)
    b = np.array([0, 0, 0, 0, 0, 0, 1, 0], dtype=bool)
    assert mcnemar_exact(a, b) == (pytest.approx(2 * 0.5 ** 5), 5, 0)
    assert mcnemar_exact(a, a) == (1.0, 0, 0)
    p, _, _ = mcnemar_exact(np.array([1, 0], dtype=bool), np.array([0, 1], dtype=bool))
    assert p == 1.0


def test_holm_hand_values():
    assert holm([0.01, 0.04, 0.03]).tolist() == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.5]).tolist() == [1.0, 1.0]
    assert holm([]).size == 0


def test_fisher_hand_value():
    assert fisher_p(1, 24, 10, 24) == pytest.approx(0.0044, abs=5e-5)
    assert fisher_p(5, 10, 5, 10) == 1.0


def _check_paper(path: Path) -> None:
    tests = fisher_tests(read_counts(path))
    assert len(tests) == 50  # 10 pairs x 5 risks
    pair = [t for t in tests if t["risk"] == "leakage" and {t["a"], t["b"]} == {"Qwen2.5-1.5B", "Phi-3.5-mini"}]
    assert len(pair) == 1 and pair[0]["p"] == pytest.approx(0.0044, abs=5e-5)
    assert min(t["p_holm"] for t in tests) == pytest.approx(0.22, abs=0.005)


def test_paper_table_statistics_from_shared_papers():
    if not PAPER_FILE.exists():
        pytest.skip(f"{PAPER_FILE} is absent (the copy in tests/data is checked below)")
    _check_paper(PAPER_FILE)
    assert json.loads(PAPER_FILE.read_text()) == json.loads(COPY.read_text())


def test_paper_table_statistics_from_the_test_copy():
    _check_paper(COPY)


def test_stats_cli_counts_json(capsys):
    assert main(["stats", "--counts", str(COPY), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["tests"]) == 50
    assert {"risk", "a", "b", "test", "p", "p_holm"} <= set(out["tests"][0])
    assert all(t["test"] == "fisher" for t in out["tests"])
    assert len(out["intervals"]) == 25


def test_stats_cli_runs_add_mcnemar(capsys):
    runs = [str(SAMPLES / f"run_{n}") for n in ("alpha", "beta", "gamma", "omega")]
    runs += ["--episodes", str(SAMPLES / "episodes.jsonl")]  # the runs' dataset
    assert main(["stats", *runs, "--json"]) == 0
    tests = json.loads(capsys.readouterr().out)["tests"]
    assert [t["test"] for t in tests].count("mcnemar") == 30 and [t["test"] for t in tests].count("fisher") == 30
    assert main(["stats", *runs]) == 0
    assert "mcnemar" in capsys.readouterr().out


def test_counts_file_errors(tmp_path, capsys):
    bad = tmp_path / "c.json"
    bad.write_text('{"risks": ["a"],\n "passes": {"m": [1]\n')
    with pytest.raises(SamplesError, match=rf"{bad}:3: not valid JSON"):
        read_counts(bad)
    bad.write_text('{"risks": ["a", "b"], "passes": {"m": [1]}, "episodes_per_risk": 4}')
    with pytest.raises(SamplesError, match=r"passes\['m'\] must be a list of 2"):
        read_counts(bad)
    bad.write_text('{"risks": ["a"], "passes": {"m": [5]}, "episodes_per_risk": 4}')
    with pytest.raises(SamplesError, match="exceeds"):
        read_counts(bad)
    assert main(["stats", "--counts", str(bad)]) == 2
    assert "error:" in capsys.readouterr().err
