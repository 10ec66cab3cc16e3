"""The patches behind the discovery hook (:mod:`lm_eval_memrisk._autoload`).

Imported only when lm-eval itself is being imported, so none of this costs anything
at interpreter start.  Nothing is patched blindly: an lm-eval outside
:data:`SUPPORTED_LM_EVAL` (the range declared in setup.cfg), or a module whose shape
we do not recognise, gets an :class:`AutoloadWarning` naming the problem and is left
untouched; a patch that fails warns too and never breaks ``lm_eval``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from lm_eval_memrisk._autoload import tasks_dir

if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec
    from types import ModuleType

#: The lm-eval versions this package works with; setup.cfg declares the same range
#: (a test keeps them equal) and scripts/test.sh runs both ends.
SUPPORTED_LM_EVAL = ">=0.4.12,<0.5"
_LOWEST = (0, 4, 12)
_FIRST_UNSUPPORTED = (0, 5)

MODELS = {
    "llama-cpp": "lm_eval_memrisk.harness.llama_cpp:LlamaCppLM",
    "memrisk-agent": "lm_eval_memrisk.harness.agent_model:MemriskAgentLM",
    "memrisk-chat-completions": "lm_eval_memrisk.harness.chat_completions:MemriskChatCompletion",
}


class AutoloadWarning(UserWarning):
    """The hook left lm-eval untouched (unsupported version, unknown shape, failure)."""


def parse_version(text: str) -> tuple[int, ...]:
    """Leading numeric release components: ``"0.4.13.dev0"`` -> ``(0, 4, 13)``."""
    parts: list[int] = []
    for piece in text.split("."):
        digits = ""
        for ch in piece:
            if not ch.isdigit():
                break
            digits += ch
        if not digits:
            break
        parts.append(int(digits))
        if len(digits) != len(piece):
            break
    return tuple(parts)


def lm_eval_version() -> str | None:
    """The installed lm-eval's version, or None when lm-eval is not installed."""
    module = sys.modules.get("lm_eval")
    version = getattr(module, "__version__", None)
    if isinstance(version, str):
        return version
    from importlib import metadata

    try:
        return metadata.version("lm_eval")
    except metadata.PackageNotFoundError:
        return None


def unsupported_reason(version: str | None = None) -> str | None:
    """None when lm-eval ``version`` (default: the installed one) is supported, else why not."""
    version = lm_eval_version() if version is None else version
    if version is None:
        return "lm-eval is not installed"
    parsed = parse_version(version)
    if not parsed or not (_LOWEST <= parsed < _FIRST_UNSUPPORTED):
        return (
            f"lm-eval {version} is outside the range MemRiskBench supports "
            f"(lm-eval{SUPPORTED_LM_EVAL}); install a supported one: "
            f"pip install 'lm-eval{SUPPORTED_LM_EVAL}'"
        )
    return None


def _warn(message: str) -> None:
    import warnings

    warnings.warn(
        f"MemRiskBench: {message}. The memriskbench tasks and the llama-cpp/memrisk-agent "
        f"models are not registered with lm-eval (set MEMRISK_NO_AUTOLOAD=1 to silence this).",
        AutoloadWarning,
        stacklevel=3,
    )


def register_models(registry: Any) -> None:
    for name, target in MODELS.items():
        if name not in registry:
            registry.register(name, target=target)


def _patch_task_manager(module: ModuleType) -> None:
    import functools
    import inspect

    cls = getattr(module, "TaskManager", None)
    if cls is not None and getattr(cls, "_memrisk_patched", False):
        return
    if cls is None or "include_path" not in inspect.signature(cls.__init__).parameters:
        raise LookupError("lm_eval.tasks.manager.TaskManager(include_path=...) not found")
    original = cls.__init__

    @functools.wraps(original)
    def __init__(self: Any, *args: Any, include_path: Any = None, **kwargs: Any) -> None:
        ours = str(tasks_dir())
        paths: list[Any] = (
            [] if include_path is None
            else list(include_path) if isinstance(include_path, (list, tuple))
            else [include_path]
        )
        if ours not in {str(p) for p in paths}:
            paths.append(ours)
        original(self, *args, include_path=paths, **kwargs)

    cls.__init__ = __init__
    cls._memrisk_patched = True


def _patch_models(module: ModuleType) -> None:
    from lm_eval.api import registry

    model_registry = getattr(registry, "model_registry", None)
    if model_registry is None or not hasattr(model_registry, "register"):
        raise LookupError("lm_eval.api.registry.model_registry.register not found")
    register_models(model_registry)


#: lm-eval's ``--seed`` for sampling (its torch slot: ``--seed 42`` sets all four slots
#: to 42; the default, 1234, is the llama-cpp model's own default), set while
#: ``simple_evaluate`` runs.  lm-eval 0.4.13 seeds random/numpy/torch but hands no seed
#: to the model, so the llama-cpp model reads it here (a ``seed`` model_arg wins) and
#: the task signs it; None outside a run or when ``--seed`` left that slot unset.
RUN_SEED: ContextVar[int | None] = ContextVar("memrisk_run_seed", default=None)


def _patch_evaluator(module: ModuleType) -> None:
    import functools
    import inspect

    original = getattr(module, "simple_evaluate", None)
    if original is None or getattr(original, "_memrisk_patched", False):
        return
    params = inspect.signature(original).parameters
    if "torch_random_seed" not in params:
        raise LookupError("lm_eval.evaluator.simple_evaluate(torch_random_seed=...) not found")
    default = params["torch_random_seed"].default

    @functools.wraps(original)
    def simple_evaluate(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = inspect.signature(original).bind_partial(*args, **kwargs).arguments
        except TypeError:  # let lm-eval report a bad call itself
            bound = {}
        seed = bound.get("torch_random_seed", default)
        token = RUN_SEED.set(int(seed) if isinstance(seed, int) and not isinstance(seed, bool) else None)
        try:
            return original(*args, **kwargs)
        finally:
            RUN_SEED.reset(token)

    simple_evaluate._memrisk_patched = True  # type: ignore[attr-defined]
    module.simple_evaluate = simple_evaluate  # type: ignore[attr-defined]


PATCHES: dict[str, Callable[[ModuleType], None]] = {
    "lm_eval.tasks.manager": _patch_task_manager,
    "lm_eval.models": _patch_models,
    "lm_eval.evaluator": _patch_evaluator,
}

_state: dict[str, str | None] = {}  # "reason": why lm-eval is unsupported (checked once)


def apply_patch(name: str, module: ModuleType) -> bool:
    """Run the patch for ``name`` if lm-eval is supported; warn (never raise) otherwise."""
    if "reason" not in _state:
        try:
            _state["reason"] = unsupported_reason()
        except Exception as exc:  # noqa: BLE001  (a broken metadata install must not break lm_eval)
            _state["reason"] = f"could not read lm-eval's version ({type(exc).__name__}: {exc})"
        if _state["reason"]:
            _warn(str(_state["reason"]))
    if _state["reason"]:
        return False
    try:
        PATCHES[name](module)
    except Exception as exc:  # noqa: BLE001  (any failure warns; lm_eval must keep working)
        _warn(f"could not hook into {name} ({type(exc).__name__}: {exc})")
        return False
    return True


class _PatchingLoader:
    """Wraps a module's loader to run a patch right after the module executes."""

    def __init__(self, wrapped: Any, name: str):
        self._wrapped, self._name = wrapped, name

    def __getattr__(self, name: str) -> Any:  # get_resource_reader, is_package, ...
        return getattr(self._wrapped, name)

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        module: ModuleType | None = self._wrapped.create_module(spec)
        return module

    def exec_module(self, module: ModuleType) -> None:
        self._wrapped.exec_module(module)
        apply_patch(self._name, module)


def patched_spec(fullname: str, path: Any, target: ModuleType | None) -> ModuleSpec | None:
    """The real spec of ``fullname`` (from the other finders) with a patching loader."""
    for other in sys.meta_path:
        if getattr(other, "memrisk_autoload", False) or not hasattr(other, "find_spec"):
            continue
        spec: ModuleSpec | None = other.find_spec(fullname, path, target)
        if spec is not None and spec.loader is not None:
            spec.loader = _PatchingLoader(spec.loader, fullname)  # type: ignore[assignment]
            return spec
    return None
