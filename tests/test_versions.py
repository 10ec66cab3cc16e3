"""Dataset versions: v2 is the default, v1 stays loadable by name; a shipped subset
loads the version it was selected on (subset20: v2, rebuilt on the v2 reference set)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lm_eval_memrisk.codec import dumps_episode
from lm_eval_memrisk.loader import dataset_hash, load_episodes
from lm_eval_memrisk.runs import known_datasets


def test_subset20_loads_the_version_it_was_selected_on() -> None:
    pytest.importorskip("datasets")
    from lm_eval_memrisk.harness.dataset import SUBSET_VERSIONS, load_docs
    from lm_eval_memrisk.harness.docs import SUBSET_DIR

    version = SUBSET_VERSIONS["subset20"]
    assert version == "v2"
    subset = json.loads((SUBSET_DIR / "subset20.json").read_text(encoding="utf-8"))
    assert f"data={dataset_hash(version)}" in subset["signature"]  # selected on that version's runs
    rows = load_docs(track="main", subset="subset20")["test"]
    episodes = {e.id: e for e in load_episodes(version, track="all")}
    assert len(rows) == 24
    for row in rows:
        assert row["version"] == "2.0"
        assert json.loads(row["episode_json"]) == json.loads(dumps_episode(episodes[row["episode_id"]]))
    assert {row["dataset_hash"] for row in rows} == {dataset_hash(version)}


def test_default_tasks_load_v2() -> None:
    pytest.importorskip("datasets")
    from lm_eval_memrisk.harness.dataset import load_docs

    rows = load_docs(risk="R4")["test"]
    assert {r["version"] for r in rows} == {"2.0"} and len(rows) == 24


def test_log_readers_verify_against_the_version_a_sample_names() -> None:
    known = known_datasets()  # every packaged version, by dataset hash
    v1 = known[dataset_hash("v1")].episodes
    v2 = known[dataset_hash("v2")].episodes
    assert v1["R1-easy-01"].version == "1.0" and v2["R1-easy-01"].version == "2.0"
    assert v1["R1-easy-01"] != v2["R1-easy-01"]


def test_v3_loads_by_name_but_is_not_the_default() -> None:
    """v3 (built for the later default switch) is loadable by name; v2 stays the default
    until every model table is rerun on v3."""
    from lm_eval_memrisk.generator.build import DEFAULT_VERSION
    from lm_eval_memrisk.loader import DEFAULT_DATASET

    assert DEFAULT_DATASET == "v2" and DEFAULT_VERSION == "v2"
    v3 = load_episodes("v3", track="all")
    assert len(v3) == 144 and {e.version for e in v3} == {"3.0"}
    assert len({dataset_hash(v) for v in ("v1", "v2", "v3")}) == 3
    known = known_datasets()
    assert known[dataset_hash("v3")].episodes["R1-easy-01"].version == "3.0"


def test_generator_rebuilds_v3_byte_for_byte(tmp_path: Path) -> None:
    from lm_eval_memrisk.generator.__main__ import main as generator_cli
    from lm_eval_memrisk.loader import default_dataset_path

    out = tmp_path / "v3.jsonl"
    assert generator_cli(["--out", str(out), "--version", "v3"]) == 0
    assert out.read_bytes() == default_dataset_path("v3").read_bytes()


def test_lm_eval_tasks_load_v3_by_name() -> None:
    pytest.importorskip("datasets")
    from lm_eval_memrisk.harness.dataset import load_docs

    rows = load_docs(risk="R4", episodes="v3")["test"]
    assert {r["version"] for r in rows} == {"3.0"} and len(rows) == 24
    assert {r["dataset_hash"] for r in rows} == {dataset_hash("v3")}
