"""The ``memrisk`` command: a thin dispatcher over one module per subcommand.

Each subcommand module in this package defines ``HELP`` (one line),
``add_arguments(parser)`` and ``run(args) -> int``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Any

from lm_eval_memrisk.episodes.errors import MemriskError

#: subcommand name -> module (relative to this package)
COMMANDS: dict[str, str] = {
    "validate": "validate",
    "show": "show",
    "run": "run",
    "score": "score",
    "eval": "eval",
    "rescore": "rescore",
    "runs": "runs",
    "export-hf": "export_hf",
    "select": "select",
    "stats": "stats",
    "leaderboard": "leaderboard",
    "report": "report",
    "fuzz": "fuzz",
    "weak": "weak",
    "audit": "audit",
}


def _load(name: str) -> Any:
    return importlib.import_module(f"{__name__}.{COMMANDS[name]}")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``only``, just that subcommand's module is imported."""
    parser = argparse.ArgumentParser(
        prog="memrisk", description="MemRiskBench: memory-risk evaluation for LLM agents."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS if only is None else [only]:
        try:
            mod = _load(name)
        except ImportError as exc:  # an optional dependency is missing: say which
            sub.add_parser(name, help=f"(unavailable: {exc})")
            continue
        p = sub.add_parser(name, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "eval":  # passes lm_eval's own flags through untouched
        from lm_eval_memrisk.cli import eval as eval_cmd

        return eval_cmd.main(argv[1:])
    command = argv[0] if argv and argv[0] in COMMANDS else None
    parser = build_parser(command)
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    try:
        return int(_load(args.command).run(args))
    except MemriskError as exc:
        print(f"memrisk {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
