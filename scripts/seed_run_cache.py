"""Seed an lm-eval request cache from logged llama.cpp runs (``harness.seed_cache``).

For a run of a dataset version that keeps some prompts of another (v8 keeps v7's outside
R2 and R3): lm-eval with ``--use_cache PREFIX`` then serves every request whose context
and generation settings a logged run already answered, and generates the rest, so a
reference run on the new version costs only its new prompts.  The model is loaded only
for its chat template (the contexts are rebuilt from the logged messages and checked
against the logged ones).  Run from the repository root:

    PYTHONPATH=. python scripts/seed_run_cache.py MODEL PREFIX RUN_DIR [RUN_DIR ...]

MODEL: the model's name (``qwen2.5-coder-0.5b``); PREFIX: the cache path lm-eval gets
(writes ``PREFIX_rank0.db``); RUN_DIR: folders of ``samples_*.jsonl[.gz]`` of that model
(e.g. ``selector/data/reference/qwen2.5-coder-0.5b``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.jsonl import read_sample_objects
from lm_eval_memrisk.harness.seed_cache import cache_entries, seed

#: The task config whose ``generation_kwargs`` order lm-eval's requests keep.
TASK_COMMON = Path(__file__).resolve().parent.parent / "tasks" / "memriskbench" / "_memriskbench_common"


def generation_order() -> list[str]:
    """The keys of the tasks' ``generation_kwargs``, in the YAML's order."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    config = yaml.load(TASK_COMMON.read_text(encoding="utf-8"), Loader=Loader)
    return list(config["generation_kwargs"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("prefix")
    parser.add_argument("runs", nargs="+", type=Path)
    args = parser.parse_args()
    files = sorted(f for d in args.runs for f in d.glob("samples_*.jsonl*"))
    if not files:
        print(f"no samples_*.jsonl[.gz] in {', '.join(map(str, args.runs))}", file=sys.stderr)
        return 2
    from lm_eval_memrisk.harness.llama_cpp import LlamaCppLM

    lm = LlamaCppLM(model=args.model, n_ctx=512, n_threads=1)
    samples = (s for f in files for s in read_sample_objects(f))
    try:
        n = seed(f"{args.prefix}_rank0.db", cache_entries(samples, lm.apply_chat_template, generation_order()))
    except MemriskError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"seeded {n} replies from {len(files)} files into {args.prefix}_rank0.db")
    return 0


if __name__ == "__main__":
    sys.exit(main())
