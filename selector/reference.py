"""The committed reference set: lm-eval logged samples of real systems, gzipped.

``pack`` copies each system's newest results file and main-track samples files
(gzip with a fixed mtime, so re-packing the same runs gives the same bytes) into
``selector/data/reference/<system>/``; ``unpack`` writes them back as ordinary
lm-eval output folders, which ``memrisk select --reference`` then reads.
"""

from __future__ import annotations

import gzip
import shutil
from collections.abc import Iterable
from pathlib import Path

from lm_eval_memrisk.episodes.errors import SamplesError
from lm_eval_memrisk.episodes.risks import main_risks

REFERENCE_DIR = Path(__file__).resolve().parent / "data" / "reference"


def _main_prefixes() -> tuple[str, ...]:
    """Samples files of the main-track tasks (one per main risk of the registry)."""
    return tuple(f"samples_memriskbench_{r.lower()}_" for r in main_risks())


def _newest(folder: Path, pattern: str) -> Path | None:
    files = sorted(folder.glob(pattern))
    return files[-1] if files else None


def pack(run_dirs: Iterable[Path], dest: Path = REFERENCE_DIR, prune: bool = False) -> list[Path]:
    """Copy each run folder (one system each, named by its folder) into ``dest``.

    With ``prune`` the packed systems become the whole set: every other system folder in
    ``dest`` is removed, after all of them are packed (a system that left the set)."""
    runs = [Path(run) for run in run_dirs]
    if prune and not runs:
        raise SamplesError(f"{dest}: pruning to no systems would empty the reference set")
    found: list[tuple[Path, Path]] = []
    for run in runs:  # every folder checked before anything is written
        results = _newest(run, "results_*.json")
        if results is None:
            raise SamplesError(f"{run}: no results_*.json (not an lm-eval model folder)")
        found.append((run, results))
    written: list[Path] = []
    for run, results in found:
        stamp = results.stem.removeprefix("results_")
        target = dest / run.name
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        shutil.copyfile(results, target / results.name)
        written.append(target / results.name)
        for sample in sorted(run.glob(f"samples_*_{stamp}.jsonl")):
            if not sample.name.startswith(_main_prefixes()):
                continue
            out = target / (sample.name + ".gz")
            with (
                open(sample, "rb") as src,
                open(out, "wb") as raw,
                gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz,
            ):
                shutil.copyfileobj(src, gz)
            written.append(out)
    if prune:
        keep = {run.name for run in runs}
        for stale in sorted(d for d in Path(dest).iterdir() if d.is_dir() and d.name not in keep):
            shutil.rmtree(stale)
    return written


def systems(source: Path = REFERENCE_DIR) -> list[str]:
    return sorted(d.name for d in source.iterdir() if d.is_dir()) if source.is_dir() else []


def unpack(dest: Path, source: Path = REFERENCE_DIR) -> list[Path]:
    """Write the reference set as lm-eval output folders under ``dest``; returns them."""
    names = systems(source)
    if not names:
        raise SamplesError(f"{source}: no reference set here (build it with scripts/build_reference_set.sh)")
    out = []
    for name in names:
        folder = Path(dest) / name
        folder.mkdir(parents=True, exist_ok=True)
        for f in sorted((source / name).iterdir()):
            if f.suffix == ".gz":
                with gzip.open(f, "rb") as src, open(folder / f.stem, "wb") as dst:
                    shutil.copyfileobj(src, dst)
            else:
                shutil.copyfile(f, folder / f.name)
        out.append(folder)
    return out
