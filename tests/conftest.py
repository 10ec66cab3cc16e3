import socket
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: Tests with one of these markers may use the network and the model cache; the default
#: `pytest` run (pyproject addopts) deselects them, scripts/test.sh runs them.
OPT_IN = ("model", "slow", "browser")
_LOCAL = ("127.0.0.1", "::1", "localhost")
_connect = socket.socket.connect


@pytest.fixture(autouse=True)
def _fast_tests_stay_offline(request, monkeypatch, tmp_path_factory):
    """A fast test that reaches a non-local host or the model cache fails, so the default
    suite downloads nothing (MEMRISK_CACHE points at an empty folder for it)."""
    if any(request.node.get_closest_marker(m) for m in OPT_IN):
        yield
        return
    cache = tmp_path_factory.mktemp("empty-model-cache")
    monkeypatch.setenv("MEMRISK_CACHE", str(cache))

    def connect(sock, address):
        host = address[0] if isinstance(address, tuple) else address
        if sock.family in (socket.AF_INET, socket.AF_INET6) and host not in _LOCAL:
            raise RuntimeError(f"a fast test tried to reach {address!r}; mark it model/slow or keep it offline")
        return _connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    yield
    assert not any(cache.iterdir()), f"a fast test wrote into the model cache: {sorted(cache.iterdir())}"


@pytest.fixture(scope="module")
def smollm2_file() -> Path:
    """The embedded SmolLM2-135M GGUF (fetched and checked by the model cache), or a skip
    naming why it cannot be resolved."""
    from lm_eval_memrisk.episodes.errors import ModelFileError
    from lm_eval_memrisk.harness.model_files import resolve_model

    try:
        return resolve_model("smollm2-135m", None, None, None)
    except ModelFileError as exc:
        pytest.skip(f"embedded model smollm2-135m cannot be resolved: {exc}")
