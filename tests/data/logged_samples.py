"""Real sample lines for the hand-made run-folder fixtures (tests/data/*/make_*.py).

Each fixture family runs on a small episode file of its own (:func:`write_dataset`: a
few episodes copied from the packaged dataset v1), and its runs are complete runs of
that file's ``memriskbench_rN`` tasks: every doc of the task, numbered as lm-eval numbers
them (:func:`doc_ids`).  A reader given the file (``--episodes FILE``) ranks them; a
reader without it refuses them as an unknown dataset.

Each line is what lm-eval's ``--log_samples`` writes for one episode of that
dataset answered by a reference agent: the doc row, the replies and the metrics of
:func:`lm_eval_memrisk.scoring.sample_record.sample_metrics` (so a reader that recomputes the
scores from the replies agrees with the stored ones).  The rendered prompts are left
out of the stored trace to keep the fixtures small; nothing reads them.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from lm_eval_memrisk.episodes.codec import dumps_episode
from lm_eval_memrisk.episodes.doc_rows import to_rows
from lm_eval_memrisk.episodes.loader import dataset_hash, load_episodes
from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.running.agent_registry import get_agent
from lm_eval_memrisk.running.interactive import agent_generate, run_interactive
from lm_eval_memrisk.running.policies import make_policy
from lm_eval_memrisk.running.runner import run_episode, trace_from_replies
from lm_eval_memrisk.scoring.sample_record import sample_metrics

#: An agent that fails every episode of the risk (README, "Reference agents").
FAILS = {"R1": "stale", "R2": "stale", "R3": "leaky", "R4": "stale", "R5": "constraint-blind", "R6": "leaky"}
#: Fails the default scoring but passes the safety-aware one (R3 and R5 only).
REFUSES = "refuser"


def packaged() -> tuple[dict[str, Episode], str]:
    """The packaged episodes by id, and the dataset hash."""
    return {e.id: e for e in load_episodes("v1", track="all")}, dataset_hash("v1")


def write_dataset(path: Path, ids: Iterable[str], edit: Callable[[dict[str, Any]], None] | None = None) -> None:
    """Write the packaged episodes ``ids`` (in the packaged file's order) to ``path`` as an
    episode file; ``edit`` may change an episode's JSON object (another dataset hash)."""
    wanted = set(ids)
    episodes, _ = packaged()
    missing = sorted(wanted - set(episodes))
    assert not missing, missing
    lines = []
    for e in episodes.values():
        if e.id in wanted:
            obj = json.loads(dumps_episode(e))
            if edit is not None:
                edit(obj)
            lines.append(json.dumps(obj, ensure_ascii=False, separators=(",", ":")))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@functools.lru_cache(maxsize=4)
def dataset(path: Path) -> tuple[dict[str, Episode], str]:
    """The episodes of an episode file by id (in file order), and its dataset hash."""
    return {e.id: e for e in load_episodes(path, track="all")}, dataset_hash(path)


def doc_ids(episodes: dict[str, Episode], risk: str) -> dict[str, int]:
    """Episode id -> lm-eval's doc_id in the ``memriskbench_<risk>`` task of the dataset
    (its episodes of the risk, numbered from 0 in file order)."""
    return {i: n for n, i in enumerate(e.id for e in episodes.values() if e.risk == risk)}


def agent_for(risk: str, passed: bool, safe: bool) -> str:
    if passed:
        return "oracle"
    return REFUSES if safe else FAILS[risk]


def logged_sample(
    episode: Episode, agent: str, data_hash: str, doc_id: int, mode: str = "scripted",
    edit: Callable[[str], str] | None = None, policy: str = "full",
) -> dict[str, Any]:
    """One samples-file object for ``episode`` answered by the reference ``agent``
    (scripted replies passed through ``edit`` when given)."""
    if mode == "interactive":
        generate = agent_generate(get_agent(agent))
        trace = run_interactive([episode], generate, agent, policy=make_policy(policy), progress=False)[0]
    else:
        trace = run_episode(episode, get_agent(agent))
        if edit is not None:
            replies = {d.decision_id: edit(d.raw_reply) for d in trace.decisions}
            trace = trace_from_replies(episode, replies, agent)
    trace = replace(trace, decisions=tuple(replace(d, messages=()) for d in trace.decisions))
    metrics = sample_metrics(episode, trace, data_hash)
    replies = [[d.raw_reply] for d in trace.decisions]
    return {
        "doc_id": doc_id, "doc": to_rows([episode], data_hash)[0], "target": "", "resps": replies,
        "filtered_resps": [r[0] for r in replies], "filter": "none", "metrics": sorted(metrics), **metrics,
    }
