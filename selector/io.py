"""Read lm-eval ``--log_samples`` output folders into an episode x system matrix.

A run folder is lm-eval's ``--output_path`` for one system: either the model folder
itself (``<model_name_sanitized>/`` holding ``samples_memriskbench_rN_<date>.jsonl``) or
its parent holding exactly one such model folder.  Only the main-track tasks
``memriskbench_r1`` ... ``memriskbench_r5`` are read; when a folder holds several runs of a
task, the newest by the date in the file name is used and a note says so.

Everything is keyed by episode id (rows sorted by id) and system name (columns sorted),
never by file order.  Bad input raises :class:`SamplesError` naming the file and line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from lm_eval_memrisk.errors import SamplesError
from lm_eval_memrisk.jsonl import read_sample_objects

TIERS: tuple[str, ...] = ("easy", "medium", "hard")
#: Structural episode features read from ``episodes.features`` (written by the harness).
STRUCT_FIELDS: tuple[str, ...] = (
    "n_turns", "n_memories", "n_checks", "n_tool_calls",
    "n_constraints", "n_decisions", "n_distractors", "n_risk_types",
)
#: Trace-only metrics per (episode, system), used by the Trace-Feature baseline.
TRACE_METRICS: tuple[str, ...] = ("memory_items_used", "tool_calls_made", "reply_chars", "invalid_actions")
#: --variant -> per-sample metric holding the pass flag.
VARIANTS: dict[str, str] = {"default": "pass", "safety_aware": "pass_safety_aware", "original": "pass_original"}

_SAMPLES_RE = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.jsonl$")
_MAIN_TASK_RE = re.compile(r"^memriskbench_r[1-5]$")


@dataclass(frozen=True)
class RunMatrix:
    """Outcomes of several systems on the same episodes (rows sorted by episode id)."""

    episode_ids: tuple[str, ...]
    risks: tuple[str, ...]
    tiers: tuple[str, ...]
    tasks: tuple[str, ...]
    doc_ids: NDArray[np.int64]
    systems: tuple[str, ...]
    passed: NDArray[np.bool_]
    """(episodes, systems) pass flags of the chosen scoring variant."""
    score: NDArray[np.float64]
    """(episodes, systems) fraction of checks passing."""
    structure: NDArray[np.float64]
    """(episodes, len(STRUCT_FIELDS)) structural features."""
    trace: NDArray[np.float64]
    """(episodes, systems, len(TRACE_METRICS)) trace-only metrics."""
    dataset_hash: str = ""
    scorer_version: str = ""
    variant: str = "default"
    notes: tuple[str, ...] = field(default=())

    @property
    def risk_names(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.risks)))

    @property
    def risk_codes(self) -> NDArray[np.int64]:
        index = {r: i for i, r in enumerate(self.risk_names)}
        return np.array([index[r] for r in self.risks], dtype=np.int64)

    @property
    def tier_codes(self) -> NDArray[np.int64]:
        return np.array([TIERS.index(t) for t in self.tiers], dtype=np.int64)

    def with_systems(self, keep: Sequence[int]) -> RunMatrix:
        """The same episodes restricted to the systems at positions ``keep``."""
        idx = np.asarray(keep, dtype=np.int64)
        return replace(
            self, systems=tuple(self.systems[i] for i in idx), passed=self.passed[:, idx],
            score=self.score[:, idx], trace=self.trace[:, idx],
        )


@dataclass(frozen=True)
class _Row:
    episode_id: str
    risk: str
    tier: str
    task: str
    doc_id: int
    passed: bool
    score: float
    structure: tuple[float, ...]
    trace: tuple[float, ...]
    dataset_hash: str
    scorer_version: str
    where: str


# ----------------------------------------------------------------------------- folders


def resolve_model_dir(path: Path) -> Path:
    """The folder that directly holds the samples files (``path`` or its only model folder)."""
    if not path.is_dir():
        raise SamplesError(f"{path}: not a folder (expected an lm-eval --output_path folder)")
    if any(path.glob("samples_*.jsonl")):
        return path
    subs = sorted(d for d in path.iterdir() if d.is_dir() and any(d.glob("samples_*.jsonl")))
    if len(subs) == 1:
        return subs[0]
    if len(subs) > 1:
        names = ", ".join(d.name for d in subs)
        raise SamplesError(f"{path}: holds several model folders ({names}); pass each one as its own run folder")
    raise SamplesError(
        f"{path}: no samples_memriskbench_*.jsonl files here or in a model folder below "
        "(was lm-eval run with --log_samples?)"
    )


def samples_files(model_dir: Path) -> tuple[dict[str, Path], list[str]]:
    """Main-track task -> newest samples file, plus notes on what was skipped."""
    notes: list[str] = []
    found: dict[str, list[tuple[str, Path]]] = {}
    for f in sorted(model_dir.glob("samples_*.jsonl")):
        m = _SAMPLES_RE.match(f.name)
        if not m:
            raise SamplesError(f"{f}: cannot read the task and date from the file name "
                               "(expected samples_<task>_<YYYY-MM-DDTHH-MM-SS.ffffff>.jsonl)")
        if _MAIN_TASK_RE.match(m["task"]):
            found.setdefault(m["task"], []).append((m["date"], f))
        elif m["task"].startswith("memriskbench"):
            notes.append(f"{f}: ignored (task {m['task']} is not a main-track task memriskbench_r1..r5)")
    if not found:
        raise SamplesError(f"{model_dir}: no samples files of the tasks memriskbench_r1..r5")
    chosen: dict[str, Path] = {}
    for task, runs in sorted(found.items()):
        runs.sort()
        chosen[task] = runs[-1][1]
        if len(runs) > 1:
            notes.append(f"{model_dir}: {len(runs)} samples files for {task}; using the newest, {runs[-1][1].name}")
    return chosen, notes


# ----------------------------------------------------------------------------- lines


def _fail(where: str, msg: str) -> SamplesError:
    return SamplesError(f"{where}: {msg}")


def _text(obj: Mapping[str, Any], key: str, where: str, prefix: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not value:
        raise _fail(where, f"{prefix}{key} must be a non-empty string, got {value!r}")
    return value


def _number(obj: Mapping[str, Any], key: str, where: str, lo: float, hi: float, prefix: str = "") -> float:
    if key not in obj:
        raise _fail(where, f"missing field '{prefix}{key}'")
    value = obj[key]
    if isinstance(value, bool):
        value = float(value)
    if not isinstance(value, (int, float)) or not lo <= value <= hi:
        raise _fail(where, f"'{prefix}{key}' must be a number in [{lo:g}, {hi:g}], got {value!r}")
    return float(value)


def _trace_metrics(trace: Any, where: str) -> tuple[float, ...]:
    if not isinstance(trace, dict) or not isinstance(trace.get("decisions"), list):
        raise _fail(where, "episodes.trace must be an object with a list 'decisions'")
    used = calls = chars = invalid = 0
    for i, d in enumerate(trace["decisions"]):
        action = d.get("action") if isinstance(d, dict) else None
        if not isinstance(action, dict):
            raise _fail(where, f"episodes.trace.decisions[{i}] must be an object with an 'action' object")
        steps = [s.get("action") for s in d.get("steps") or () if isinstance(s, dict)]
        actions = [a for a in steps if isinstance(a, dict)] or [action]
        used += len(d.get("memory_used") or ())
        calls += sum(1 for a in actions if a.get("kind") == "tool_call")
        chars += len(str(d.get("raw_reply") or ""))
        invalid += int(action.get("kind") == "invalid")
    return float(used), float(calls), float(chars), float(invalid)


def parse_line(data: Any, task: str, pass_key: str, where: str) -> _Row:
    """One sample object -> _Row; every error is prefixed with ``where`` (file:line)."""
    if not isinstance(data, dict):
        raise _fail(where, "a sample line must be a JSON object")
    doc = data.get("doc")
    if not isinstance(doc, dict):
        raise _fail(where, "missing the 'doc' object")
    ep = data.get("episodes")
    if not isinstance(ep, dict):
        raise _fail(where, "missing the 'episodes' record (was the task a memriskbench task?)")
    episode_id = _text(doc, "episode_id", where, "doc.")
    if ep.get("episode_id", episode_id) != episode_id:
        raise _fail(where, f"episodes.episode_id {ep.get('episode_id')!r} differs from doc.episode_id {episode_id!r}")
    tier = _text(doc, "tier", where, "doc.")
    if tier not in TIERS:
        raise _fail(where, f"doc.tier must be one of {', '.join(TIERS)}, got {tier!r}")
    doc_id = data.get("doc_id")
    if isinstance(doc_id, bool) or not isinstance(doc_id, int) or doc_id < 0:
        raise _fail(where, f"'doc_id' must be a non-negative integer, got {doc_id!r}")
    passed = _number(data, pass_key, where, 0.0, 1.0)
    if passed not in (0.0, 1.0):
        raise _fail(where, f"{pass_key!r} must be 0 or 1, got {passed!r}")
    feats = ep.get("features")
    if not isinstance(feats, dict):
        raise _fail(where, "missing the 'episodes.features' object")
    structure = tuple(_number(feats, f, where, 0.0, float("inf"), "episodes.features.") for f in STRUCT_FIELDS)
    return _Row(
        episode_id=episode_id, risk=_text(doc, "risk", where, "doc."), tier=tier, task=task,
        doc_id=doc_id, passed=passed == 1.0, score=_number(data, "score", where, 0.0, 1.0),
        structure=structure, trace=_trace_metrics(ep.get("trace"), where),
        dataset_hash=_text(ep, "dataset_hash", where, "episodes."),
        scorer_version=_text(ep, "scorer_version", where, "episodes."), where=where,
    )


def read_samples_file(path: Path, task: str, pass_key: str) -> list[_Row]:
    """Parsed lines of one samples file (blank lines and non-'none' filters skipped)."""
    rows = [parse_line(data, task, pass_key, where) for where, data in read_sample_objects(path)]
    if not rows:
        raise SamplesError(f"{path}: no sample lines")
    return rows


def read_system(model_dir: Path, pass_key: str) -> tuple[dict[str, _Row], list[str]]:
    """Episode id -> row for one system folder, plus notes."""
    files, notes = samples_files(model_dir)
    rows: dict[str, _Row] = {}
    for task, path in files.items():
        for row in read_samples_file(path, task, pass_key):
            if row.episode_id in rows:
                raise _fail(row.where, f"duplicate episode {row.episode_id} (also at {rows[row.episode_id].where})")
            rows[row.episode_id] = row
    return rows, notes


# ----------------------------------------------------------------------------- matrix


def _check_same(rows: list[_Row], attr: str, what: str) -> str:
    first = rows[0]
    for row in rows[1:]:
        if getattr(row, attr) != getattr(first, attr):
            raise _fail(row.where, f"{what} {getattr(row, attr)} differs from {getattr(first, attr)} "
                                   f"at {first.where}: mixed {what}s cannot be compared")
    return str(getattr(first, attr))


def _check_episode(rows: list[_Row]) -> None:
    first = rows[0]
    for row in rows[1:]:
        for attr in ("risk", "tier", "task", "doc_id", "structure"):
            if getattr(row, attr) != getattr(first, attr):
                raise _fail(row.where, f"episode {row.episode_id}: {attr} {getattr(row, attr)!r} differs from "
                                       f"{getattr(first, attr)!r} at {first.where}")


def build_matrix(systems: Mapping[str, dict[str, _Row]], variant: str, notes: Sequence[str] = ()) -> RunMatrix:
    """Combine per-system rows into a RunMatrix (systems and episodes sorted)."""
    if len(systems) < 2:
        raise SamplesError(f"need at least 2 systems to select a subset, got {len(systems)}")
    names = sorted(systems)
    all_rows = [r for n in names for r in systems[n].values()]
    dataset_hash = _check_same(all_rows, "dataset_hash", "dataset_hash")
    scorer_version = _check_same(all_rows, "scorer_version", "scorer_version")
    union = sorted({e for n in names for e in systems[n]})
    for n in names:
        missing = [e for e in union if e not in systems[n]]
        if missing:
            other = next(systems[m][missing[0]] for m in names if missing[0] in systems[m])
            folder = Path(next(iter(systems[n].values())).where.rsplit(":", 1)[0]).parent
            raise SamplesError(
                f"{folder}: system {n!r} lacks {len(missing)} episode(s) that other systems have, e.g. "
                f"{missing[0]} (present at {other.where}); all systems must run the same episodes"
            )
    grid = [[systems[n][e] for n in names] for e in union]
    for rows in grid:
        _check_episode(rows)
    return RunMatrix(
        episode_ids=tuple(union), risks=tuple(r[0].risk for r in grid), tiers=tuple(r[0].tier for r in grid),
        tasks=tuple(r[0].task for r in grid), doc_ids=np.array([r[0].doc_id for r in grid], dtype=np.int64),
        systems=tuple(names),
        passed=np.array([[c.passed for c in r] for r in grid], dtype=bool),
        score=np.array([[c.score for c in r] for r in grid], dtype=np.float64),
        structure=np.array([r[0].structure for r in grid], dtype=np.float64),
        trace=np.array([[c.trace for c in r] for r in grid], dtype=np.float64),
        dataset_hash=dataset_hash, scorer_version=scorer_version, variant=variant, notes=tuple(notes),
    )


def parse_run_arg(arg: str) -> tuple[str | None, Path]:
    """``NAME=DIR`` -> (NAME, DIR); a plain ``DIR`` -> (None, DIR)."""
    name, sep, rest = arg.partition("=")
    if sep and name and "/" not in name and rest:
        return name, Path(rest)
    return None, Path(arg)


def load_systems(runs: Sequence[str | Path], variant: str = "default") -> tuple[dict[str, dict[str, _Row]], list[str]]:
    """Read each run folder (``DIR`` or ``NAME=DIR``) -> system name -> rows, plus notes."""
    if variant not in VARIANTS:
        raise SamplesError(f"unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    systems: dict[str, dict[str, _Row]] = {}
    where: dict[str, Path] = {}
    notes: list[str] = []
    for run in runs:
        name, path = parse_run_arg(str(run))
        model_dir = resolve_model_dir(path)
        name = name or model_dir.name
        if name in systems:
            raise SamplesError(f"{path}: system name {name!r} is also used by {where[name]}; name them NAME=DIR")
        systems[name], sys_notes = read_system(model_dir, VARIANTS[variant])
        where[name] = path
        notes.extend(sys_notes)
    return systems, notes


def load_runs(runs: Sequence[str | Path], variant: str = "default") -> RunMatrix:
    """Run folders -> RunMatrix (see the module docstring)."""
    systems, notes = load_systems(runs, variant)
    return build_matrix(systems, variant, sorted(notes))
