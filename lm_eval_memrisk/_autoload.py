"""Let the plain ``lm_eval`` CLI find MemRiskBench's tasks and models.

lm-eval (0.4.12, 0.4.13) reads no entry points, so installing this project puts a
one-line ``lm_eval_memrisk-autoload.pth`` into site-packages.  That line runs at every
interpreter start, so it imports no file: it checks the opt-out
``MEMRISK_NO_AUTOLOAD`` and otherwise puts a tiny ``sys.meta_path`` finder in front
(a class built inline, marked ``memrisk_autoload``) that answers ``None`` for every
module but ``lm_eval.tasks.manager``, ``lm_eval.models`` and ``lm_eval.evaluator``, and for those calls
:func:`find_spec` here.  ``benchmarks/bench_startup.py`` measures what the line adds
to ``python -c pass`` (docs/benchmarks.md).

For those modules, :mod:`lm_eval_memrisk.lm_eval_patches` checks the lm-eval
version and patches right after the module has executed: ``TaskManager`` also indexes
our task configs, ``llama-cpp`` / ``memrisk-agent`` / ``memrisk-chat-completions``
are registered as lazy models, and ``simple_evaluate`` makes lm-eval's ``--seed``
readable by our models (``RUN_SEED``).
:func:`install` does the same without the .pth (``memrisk eval``, a source checkout).
"""

import os
import sys

TYPE_CHECKING = False  # quoted annotations below: typing is not imported at start-up
if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from pathlib import Path
    from types import ModuleType

TARGETS = frozenset({"lm_eval.tasks.manager", "lm_eval.models", "lm_eval.evaluator"})


def tasks_dir() -> "Path":
    """Folder holding the MemRiskBench task YAMLs (installed or source checkout)."""
    from pathlib import Path

    here = Path(__file__).resolve().parent
    installed = here / "lmeval_tasks"
    if installed.is_dir():
        return installed
    return here.parent / "tasks"


def find_spec(
    fullname: str, path: "Sequence[str] | None", target: "ModuleType | None" = None
) -> "ModuleSpec | None":
    """The spec of one of TARGETS with a loader that patches it; None for anything else."""
    if fullname not in TARGETS:
        return None
    from lm_eval_memrisk.lm_eval_patches import patched_spec

    return patched_spec(fullname, path, target)


class _Finder:
    """The finder :func:`install` adds (the .pth line builds an equivalent one inline)."""

    memrisk_autoload = True

    def find_spec(
        self, fullname: str, path: "Sequence[str] | None", target: "ModuleType | None" = None
    ) -> "ModuleSpec | None":
        return find_spec(fullname, path, target)


def install() -> None:
    """Add the hook (idempotent); patch lm-eval modules that are already imported."""
    if os.environ.get("MEMRISK_NO_AUTOLOAD"):
        return
    if not any(getattr(f, "memrisk_autoload", False) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
    # a module still executing (this import happened inside it) is patched by its loader
    loaded = [name for name in TARGETS if name in sys.modules
              and not getattr(getattr(sys.modules[name], "__spec__", None), "_initializing", False)]
    if loaded:
        from lm_eval_memrisk.lm_eval_patches import apply_patch

        for name in sorted(loaded):
            apply_patch(name, sys.modules[name])


install()
