"""memrisk eval: ``lm_eval`` with the same flags, minus the built-in task index.

lm-eval's CLI indexes its ~14,700 built-in task configs at every start (~7 s here).
The flags are parsed by lm-eval's own parser (so ``--tasks a,b``, ``--tasks a b``,
``-t a`` all count); when every requested task is a MemRiskBench task (or a YAML
path), ``memrisk eval`` indexes only our task folder, so it starts in about a second.
For our own CPU models it also records ``--device cpu`` unless a device was given
(lm-eval would record its default, ``cuda:0``).  Everything else — flags, output
files, printed tables — is lm-eval's own.  An lm-eval outside the supported range is
refused with a message instead of being patched.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from lm_eval_memrisk.episodes.errors import MemriskError

HELP = "run lm_eval with the same flags, indexing only the MemRiskBench tasks (fast start)"
OUR_CPU_MODELS = ("llama-cpp", "memrisk-agent")


def add_arguments(p: argparse.ArgumentParser) -> None:  # documented; main() parses
    p.add_argument("lm_eval_args", nargs=argparse.REMAINDER, help="any lm_eval flags")


def only_memrisk_tasks(names: Sequence[str] | None) -> bool:
    names = [n.strip() for n in names or () if n.strip()]
    return bool(names) and all(n.startswith("memriskbench") or n.endswith(".yaml") for n in names)


def runs_on_cpu(model: str | None, model_args: Any) -> bool:
    """True for our models when nothing is offloaded to a GPU (lm-eval's device is moot)."""
    if model not in OUR_CPU_MODELS:
        return False
    args = _as_mapping(model_args)
    base = args.get("base")
    if model == "memrisk-agent" and base not in (None, "", "llama-cpp"):
        return False  # a wrapped hf/vllm/... model uses the device
    return str(args.get("n_gpu_layers", "0")).strip() in ("", "0")


def _as_mapping(model_args: Any) -> Mapping[str, Any]:
    if isinstance(model_args, Mapping):
        return model_args
    if isinstance(model_args, str):
        pairs = (kv.split("=", 1) for kv in model_args.split(",") if "=" in kv)
        return {k.strip(): v.strip() for k, v in pairs}
    return {}


def skip_builtin_index() -> None:
    """Make TaskManager default to include_defaults=False for this process."""
    import functools

    from lm_eval.tasks import manager

    cls: Any = manager.TaskManager
    if getattr(cls, "_memrisk_fast_start", False):
        return
    original = cls.__init__

    @functools.wraps(original)
    def __init__(self: Any, *args: Any, include_defaults: bool = False, **kwargs: Any) -> None:
        original(self, *args, include_defaults=include_defaults, **kwargs)

    cls.__init__ = __init__
    cls._memrisk_fast_start = True


def main(argv: Sequence[str]) -> int:
    from lm_eval_memrisk.lm_eval_patches import unsupported_reason

    reason = unsupported_reason()
    if reason:
        print(f"memrisk eval: {reason}", file=sys.stderr)
        return 2
    import lm_eval_memrisk._autoload as autoload

    autoload.install()  # also works from a source checkout without the .pth file
    from lm_eval._cli import HarnessCLI
    from lm_eval.utils import setup_logging

    old_argv = sys.argv
    sys.argv = ["lm_eval", *argv]
    try:
        setup_logging()
        parser = HarnessCLI()
        args = parser.parse_args()  # lm-eval's own parser (inserts "run" as lm_eval does)
        if only_memrisk_tasks(getattr(args, "tasks", None)):
            skip_builtin_index()
        if getattr(args, "device", "") is None and runs_on_cpu(
            getattr(args, "model", None), getattr(args, "model_args", None)
        ):
            args.device = "cpu"
        parser.execute(args)
        _report_invalid_replies()
    except MemriskError as exc:  # bad input (e.g. a partial episodes file): no traceback
        print(f"memrisk eval: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:
        return int(exc.code or 0) if not isinstance(exc.code, str) else 1
    finally:
        sys.argv = old_argv
    return 0


def _report_invalid_replies() -> None:
    from lm_eval_memrisk.logs import invalid_replies

    noted = invalid_replies.take()
    if noted:
        print(f"memrisk eval: {invalid_replies.summary(noted)}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    return main(args.lm_eval_args)
