"""Let the plain ``lm_eval`` CLI find MemRiskBench's tasks and models.

lm-eval 0.4.13 reads no entry points, so installing this project puts a one-line
``lm_eval_memrisk-autoload.pth`` into site-packages that imports this module at
interpreter start.  It only adds an import hook (a ``sys.meta_path`` finder that
answers ``None`` for everything but two lm-eval modules), so the cost of every
Python start is one small module import (measured in the README, well under 5 ms).
When lm-eval itself is imported, the hook patches two things right after the
module has executed:

* ``lm_eval.tasks.manager``: ``TaskManager`` also indexes our task configs
  (appended to ``include_path``, so built-in and user paths are unchanged);
* ``lm_eval.models``: our models are registered as lazy placeholders
  (``llama-cpp``, ``memrisk-agent``), exactly like lm-eval's own MODEL_MAPPING.

Set ``MEMRISK_NO_AUTOLOAD=1`` to disable the hook.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # keep interpreter start-up cheap: no runtime imports beyond os/sys
    from importlib.machinery import ModuleSpec
    from pathlib import Path
    from types import ModuleType

MODELS = {
    "llama-cpp": "lm_eval_memrisk.harness.llama_cpp:LlamaCppLM",
    "memrisk-agent": "lm_eval_memrisk.harness.agent_model:MemriskAgentLM",
}


def tasks_dir() -> Path:
    """Folder holding the MemRiskBench task YAMLs (installed or source checkout)."""
    from pathlib import Path

    here = Path(__file__).resolve().parent
    installed = here / "lmeval_tasks"
    if installed.is_dir():
        return installed
    return here.parent / "tasks"


def register_models(registry: Any) -> None:
    for name, target in MODELS.items():
        if name not in registry:
            registry.register(name, target=target)


def _patch_task_manager(module: ModuleType) -> None:
    cls = module.TaskManager
    if getattr(cls, "_memrisk_patched", False):
        return
    original = cls.__init__

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
    from lm_eval.api.registry import model_registry

    register_models(model_registry)


PATCHES: dict[str, Callable[[ModuleType], None]] = {
    "lm_eval.tasks.manager": _patch_task_manager,
    "lm_eval.models": _patch_models,
}


class _PatchingLoader:
    """Wraps a module's loader to run a patch right after the module executes."""

    def __init__(self, wrapped: Any, patch: Callable[[ModuleType], None]):
        self._wrapped, self._patch = wrapped, patch

    def __getattr__(self, name: str) -> Any:  # get_resource_reader, is_package, ...
        return getattr(self._wrapped, name)

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        module: ModuleType | None = self._wrapped.create_module(spec)
        return module

    def exec_module(self, module: ModuleType) -> None:
        self._wrapped.exec_module(module)
        self._patch(module)


class _Finder:
    """A meta-path finder that only answers for the modules in PATCHES."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        patch = PATCHES.get(fullname)
        if patch is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _PatchingLoader(spec.loader, patch)  # type: ignore[assignment]
                return spec
        return None


def install() -> None:
    """Add the hook (idempotent); patch modules that are already imported."""
    if os.environ.get("MEMRISK_NO_AUTOLOAD"):
        return
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
    for name, patch in PATCHES.items():
        if name in sys.modules:
            patch(sys.modules[name])


install()
