"""custom_dataset loader for the lm-eval tasks.

Sources, in order of precedence (set with ``--metadata '{"episodes": ...}'`` or
``'{"dataset": ...}'``):

* ``episodes``: a local JSONL episode file (e.g. the fuzzer's output);
* ``dataset``: a Hugging Face Hub dataset id, or a folder written by
  ``memrisk export-hf``, loaded with ``datasets.load_dataset`` (config = r1..r6);
* default: the package data, offline (the default version, v8; a shipped subset loads
  the version it was selected on, see ``SUBSET_VERSIONS``).

The task YAML's metadata chooses the slice: ``risk``, ``tier``, ``track``, ``subset``.
"""

from __future__ import annotations

import os
from typing import Any

import datasets

from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.risks import MAIN_TRACK, tracks
from lm_eval_memrisk.harness.docs import COLUMNS, select, to_rows

#: Shipped subsets -> the packaged dataset version they were selected on (ids of one
#: version must never be mapped onto another version's content).
SUBSET_VERSIONS: dict[str, str] = {"subset20": "v8"}


def _from_hub(dataset: str, risk: str | None, track: str | None) -> list[dict[str, Any]]:
    # an own track (r6) is the config of its one risk; the main track is "all"
    config = (risk or (track if track in tracks() and track != MAIN_TRACK else "all")).lower()
    # a local folder (a `memrisk export-hf` output) is rebuilt on every load: datasets
    # caches it under the folder's name, so a second export into another folder of the
    # same name (say, of another dataset version) was served the first one's episodes
    fresh = {"download_mode": "force_redownload"} if os.path.isdir(dataset) else {}
    try:
        ds = datasets.load_dataset(dataset, name=config, split="test", **fresh)
    except Exception as exc:  # datasets raises many types; name what failed
        raise MemriskError(f"could not load dataset {dataset!r} (config {config!r}): {exc}") from exc
    missing = [c for c in COLUMNS if c not in ds.column_names]
    if missing:
        raise MemriskError(f"dataset {dataset!r} lacks columns {missing}; expected {list(COLUMNS)}")
    # the packaged docs' key order (COLUMNS first): lm-eval's doc_hash is json.dumps(doc)
    # without sorted keys, so an export written in another order (older exports sorted
    # their keys) would log another doc_hash for the same episode
    return [{**{c: r[c] for c in COLUMNS}, **{k: v for k, v in r.items() if k not in COLUMNS}}
            for r in ds]


def _no_episodes_message(
    risk: str | None, tier: str | None, track: str | None, subset: str | None,
    dataset: str | None, episodes: str | None, held: list[str],
) -> str:
    """Which source lacks which slice; for a partial episode file, what it does hold."""
    source = (f"episodes file {episodes}" if episodes else f"dataset {dataset}" if dataset
              else "the package data")  # fmt: skip
    msg = f"{source}: no episodes for risk={risk} tier={tier} track={track} subset={subset}"
    if episodes and held:
        tasks = ",".join(f"memriskbench_{r.lower()}" for r in held)
        msg += (f" (the file holds risks {', '.join(held)} only; a group run needs every risk "
                f"of the group: run --tasks {tasks} instead)")  # fmt: skip
    return msg


def _settings(presentation: str | None, tools: str | None, temperature: float | str | None) -> dict[str, str]:
    """Non-default presentation settings as doc columns (validated early)."""
    from lm_eval_memrisk.episodes.render import DEFAULT_PRESENTATION, make_presentation

    chosen = make_presentation(presentation, tools)  # fail early on a bad value
    out: dict[str, str] = {}
    if chosen.name != DEFAULT_PRESENTATION.name:
        out["presentation"] = chosen.name
    if chosen.tools != DEFAULT_PRESENTATION.tools:
        out["tools"] = chosen.tools
    if temperature is not None and temperature != "":
        out["temperature"] = str(float(str(temperature)))
    return out


def load_docs(
    risk: str | None = None, tier: str | None = None, track: str | None = "main",
    subset: str | None = None, dataset: str | None = None, episodes: str | None = None,
    memory_policy: str | None = None, presentation: str | None = None, tools: str | None = None,
    temperature: float | str | None = None, **_: Any,
) -> datasets.DatasetDict:
    """Docs for one task: a DatasetDict with a single ``test`` split.

    ``memory_policy``, ``presentation`` and ``tools`` (task metadata, ``--metadata`` or
    ``--model_args``) become columns that the task renders and records; a sampling
    ``temperature`` is kept for the signature of repeated-sampling runs.
    """
    held: list[str] = []
    if dataset and not episodes:
        rows = _from_hub(dataset, risk, track)
        rows = [r for r in rows if tier is None or r["tier"] == tier]
        if subset:
            from lm_eval_memrisk.harness.docs import subset_ids

            order = {eid: i for i, eid in enumerate(subset_ids(subset))}
            rows = sorted((r for r in rows if r["episode_id"] in order), key=lambda r: order[r["episode_id"]])
    else:
        from lm_eval_memrisk.episodes.loader import load_episodes

        # a shipped subset was selected on one dataset version: load that version by name
        everything = load_episodes(episodes or SUBSET_VERSIONS.get(subset or ""), track="all")
        from lm_eval_memrisk.episodes.codec import fingerprint

        h = fingerprint(everything)
        held = sorted({e.risk for e in everything})
        chosen = select(everything, risk=risk, tier=tier, track=track, subset=subset)
        rows = to_rows(chosen, dataset_hash=h)
    if memory_policy and memory_policy != "full":
        from lm_eval_memrisk.running.policies import make_policy

        make_policy(memory_policy)  # fail early on a bad spec
        rows = [dict(r, memory_policy=memory_policy) for r in rows]
    settings = _settings(presentation, tools, temperature)
    if settings:
        rows = [dict(r, **settings) for r in rows]
    if not rows:
        raise MemriskError(_no_episodes_message(risk, tier, track, subset, dataset, episodes, held))
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)})
