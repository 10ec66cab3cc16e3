"""memrisk eval: ``lm_eval`` with the same flags, minus the built-in task index.

lm-eval's CLI indexes its ~14,700 built-in task configs at every start (~7 s here).
When every requested task is a MemRiskBench task (or a YAML path), ``memrisk eval``
indexes only our task folder, so it starts in about a second.  Everything else —
flags, output files, printed tables — is lm-eval's own.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

HELP = "run lm_eval with the same flags, indexing only the MemRiskBench tasks (fast start)"


def add_arguments(p: argparse.ArgumentParser) -> None:  # documented; main() parses
    p.add_argument("lm_eval_args", nargs=argparse.REMAINDER, help="any lm_eval flags")


def requested_tasks(argv: Sequence[str]) -> list[str]:
    names: list[str] = []
    for i, arg in enumerate(argv):
        if arg == "--tasks" and i + 1 < len(argv):
            names += argv[i + 1].split(",")
        elif arg.startswith("--tasks="):
            names += arg.split("=", 1)[1].split(",")
    return [n.strip() for n in names if n.strip()]


def only_memrisk_tasks(names: Sequence[str]) -> bool:
    return bool(names) and all(n.startswith("memriskbench") or n.endswith(".yaml") for n in names)


def skip_builtin_index() -> None:
    """Make TaskManager default to include_defaults=False for this process."""
    from lm_eval.tasks import manager

    cls: Any = manager.TaskManager
    original = cls.__init__

    def __init__(self: Any, *args: Any, include_defaults: bool = False, **kwargs: Any) -> None:
        original(self, *args, include_defaults=include_defaults, **kwargs)

    cls.__init__ = __init__


def main(argv: Sequence[str]) -> int:
    import lm_eval_memrisk._autoload as autoload

    autoload.install()  # also works from a source checkout without the .pth file
    argv = list(argv)
    if only_memrisk_tasks(requested_tasks(argv)):
        skip_builtin_index()
    from lm_eval.__main__ import cli_evaluate

    old_argv = sys.argv
    sys.argv = ["lm_eval", *argv]
    try:
        cli_evaluate()
    except SystemExit as exc:
        return int(exc.code or 0) if not isinstance(exc.code, str) else 1
    finally:
        sys.argv = old_argv
    return 0


def run(args: argparse.Namespace) -> int:
    return main(args.lm_eval_args)
