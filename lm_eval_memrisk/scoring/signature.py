"""The result signature: every setting that moves a number, in one string."""

from __future__ import annotations

from lm_eval_memrisk.scoring.scorer import SCORER_VERSION


def signature(dataset_hash: str, variant: str = "default", expected: str = "revised",
              policy: str = "full", mode: str = "scripted", agent: str | None = None,
              presentation: str = "history", tools: str = "text",
              k: int = 1, temperature: float | None = None) -> str:
    """sacrebleu-style signature of every setting that moves a number.

    ``k`` > 1 (repeated sampling) adds ``k`` and the sampling temperature.
    """
    from lm_eval_memrisk.episodes.render import RENDER_VERSION

    parts = ["memrisk:v1", f"data={dataset_hash}", f"scorer={SCORER_VERSION}", f"variant={variant}"]
    if expected != "revised":
        parts.append(f"expected={expected}")
    parts += [f"policy={policy}", f"mode={mode}", f"presentation={presentation}", f"tools={tools}",
              f"render={RENDER_VERSION}"]
    if k > 1:
        parts += [f"k={k}", f"temperature={temperature if temperature is not None else 0.0:g}"]
    if agent:
        parts.append(f"agent={agent}")
    return "|".join(parts)
