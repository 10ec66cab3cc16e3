"""The result signature: every setting that moves a number, in one string."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lm_eval_memrisk.scoring.scorer import SCORER_VERSION

#: The generation settings a signature names, in its order.  Greedy decoding at the
#: task's ``max_gen_toks`` (the default) adds nothing; a sampled run adds its
#: temperature, top_p/top_k when set, and seed; any run adds a non-default max_gen_toks
#: (:func:`lm_eval_memrisk.running.generation.generation_settings` normalises a run's
#: settings to these; it lives in running/ with the task defaults it reads, since the
#: scoring core imports nothing above the episode model).
GENERATION_KEYS: tuple[str, ...] = ("temperature", "top_p", "top_k", "seed", "max_gen_toks")


def signature(dataset_hash: str, variant: str = "default", expected: str = "revised",
              policy: str = "full", mode: str = "scripted", agent: str | None = None,
              presentation: str = "history", tools: str = "text",
              k: int = 1, temperature: float | None = None,
              generation: Mapping[str, Any] | None = None) -> str:
    """sacrebleu-style signature of every setting that moves a number.

    ``k`` > 1 (repeated sampling) adds ``k`` and the sampling temperature.
    ``generation``: the run's effective generation settings (:func:`lm_eval_memrisk.running.generation.generation_settings`):
    empty for greedy decoding at the default length, else its temperature, top_p,
    top_k, seed and max_gen_toks as set.
    """
    from lm_eval_memrisk.episodes.render import RENDER_VERSION

    parts = ["memrisk:v1", f"data={dataset_hash}", f"scorer={SCORER_VERSION}", f"variant={variant}"]
    if expected != "revised":
        parts.append(f"expected={expected}")
    parts += [f"policy={policy}", f"mode={mode}", f"presentation={presentation}", f"tools={tools}",
              f"render={RENDER_VERSION}"]
    gen = dict(generation or {})
    if k > 1:
        parts.append(f"k={k}")
        if "temperature" not in gen:
            gen["temperature"] = temperature if temperature is not None else 0.0
    elif temperature is not None and temperature > 0 and "temperature" not in gen:
        gen["temperature"] = temperature
    for key in GENERATION_KEYS:
        if key in gen:
            value = gen[key]
            parts.append(f"{key}={value:g}" if isinstance(value, float) else f"{key}={value}")
    if agent:
        parts.append(f"agent={agent}")
    return "|".join(parts)
