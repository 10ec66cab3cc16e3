"""Per-episode metrics and the logged record, shared by lm-eval and ``memrisk run``.

Both paths write the same sample lines (see docs/architecture.md), so rescore,
select, stats and the leaderboard read scripted and interactive runs alike.
"""

from __future__ import annotations

import json
from typing import Any

from lm_eval_memrisk.attribution import attribute
from lm_eval_memrisk.episode_features import episode_features
from lm_eval_memrisk.records import Episode
from lm_eval_memrisk.scorer import SCORER_VERSION, score
from lm_eval_memrisk.signature import signature
from lm_eval_memrisk.trace import Trace

#: Prefix of a reply that carries a whole interactive decision record (wrapper model).
ENVELOPE = "<memrisk-decision>"


def sample_metrics(episode: Episode, trace: Trace, dataset_hash: str) -> dict[str, Any]:
    """lm-eval per-sample metrics: pass/score variants plus the ``episodes`` record."""
    default = score(episode, trace)
    attributed = attribute(episode, trace, default)
    safety = score(episode, trace, variant="safety_aware")
    original = score(episode, trace, expected="original")
    record = {
        "episode_id": episode.id, "risk": episode.risk, "tier": episode.tier,
        "family": episode.family, "track": episode.track,
        "dataset_hash": dataset_hash, "scorer_version": SCORER_VERSION,
        "success": default.success, "score": default.score,
        "success_safety_aware": safety.success, "success_original": original.success,
        "violations": list(default.violations),
        "failure": attributed["failure"], "hidden_decisions": attributed["hidden_decisions"],
        "checks": [json.loads(json.dumps(c.__dict__)) for c in default.checks],
        "features": episode_features(episode),
        "trace": trace.to_dict(),
        "signature": signature(dataset_hash, policy=trace.memory_policy, mode=trace.mode),
    }
    return {
        "pass": float(default.success),
        "score": default.score,
        "pass_safety_aware": float(safety.success),
        "pass_original": float(original.success),
        "episodes": record,
    }
