"""The ``memrisk`` command: a thin dispatcher over one module per subcommand.

Each subcommand module in this package defines ``HELP`` (one line),
``add_arguments(parser)`` and ``run(args) -> int``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

from lm_eval_memrisk.errors import MemriskError

#: subcommand name -> module (relative to this package)
COMMANDS: dict[str, str] = {
    "validate": "validate",
    "show": "show",
    "run": "run",
    "score": "score",
    "eval": "eval",
    "rescore": "rescore",
    "export-hf": "export_hf",
    "select": "select",
    "stats": "stats",
    "leaderboard": "leaderboard",
    "report": "report",
    "fuzz": "fuzz",
}


def _available() -> dict[str, object]:
    mods: dict[str, object] = {}
    for name, mod in COMMANDS.items():
        try:
            mods[name] = importlib.import_module(f"{__name__}.{mod}")
        except ModuleNotFoundError as exc:  # subcommand not built yet or optional dep missing
            if exc.name and exc.name.startswith(f"{__name__}.{mod}"):
                continue
            raise
    return mods


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, object]]:
    parser = argparse.ArgumentParser(
        prog="memrisk", description="MemRiskBench: memory-risk evaluation for LLM agents."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    mods = _available()
    for name, mod in mods.items():
        p = sub.add_parser(name, help=getattr(mod, "HELP", ""), description=getattr(mod, "HELP", ""))
        mod.add_arguments(p)  # type: ignore[attr-defined]
    return parser, mods


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "eval":  # passes lm_eval's own flags through untouched
        from lm_eval_memrisk.cli import eval as eval_cmd

        return eval_cmd.main(argv[1:])
    parser, mods = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    try:
        return int(mods[args.command].run(args))  # type: ignore[attr-defined]
    except MemriskError as exc:
        print(f"memrisk {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
