"""The result signature: every setting that moves a number, in one string."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lm_eval_memrisk.scorer import SCORER_VERSION

#: The generation settings a signature names, in its order.  Greedy decoding at the
#: task's ``max_gen_toks`` (the default) adds nothing; a sampled run adds its
#: temperature, top_p/top_k when set, and seed; any run adds a non-default max_gen_toks.
GENERATION_KEYS: tuple[str, ...] = ("temperature", "top_p", "top_k", "seed", "max_gen_toks")


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in {"1", "true", "yes", "on"}
    return bool(value)


def _number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def generation_settings(
    gen_kwargs: Mapping[str, Any] | None = None, model_args: Mapping[str, Any] | None = None,
    run_seed: int | str | None = None,
) -> dict[str, Any]:
    """The effective generation settings of a run, normalised for :func:`signature`.

    ``gen_kwargs``: the task's ``generation_kwargs`` as they ran (lm-eval's
    ``--gen_kwargs`` and ``--metadata`` applied; missing keys take the task defaults,
    :func:`lm_eval_memrisk.generation.default_gen_kwargs`).  ``model_args``: the model's
    own ``temperature``/``max_gen_toks``/``seed``/``top_p``/``top_k`` win over the task's
    (as the llama-cpp model applies them; a ``temperature`` there samples whatever
    ``do_sample`` says).  ``run_seed``: lm-eval's ``--seed`` (its torch slot), the seed
    of a sampled run that sets none itself.

    Returns ``{}`` for greedy decoding at the default ``max_gen_toks``; a sampled run
    gives ``do_sample``, ``temperature``, ``top_p``/``top_k`` (when set) and ``seed``;
    a non-default ``max_gen_toks`` is kept either way.  Greedy decoding ignores
    temperature, top_p, top_k and seed, so two greedy runs that differ only there share
    a signature, and two runs that sampled differently never do.
    """
    from lm_eval_memrisk.generation import default_gen_kwargs

    gen = {**default_gen_kwargs(), **dict(gen_kwargs or {})}
    args = {k: v for k, v in dict(model_args or {}).items() if v is not None and v != ""}
    for key in GENERATION_KEYS:
        if key in args:
            gen[key] = args[key]
    temperature = _number(gen.get("temperature")) or 0.0
    sampled = temperature > 0.0 and ("temperature" in args or _truthy(gen.get("do_sample", False)))
    out: dict[str, Any] = {}
    if sampled:
        out["do_sample"] = True
        out["temperature"] = temperature
        for key in ("top_p", "top_k"):
            value = _number(gen.get(key))
            if value is not None:
                out[key] = int(value) if key == "top_k" else value
        seed = gen.get("seed", run_seed)
        if _number(seed) is not None:
            out["seed"] = int(float(seed))  # type: ignore[arg-type]
    max_gen = _number(gen.get("max_gen_toks"))
    if max_gen is not None and int(max_gen) != default_gen_kwargs()["max_gen_toks"]:
        out["max_gen_toks"] = int(max_gen)
    return out


def signature(dataset_hash: str, variant: str = "default", expected: str = "revised",
              policy: str = "full", mode: str = "scripted", agent: str | None = None,
              presentation: str = "history", tools: str = "text",
              k: int = 1, temperature: float | None = None,
              generation: Mapping[str, Any] | None = None) -> str:
    """sacrebleu-style signature of every setting that moves a number.

    ``k`` > 1 (repeated sampling) adds ``k`` and the sampling temperature.
    ``generation``: the run's effective generation settings (:func:`generation_settings`):
    empty for greedy decoding at the default length, else its temperature, top_p,
    top_k, seed and max_gen_toks as set.
    """
    from lm_eval_memrisk.render import RENDER_VERSION

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
