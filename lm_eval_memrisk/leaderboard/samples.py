"""Parse ``samples_memriskbench_*.jsonl`` lines (lm-eval --log_samples) into outcomes.

Every error names the file and line, e.g.
``out/m/samples_memriskbench_r1_X.jsonl:3: 'pass' must be 0 or 1, got 0.5``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lm_eval_memrisk.errors import SamplesError
from lm_eval_memrisk.jsonl import read_sample_objects
from lm_eval_memrisk.leaderboard.records import ALL_RISKS, TIERS, EpisodeOutcome, FailedCheck
from lm_eval_memrisk.scorer import NEGATIVE_KINDS


@dataclass(frozen=True)
class SampleLine:
    """One parsed line: the outcome plus the settings it was produced under."""

    outcome: EpisodeOutcome
    dataset_hash: str
    scorer_version: str
    variant: str
    memory_policy: str
    mode: str
    signature: str


def read_samples(path: Path) -> Iterator[SampleLine]:
    """Yield the parsed lines of one samples file (blank lines and non-"none" filters skipped)."""
    for where, data in read_sample_objects(path):
        yield parse_line(data, where)


def parse_line(data: Mapping[str, Any], where: str) -> SampleLine:
    """One sample object -> SampleLine; ``where`` (file:line) prefixes every error."""
    ep = data.get("episodes")
    if not isinstance(ep, dict):
        raise SamplesError(f"{where}: missing the 'episodes' record (was the task memriskbench?)")
    risk = _text(ep, "risk", where)
    if risk not in ALL_RISKS:
        raise SamplesError(
            f"{where}: episodes.risk must be one of {', '.join(ALL_RISKS)}, got {risk!r}"
        )
    tier = _text(ep, "tier", where)
    if tier not in TIERS:
        raise SamplesError(
            f"{where}: episodes.tier must be one of {', '.join(TIERS)}, got {tier!r}"
        )
    sig = _signature_fields(ep.get("signature"), where)
    raw_trace = ep.get("trace")
    trace: dict[str, Any] = raw_trace if isinstance(raw_trace, dict) else {}
    failed = _failed_checks(ep.get("checks"), where)
    decisions = [d for d in ep.get("decisions") or () if isinstance(d, dict)]
    outcome = EpisodeOutcome(
        episode_id=_text(ep, "episode_id", where),
        risk=risk,
        tier=tier,
        passed=_binary(data, "pass", where),
        passed_safety_aware=_binary(data, "pass_safety_aware", where),
        score=_unit(data, "score", where),
        failed_checks=failed,
        violations=tuple(str(v) for v in ep.get("violations") or ()),
        source=where,
        violation=any(c.kind in NEGATIVE_KINDS for c in failed),
        decisions=len(decisions) if decisions else None,
        acted=sum(bool(d.get("acted")) for d in decisions) if decisions else None,
        acted_violations=sum(bool(d.get("acted") and d.get("violation")) for d in decisions) if decisions else None,
    )
    return SampleLine(
        outcome=outcome,
        dataset_hash=_text(ep, "dataset_hash", where),
        scorer_version=_text(ep, "scorer_version", where),
        variant=sig.get("variant", "default"),
        memory_policy=str(trace.get("memory_policy") or sig.get("policy", "full")),
        mode=str(trace.get("mode") or sig.get("mode", "scripted")),
        signature=str(ep.get("signature") or ""),
    )


def _text(obj: Mapping[str, Any], key: str, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not value:
        raise SamplesError(f"{where}: episodes.{key} must be a non-empty string, got {value!r}")
    return value


def _number(obj: Mapping[str, Any], key: str, where: str) -> float:
    if key not in obj:
        raise SamplesError(f"{where}: missing per-sample metric {key!r}")
    value = obj[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SamplesError(f"{where}: {key!r} must be a number, got {value!r}")
    return float(value)


def _binary(obj: Mapping[str, Any], key: str, where: str) -> bool:
    value = _number(obj, key, where)
    if value not in (0.0, 1.0):
        raise SamplesError(f"{where}: {key!r} must be 0 or 1, got {value!r}")
    return value == 1.0


def _unit(obj: Mapping[str, Any], key: str, where: str) -> float:
    value = _number(obj, key, where)
    if not 0.0 <= value <= 1.0:
        raise SamplesError(f"{where}: {key!r} must lie in [0, 1], got {value!r}")
    return value


def _signature_fields(raw: Any, where: str) -> dict[str, str]:
    """``memrisk:v1|data=…|scorer=1.0|variant=default|…`` -> {"data": …, "variant": …}."""
    if raw is None:
        return {}
    if not isinstance(raw, str):
        raise SamplesError(f"{where}: episodes.signature must be a string, got {raw!r}")
    fields = {}
    for part in raw.split("|")[1:]:
        key, sep, value = part.partition("=")
        if sep:
            fields[key] = value
    return fields


def _failed_checks(raw: Any, where: str) -> tuple[FailedCheck, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise SamplesError(f"{where}: episodes.checks must be a list")
    out = []
    for i, check in enumerate(raw):
        if not isinstance(check, dict) or not isinstance(check.get("passed"), bool):
            raise SamplesError(
                f"{where}: episodes.checks[{i}] must be an object with a boolean 'passed'"
            )
        if check["passed"]:
            continue
        evidence = check.get("evidence", "")
        out.append(
            FailedCheck(
                check_id=str(check.get("check_id", f"#{i}")),
                kind=str(check.get("kind", "?")),
                channel=str(check.get("channel", "")),
                decision_id=str(check.get("decision_id", "")),
                evidence=evidence
                if isinstance(evidence, str)
                else json.dumps(evidence, sort_keys=True),
            )
        )
    return tuple(out)
