"""Where ``memrisk run`` writes: resumable traces plus lm-eval-compatible files.

``manifest.json`` records the run's settings (system, mode, memory policy,
max_steps, dataset hash, ...) before the first trace; ``--resume`` refuses a folder
whose manifest differs, so a resumed run never mixes traces of two settings.
``traces.jsonl`` is appended one finished episode at a time (flushed and synced),
so a run killed at any point loses at most the episode in flight.  ``--resume``
drops a torn last line, skips the episodes already there and appends the rest.
Lines are written with :func:`jsonl.json_line`, so untrusted model text (lone
surrogates included) never stops a write.
When the run completes, ``scores.jsonl``, ``attribution.jsonl`` (which failures a
memory policy caused, :mod:`lm_eval_memrisk.scoring.attribution`) and an lm-eval style folder
(``<name>/results_<date>.json`` and ``<name>/samples_memriskbench_<task>_<date>.jsonl``)
are written from the traces, in dataset order, so rescore, select, stats and the
leaderboard read these runs like lm-eval's own.
"""

from __future__ import annotations

import datetime as _dt
import errno
import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lm_eval_memrisk.episodes.doc_rows import to_rows
from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.jsonl import json_line, numbered_lines
from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.episodes.trace import Trace
from lm_eval_memrisk.scoring.sample_record import SCORE_METRICS, sample_metrics
from lm_eval_memrisk.scoring.scorer import ScoreResult

MANIFEST = "manifest.json"


def task_name(episode: Episode) -> str:
    """The lm-eval task that logs ``episode``: ``memriskbench_r1`` ... ``memriskbench_r6``."""
    return f"memriskbench_{episode.risk.lower()}"


#: The characters ``lm_eval.utils.sanitize_model_name`` replaces (runs of them become ``__``).
LM_EVAL_FOLDER_CHARS = re.compile(r"[\"<>:/|\\?*\[\]]+")


def model_folder(out: Path, name: str) -> Path:
    """``out/<name>``, the name sanitised as ``memrisk eval`` (lm-eval) sanitises it.

    lm-eval's ``sanitize_model_name`` turns every ``/`` and ``\\`` into ``__``, so
    ``model=../../x`` stays a folder inside ``out``; a name that still leaves ``out``
    (``..``) is refused.  :data:`LM_EVAL_FOLDER_CHARS` is lm-eval's own pattern (only
    harness/ imports lm-eval; tests/test_architecture.py keeps the two equal).
    """
    folder = LM_EVAL_FOLDER_CHARS.sub("__", name)
    if folder in ("", ".", ".."):
        raise MemriskError(f"system name {name!r} cannot name a folder inside {out}")
    return out / folder


def parse_traces(text: str, source: str) -> Iterator[tuple[int, Trace]]:
    """``(line number, Trace)`` for each non-blank line of a traces.jsonl text.

    A line that is not a trace raises :class:`MemriskError` naming ``source`` and the line.
    """
    for lineno, line in numbered_lines(text):
        try:
            trace = Trace.from_dict(json.loads(line))
        except (ValueError, KeyError, TypeError) as exc:
            raise MemriskError(
                f"{source}:{lineno}: not a trace ({type(exc).__name__}: {exc})"
            ) from exc
        yield lineno, trace


#: The errors of a full disk or an exhausted quota.
DISK_FULL = (errno.ENOSPC, errno.EDQUOT)


class RunStore:
    """The output folder of one run (see the module docstring).

    A full disk while writing (``ENOSPC``, ``EDQUOT``) is a :class:`MemriskError` naming
    the folder and saying to rerun with ``--resume``; the traces written so far are kept,
    and the lm-eval style files of a failed finish are removed (never half a result).
    """

    def __init__(self, out_dir: Path, resume: bool = False):
        self.out = Path(out_dir)
        self.traces_path = self.out / "traces.jsonl"
        self.out.mkdir(parents=True, exist_ok=True)
        if self.traces_path.exists() and not resume:
            raise MemriskError(
                f"{self.traces_path} already exists: pass --resume to continue that run, "
                f"or choose another --out (nothing is overwritten)"
            )
        self.resume = resume
        self.lines: dict[str, int] = {}
        """Line of ``traces.jsonl`` each finished episode was read from (on resume)."""
        self.finished: dict[str, Trace] = self._load() if resume else {}

    def start(self, manifest: dict[str, Any]) -> None:
        """Write ``manifest.json``; when resuming, refuse a folder whose manifest differs
        or whose traces were written by another system than ``manifest["system"]``."""
        path = self.out / MANIFEST
        if self.resume and path.exists():
            try:
                old = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                raise MemriskError(f"{path}: cannot read the run manifest ({exc})") from exc
            new = json.loads(json.dumps(manifest))  # the JSON form, as stored
            diffs = [
                f"{key}: {old.get(key)!r} in the folder, {new.get(key)!r} now"
                for key in sorted(set(old) | set(new), key=str) if old.get(key) != new.get(key)
            ]
            if diffs:
                raise MemriskError(
                    f"--resume: {self.out} holds a run with other settings ({'; '.join(diffs)}); "
                    f"resume with the settings of {path}, or choose another --out"
                )
            self._check_agents(str(manifest.get("system")))
            return
        if self.resume and self.finished:
            raise MemriskError(
                f"--resume: {self.out} has traces but no {MANIFEST} (written by an older memrisk), "
                f"so its settings cannot be checked; choose another --out"
            )
        with self._writing(MANIFEST):
            path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")

    @contextmanager
    def _writing(self, what: str) -> Iterator[None]:
        try:
            yield
        except OSError as exc:
            if exc.errno not in DISK_FULL:
                raise
            raise MemriskError(
                f"{self.out}: no space left while writing {what} ({exc.strerror or exc}); "
                f"the finished episodes are kept: free some space, then rerun the same command "
                f"with --resume --out {self.out}"
            ) from None

    def _check_agents(self, system: str) -> None:
        for episode_id, trace in self.finished.items():
            if trace.agent != system:
                raise MemriskError(
                    f"--resume: {self.traces_path}:{self.lines.get(episode_id)}: episode {episode_id} "
                    f"was run by {trace.agent!r}, not {system!r}; its traces cannot be published under "
                    f"{system!r}: choose another --out"
                )

    def _load(self) -> dict[str, Trace]:
        if not self.traces_path.exists():
            return {}
        raw = self.traces_path.read_bytes()
        keep = raw[: raw.rfind(b"\n") + 1]  # a torn last line is dropped
        if len(keep) != len(raw):
            self.traces_path.write_bytes(keep)
        finished: dict[str, Trace] = {}
        for lineno, trace in parse_traces(keep.decode("utf-8"), str(self.traces_path)):
            finished[trace.episode_id] = trace
            self.lines[trace.episode_id] = lineno
        return finished

    def append(self, trace: Trace) -> None:
        with self._writing(self.traces_path.name), open(self.traces_path, "a", encoding="utf-8") as fh:
            fh.write(json_line(trace.to_dict()) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        self.finished[trace.episode_id] = trace

    def finalize(
        self, episodes: Sequence[Episode], results: Sequence[ScoreResult],
        attribution: Sequence[dict[str, Any]], dataset_hash: str, name: str, config: dict[str, Any],
        generation: Mapping[str, Any] | None = None,
    ) -> None:
        """Write scores.jsonl, attribution.jsonl and the lm-eval style folder (each sample
        signed with the run's ``generation`` settings, :func:`~lm_eval_memrisk.running.generation.generation_settings`)."""
        missing = [e.id for e in episodes if e.id not in self.finished]
        if missing:
            raise MemriskError(f"run incomplete: {len(missing)} episodes have no trace (e.g. {missing[0]})")
        written: list[Path] = []
        with self._writing("the run's scores and lm-eval style files"):
            try:
                for filename, rows in (("scores.jsonl", [r.to_dict() for r in results]),
                                       ("attribution.jsonl", list(attribution))):
                    written.append(self.out / filename)
                    with open(self.out / filename, "w", encoding="utf-8") as fh:
                        fh.writelines(json_line(row) + "\n" for row in rows)
                self._write_lm_eval_folder(episodes, dataset_hash, name, config, written, generation)
            except BaseException:
                for path in written:  # a failed finish leaves no partial result behind
                    path.unlink(missing_ok=True)
                raise

    def _write_lm_eval_folder(
        self, episodes: Sequence[Episode], dataset_hash: str, name: str, config: dict[str, Any],
        written: list[Path], generation: Mapping[str, Any] | None = None,
    ) -> None:
        folder = model_folder(self.out, name)
        folder.mkdir(parents=True, exist_ok=True)
        stamp = _dt.datetime.now().isoformat().replace(":", "-")
        by_task: dict[str, list[dict[str, Any]]] = {}
        for ep in episodes:
            by_task.setdefault(task_name(ep), []).append(self._sample(
                ep, dataset_hash, len(by_task.get(task_name(ep), [])), generation))
        results: dict[str, Any] = {}
        for task, samples in sorted(by_task.items()):
            written.append(folder / f"samples_{task}_{stamp}.jsonl")
            with open(written[-1], "w", encoding="utf-8") as fh:
                fh.writelines(json_line(s) + "\n" for s in samples)
            n = len(samples)
            results[task] = {"name": task, "alias": task, "sample_len": n}
            for metric in SCORE_METRICS:
                results[task][f"{metric},none"] = sum(s[metric] for s in samples) / n
        payload = {"results": results, "config": config, "model_name": name, "date": stamp}
        written.append(folder / f"results_{stamp}.json")
        written[-1].write_text(json.dumps(payload, indent=2, sort_keys=True), encoding="utf-8")

    def _sample(
        self, ep: Episode, dataset_hash: str, doc_id: int, generation: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        trace = self.finished[ep.id]
        metrics = sample_metrics(ep, trace, dataset_hash, generation=generation)
        replies = [[d.raw_reply] for d in trace.decisions]
        return {
            "doc_id": doc_id, "doc": to_rows([ep], dataset_hash)[0], "filter": "none",
            "resps": replies, "filtered_resps": [r[0] for r in replies],
            "metrics": sorted(metrics), **metrics,
        }
