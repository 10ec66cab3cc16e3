"""Prompt tokens llama.cpp evaluates on the full main track, without generating.

    python benchmarks/bench_prompt_tokens.py [--model qwen2.5-coder-0.5b] [--presentations chat,history,session]

Renders every decision point's prompt through the GGUF's own chat template, tokenizes
it with the model's tokenizer (``vocab_only``: no weights loaded), orders the prompts
as the llama-cpp model does (prefix-sorted) and counts the tokens llama.cpp would
evaluate: each prompt minus its common prefix with the previous one (the KV cache
holds one sequence; generated tokens only follow a prompt, so they never extend the
next prompt's shared prefix).  Run it on an older checkout to compare layouts (the
README's before/after table did that with the v1 commit).
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys

from lm_eval_memrisk.harness.llama_cpp import common_prefix_len, prefix_sorted_order


def count(model: str, presentation: str | None) -> dict[str, object]:
    import llama_cpp
    from llama_cpp import llama_chat_format as lcf

    from lm_eval_memrisk.episodes.loader import load_episodes
    from lm_eval_memrisk.harness.model_files import resolve_model
    from lm_eval_memrisk.running.runner import prompts

    llm = llama_cpp.Llama(model_path=str(resolve_model(model, None, None, None, None)), vocab_only=True, verbose=False)
    eos = llm._model.token_get_text(llm.token_eos())
    bos_id = llm.token_bos()
    bos = llm._model.token_get_text(bos_id) if bos_id >= 0 else ""
    fmt = lcf.Jinja2ChatFormatter(template=llm.metadata["tokenizer.chat_template"], eos_token=eos, bos_token=bos,
                                  add_generation_prompt=True)
    takes_presentation = "presentation" in inspect.signature(prompts).parameters
    contexts = []
    for ep in load_episodes(track="main"):
        if takes_presentation:
            from lm_eval_memrisk.episodes.render import make_presentation

            rendered = prompts(ep, None, make_presentation(presentation))
        else:
            rendered = prompts(ep, None)
        contexts += [fmt(messages=m).prompt for _, m in rendered]
    tokens = [llm.tokenize(c.encode("utf-8"), add_bos=not (bos and c.startswith(bos)), special=True) for c in contexts]
    evaluated, prev = 0, None
    for i in prefix_sorted_order(contexts):
        t = tokens[i]
        evaluated += len(t) - (common_prefix_len(prev, t) if prev is not None else 0)
        prev = t
    total = sum(len(t) for t in tokens)
    return {"model": model, "presentation": presentation if takes_presentation else "v1 (chat)",
            "requests": len(contexts), "prompt_tokens": total, "evaluated": evaluated,
            "reused_pct": round(100 * (1 - evaluated / total), 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="qwen2.5-coder-0.5b")
    ap.add_argument("--presentations", default="chat,history,session")
    args = ap.parse_args(argv)
    for p in args.presentations.split(","):
        print(json.dumps(count(args.model, p)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
