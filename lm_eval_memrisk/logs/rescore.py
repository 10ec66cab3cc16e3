"""Re-score lm-eval --log_samples output without re-running the model.

The samples that count are read by :mod:`lm_eval_memrisk.logs.runs` (episodes verified
against the dataset by id and hash); each is scored again from its reply texts and the
verified episode under the chosen variant (the paper's strict-matching revision,
§4.3), so parser, normaliser and scorer changes apply too and edited stored states or
metrics cannot carry over.  Written lines carry the recomputed trace and scores.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lm_eval_memrisk.episodes.jsonl import json_line, write_atomic
from lm_eval_memrisk.episodes.render import MemoryPolicy
from lm_eval_memrisk.logs.recompute import score_replies
from lm_eval_memrisk.logs.runs import LoggedSample, read_runs
from lm_eval_memrisk.running.policies import make_policy
from lm_eval_memrisk.scoring.sample_record import sample_metrics, void_cut


@dataclass
class Audit:
    """Per (model, risk): how many episodes changed, and in which direction."""

    rows: dict[tuple[str, str], Counter[str]] = field(default_factory=dict)

    def add(self, model: str, risk: str, before: bool, after: bool) -> None:
        c = self.rows.setdefault((model, risk), Counter())
        c["n"] += 1
        if before != after:
            c["pass->fail" if before else "fail->pass"] += 1

    def table(self) -> str:
        lines = [f"{'model':<32}{'risk':<6}{'n':>5}{'changed':>9}{'fail->pass':>12}{'pass->fail':>12}"]
        for (model, risk), c in sorted(self.rows.items()):
            changed = c["fail->pass"] + c["pass->fail"]
            lines.append(f"{model:<32}{risk:<6}{c['n']:>5}{changed:>9}{c['fail->pass']:>12}{c['pass->fail']:>12}")
        return "\n".join(lines)

    def to_dict(self) -> list[dict[str, Any]]:
        return [{"model": m, "risk": r, **dict(c)} for (m, r), c in sorted(self.rows.items())]


def rescore_sample(sample: LoggedSample, variant: str, expected: str) -> dict[str, Any]:
    """The sample line with the recomputed trace, record and metrics, ``pass``/``score``
    under (variant, expected).

    Every per-sample metric and the ``episodes`` record (decision classes, acted,
    violation, attribution, signature) are rebuilt by the same code that lm-eval's
    ``process_results`` runs, from the verified episode and the reply texts; the record
    keeps what only the original run knows (repeated-sampling ``trials``, an
    ``invalid_reason``); an episode whose prompt was cut scores 0.
    """
    trace, result = score_replies(sample.episode, sample.replies, variant=variant, expected=expected,
                                  policy=logged_policy(sample))
    old = sample.raw["episodes"] if isinstance(sample.raw.get("episodes"), dict) else {}
    metrics = sample_metrics(sample.episode, trace, sample.dataset_hash,
                             invalid_reason=old.get("invalid_reason"))
    record = dict(metrics.pop("episodes"))
    if sample.replies.memory_policy != "full" and sample.replies.mode != "scripted":
        _keep_logged_attribution(record, old)
    if "trials" in old:
        record["trials"] = old["trials"]
    record.update(success=result.success, score=result.score, violations=list(result.violations),
                  checks=[dict(c.__dict__) for c in result.checks],
                  rescored={"variant": variant, "expected": expected})
    out = dict(sample.raw)
    out.update(metrics)
    out["pass"] = float(result.success)
    out["score"] = result.score
    out["episodes"] = json.loads(json.dumps(record))
    return void_cut(out) if sample.cut else out  # a cut prompt scores 0 (truncation=left)


def logged_policy(sample: LoggedSample) -> MemoryPolicy | None:
    """The memory policy a scripted sample ran under, to replay it with (None for
    ``full`` and for interactive runs).  The notes shown and the retrieval attribution
    then are what the run saw; a policy-free replay shows every note and would relabel
    every policy-hidden failure as the agent's."""
    replies = sample.replies
    return make_policy(replies.memory_policy) if replies.mode == "scripted" else None


def _keep_logged_attribution(record: dict[str, Any], old: dict[str, Any]) -> None:
    """Interactive runs under a policy: the replay cannot rebuild the policy's view, so
    the hidden decision points are the ones the run logged; the label follows the new
    verdict (policy-hidden only where a hidden decision point failed)."""
    hidden = [d for d in old.get("hidden_decisions", []) if isinstance(d, str)]
    failed = {c["decision_id"] for c in record["checks"] if not c["passed"]}
    record["hidden_decisions"] = hidden
    record["failure"] = None if record["success"] else ("policy_hidden" if failed & set(hidden) else "agent")


def free_path(path: Path) -> Path:
    """``path`` if unused, else path with .1, .2, ... before the suffix (never overwrite)."""
    candidate, n = path, 0
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.stem}.{n}{path.suffix}")
    return candidate


def rescore_dir(
    root: Path, variant: str = "default", expected: str = "revised", episodes: Sequence[str | Path] = ()
) -> tuple[Audit, list[Path]]:
    """Write ``<samples>.rescored-<variant>-<expected>.jsonl`` beside each samples file that counts."""
    audit, written = Audit(), []
    for system in read_runs([root], episodes):
        by_file: dict[Path, list[LoggedSample]] = {f: [] for f in system.files}
        for sample in system.samples:
            by_file[Path(sample.where.rsplit(":", 1)[0])].append(sample)
        for path, samples in by_file.items():
            if not samples:
                continue
            target = free_path(path.with_name(f"{path.stem}.rescored-{variant}-{expected}{path.suffix}"))
            lines = []
            for sample in sorted(samples, key=lambda s: s.doc_id):
                new = rescore_sample(sample, variant, expected)
                audit.add(system.name, sample.episode.risk, bool(sample.raw.get("pass")), bool(new["pass"]))
                lines.append(json_line(new))  # a reply's lone surrogates are written escaped
            write_atomic(target, "\n".join(lines) + "\n")
            written.append(target)
    return audit, written
