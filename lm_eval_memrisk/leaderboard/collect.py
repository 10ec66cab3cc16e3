"""Read lm-eval ``--output_path`` folders into one :class:`SystemRun` per model folder.

A RUN_DIR is either the model subfolder itself (it holds ``results_<date>.json``) or
an output folder whose subfolders are model folders; each model folder is a system.
The newest results file wins (its name carries the date); its samples are the
``samples_memriskbench*_<same date>.jsonl`` files beside it. When the per-risk tasks'
files (``samples_memriskbench_r1_<date>.jsonl`` ... ``_r6_``) are there, they alone are
read: tier or subset tasks of the same run would log the same episodes again.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from lm_eval_memrisk.errors import MemriskError, SamplesError
from lm_eval_memrisk.leaderboard.records import MAIN_RISKS, Signature, SystemRun
from lm_eval_memrisk.leaderboard.samples import SampleLine, read_samples

Warn = Callable[[str], None]

#: Sample-file task names of the per-risk tasks (``samples_<task>_<date>.jsonl``).
PER_RISK = re.compile(r"samples_memriskbench_r[1-6]")

#: Where a model file's hash may be recorded in results["config"], in order of preference.
MODEL_HASH_KEYS: tuple[str, ...] = ("gguf_sha256", "model_sha256", "sha256")


def stderr_warn(message: str) -> None:
    print(f"memrisk leaderboard: {message}", file=sys.stderr)


def collect(run_dirs: Sequence[Path], warn: Warn = stderr_warn) -> list[SystemRun]:
    """All systems under ``run_dirs``, checked to share one dataset version."""
    folders = [f for d in run_dirs for f in model_folders(Path(d))]
    seen: dict[Path, Path] = {}
    for folder in folders:
        key = folder.resolve()
        if key in seen:
            raise MemriskError(f"{folder}: the same model folder was given twice")
        seen[key] = folder
    systems = [load_system(f, warn) for f in folders]
    systems = _unique_names(systems)
    check_same_dataset(systems)
    _warn_on_differences(systems, warn)
    return sorted(systems, key=lambda s: s.name)


def model_folders(run_dir: Path) -> list[Path]:
    """The model folders in ``run_dir`` (itself when it holds a results file)."""
    if not run_dir.is_dir():
        raise MemriskError(f"{run_dir}: not a folder (expected an lm-eval --output_path folder)")
    if any(run_dir.glob("results_*.json")):
        return [run_dir]
    subs = sorted(p for p in run_dir.iterdir() if p.is_dir() and any(p.glob("results_*.json")))
    if not subs:
        raise MemriskError(
            f"{run_dir}: no results_*.json here or in its subfolders "
            "(run lm_eval with --output_path and --log_samples)"
        )
    return subs


def load_system(folder: Path, warn: Warn = stderr_warn) -> SystemRun:
    """Read the newest results file of one model folder and its samples."""
    results_file = newest_results(folder, warn)
    results = _read_json(results_file)
    date = results_file.name[len("results_") : -len(".json")]
    samples_files = samples_for(folder, date, warn)
    lines = _read_all(samples_files)
    model = system_name(results, folder)
    first = lines[0]
    signature = Signature(
        model=model,
        model_hash=model_hash(results.get("config")),
        dataset_hash=first.dataset_hash,
        scorer_version=first.scorer_version,
        variant=first.variant,
        memory_policy=first.memory_policy,
        mode=first.mode,
        raw=first.signature,
    )
    episodes = tuple(sorted((ln.outcome for ln in lines), key=lambda e: e.episode_id))
    return SystemRun(model, folder, results_file, samples_files, signature, episodes)


def samples_for(folder: Path, date: str, warn: Warn = stderr_warn) -> tuple[Path, ...]:
    """The run's samples files: the per-risk tasks' when present, else every memriskbench one."""
    every = sorted(folder.glob(f"samples_memriskbench*_{date}.jsonl"))
    if not every:
        raise MemriskError(
            f"{folder}: no samples_memriskbench*_{date}.jsonl beside results_{date}.json "
            "(run lm_eval with --log_samples)"
        )
    per_risk = [f for f in every if PER_RISK.fullmatch(f.name[: -len(f"_{date}.jsonl")])]
    if per_risk and len(per_risk) < len(every):
        skipped = ", ".join(f.name for f in every if f not in per_risk)
        warn(f"{folder}: reading the per-risk samples only (ignoring {skipped})")
    return tuple(per_risk or every)


def newest_results(folder: Path, warn: Warn = stderr_warn) -> Path:
    """The newest ``results_<date>.json`` (ISO dates sort as text); warns when several."""
    files = sorted(folder.glob("results_*.json"))
    if not files:
        raise MemriskError(f"{folder}: no results_*.json")
    if len(files) > 1:
        older = ", ".join(f.name for f in files[:-1])
        warn(
            f"{folder}: {len(files)} results files, using the newest {files[-1].name} (ignoring {older})"
        )
    return files[-1]


def system_name(results: dict[str, Any], folder: Path) -> str:
    """``model_name`` of the results, or ``memrisk-agent:<agent>`` for the reference agents.

    (lm-eval names a model without ``pretrained``/``model`` argument by a hash.)
    """
    config = results.get("config")
    if isinstance(config, dict) and isinstance(config.get("memrisk_agent"), str):
        return f"memrisk-agent:{config['memrisk_agent']}"
    return str(results.get("model_name") or folder.name)


def model_hash(config: Any) -> str | None:
    """The model file hash from results["config"] or its model_args, if recorded."""
    if not isinstance(config, dict):
        return None
    places = [config]
    if isinstance(config.get("model_args"), dict):
        places.append(config["model_args"])
    for place in places:
        for key in MODEL_HASH_KEYS:
            if isinstance(place.get(key), str) and place[key]:
                return str(place[key])
    return None


def check_same_dataset(systems: Sequence[SystemRun]) -> None:
    """Refuse systems scored on different dataset versions (dataset_hash differs)."""
    for other in systems[1:]:
        ref = systems[0]
        if other.signature.dataset_hash != ref.signature.dataset_hash:
            raise MemriskError(
                "systems were run on different dataset versions; refusing to mix them: "
                f"{ref.folder} has dataset {ref.signature.dataset_hash}, "
                f"{other.folder} has dataset {other.signature.dataset_hash}. "
                "Re-run them on the same dataset version."
            )


def read_json_file(path: Path, what: str) -> Any:
    """The JSON value in ``path``; errors name the file (and line) and ``what`` it is."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise MemriskError(f"{path}: cannot read {what}: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise MemriskError(f"{path}:{exc.lineno}: {what} is not valid JSON ({exc.msg})") from exc


def _read_json(path: Path) -> dict[str, Any]:
    data = read_json_file(path, "results file")
    if not isinstance(data, dict):
        raise MemriskError(f"{path}: results file must hold a JSON object")
    return data


def _read_all(files: Iterable[Path]) -> list[SampleLine]:
    """Every line of every samples file; one run's settings and no duplicate episodes."""
    lines: list[SampleLine] = []
    where_seen: dict[str, str] = {}
    for path in files:
        for line in read_samples(path):
            ep = line.outcome
            if ep.episode_id in where_seen:
                raise SamplesError(
                    f"{ep.source}: episode {ep.episode_id} already logged at {where_seen[ep.episode_id]}"
                )
            where_seen[ep.episode_id] = ep.source
            if lines:
                _same_settings(lines[0], line)
            lines.append(line)
    if not lines:
        names = ", ".join(str(f) for f in files)
        raise SamplesError(f"{names}: no sample lines")
    return lines


def _same_settings(first: SampleLine, line: SampleLine) -> None:
    for attr in ("dataset_hash", "scorer_version", "variant", "memory_policy", "mode"):
        a, b = getattr(first, attr), getattr(line, attr)
        if a != b:
            raise SamplesError(
                f"{line.outcome.source}: {attr} {b!r} differs from {a!r} at "
                f"{first.outcome.source}; one model folder must hold one run"
            )


def _unique_names(systems: list[SystemRun]) -> list[SystemRun]:
    """Same model name twice (e.g. two variants): name them by their folder instead,
    or parent/folder when the folder names collide too."""
    counts: dict[str, int] = {}
    for s in systems:
        counts[s.name] = counts.get(s.name, 0) + 1
    folders = [s.folder.name for s in systems]
    out = []
    for s in systems:
        if counts[s.name] > 1:
            unique_folder = folders.count(s.folder.name) == 1 and counts.get(s.folder.name, 0) == 0
            s = replace(s, name=s.folder.name if unique_folder else f"{s.folder.parent.name}/{s.folder.name}")
        out.append(s)
    names = [s.name for s in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise MemriskError(
            f"two systems share the name {dup[0]!r}; give their run folders distinct names"
        )
    return out


def _warn_on_differences(systems: Sequence[SystemRun], warn: Warn) -> None:
    versions = sorted({s.signature.scorer_version for s in systems})
    if len(versions) > 1:
        warn(
            f"systems were scored by different scorer versions ({', '.join(versions)}); see the signatures"
        )
    sets = {frozenset(e.episode_id for e in s.episodes if e.risk in MAIN_RISKS) for s in systems}
    if len(sets) > 1:
        warn(
            "systems were run on different main-track episode sets; each rate is over that system's own episodes"
        )
