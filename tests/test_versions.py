"""Dataset versions: v8 is the default, v1-v7 stay loadable by name; a shipped subset
loads the version it was selected on (see SUBSET_VERSIONS)."""

from __future__ import annotations

import json

import pytest

from lm_eval_memrisk.episodes.codec import dumps_episode
from lm_eval_memrisk.episodes.loader import dataset_hash, load_episodes
from lm_eval_memrisk.logs.runs import known_datasets


def test_subset20_loads_the_version_it_was_selected_on() -> None:
    pytest.importorskip("datasets")
    from lm_eval_memrisk.harness.dataset import SUBSET_VERSIONS, load_docs
    from lm_eval_memrisk.harness.docs import SUBSET_DIR

    version = SUBSET_VERSIONS["subset20"]
    assert version in ("v4", "v5", "v6", "v7", "v8")
    subset = json.loads((SUBSET_DIR / "subset20.json").read_text(encoding="utf-8"))
    assert f"data={dataset_hash(version)}" in subset["signature"]  # selected on that version's runs
    rows = load_docs(track="main", subset="subset20")["test"]
    episodes = {e.id: e for e in load_episodes(version, track="all")}
    assert len(rows) == 24
    for row in rows:
        assert row["version"] == episodes[row["episode_id"]].version
        assert json.loads(row["episode_json"]) == json.loads(dumps_episode(episodes[row["episode_id"]]))
    assert {row["dataset_hash"] for row in rows} == {dataset_hash(version)}


def test_default_tasks_load_v8() -> None:
    pytest.importorskip("datasets")
    from lm_eval_memrisk.harness.dataset import load_docs

    rows = load_docs(risk="R4")["test"]
    assert {r["version"] for r in rows} == {"8.0"} and len(rows) == 24
    assert {r["dataset_hash"] for r in rows} == {dataset_hash("v8")}


def test_log_readers_verify_against_the_version_a_sample_names() -> None:
    known = known_datasets()  # every packaged version, by dataset hash
    v1 = known[dataset_hash("v1")].episodes
    v2 = known[dataset_hash("v2")].episodes
    assert v1["R1-easy-01"].version == "1.0" and v2["R1-easy-01"].version == "2.0"
    assert v1["R1-easy-01"] != v2["R1-easy-01"]


def test_v8_is_the_default_and_v2_v7_load_by_name() -> None:
    """v8 is what a plain load, the generator and the tasks use; v7, v6, v5, v4, v3 and v2
    (the previous defaults, behind every result on them) still load by name."""
    from lm_eval_memrisk.episodes.loader import DEFAULT_DATASET
    from lm_eval_memrisk.generator.build import DEFAULT_VERSION

    assert DEFAULT_DATASET == "v8" and DEFAULT_VERSION == "v8"
    assert load_episodes() == load_episodes("v8")
    for name, field in (("v2", "2.0"), ("v3", "3.0"), ("v4", "4.0"), ("v5", "5.0"), ("v6", "6.0"), ("v7", "7.0"), ("v8", "8.0")):
        episodes = load_episodes(name, track="all")
        assert len(episodes) == 144 and {e.version for e in episodes} == {field}
    assert len({dataset_hash(v) for v in ("v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8")}) == 8
    known = known_datasets()
    for name, field in (("v3", "3.0"), ("v4", "4.0"), ("v5", "5.0"), ("v6", "6.0"), ("v7", "7.0")):
        assert known[dataset_hash(name)].episodes["R1-easy-01"].version == field


def test_lm_eval_tasks_load_v3_by_name() -> None:
    pytest.importorskip("datasets")
    from lm_eval_memrisk.harness.dataset import load_docs

    rows = load_docs(risk="R4", episodes="v3")["test"]
    assert {r["version"] for r in rows} == {"3.0"} and len(rows) == 24
    assert {r["dataset_hash"] for r in rows} == {dataset_hash("v3")}
