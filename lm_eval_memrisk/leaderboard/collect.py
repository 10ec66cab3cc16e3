"""Systems of the leaderboard and ``memrisk report``, read through :mod:`lm_eval_memrisk.logs.runs`.

The run folders are read by the one reader (which samples count, names, episodes
verified against the dataset); every outcome here is the score recomputed from the
sample's replies, never the stored metric.  A system whose stored metrics disagree
with the recomputed ones carries a flag (:attr:`Signature.flagged`) and a warning.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.risks import main_risks
from lm_eval_memrisk.leaderboard.groups import system_group, system_note
from lm_eval_memrisk.leaderboard.records import (
    EpisodeOutcome,
    FailedCheck,
    Signature,
    SystemRun,
)
from lm_eval_memrisk.logs.recompute import Replies
from lm_eval_memrisk.logs.runs import (
    LoggedSample,
    SystemLog,
    flag_notes,
    read_runs,
    standing_notes,
    standings,
)
from lm_eval_memrisk.scoring.decisions import decision_outcomes
from lm_eval_memrisk.scoring.scorer import NEGATIVE_KINDS, SCORER_VERSION
from lm_eval_memrisk.scoring.signature import signature

Warn = Callable[[str], None]

#: Where a model file's hash may be recorded in results["config"], in order of preference.
MODEL_HASH_KEYS: tuple[str, ...] = ("gguf_sha256", "model_sha256", "sha256")


def stderr_warn(message: str) -> None:
    print(f"memrisk leaderboard: {message}", file=sys.stderr)


def collect(
    run_dirs: Sequence[str | Path], warn: Warn = stderr_warn, episodes: Sequence[str | Path] = ()
) -> list[SystemRun]:
    """All systems under ``run_dirs`` (``DIR`` or ``NAME=DIR``), sharing one dataset version."""
    from dataclasses import replace

    from lm_eval_memrisk.logs.runs import known_datasets

    logs = read_runs(run_dirs, episodes)
    table = standings(logs, known_datasets(episodes))
    for note in flag_notes(logs) + [n for s in logs for n in s.notes] + standing_notes(table):
        warn(note)
    systems = [replace(system_run(s), status=table[s.name].status, ranked=table[s.name].ranked) for s in logs]
    _warn_on_differences(systems, warn)
    return sorted(systems, key=lambda s: s.name)


def system_run(log: SystemLog) -> SystemRun:
    """The leaderboard's record of one system read by :func:`lm_eval_memrisk.logs.runs.read_runs`."""
    flagged = ""
    if log.flagged:
        first = log.flagged[0]
        older = sum(x.older_scorer for x in log.flagged)
        flagged = (f"{len(log.flagged)} sample(s) store metrics that disagree with the recomputed scores "
                   f"(e.g. {Path(first.where).name})")  # the file name only: byte-stable pages
        if older:
            flagged += f"; {older} of them logged by another scorer version than {SCORER_VERSION}"
    shown = log.samples[0].replies if log.samples else Replies("scripted", "full", "", ())
    sig = Signature(
        model=log.name, model_hash=model_hash(log.config), dataset_hash=log.dataset_hash,
        scorer_version=SCORER_VERSION, variant="default", memory_policy=log.memory_policy, mode=log.mode,
        raw=signature(log.dataset_hash, policy=log.memory_policy, mode=log.mode,
                      presentation=shown.presentation, tools=shown.tools, generation=log.generation),
        flagged=flagged,
    )
    episodes = tuple(outcome(s) for s in log.samples)
    return SystemRun(log.name, log.dir, log.results_file, log.files, sig, episodes,
                     group=system_group(log.config), note=system_note(log.config))


def outcome(sample: LoggedSample) -> EpisodeOutcome:
    """One recomputed sample as the leaderboard shows it (acted and violations are
    recomputed from the replies too, never read from the log)."""
    default = sample.results["pass"]
    outcomes = decision_outcomes(sample.episode, sample.trace, default)
    failed = tuple(
        FailedCheck(
            check_id=c.check_id, kind=c.kind, channel=c.channel, decision_id=c.decision_id,
            evidence=c.evidence if isinstance(c.evidence, str) else json.dumps(c.evidence, sort_keys=True),
        )
        for c in default.checks if not c.passed
    )
    return EpisodeOutcome(
        episode_id=sample.episode_id, risk=sample.episode.risk, tier=sample.episode.tier,
        passed=default.success, passed_safety_aware=sample.results["pass_safety_aware"].success,
        score=default.score, failed_checks=failed, violations=tuple(str(v) for v in default.violations),
        source=sample.where, failure=sample.failure,
        violation=any(c.kind in NEGATIVE_KINDS for c in default.checks if not c.passed),
        decisions=len(outcomes), acted=sum(o.acted for o in outcomes),
        acted_violations=sum(o.acted and o.violation for o in outcomes),
        false_claim=any(o.false_claim for o in outcomes),
    )


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


def read_json_file(path: Path, what: str) -> Any:
    """The JSON value in ``path``; errors name the file (and line) and ``what`` it is."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise MemriskError(f"{path}: cannot read {what}: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise MemriskError(f"{path}:{exc.lineno}: {what} is not valid JSON ({exc.msg})") from exc


def _warn_on_differences(systems: Sequence[SystemRun], warn: Warn) -> None:
    main = main_risks()
    sets = {frozenset(e.episode_id for e in s.episodes if e.risk in main) for s in systems}
    if len(sets) > 1:
        warn(
            "systems were run on different main-track episode sets; each rate is over that system's own episodes"
        )
