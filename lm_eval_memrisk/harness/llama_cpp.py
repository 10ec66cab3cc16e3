"""In-process llama-cpp-python model for lm-eval, registered as ``llama-cpp``.

``lm_eval --model llama-cpp --model_args model=smollm2-135m,n_ctx=8192 ...``

* One ``Llama`` object; every llama.cpp call runs on the calling thread.
* ``generate_until`` sorts requests by context so prompts that share a prefix run back
  to back and reuse the KV cache (llama-cpp-python keeps the previous prompt's KV and
  only evaluates the new suffix); results come back in the original order.
* Between calls the cache is reset, unless the call's first prompt extends the previous
  call's last prompt (the next step of an interactive episode): then only the new
  tokens are evaluated.
* Greedy by default (temperature 0); each request gets the same fixed sampling seed, so
  outputs do not depend on request order either.  The seed is the ``seed`` model_arg,
  else lm-eval's ``--seed`` (its torch slot, which ``--seed N`` sets; lm-eval hands
  models no seed, so the hook passes it, see ``lm_eval_patches.RUN_SEED``), else 1234
  (lm-eval's default torch seed too).  Identical requests (lm-eval's
  ``repeats``) get seed, seed + 1, ... so k samples at a temperature differ.
* ``temperature``/``max_gen_toks`` given in model_args win over the task's generation
  settings (with a warning); the values that ran are recorded in the results config
  (``effective_generation``).
* A prompt longer than the context is an error (``truncation=error``, the default);
  ``truncation=left`` cuts it from the left and marks the reply, so the episode's
  record says it is invalid.
* ``loglikelihood*`` are not implemented: MemRiskBench only generates.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import lm_eval.models  # noqa: F401  # registers lm-eval's built-ins first (registry gotcha)
from lm_eval.api.instance import Instance
from lm_eval.api.model import LM
from lm_eval.api.registry import register_model
from tqdm import tqdm

from lm_eval_memrisk.episodes.errors import MemriskError, ModelFileError
from lm_eval_memrisk.harness.llama_tokens import LlamaTokens
from lm_eval_memrisk.harness.model_files import (
    GGUFInfo,
    check_gguf,
    portable_args,
    portable_path,
    resolve_model,
    sha256_file,
)
from lm_eval_memrisk.scoring.sample_record import TRUNCATED

logger = logging.getLogger(__name__)

__all__ = ["LlamaCppLM", "common_prefix_len", "prefix_sorted_order"]

_KNOWN_GEN_KWARGS = {"until", "max_gen_toks", "do_sample", "temperature", "top_p", "top_k", "seed"}
_IGNORED_KWARGS = {"batch_size", "max_batch_size", "device", "trust_remote_code", "dtype"}
#: model_args that lm-eval also hands to the task (they set what the task renders)
_TASK_KWARGS = {"presentation", "tools", "memory_policy"}
TRUNCATION_MODES = ("error", "left")


def common_prefix_len(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of two token sequences."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def prefix_sorted_order(contexts: Sequence[str]) -> list[int]:
    """Indices of ``contexts`` sorted so that shared prefixes are adjacent (stable)."""
    return sorted(range(len(contexts)), key=lambda i: (contexts[i], i))


def _request_label(req: Any) -> str:
    """``episode R1-easy-01, decision 1`` for a MemRiskBench request, else a generic label."""
    doc = getattr(req, "doc", None)
    if isinstance(doc, dict) and "episode_id" in doc:
        return f"episode {doc['episode_id']}, decision {int(getattr(req, 'idx', 0)) + 1}"
    return "a request"


def _repeat_offsets(contexts: Sequence[str], kwargs_list: Sequence[dict[str, Any]]) -> list[int]:
    """0 for the first of identical requests, 1 for the second, ... (lm-eval ``repeats``)."""
    seen: dict[str, int] = {}
    out = []
    for ctx, gk in zip(contexts, kwargs_list, strict=True):
        key = ctx + "\x00" + repr(sorted(gk.items(), key=lambda kv: kv[0]))
        out.append(seen.get(key, 0))
        seen[key] = out[-1] + 1
    return out


def _usable_cpus() -> int:
    """CPUs this process may run on (honours affinity/cpusets), else ``os.cpu_count()``."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _as_bool(v: Any) -> bool:
    if isinstance(v, str):
        return v.strip().lower() in {"1", "true", "yes", "on"}
    return bool(v)


#: The sampling seed when neither the ``seed`` model_arg nor lm-eval's ``--seed`` gives one.
DEFAULT_SEED = 1234


def _seed(given: int | str | None) -> tuple[int, str]:
    """(seed, where it came from): the ``seed`` model_arg, else lm-eval's ``--seed``
    (:data:`lm_eval_memrisk.lm_eval_patches.RUN_SEED`), else :data:`DEFAULT_SEED`."""
    if given is not None and given != "":
        return int(given), "model_args"
    from lm_eval_memrisk.lm_eval_patches import RUN_SEED

    run = RUN_SEED.get()
    if run is not None:
        return int(run), "lm_eval --seed"
    return DEFAULT_SEED, "default"


@register_model("llama-cpp")
class LlamaCppLM(LM):  # type: ignore[misc]
    """lm-eval LM backed by one in-process ``llama_cpp.Llama`` (GGUF)."""

    def __init__(
        self,
        model: str | None = None,
        model_path: str | None = None,
        repo_id: str | None = None,
        filename: str | None = None,
        n_ctx: int = 8192,
        n_threads: int | None = None,  # default: usable CPUs
        n_gpu_layers: int = 0,
        seed: int | str | None = None,
        chat_format: str | None = None,
        temperature: float | str | None = None,
        max_gen_toks: int | str | None = None,
        truncation: str = "error",
        n_batch: int = 512,
        prefix_sort: bool = True,
        cache_dir: str | None = None,
        verbose: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__()
        unknown = sorted(set(kwargs) - _IGNORED_KWARGS - _TASK_KWARGS)
        if unknown:
            logger.warning("llama-cpp: ignoring unknown model_args %s", unknown)
        try:
            import llama_cpp
        except ImportError as exc:
            raise ImportError(
                "the llama-cpp model needs llama-cpp-python: "
                "pip install 'lm-eval-memrisk[llama]' (llama-cpp-python==0.3.36)"
            ) from exc
        self._llama_cpp = llama_cpp

        path = resolve_model(
            str(model) if model is not None else None,
            str(model_path) if model_path is not None else None,
            str(repo_id) if repo_id is not None else None,
            str(filename) if filename is not None else None,
            Path(cache_dir) if cache_dir else None,
        )
        self.info: GGUFInfo = check_gguf(path)  # rejects truncated / non-GGUF files
        self.model_path = path
        self.model_name = str(model) if model else path.stem
        self.gguf_sha256 = sha256_file(path)

        trained = self.info.context_length
        self.n_ctx = int(n_ctx) if trained is None else min(int(n_ctx), trained)
        self.n_threads = int(n_threads) if n_threads is not None else _usable_cpus()
        self.n_gpu_layers = int(n_gpu_layers)
        self.seed, self.seed_source = _seed(seed)
        # None = the task's value; a value given in model_args wins over the task's
        self.temperature_arg = None if temperature is None or temperature == "" else float(temperature)
        self.max_gen_toks_arg = None if max_gen_toks is None or max_gen_toks == "" else int(max_gen_toks)
        self.temperature = self.temperature_arg if self.temperature_arg is not None else 0.0
        self.max_gen_toks = self.max_gen_toks_arg if self.max_gen_toks_arg is not None else 256
        if truncation not in TRUNCATION_MODES:
            raise ValueError(f"llama-cpp: truncation must be one of {TRUNCATION_MODES}, not {truncation!r}")
        self.truncation = truncation
        self.effective: dict[str, set[Any]] = {"temperature": set(), "max_gen_toks": set(), "seed": set()}
        self.prefix_sort = _as_bool(prefix_sort)
        self.chat_format = None if chat_format in (None, "", "None") else str(chat_format)

        t0 = time.perf_counter()
        try:
            self.llm = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=self.n_ctx,
                n_batch=min(int(n_batch), self.n_ctx),
                n_threads=self.n_threads,
                n_threads_batch=self.n_threads,
                n_gpu_layers=self.n_gpu_layers,
                seed=self.seed,
                verbose=_as_bool(verbose),
            )
        except (ValueError, RuntimeError) as exc:
            raise ModelFileError(f"{path}: llama.cpp could not load the model: {exc}") from exc
        self.load_time_s = time.perf_counter() - t0

        self._bos_text = self._token_text(self.llm.token_bos())
        self._eos_text = self._token_text(self.llm.token_eos())
        self._template, self._formatters = self._make_formatters()
        self._last_prompt: list[int] = []
        self.stats: dict[str, Any] = {
            "load_time_s": round(self.load_time_s, 4),
            "n_requests": 0,
            "prompt_tokens": 0,
            "prompt_tokens_evaluated": 0,
            "generated_tokens": 0,
            "truncated_prompts": 0,
            "wall_time_s": 0.0,
        }

    # ------------------------------------------------------------------ chat templates

    def _token_text(self, tok: int) -> str:
        if tok < 0:
            return ""
        return str(self.llm._model.token_get_text(tok))

    def _make_formatters(self) -> tuple[str, dict[bool, Callable[..., Any]]]:
        """Return (template string for logging, {add_generation_prompt: formatter})."""
        from llama_cpp import llama_chat_format as lcf

        meta = self.llm.metadata
        name = self.chat_format
        tmpl: str | None = None
        if name is None:
            tmpl = meta.get("tokenizer.chat_template")
            if tmpl is None:
                raise ModelFileError(
                    f"{self.model_path}: the GGUF has no tokenizer.chat_template; "
                    f"pass chat_format=<name> (e.g. chatml, llama-2, gemma)"
                )
        elif f"tokenizer.chat_template.{name}" in meta:
            tmpl = meta[f"tokenizer.chat_template.{name}"]
        if tmpl is not None:
            eos_id = self.llm.token_eos()
            formatters: dict[bool, Callable[..., Any]] = {
                agp: lcf.Jinja2ChatFormatter(
                    template=tmpl,
                    eos_token=self._eos_text,
                    bos_token=self._bos_text,
                    add_generation_prompt=agp,
                    stop_token_ids=[eos_id],
                )
                for agp in (True, False)
            }
            return tmpl, formatters
        assert name is not None
        try:
            handler = lcf.get_chat_completion_handler(name)
        except lcf.LlamaChatCompletionHandlerNotFoundException as exc:
            raise ValueError(f"llama-cpp: unknown chat_format {name!r}: {exc}") from None
        code, closure = getattr(handler, "__code__", None), getattr(handler, "__closure__", None)
        freevars = code.co_freevars if code is not None else ()
        cells = dict(zip(freevars, closure or (), strict=False))
        cell = cells.get("chat_formatter")
        if cell is None:
            raise ValueError(
                f"llama-cpp: chat_format {name!r} is a function-calling handler without a plain "
                f"prompt formatter; use a template format (chatml, llama-2, ...) or the GGUF's own"
            )
        fmt = cell.cell_contents
        return f"chat_format:{name}", {True: fmt, False: fmt}

    def apply_chat_template(
        self, chat_history: list[dict[str, Any]], add_generation_prompt: bool = True,
        tools: list[dict[str, Any]] | None = None,
    ) -> str:
        """Render messages with the GGUF's template (or ``chat_format``).

        ``tools`` (OpenAI function specs) go to the template, as llama-cpp-python's
        ``create_chat_completion(tools=...)`` does (``tools=native``).
        """
        if tools:
            result = self._formatters[bool(add_generation_prompt)](messages=chat_history, tools=tools)
        else:
            result = self._formatters[bool(add_generation_prompt)](messages=chat_history)
        return str(result.prompt)

    def chat_template(self, chat_template: bool | str = False) -> str:
        """The template string (logged by lm-eval as chat_template / chat_template_sha)."""
        return self._template

    @property
    def tokenizer_name(self) -> str:
        """Identifies the tokenizer+template for lm-eval's request cache."""
        return f"llama-cpp-{self.model_name}-{self.gguf_sha256[:16]}"

    # ------------------------------------------------------------------ generation

    def tokenize(self, text: str) -> list[int]:
        """Tokenize a prompt; special tokens are parsed, BOS added unless already present."""
        add_bos = not (self._bos_text and text.startswith(self._bos_text))
        if not self.llm._model.add_bos_token():
            add_bos = False
        return list(self.llm.tokenize(text.encode("utf-8"), add_bos=add_bos, special=True))

    def _expected_evaluated(self, tokens: Sequence[int]) -> int:
        """Prompt tokens llama.cpp will decode, mirroring ``Llama.generate``'s prefix reuse."""
        cached = self.llm._input_ids
        n_cached = int(self.llm.n_tokens)
        if n_cached == 0:
            return len(tokens)
        lp = common_prefix_len(cached.tolist(), tokens)
        if (
            lp == len(tokens)
            and n_cached == len(tokens)
            and not getattr(self.llm, "_requires_eval", False)
        ):
            return 0
        reuse = lp - 1 if lp == len(tokens) else lp
        return len(tokens) - max(reuse, 0)

    def _continues_last_prompt(self, context: str) -> bool:
        """Whether the previous call's last prompt is a prefix of ``context``'s tokens."""
        last = self._last_prompt
        return bool(last) and self.tokenize(context)[: len(last)] == last

    def settings(self, gen_kwargs: dict[str, Any]) -> tuple[float, int]:
        """(temperature, max_gen_toks) that run: model_args win over the task's values."""
        max_gen = self.max_gen_toks_arg if self.max_gen_toks_arg is not None else int(
            gen_kwargs.get("max_gen_toks", self.max_gen_toks)
        )
        if self.temperature_arg is not None:
            temp = self.temperature_arg
        else:
            temp = float(gen_kwargs.get("temperature", self.temperature))
            if "do_sample" in gen_kwargs and not _as_bool(gen_kwargs["do_sample"]):
                temp = 0.0
        return temp, max(1, min(max_gen, self.n_ctx // 2))

    def _warn_overrides(self, kwargs_list: Sequence[dict[str, Any]]) -> None:
        for name, arg in (("temperature", self.temperature_arg), ("max_gen_toks", self.max_gen_toks_arg)):
            task_values = {gk[name] for gk in kwargs_list if name in gk}
            if arg is not None and task_values - {arg}:
                logger.warning(
                    "llama-cpp: %s=%s from model_args overrides the task's %s=%s",
                    name, arg, name, sorted(task_values, key=str),
                )

    def _fit(self, tokens: list[int], max_gen: int, label: str) -> tuple[list[int], int]:
        """The prompt tokens that fit before ``max_gen`` new tokens, and 1 if cut."""
        budget = self.n_ctx - max_gen - 1
        if len(tokens) <= budget:
            return tokens, 0
        if self.truncation == "left":
            return tokens[-budget:], 1
        raise MemriskError(
            f"llama-cpp: the prompt of {label} is {len(tokens)} tokens, but n_ctx={self.n_ctx} leaves "
            f"{budget} after max_gen_toks={max_gen} (the model was trained on "
            f"{self.info.context_length or 'unknown'} tokens). Raise n_ctx, or pass "
            f"truncation=left to cut prompts from the left and mark those episodes invalid."
        )

    def _generate_one(
        self, context: str, gen_kwargs: dict[str, Any], label: str = "a request", seed_offset: int = 0,
    ) -> tuple[str, dict[str, int]]:
        until = gen_kwargs.get("until", [])
        if isinstance(until, str):
            until = [until]
        until = [s for s in (until or []) if s]
        temp, max_gen = self.settings(gen_kwargs)
        seed = int(gen_kwargs.get("seed", self.seed)) + seed_offset
        for name, value in (("temperature", temp), ("max_gen_toks", max_gen), ("seed", seed)):
            self.effective[name].add(value)
        tokens = self.tokenize(context) or [max(self.llm.token_bos(), 0)]  # never empty
        n_prompt = len(tokens)
        tokens, truncated = self._fit(tokens, max_gen, label)
        evaluated = self._expected_evaluated(tokens)
        self._last_prompt = list(tokens)
        out = self.llm.create_completion(
            prompt=tokens,
            max_tokens=max_gen,
            stop=until,
            temperature=temp,
            top_p=float(gen_kwargs.get("top_p", 0.95)),
            top_k=int(gen_kwargs.get("top_k", 40)),
            repeat_penalty=1.0,
            seed=seed,
            stream=False,
        )
        choice = out["choices"][0]  # type: ignore[index]
        usage = out["usage"]  # type: ignore[index]
        text = (TRUNCATED if truncated else "") + str(choice["text"])
        return text, {
            "prompt_tokens": n_prompt,
            "prompt_tokens_evaluated": evaluated,
            "generated_tokens": int(usage["completion_tokens"]),
            "truncated_prompts": truncated,
        }

    def generate_until(self, requests: list[Instance], disable_tqdm: bool = False) -> list[str]:
        """Greedy generation per request, honouring ``until`` and ``max_gen_toks``."""
        if not requests:
            return []
        contexts: list[str] = []
        kwargs_list: list[dict[str, Any]] = []
        for req in requests:
            ctx, gen_kwargs = req.args[0], req.args[1]
            if not isinstance(ctx, str):
                raise TypeError(
                    f"llama-cpp expects string contexts, got {type(ctx).__name__}; "
                    f"render chat messages with apply_chat_template first"
                )
            gk = dict(gen_kwargs or {})
            extra = set(gk) - _KNOWN_GEN_KWARGS
            if extra:
                logger.debug("llama-cpp: ignoring gen_kwargs %s", sorted(extra))
            contexts.append(ctx)
            kwargs_list.append(gk)
        self._warn_overrides(kwargs_list)
        labels = [_request_label(req) for req in requests]
        offsets = _repeat_offsets(contexts, kwargs_list)
        order = prefix_sorted_order(contexts) if self.prefix_sort else list(range(len(requests)))
        results: list[str | None] = [None] * len(requests)
        # the output of a request set must not depend on what ran before it, except that a
        # call whose first prompt extends the previous call's prompt (the next step of an
        # interactive episode) keeps the KV cache and evaluates only the new tokens
        if not self._continues_last_prompt(contexts[order[0]]):
            self.llm.reset()  # type: ignore[no-untyped-call]
        t0 = time.perf_counter()
        pbar = tqdm(
            total=len(requests),
            desc="llama-cpp generate_until",
            disable=disable_tqdm or self.rank != 0,
        )
        try:
            for i in order:
                text, st = self._generate_one(contexts[i], kwargs_list[i], labels[i], offsets[i])
                results[i] = text
                for k, v in st.items():
                    self.stats[k] += v
                self.stats["n_requests"] += 1
                self.cache_hook.add_partial("generate_until", (contexts[i], kwargs_list[i]), text)
                pbar.update(1)
        finally:
            pbar.close()
            self.stats["wall_time_s"] = round(
                self.stats["wall_time_s"] + time.perf_counter() - t0, 4
            )
        return [r if r is not None else "" for r in results]

    def token_model(self) -> LlamaTokens:
        """This model's ``Llama`` as the fuzzer's token model (model margins), prompts
        tokenized as :meth:`generate_until` tokenizes them."""
        return LlamaTokens(self.llm, prompt_tokenize=self.tokenize)

    def loglikelihood(self, requests: list[Instance], disable_tqdm: bool = False) -> Any:
        """Not supported: MemRiskBench only uses generate_until."""
        raise NotImplementedError(
            "llama-cpp: loglikelihood is not implemented; MemRiskBench tasks only use "
            "generate_until (output_type: generate_until)"
        )

    def loglikelihood_rolling(self, requests: list[Instance], disable_tqdm: bool = False) -> Any:
        """Not supported: MemRiskBench only uses generate_until."""
        raise NotImplementedError(
            "llama-cpp: loglikelihood_rolling is not implemented; MemRiskBench tasks only use "
            "generate_until (output_type: generate_until)"
        )

    # ------------------------------------------------------------------ provenance

    given_model_args: dict[str, Any] | None = None  # what lm-eval passed (results config)

    @classmethod
    def create_from_arg_string(
        cls, arg_string: str, additional_config: dict[str, Any] | None = None
    ) -> LlamaCppLM:
        from lm_eval.utils import simple_parse_args_string

        return cls.create_from_arg_obj(simple_parse_args_string(arg_string), additional_config)

    @classmethod
    def create_from_arg_obj(
        cls, arg_dict: dict[str, Any], additional_config: dict[str, Any] | None = None
    ) -> LlamaCppLM:
        extra = {k: v for k, v in (additional_config or {}).items() if v is not None}
        lm = cls(**arg_dict, **extra)
        lm.given_model_args = dict(arg_dict)
        return lm

    def get_model_info(self) -> dict[str, Any]:
        """Provenance merged by lm-eval into ``results["config"]``."""
        sysinfo = self._llama_cpp.llama_print_system_info()
        if isinstance(sysinfo, bytes):
            sysinfo = sysinfo.decode("utf-8", errors="replace")
        # no absolute paths (they hold the home directory): a relative form + the sha256
        given = {} if self.given_model_args is None else {
            "model_args": portable_args(self.given_model_args)
        }
        return {
            **given,
            "gguf_file": self.model_path.name,
            "gguf_path": portable_path(self.model_path),
            "gguf_sha256": self.gguf_sha256,
            "gguf_name": self.info.name,
            "quantization": self.info.quantization,
            "n_ctx": self.n_ctx,
            "n_ctx_train": self.info.context_length,
            "n_threads": self.n_threads,
            "n_gpu_layers": self.n_gpu_layers,
            "llama_cpp_version": self._llama_cpp.__version__,
            "llama_cpp_build": str(sysinfo).strip(),
            "chat_format": self.chat_format or "gguf:tokenizer.chat_template",
            "seed": self.seed,
            "seed_source": self.seed_source,
            "temperature": self.temperature,
            "truncation": self.truncation,
            "effective_generation": {k: sorted(v) for k, v in self.effective.items()},
            "prefix_sort": self.prefix_sort,
            "llama_cpp_stats": dict(self.stats),
        }
