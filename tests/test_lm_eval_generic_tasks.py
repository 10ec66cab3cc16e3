"""lm-eval's generic task checks, written for every memriskbench task.

lm-eval's own tests/test_tasks.py runs these checks on the tasks of its registry with
``limit = 10``; here the same lm-eval APIs (download, has_*_docs, should_decontaminate,
doc_to_text, doc_to_target, build_all_requests, construct_requests) are exercised on
each of our tasks, plus the version check: the YAMLs carry the scorer's version.
"""

from __future__ import annotations

import re
from itertools import islice

import pytest

lm_eval = pytest.importorskip("lm_eval")

from lm_eval.tasks import TaskManager  # noqa: E402

from lm_eval_memrisk._autoload import tasks_dir  # noqa: E402
from lm_eval_memrisk.episodes.doc_rows import episode_of  # noqa: E402
from lm_eval_memrisk.scoring.scorer import SCORER_VERSION  # noqa: E402

LIMIT = 10  # lm-eval's own
TASKS = (
    [f"memriskbench_r{i}" for i in range(1, 7)]
    + [f"memriskbench_r{i}_{t}" for i in range(1, 6) for t in ("easy", "medium", "hard")]
    + ["memriskbench_subset20"]
)


@pytest.fixture(scope="module")
def tm() -> TaskManager:
    return TaskManager(include_path=str(tasks_dir()), include_defaults=False)


@pytest.fixture(scope="module")
def tasks(tm):
    return tm.load(TASKS)["tasks"]


def _docs(task):
    return list(islice(task.test_docs() if task.has_test_docs() else task.validation_docs(), LIMIT))


@pytest.mark.parametrize("name", TASKS)
def test_generic_checks(tasks, name):
    task = tasks[name]
    task.download()
    assert task.dataset is not None
    for split in ("training", "validation", "test"):
        has = getattr(task, f"has_{split}_docs")()
        assert has in (True, False)
        if has:
            assert task._config[f"{split}_split"] is not None
    assert task.has_test_docs()
    assert task.should_decontaminate() is False
    docs = _docs(task)
    for doc in docs:
        text = task.doc_to_text(doc)
        assert isinstance(text, str) and text
        if task.config.target_delimiter.isspace():
            assert not text[-1].isspace()
        assert isinstance(task.doc_to_target(doc), str)
    task.build_all_requests(rank=1, limit=LIMIT, world_size=1)
    assert task.instances is not None


@pytest.mark.parametrize("name", TASKS)
def test_construct_requests(tasks, name):
    """Requests for each of the first LIMIT docs (one per decision point in a real run).

    lm-eval's version asserts ``len(requests) == limit``; the per-tier tasks hold 7-9
    episodes, fewer than 10 docs, so there the count is the number of docs
    (tasks/memriskbench/README.md explains why the tiers stay that small).
    """
    task = tasks[name]
    docs = _docs(task)
    requests = [task.construct_requests(doc=doc, ctx=task.doc_to_text(doc)) for doc in docs]
    n_docs = len(list(task.test_docs()))
    assert len(requests) == min(LIMIT, n_docs)
    if "_easy" in name or "_medium" in name or "_hard" in name:
        assert 7 <= n_docs < LIMIT
    else:
        assert len(requests) == LIMIT
    for doc, reqs in zip(docs, requests):
        # one context string -> one request; build_all_requests passes one per decision point
        assert len(reqs) == 1 and reqs[0].request_type == "generate_until" and reqs[0].doc == doc
    task.build_all_requests(rank=0, limit=LIMIT, world_size=1)
    assert len(task.instances) == sum(len(episode_of(d).decision_points) for d in docs)


def test_task_versions_equal_the_scorer_version(tasks):
    """Every YAML's metadata.version is the scorer version, as loaded and as written."""
    for name, task in tasks.items():
        assert str(task.config.metadata["version"]) == SCORER_VERSION, name
    yamls = sorted((tasks_dir() / "memriskbench").glob("*.yaml"))
    assert len(yamls) == len(TASKS) + 1  # + the group
    for path in yamls:
        versions = re.findall(r"^\s+version: \"?([^\s\"]+)\"?$", path.read_text(encoding="utf-8"), re.MULTILINE)
        assert versions == [SCORER_VERSION], path.name
