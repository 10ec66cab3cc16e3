"""Dataset versions: v2 is the default, v1 stays loadable by name and pinned where the
shipped artefacts (subset20, the reference set) were built on it."""

from __future__ import annotations

import json

import pytest

from lm_eval_memrisk.codec import dumps_episode
from lm_eval_memrisk.loader import dataset_hash, load_episodes
from lm_eval_memrisk.runs import known_datasets


def test_subset20_loads_v1_episodes_by_id() -> None:
    pytest.importorskip("datasets")
    from lm_eval_memrisk.harness.dataset import load_docs

    rows = load_docs(track="main", subset="subset20")["test"]
    v1 = {e.id: e for e in load_episodes("v1", track="all")}
    assert len(rows) == 24
    for row in rows:
        assert row["version"] == "1.0"
        assert json.loads(row["episode_json"]) == json.loads(dumps_episode(v1[row["episode_id"]]))
    assert {row["dataset_hash"] for row in rows} == {dataset_hash("v1")}


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
