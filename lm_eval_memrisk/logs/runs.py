"""The one reader of run folders (lm-eval ``--output_path`` and ``memrisk run --out``).

Every command that reads logged samples (``runs``, ``select``, ``stats``, ``report``,
``leaderboard``, ``rescore``) reads them here, by one rule:

* A run folder is a *model folder* (it holds ``samples_memriskbench*_<date>.jsonl``) or
  a folder whose subfolders are model folders (each one system).  ``NAME=DIR`` names
  the system; otherwise the name comes from the run's own ``model_args`` (``model=``,
  ``pretrained=``, ``agent=``, ``base=``), never from lm-eval's generated folder id.
* Per task, the newest *complete* samples file counts: it ends with a newline (a torn
  file is skipped with a note) and it holds every doc of its task (every episode of the
  task's slice of the dataset, :func:`task_episode_ids`).  A newer file missing docs is
  skipped with a note when a complete one exists; when none is complete, the newest
  whole file is read and the system is incomplete.  A system's episodes are the union
  over its tasks; an episode logged by several tasks counts once, from the newest file.
* Rankings need the whole episode set (:func:`standings`, the one rule the leaderboard,
  ``select`` and ``stats`` share): a system is ranked only when it holds every
  main-track episode of the comparison; otherwise it is *incomplete (n/N)*.  A system
  owes every doc of each task it logged, so a cut run (``--limit N``, a file stopped
  early or its tail deleted) is incomplete and never ranked, alone or not.  The
  comparison is the whole main track, or, when no listed system ran all of it, the
  union of the whole declared tasks they ran (``memriskbench_r1``, a tier task,
  ``memriskbench_subset20``): systems holding all of it are ranked among themselves,
  status ``subset (n/N)``, never ``complete``.
* Every sample's episode is verified: its ``dataset_hash`` must be a known dataset (the
  packaged ``data/episodes_*.jsonl``, or a file given with ``--episodes``), its id must
  be in it and its ``doc.episode_json`` must equal that episode.  A mismatch is refused
  with an error naming the file and line.  Mixed dataset hashes are refused.
* Scores are recomputed from the sample's reply texts and the verified episode
  (:func:`lm_eval_memrisk.logs.recompute.score_replies`).  Stored metrics that disagree with
  the recomputed ones flag the sample (:attr:`LoggedSample.disagreements`); the stored
  numbers are never used.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from dataclasses import field as dataclass_field
from pathlib import Path
from typing import Any

from lm_eval_memrisk.episodes.errors import MemriskError, SamplesError
from lm_eval_memrisk.episodes.jsonl import read_bytes, read_sample_objects
from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.episodes.risks import risk_ids
from lm_eval_memrisk.episodes.trace import Trace
from lm_eval_memrisk.logs.recompute import (
    Replies,
    replies_of_sample,
    score_all_variants,
    stored_disagreements,
)
from lm_eval_memrisk.scoring.sample_record import was_cut
from lm_eval_memrisk.scoring.scorer import SCORER_VERSION, ScoreResult

SAMPLES_RE = re.compile(
    r"^samples_(?P<task>memriskbench[A-Za-z0-9_]*?)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.jsonl(?:\.gz)?$"
)
#: Samples files, plain or gzipped (the committed reference set is gzipped).
SAMPLES_GLOB = "samples_memriskbench*.jsonl*"


def task_re() -> re.Pattern[str]:
    """Task names whose docs are a known slice of the dataset: a registered risk (+ tier),
    or a shipped subset."""
    names = "|".join(re.escape(r.lower()) for r in risk_ids())
    return re.compile(rf"^memriskbench_(?:(?P<risk>{names})(?:_(?P<tier>easy|medium|hard))?|(?P<subset>subset\d+))$")


#: :func:`task_re` of the shipped registry.
TASK_RE = task_re()
#: model_args keys that name a system, in order of preference.
NAME_KEYS: tuple[str, ...] = ("model", "pretrained", "agent", "base")


# ----------------------------------------------------------------------------- datasets


@dataclass(frozen=True)
class KnownDataset:
    """A dataset samples may be verified against: its hash, file and episodes by id."""

    dataset_hash: str
    path: Path
    episodes: Mapping[str, Episode]
    objects: Mapping[str, Any]
    """Episode id -> the episode's JSON object (what ``doc.episode_json`` must equal)."""


@functools.lru_cache(maxsize=16)
def _load_dataset(path: str, mtime_ns: int, size: int) -> KnownDataset:
    from lm_eval_memrisk.episodes.codec import dumps_episode, fingerprint_of_lines
    from lm_eval_memrisk.episodes.loader import load_episodes

    episodes = load_episodes(path, track="all")
    lines = {e.id: dumps_episode(e) for e in episodes}
    return KnownDataset(
        dataset_hash=fingerprint_of_lines(lines.values()), path=Path(path),
        episodes={e.id: e for e in episodes}, objects={i: json.loads(s) for i, s in lines.items()},
    )


def packaged_dataset_files() -> list[Path]:
    """The dataset files shipped in the package (``data/episodes_*.jsonl``)."""
    from lm_eval_memrisk.episodes.loader import default_dataset_path

    return sorted(Path(default_dataset_path()).parent.glob("episodes_*.jsonl"))


def known_datasets(extra: Sequence[str | Path] = ()) -> dict[str, KnownDataset]:
    """Dataset hash -> dataset, for the packaged files plus ``extra`` episode files."""
    out: dict[str, KnownDataset] = {}
    for path in [*packaged_dataset_files(), *(Path(p) for p in extra)]:
        try:
            st = path.stat()
        except OSError as exc:
            raise MemriskError(f"{path}: cannot read the episode file: {exc}") from exc
        ds = _load_dataset(str(path.resolve()), st.st_mtime_ns, st.st_size)
        out.setdefault(ds.dataset_hash, ds)
    return out


def verified_episode(sample: Mapping[str, Any], where: str, known: Mapping[str, KnownDataset]) -> Episode:
    """The episode of one sample line, found by id in a known dataset whose hash it names."""
    doc = sample.get("doc")
    record = sample.get("episodes")
    if not isinstance(doc, dict):
        raise SamplesError(f"{where}: missing the 'doc' object (is this a memriskbench samples file?)")
    if not isinstance(record, dict):
        raise SamplesError(f"{where}: missing the 'episodes' record (was the task a memriskbench task?)")
    episode_id = doc.get("episode_id")
    if not isinstance(episode_id, str) or not episode_id:
        raise SamplesError(f"{where}: doc.episode_id must be a non-empty string, got {episode_id!r}")
    if record.get("episode_id", episode_id) != episode_id:
        raise SamplesError(f"{where}: episodes.episode_id {record.get('episode_id')!r} differs from "
                           f"doc.episode_id {episode_id!r}")
    dataset_hash = record.get("dataset_hash") or doc.get("dataset_hash")
    dataset = known.get(dataset_hash) if isinstance(dataset_hash, str) else None
    if dataset is None:
        names = ", ".join(f"{h} ({d.path.name})" for h, d in sorted(known.items())) or "none"
        raise SamplesError(
            f"{where}: episodes.dataset_hash {dataset_hash!r} is not a known dataset (known: {names}); "
            "pass the episode file the run used with --episodes FILE"
        )
    episode = dataset.episodes.get(episode_id)
    if episode is None:
        raise SamplesError(f"{where}: episode {episode_id} is not in dataset {dataset_hash} ({dataset.path})")
    logged = doc.get("episode_json")
    try:
        same = isinstance(logged, str) and json.loads(logged) == dataset.objects[episode_id]
    except ValueError:
        same = False
    if not same:
        raise SamplesError(
            f"{where}: doc.episode_json of {episode_id} differs from that episode in {dataset.path} "
            f"(dataset {dataset_hash}); refusing to score a log against an edited episode"
        )
    return episode


# ----------------------------------------------------------------------------- samples


@dataclass(frozen=True)
class LoggedSample:
    """One sample line: its verified episode and the scores recomputed from its replies."""

    episode: Episode
    task: str
    doc_id: int
    where: str
    """``file:line`` of the line."""
    replies: Replies
    trace: Trace
    """The trace recomputed from the episode and the reply texts."""
    results: Mapping[str, ScoreResult]
    """Per-sample metric (``pass``, ``pass_safety_aware``, ``pass_original``) -> result."""
    disagreements: tuple[str, ...]
    """Stored metrics that differ from the recomputed ones (empty for an untouched log)."""
    dataset_hash: str
    scorer_version: str
    """The scorer version the log claims (the recomputation uses the installed scorer)."""
    raw: Mapping[str, Any]
    """The sample object as logged (untrusted; for rewriting it, never for scores)."""
    cut: bool = False
    """Its prompt was cut (``truncation=left``): every result is a failure with score 0."""

    @property
    def episode_id(self) -> str:
        return self.episode.id

    @property
    def failure(self) -> str | None:
        """``None`` (passed), ``agent`` or ``policy_hidden`` (:mod:`lm_eval_memrisk.scoring.attribution`).

        Pass/fail is recomputed; under the ``full`` policy nothing is hidden, so a failure
        is the agent's.  Under a filtering policy the ``policy_hidden`` label is the one
        the run logged (replaying a memory policy would need its extras installed).
        """
        if self.passed:
            return None
        if self.replies.memory_policy == "full":
            return "agent"
        record = self.raw.get("episodes")
        logged = record.get("failure") if isinstance(record, Mapping) else None
        return "policy_hidden" if logged == "policy_hidden" else "agent"

    @property
    def older_scorer(self) -> bool:
        """Logged by another scorer version: stored metrics may differ honestly."""
        return self.scorer_version != SCORER_VERSION

    @property
    def passed(self) -> bool:
        return self.results["pass"].success

    @property
    def score(self) -> float:
        return self.results["pass"].score


def read_sample(data: Mapping[str, Any], where: str, task: str, known: Mapping[str, KnownDataset]) -> LoggedSample:
    """Verify and recompute one sample object (``where`` = file:line prefixes every error)."""
    episode = verified_episode(data, where, known)
    doc_id = data.get("doc_id")
    if isinstance(doc_id, bool) or not isinstance(doc_id, int) or doc_id < 0:
        raise SamplesError(f"{where}: 'doc_id' must be a non-negative integer, got {doc_id!r}")
    replies = replies_of_sample(data, where)
    trace, results = score_all_variants(episode, replies)
    cut = was_cut(dict(data))
    if cut:
        results = {k: replace(r, success=False, score=0.0) for k, r in results.items()}
    record = data["episodes"]
    return LoggedSample(
        episode=episode, task=task, doc_id=doc_id, where=where, replies=replies, trace=trace,
        results=results, disagreements=stored_disagreements(data, results),
        dataset_hash=str(record.get("dataset_hash") or data["doc"].get("dataset_hash")),
        scorer_version=str(record.get("scorer_version") or ""), raw=data, cut=cut,
    )


# ----------------------------------------------------------------------------- folders


@dataclass(frozen=True)
class SystemLog:
    """One system as every reader sees it."""

    name: str
    dir: Path
    """The model folder holding the samples files."""
    files: tuple[Path, ...]
    """The samples files that count (per task the newest complete one)."""
    samples: tuple[LoggedSample, ...]
    """Sorted by episode id."""
    dataset_hash: str
    mode: str
    memory_policy: str
    config: Mapping[str, Any]
    """``config`` of the newest results file ({} when there is none)."""
    results_file: Path | None
    notes: tuple[str, ...] = ()
    generation: Mapping[str, Any] = dataclass_field(default_factory=dict)
    """The run's effective generation settings (:func:`run_generation`), for its signature."""
    owed: frozenset[str] = frozenset()
    """Every doc of each task whose counted samples file lacks some of them (``--limit``,
    a cut run, rows removed): the system is incomplete until it holds them."""
    rows_removed: tuple[str, ...] = ()
    """One line per samples file whose rows were removed after lm-eval wrote it."""

    @property
    def passed(self) -> int:
        return sum(s.passed for s in self.samples)

    @property
    def flagged(self) -> tuple[LoggedSample, ...]:
        """Samples whose stored metrics disagree with the recomputed ones: edited logs,
        or logs of another scorer version (:attr:`LoggedSample.older_scorer`)."""
        return tuple(s for s in self.samples if s.disagreements)

    def summary(self) -> dict[str, Any]:
        """The ``memrisk runs --json`` object of this system."""
        return {
            "system": self.name, "dir": str(self.dir), "episodes": len(self.samples),
            "passed": self.passed, "dataset_hash": self.dataset_hash,
            "files": [str(f) for f in self.files],
            "flagged": [f"{s.where}: stored {', '.join(s.disagreements)} disagree with the recomputed scores"
                        for s in self.flagged],
            "cut": [f"{s.where}: {s.episode_id}" for s in self.samples if s.cut],
            "rows_removed": list(self.rows_removed),
        }


def flag_notes(systems: Sequence[SystemLog]) -> list[str]:
    """One line per system with cut prompts (``CUT``), and with samples whose stored
    metrics were edited or are stale (``FLAGGED``)."""
    out = []
    for s in systems:
        cut = [x for x in s.samples if x.cut]
        if cut:
            out.append(
                f"CUT {s.name}: {len(cut)} episode(s) had their prompt cut (truncation=left) and score 0 "
                f"(e.g. {cut[0].episode_id} at {cut[0].where})"
            )
        if s.flagged:
            first = s.flagged[0]
            out.append(
                f"FLAGGED {s.name}: {len(s.flagged)} sample(s) store metrics that disagree with the scores "
                f"recomputed from their replies (e.g. {first.where}: {', '.join(first.disagreements)}); "
                "the recomputed scores are used"
            )
            older = sum(x.older_scorer for x in s.flagged)
            if older:
                out.append(
                    f"NOTE {s.name}: {older} of these were logged by another scorer version than "
                    f"{SCORER_VERSION}, which may explain them"
                )
    return out


def model_folders(path: Path) -> list[Path]:
    """The model folders a run folder argument stands for (itself, or its subfolders)."""
    if not path.is_dir():
        raise MemriskError(f"{path}: not a folder (expected an lm-eval --output_path or memrisk run --out folder)")
    if any(path.glob(SAMPLES_GLOB)):
        return [path]
    subs = sorted(d for d in path.iterdir() if d.is_dir() and any(d.glob(SAMPLES_GLOB)))
    if not subs:
        raise MemriskError(
            f"{path}: no samples_memriskbench*.jsonl here or in a model folder below "
            "(run lm_eval with --output_path and --log_samples)"
        )
    return subs


def task_episode_ids(task: str, dataset: KnownDataset) -> frozenset[str] | None:
    """Every doc (episode id) of ``task`` on ``dataset``, or None for a task this reader
    does not know the slice of (e.g. a custom task name)."""
    m = task_re().match(task)
    if not m:
        return None
    if m["subset"]:
        from lm_eval_memrisk.episodes.subsets import read_subset_ids as subset_ids

        try:
            return frozenset(subset_ids(m["subset"]))
        except MemriskError:
            return None
    risk, tier = m["risk"].upper(), m["tier"]
    return frozenset(i for i, e in dataset.episodes.items() if e.risk == risk and (tier is None or e.tier == tier))


def _file_docs(path: Path, known: Mapping[str, KnownDataset]) -> tuple[set[str], KnownDataset | None]:
    """The episode ids a samples file logs, and the known dataset its first line names."""
    ids: set[str] = set()
    dataset: KnownDataset | None = None
    for _, data in read_sample_objects(path):
        doc = data.get("doc") if isinstance(data, dict) else None
        record = data.get("episodes") if isinstance(data, dict) else None
        if isinstance(doc, dict) and isinstance(doc.get("episode_id"), str):
            ids.add(doc["episode_id"])
            h = (record.get("dataset_hash") if isinstance(record, dict) else None) or doc.get("dataset_hash")
            if dataset is None and isinstance(h, str):
                dataset = known.get(h)
    return ids, dataset


def choose_files(
    folder: Path | Sequence[Path], known: Mapping[str, KnownDataset] | None = None
) -> tuple[list[tuple[str, str, Path]], list[str]]:
    """Per task the newest complete samples file: [(date, task, path)], plus notes.

    ``folder``: one model folder, or the model folders of one system (several runs of it
    into one ``--output_path``): their files compete per task, the newest winning.
    Complete: it ends with a newline and holds every doc of its task (checked when
    ``known`` is given).  When no file of a task holds every doc, the newest whole one is
    used and a note says the system is incomplete (:func:`standings` decides rankings).
    """
    folders = [folder] if isinstance(folder, Path) else list(folder)
    folder = folders[0] if len(folders) == 1 else Path(", ".join(str(f) for f in folders))
    notes: list[str] = []
    by_task: dict[str, list[tuple[str, Path]]] = {}
    for f in sorted(f for d in folders for f in d.glob(SAMPLES_GLOB)):
        m = SAMPLES_RE.match(f.name)
        if not m:
            notes.append(f"{f}: ignored (not samples_<task>_<date>.jsonl)")
            continue
        by_task.setdefault(m["task"], []).append((m["date"], f))
    chosen: list[tuple[str, str, Path]] = []
    for task, files in sorted(by_task.items()):
        whole: list[tuple[str, Path, str | None]] = []  # (date, file, why it is partial)
        for date, f in sorted(files, reverse=True):
            if not _complete(f):
                notes.append(f"{f}: skipped (incomplete: it does not end with a newline)")
                continue
            partial = None
            if known is not None:
                ids, dataset = _file_docs(f, known)
                need = task_episode_ids(task, dataset) if dataset is not None else None
                if need is not None and not need <= ids:
                    partial = f"holds {len(ids & need)} of the {len(need)} docs of {task}"
            whole.append((date, f, partial))
        pick = next((w for w in whole if w[2] is None), None)
        for date, f, partial in whole:
            if pick is not None and partial and date > pick[0]:
                notes.append(f"{f}: skipped (partial: it {partial}; the complete {pick[1].name} is used)")
        if pick is None and whole:
            pick = whole[0]
            many = f"{len(files)} samples files for {task}; none" if len(files) > 1 else f"no samples file of {task}"
            notes.append(f"{folder}: {many} holds every doc of the task; using the newest, {pick[1].name}, "
                         f"which {pick[2]}: the system is incomplete")
        elif pick is not None and len(files) > 1:
            notes.append(f"{folder}: {len(files)} samples files for {task}; using the newest complete one, "
                         f"{pick[1].name}")
        if pick is not None:
            chosen.append((pick[0], task, pick[1]))
    if not chosen:
        raise MemriskError(f"{folder}: no complete samples_memriskbench*.jsonl file")
    return chosen, notes


def _complete(path: Path) -> bool:
    """The file ends with a newline (a torn write does not)."""
    if path.suffix == ".gz":
        try:
            return read_bytes(path).endswith(b"\n")
        except SamplesError as exc:
            raise MemriskError(str(exc)) from exc
    try:
        with open(path, "rb") as fh:
            fh.seek(0, 2)
            if fh.tell() == 0:
                return False
            fh.seek(-1, 2)
            return fh.read(1) == b"\n"
    except OSError as exc:
        raise MemriskError(f"{path}: cannot read samples file: {exc}") from exc


def _results_data(folders: Sequence[Path]) -> tuple[Path | None, dict[str, Any]]:
    """The newest results file of ``folders`` and its JSON object ({} when there is none)."""
    files = sorted((f for d in folders for f in d.glob("results_*.json")), key=lambda f: (f.name, str(f)))
    if not files:
        return None, {}
    try:
        data = json.loads(files[-1].read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise MemriskError(f"{files[-1]}: cannot read results file: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise MemriskError(f"{files[-1]}:{exc.lineno}: results file is not valid JSON ({exc.msg})") from exc
    return files[-1], data if isinstance(data, dict) else {}


def _results_config(folder: Path | Sequence[Path]) -> tuple[Path | None, dict[str, Any]]:
    path, data = _results_data([folder] if isinstance(folder, Path) else folder)
    config = data.get("config")
    return path, config if isinstance(config, dict) else {}


def run_generation(data: Mapping[str, Any]) -> dict[str, Any]:
    """The effective generation settings a results file records
    (:func:`lm_eval_memrisk.running.generation.generation_settings`): ``config.generation`` of a
    ``memrisk run`` folder; for lm-eval, a memriskbench task's ``generation_kwargs``
    (``--gen_kwargs`` applied), the model-side settings that reached the task's metadata
    (model_args) and lm-eval's ``--seed`` (``torch_seed``)."""
    from lm_eval_memrisk.running.generation import generation_settings

    config = data.get("config") if isinstance(data.get("config"), Mapping) else {}
    assert isinstance(config, Mapping)
    if isinstance(config.get("generation"), Mapping):
        return dict(config["generation"])
    configs = data.get("configs")
    tasks = [c for t, c in sorted(configs.items()) if t.startswith("memriskbench") and isinstance(c, Mapping)] \
        if isinstance(configs, Mapping) else []
    if not tasks:
        return {}
    gen = tasks[0].get("generation_kwargs")
    meta = tasks[0].get("metadata") if isinstance(tasks[0].get("metadata"), Mapping) else {}
    assert isinstance(meta, Mapping)
    model_side = {k: meta[k] for k in ("temperature", "max_gen_toks", "seed") if k in meta}
    seed = config.get("torch_seed")
    return generation_settings(gen if isinstance(gen, Mapping) else None, model_side,
                               seed if isinstance(seed, int) and not isinstance(seed, bool) else None)


def model_args(config: Mapping[str, Any]) -> dict[str, str]:
    """``config["model_args"]`` as a dict (lm-eval stores a dict or a ``k=v,k=v`` string)."""
    raw = config.get("model_args")
    if isinstance(raw, dict):
        return {str(k): str(v) for k, v in raw.items() if v is not None}
    if isinstance(raw, str):
        pairs = (p.partition("=") for p in raw.split(",") if p.strip())
        return {k.strip(): v.strip() for k, sep, v in pairs if sep}
    return {}


def system_name(config: Mapping[str, Any]) -> str | None:
    """The system's name from its own run settings, or None when they do not name it."""
    args = model_args(config)
    for key in ("model", "pretrained"):
        if args.get(key):
            return args[key]
    agent = args.get("agent") or config.get("memrisk_agent") or config.get("agent")
    if not args.get("base") and isinstance(agent, str) and agent:
        return f"memrisk-agent:{agent}"
    return args.get("base") or None


def read_system(
    folder: Path | Sequence[Path], name: str | None, known: Mapping[str, KnownDataset]
) -> SystemLog:
    """One model folder (or the folders of several runs of one system) -> SystemLog
    (named ``name``, else by its run settings, else its folder).

    A system owes every doc of each task it logged (:attr:`SystemLog.owed`): a samples
    file that lacks docs of its task (``--limit N``, a cut run) leaves the task's other
    docs missing, so the system is incomplete (:func:`standings`).  A file whose
    ``doc_id``s are not 0..n-1 had rows removed after lm-eval wrote it (lm-eval numbers a
    task's docs from 0, ``--limit N`` keeps 0..N-1): the system is never ranked.
    """
    folders = [folder] if isinstance(folder, Path) else list(folder)
    chosen, notes = choose_files(folders, known)
    results_file, data = _results_data(folders)
    raw_config = data.get("config")
    config: dict[str, Any] = raw_config if isinstance(raw_config, dict) else {}
    by_id: dict[str, tuple[str, LoggedSample]] = {}
    owed: set[str] = set()
    removed: list[str] = []
    for date, task, path in chosen:
        in_file: dict[str, str] = {}
        doc_ids: list[int] = []
        dataset: KnownDataset | None = None
        for where, data_line in read_sample_objects(path):
            sample = read_sample(data_line, where, task, known)
            if sample.episode_id in in_file:
                raise SamplesError(f"{where}: duplicate episode {sample.episode_id} "
                                   f"(also at {in_file[sample.episode_id]})")
            in_file[sample.episode_id] = where
            doc_ids.append(sample.doc_id)
            dataset = dataset or known.get(sample.dataset_hash)
            old = by_id.get(sample.episode_id)
            if old is None or date > old[0]:
                by_id[sample.episode_id] = (date, sample)
        if not in_file:
            raise SamplesError(f"{path}: no sample lines")
        need = task_episode_ids(task, dataset) if dataset is not None else None
        if sorted(doc_ids) != list(range(len(doc_ids))):
            gaps = sorted(set(range(max(doc_ids) + 1)) - set(doc_ids))
            owed |= set(need or ())
            removed.append(f"{path}: rows were removed (doc_id {', '.join(map(str, gaps[:5]))}"
                           f"{', ...' if len(gaps) > 5 else ''} missing of 0..{max(doc_ids)}); "
                           f"the system owes every doc of {task} and is not ranked")
        elif need is not None and not need <= set(in_file):
            owed |= set(need)  # a partial file (--limit, a cut run): the task's other docs are owed
    samples = tuple(by_id[k][1] for k in sorted(by_id))
    for attr in ("dataset_hash", "mode", "memory_policy"):
        values = {_setting(s, attr): s.where for s in samples}
        if len(values) > 1:
            (a, wa), (b, wb) = sorted(values.items())[:2]
            raise SamplesError(
                f"{wb}: {attr} {b!r} differs from {a!r} at {wa}; one system must be one run setting "
                "(move the runs into separate folders)"
            )
    first = samples[0]
    if len(folders) > 1:
        notes.append(f"{len(folders)} runs of one system ({', '.join(str(f) for f in folders)}) read as one: "
                     "per task the newest complete samples file counts")
    home = results_file.parent if results_file is not None else folders[-1]
    return SystemLog(
        name=name or system_name(config) or home.name, dir=home,
        files=tuple(sorted(path for _, _, path in chosen)),
        samples=samples, dataset_hash=first.dataset_hash, mode=first.replies.mode,
        memory_policy=first.replies.memory_policy, config=config, results_file=results_file,
        notes=tuple(notes), generation=run_generation(data) if data else {},
        owed=frozenset(owed), rows_removed=tuple(removed),
    )


MAIN_TRACK = "main"


@dataclass(frozen=True)
class Standing:
    """Whether a system is ranked: it holds every main-track episode of the comparison,
    and no samples file of it had rows removed."""

    system: str
    have: int
    """Main-track episodes the system holds."""
    need: int
    """Main-track episodes of the comparison: the whole track of the dataset, or, when no
    system ran the whole track, every main-track episode any listed system ran or owes."""
    track: int
    """Main-track episodes of the dataset (e.g. 120 on v6)."""
    missing: tuple[str, ...]
    rows_removed: tuple[str, ...] = ()
    """Samples files of the system whose rows were removed (:attr:`SystemLog.rows_removed`)."""

    @property
    def ranked(self) -> bool:
        """It holds every main-track episode of the comparison (and at least one), and
        none of its samples files had rows removed."""
        return not self.missing and self.have > 0 and not self.rows_removed

    @property
    def complete(self) -> bool:
        """Ranked on the whole main track of the dataset."""
        return self.ranked and self.need == self.track

    @property
    def status(self) -> str:
        """``complete``, ``subset (n/N)`` (ranked on the whole declared tasks every listed
        system ran, none having run the whole track), ``incomplete (n/N)`` (never ranked) or
        ``no main-track episode`` (an R6-only run: reported, never ranked)."""
        if not self.ranked:
            return f"incomplete ({self.have}/{self.need})" if self.need else "no main-track episode"
        return "complete" if self.complete else f"subset ({self.need}/{self.track})"

    @property
    def reason(self) -> str:
        """Why the system is not ranked, in a few words (empty when it is ranked)."""
        if self.ranked:
            return ""
        if self.missing:
            return f"missing e.g. {', '.join(self.missing[:3])}"
        if self.rows_removed:
            return self.rows_removed[0]
        return "an R6-only run is reported, not ranked on the main track"

    def refusal(self) -> str:
        """The message a command refusing this system prints: :attr:`reason`, and what to do."""
        head = f"system {self.system!r} is {self.status}"
        if self.missing:
            return (f"{head}: it lacks {len(self.missing)} main-track episode(s) of the comparison, "
                    f"e.g. {', '.join(self.missing[:3])}; rankings need the whole episode set "
                    "(rerun the missing episodes, or leave the system out)")
        if self.rows_removed:
            return (f"{head}: {self.reason}; rankings need the whole episode set "
                    "(rerun the task, or leave the system out)")
        return f"{head}: {self.reason}"


def standings(systems: Sequence[SystemLog], known: Mapping[str, KnownDataset] | None = None) -> dict[str, Standing]:
    """System name -> :class:`Standing`: the one rule deciding who is ranked.

    The comparison set is every main-track (R1-R5) episode of the dataset; when no
    listed system ran all of them (whole declared tasks, e.g. ``memriskbench_subset20``
    or ``--tasks memriskbench_r1``), it is every main-track episode any listed system
    ran or owes, and the status says ``subset (n/N)``.  A system missing any episode of
    the comparison is ``incomplete (n/N)`` and never ranked.  A system owes every doc of
    each task it logged (:attr:`SystemLog.owed`): a ``--limit N`` run, or a file whose
    tail was deleted, is incomplete and unranked even alone, and a file whose
    ``doc_id``s are not 0..n-1 (rows of failed episodes deleted) never ranks its system,
    whether or not another system ran the whole track.
    """
    known = known if known is not None else known_datasets()
    main: set[str] = set()
    for s in systems:
        dataset = known.get(s.dataset_hash)
        if dataset is not None:
            main |= {i for i, e in dataset.episodes.items() if e.track == MAIN_TRACK}
    held = {s.name: {x.episode_id for x in s.samples if x.episode.track == MAIN_TRACK} for s in systems}
    owed = {s.name: {i for i in s.owed if i in main} for s in systems}
    track = set(main)
    union = set().union(*held.values(), *owed.values()) if held else set()
    track |= union
    need = track if any(h >= track for h in held.values()) else union
    removed = {s.name: s.rows_removed for s in systems}
    return {
        name: Standing(system=name, have=len(h & need), need=len(need), track=len(track),
                       missing=tuple(sorted(need - h)), rows_removed=removed[name])
        for name, h in held.items()
    }


def standing_notes(table: Mapping[str, Standing]) -> list[str]:
    """One ``INCOMPLETE`` line per system that is not ranked."""
    return [f"INCOMPLETE {st.system}: {st.status}, not ranked ({st.reason})" for st in table.values() if not st.ranked]


def _setting(sample: LoggedSample, attr: str) -> str:
    if attr == "dataset_hash":
        return sample.dataset_hash
    return sample.replies.mode if attr == "mode" else sample.replies.memory_policy


def parse_run_arg(arg: str | Path) -> tuple[str | None, Path]:
    """``NAME=DIR`` -> (NAME, DIR); a plain ``DIR`` -> (None, DIR)."""
    name, sep, rest = str(arg).partition("=")
    if sep and name and "/" not in name and rest:
        return name, Path(rest)
    return None, Path(str(arg))


def read_runs(runs: Sequence[str | Path], episodes: Sequence[str | Path] = ()) -> list[SystemLog]:
    """Every system under the run folder arguments (``DIR`` or ``NAME=DIR``), in order.

    ``episodes``: episode files to verify against besides the packaged datasets.
    """
    known = known_datasets(episodes)
    groups: list[tuple[str | None, list[Path]]] = []
    seen: dict[Path, Path] = {}
    for arg in runs:
        name, path = parse_run_arg(arg)
        found = model_folders(path)
        for folder in found:
            key = folder.resolve()
            if key in seen:
                raise MemriskError(f"{folder}: the same model folder was given twice (also as {seen[key]})")
            seen[key] = folder
        grouped = group_runs(found)
        if name and len(grouped) > 1:
            raise MemriskError(f"{arg}: NAME=DIR needs one model folder (or several runs of one system), "
                               f"{path} holds {len(found)} of {len(grouped)} systems")
        groups += [(name, g) for g in grouped]
    systems = [read_system(g if len(g) > 1 else g[0], name, known) for name, g in groups]
    systems = _unique_names(systems, [name is not None for name, _ in groups])
    hashes = {s.dataset_hash: s for s in reversed(systems)}
    if len(hashes) > 1:
        (ha, a), (hb, b) = sorted(hashes.items())[:2]
        raise MemriskError(
            "systems were run on different dataset versions; refusing to mix them: "
            f"{a.dir} has dataset {ha}, {b.dir} has dataset {hb}. Re-run them on the same dataset version."
        )
    return systems


def run_identity(folder: Path) -> tuple[str, str] | None:
    """What makes two model folders runs of one system: the name its newest results file
    gives it (:func:`system_name`) with every model_arg and the effective generation
    settings; None when the results file does not name the system."""
    _, data = _results_data([folder])
    raw_config = data.get("config")
    config: dict[str, Any] = raw_config if isinstance(raw_config, dict) else {}
    name = system_name(config)
    if not name:
        return None
    raw_configs = data.get("configs")
    configs: dict[str, Any] = raw_configs if isinstance(raw_configs, dict) else {}
    task_settings = {k: v for c in configs.values() if isinstance(c, dict) and isinstance(c.get("metadata"), dict)
                     for k, v in c["metadata"].items() if k not in _SLICE_KEYS}
    settings = {"model": config.get("model"), "model_args": model_args(config), "generation": run_generation(data),
                "task_settings": task_settings,  # --metadata: memory_policy, presentation, episodes, ...
                "run": {k: config.get(k) for k in RUN_KEYS}}
    return name, json.dumps(settings, sort_keys=True, default=str)


#: Task metadata keys that say which slice a task is, not how the system ran.
_SLICE_KEYS = frozenset({"version", "risk", "tier", "track", "subset", "config_source"})
#: Results-config keys of how a run ran (the memrisk-agent model and ``memrisk run`` record them).
RUN_KEYS: tuple[str, ...] = ("mode", "memory_policy", "presentation", "tools", "max_steps", "dataset_hash")


def group_runs(folders: Sequence[Path]) -> list[list[Path]]:
    """The model folders of one run folder argument, grouped by system: lm-eval gives
    each run of a model without ``pretrained=``/``model=`` a random folder id, so two
    runs of one system into one ``--output_path`` are two folders; folders with one
    :func:`run_identity` are one system (per task the newest complete samples file
    counts).  Folders that do not name their system stay apart."""
    groups: dict[Any, list[Path]] = {}
    for folder in folders:
        identity = run_identity(folder)
        groups.setdefault(identity if identity is not None else ("folder", str(folder)), []).append(folder)
    return list(groups.values())


def _unique_names(systems: list[SystemLog], given: list[bool]) -> list[SystemLog]:
    """Distinct names: a derived name shared by several systems becomes the folder name,
    then parent/folder; a clash that remains (or of given names) is an error."""
    from dataclasses import replace

    def clashes(names: list[str]) -> set[str]:
        return {n for n in names if names.count(n) > 1}

    names = [s.name for s in systems]
    for rename in (lambda s: s.dir.name, lambda s: f"{s.dir.parent.name}/{s.dir.name}"):
        dup = clashes(names)
        names = [rename(s) if n in dup and not g else n for s, n, g in zip(systems, names, given)]
    dup = clashes(names)
    if dup:
        where = [str(s.dir) for s, n in zip(systems, names) if n in dup]
        raise MemriskError(
            f"two systems share the name {sorted(dup)[0]!r} ({', '.join(where)}); name them NAME=DIR"
        )
    return [replace(s, name=n) for s, n in zip(systems, names)]
