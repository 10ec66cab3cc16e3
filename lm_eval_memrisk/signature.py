"""The result signature: every setting that moves a number, in one string."""

from __future__ import annotations

from lm_eval_memrisk.scorer import SCORER_VERSION


def signature(dataset_hash: str, variant: str = "default", expected: str = "revised",
              policy: str = "full", mode: str = "scripted", agent: str | None = None) -> str:
    """sacrebleu-style signature of every setting that moves a number."""
    parts = ["memrisk:v1", f"data={dataset_hash}", f"scorer={SCORER_VERSION}", f"variant={variant}"]
    if expected != "revised":
        parts.append(f"expected={expected}")
    parts += [f"policy={policy}", f"mode={mode}"]
    if agent:
        parts.append(f"agent={agent}")
    return "|".join(parts)
