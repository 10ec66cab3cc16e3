"""Let the plain ``lm_eval`` CLI find MemRiskBench's tasks and models.

lm-eval (0.4.12, 0.4.13) reads no entry points, so installing this project puts a
one-line ``lm_eval_memrisk-autoload.pth`` into site-packages.  That line checks the
opt-out ``MEMRISK_NO_AUTOLOAD`` itself and only then imports this module, which adds
an import hook: a ``sys.meta_path`` finder that answers ``None`` for every module but
two of lm-eval's.  This module runs at every interpreter start, so it imports nothing
(``sys`` and ``os`` are loaded by then) and holds no annotations that need ``typing``
or ``__future__``; ``benchmarks/bench_startup.py`` measures what it adds to
``python -c pass`` (README, Benchmarks).

When lm-eval imports ``lm_eval.tasks.manager`` or ``lm_eval.models``, the finder hands
the module to :mod:`lm_eval_memrisk.lm_eval_patches`, which checks the lm-eval version
and patches right after the module has executed: ``TaskManager`` also indexes our
task configs, and ``llama-cpp`` / ``memrisk-agent`` are registered as lazy models.
"""

import os
import sys

TYPE_CHECKING = False  # quoted annotations below: typing is not imported at start-up
if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from pathlib import Path
    from types import ModuleType

TARGETS = frozenset({"lm_eval.tasks.manager", "lm_eval.models"})


def tasks_dir() -> "Path":
    """Folder holding the MemRiskBench task YAMLs (installed or source checkout)."""
    from pathlib import Path

    here = Path(__file__).resolve().parent
    installed = here / "lmeval_tasks"
    if installed.is_dir():
        return installed
    return here.parent / "tasks"


class _Finder:
    """A meta-path finder that only answers for the modules in TARGETS."""

    def find_spec(
        self, fullname: str, path: "Sequence[str] | None", target: "ModuleType | None" = None
    ) -> "ModuleSpec | None":
        if fullname not in TARGETS:
            return None
        from lm_eval_memrisk.lm_eval_patches import patched_spec

        return patched_spec(self, fullname, path, target)


def install() -> None:
    """Add the hook (idempotent); patch lm-eval modules that are already imported."""
    if os.environ.get("MEMRISK_NO_AUTOLOAD"):
        return
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
    loaded = [name for name in TARGETS if name in sys.modules]
    if loaded:
        from lm_eval_memrisk.lm_eval_patches import apply_patch

        for name in sorted(loaded):
            apply_patch(name, sys.modules[name])


install()
