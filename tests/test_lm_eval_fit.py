"""Fitting into the lm-eval the user already has: the discovery hook (.pth + _autoload +
lm_eval_patches), the declared lm-eval range, and `memrisk eval`'s start and errors.

The hook's behaviour towards lm-eval versions and shapes is checked against small
stand-in ``lm_eval`` packages written into a temporary folder and imported in a fresh
interpreter (the real lm-eval is exercised by test_lm_eval_tasks.py and by the
oldest-version step of scripts/test.sh).
"""

from __future__ import annotations

import configparser
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lm_eval_memrisk import lm_eval_patches
from lm_eval_memrisk.cli import eval as eval_cli

REPO = Path(__file__).resolve().parents[1]
PTH = REPO / "lm_eval_memrisk" / "lm_eval_memrisk-autoload.pth"

# ------------------------------------------------------------------ declared range


def test_setup_cfg_declares_the_range_the_hook_enforces() -> None:
    cfg = configparser.ConfigParser()
    cfg.read(REPO / "setup.cfg")
    reqs = [r.strip() for r in cfg["options"]["install_requires"].splitlines() if r.strip()]
    (lm_eval_req,) = [r for r in reqs if r.startswith("lm-eval")]
    assert lm_eval_req == "lm-eval" + lm_eval_patches.SUPPORTED_LM_EVAL


@pytest.mark.parametrize("version", ["0.4.12", "0.4.13", "0.4.13.dev0", "0.4.14rc1", "0.4.99"])
def test_supported_versions(version: str) -> None:
    assert lm_eval_patches.unsupported_reason(version) is None


@pytest.mark.parametrize("version", ["0.4.11", "0.4.9.2", "0.5.0", "0.5", "1.0.0", "nightly", ""])
def test_unsupported_versions_are_named_with_the_range(version: str) -> None:
    reason = lm_eval_patches.unsupported_reason(version)
    assert reason is not None
    assert f"lm-eval {version} is outside" in reason and ">=0.4.12,<0.5" in reason


def test_installed_lm_eval_is_supported() -> None:
    pytest.importorskip("lm_eval")
    assert lm_eval_patches.unsupported_reason() is None


# ------------------------------------------------------------------ stand-in lm_eval packages

FAKE_MANAGER = """
class TaskManager:
    def __init__(self, include_path=None, include_defaults=True):
        self.include_path = include_path
"""
FAKE_REGISTRY = """
class _Registry:
    def __init__(self):
        self.objs = {}
    def __contains__(self, name):
        return name in self.objs
    def register(self, name, target=None):
        self.objs[name] = target
model_registry = _Registry()
"""
PROBE = """
import json, site, sys, warnings
warnings.simplefilter("always")
site.addsitedir(sys.argv[1])  # processes our .pth as an installed environment would
import lm_eval.tasks.manager as manager
import lm_eval.models
from lm_eval.api import registry
from lm_eval_memrisk._autoload import tasks_dir
reg = getattr(registry, "model_registry", None)
print(json.dumps({
    "ours": str(tasks_dir()),
    "include_path": manager.TaskManager().include_path,
    "models": sorted(getattr(reg, "objs", {})),
}))
"""


def _fake_lm_eval(root: Path, version: str, registry: str = FAKE_REGISTRY) -> Path:
    files = {
        "lm_eval/__init__.py": f"__version__ = {version!r}\n",
        "lm_eval/tasks/__init__.py": "",
        "lm_eval/tasks/manager.py": FAKE_MANAGER,
        "lm_eval/api/__init__.py": "",
        "lm_eval/api/registry.py": registry,
        "lm_eval/models/__init__.py": "import lm_eval.api.registry\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _probe(fake: Path, **env: str) -> tuple[dict[str, object], str]:
    """Import the stand-in lm_eval with our hook in a fresh interpreter; what got patched."""
    site_dir = fake / "site"
    site_dir.mkdir(exist_ok=True)
    (site_dir / PTH.name).write_text(PTH.read_text())
    full_env = {k: v for k, v in os.environ.items() if k != "MEMRISK_NO_AUTOLOAD"}
    full_env.update(env, PYTHONPATH=f"{fake}{os.pathsep}{REPO}")
    proc = subprocess.run([sys.executable, "-S", "-c", PROBE, str(site_dir)], env=full_env, capture_output=True, check=False,
                          text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 0, proc.stderr  # the hook never breaks lm_eval
    out = json.loads(proc.stdout)
    ours = Path(out.pop("ours"))  # the hook's task folder in that interpreter
    assert (ours / "memriskbench" / "memriskbench_r3.yaml").is_file()
    if out["include_path"] is not None:
        out["include_path"] = ["OURS" if p == str(ours) else p for p in out["include_path"]]
    return out, proc.stderr


def test_supported_lm_eval_is_patched(tmp_path: Path) -> None:
    out, err = _probe(_fake_lm_eval(tmp_path, "0.4.13"))
    assert out == {"include_path": ["OURS"], "models": ["llama-cpp", "memrisk-agent", "memrisk-chat-completions"]}
    assert "MemRiskBench" not in err


@pytest.mark.parametrize("version", ["0.5.0", "0.4.9.2"])
def test_unsupported_lm_eval_is_refused_with_a_message_and_left_alone(
    tmp_path: Path, version: str
) -> None:
    out, err = _probe(_fake_lm_eval(tmp_path, version))
    assert out == {"include_path": None, "models": []}  # nothing patched
    assert f"lm-eval {version} is outside the range MemRiskBench supports" in err
    assert "AutoloadWarning" in err and err.count("outside the range") == 1  # warned once


def test_unexpected_registry_warns_instead_of_breaking(tmp_path: Path) -> None:
    fake = _fake_lm_eval(tmp_path, "0.4.13", registry="registry_moved = True\n")
    out, err = _probe(fake)
    assert out["include_path"] == ["OURS"]  # the other patch still applied
    assert out["models"] == []
    assert "could not hook into lm_eval.models" in err and "model_registry" in err


def test_opt_out_leaves_lm_eval_untouched(tmp_path: Path) -> None:
    out, err = _probe(_fake_lm_eval(tmp_path, "0.4.13"), MEMRISK_NO_AUTOLOAD="1")
    assert out == {"include_path": None, "models": []} and "MemRiskBench" not in err


# ------------------------------------------------------------------ the .pth line


def _site_probe(tmp_path: Path, **env: str) -> list[str]:
    """Modules that processing our .pth adds, in an interpreter started without site."""
    site_dir = tmp_path / "site"
    site_dir.mkdir()
    (site_dir / PTH.name).write_text(PTH.read_text())
    code = (
        "import site, sys, json\n"
        "before = set(sys.modules)\n"
        f"site.addsitedir({str(site_dir)!r})\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))\n"
    )
    full_env = {k: v for k, v in os.environ.items() if k != "MEMRISK_NO_AUTOLOAD"}
    full_env.update(env, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-S", "-c", code], env=full_env, capture_output=True,
                          text=True, timeout=60, check=True)  # fmt: skip
    return list(json.loads(proc.stdout))


def test_pth_imports_nothing_at_start_up(tmp_path: Path) -> None:
    # the finder is built inline; our modules load only when lm-eval's are imported
    assert _site_probe(tmp_path) == []


def test_pth_line_itself_checks_the_opt_out(tmp_path: Path) -> None:
    assert PTH.read_text().count("\n") == 1 and "MEMRISK_NO_AUTOLOAD" in PTH.read_text()
    assert _site_probe(tmp_path, MEMRISK_NO_AUTOLOAD="1") == []


# ------------------------------------------------------------------ memrisk eval


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["memriskbench_r3"], True),
        (["memriskbench", "memriskbench_r6", "my/found.yaml"], True),
        (["memriskbench_r3", "hellaswag"], False),
        ([], False),
        (None, False),
    ],
)
def test_only_memrisk_tasks(names: list[str] | None, expected: bool) -> None:
    assert eval_cli.only_memrisk_tasks(names) is expected


@pytest.mark.parametrize(
    ("model", "model_args", "cpu"),
    [
        ("llama-cpp", {"model": "smollm2-135m"}, True),
        ("llama-cpp", "model=smollm2-135m,n_gpu_layers=0", True),
        ("llama-cpp", "model=x.gguf,n_gpu_layers=99", False),
        ("memrisk-agent", {"agent": "oracle"}, True),
        ("memrisk-agent", "base=llama-cpp,model=smollm2-135m", True),
        ("memrisk-agent", "base=hf,pretrained=gpt2", False),
        ("hf", "pretrained=gpt2", False),
    ],
)
def test_runs_on_cpu(model: str, model_args: object, cpu: bool) -> None:
    assert eval_cli.runs_on_cpu(model, model_args) is cpu


def test_memrisk_eval_refuses_an_unsupported_lm_eval(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(lm_eval_patches, "lm_eval_version", lambda: "0.5.1")
    assert eval_cli.main(["--model", "memrisk-agent", "--tasks", "memriskbench_r3"]) == 2
    err = capsys.readouterr().err
    assert "lm-eval 0.5.1 is outside the range MemRiskBench supports" in err


@pytest.mark.parametrize("tasks_flag", [["-t", "memriskbench_r3"], ["--tasks", "memriskbench_r3"],
                                        ["--tasks=memriskbench_r3"]])  # fmt: skip
def test_memrisk_eval_fast_start_for_every_tasks_spelling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tasks_flag: list[str]
) -> None:
    pytest.importorskip("lm_eval")
    calls: list[bool] = []
    original = eval_cli.skip_builtin_index
    monkeypatch.setattr(eval_cli, "skip_builtin_index", lambda: (calls.append(True), original()))
    rc = eval_cli.main(["--model", "memrisk-agent", "--model_args", "agent=oracle,model=oracle",
                        *tasks_flag, "--limit", "2", "--output_path", str(tmp_path)])  # fmt: skip
    assert rc == 0 and calls == [True]
    (results,) = tmp_path.glob("*/results_*.json")
    config = json.loads(results.read_text())["config"]
    assert config["device"] == "cpu"  # not lm-eval's default cuda:0 for a CPU-only model


def test_group_run_with_a_partial_episodes_file_names_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("lm_eval")
    lines = (REPO / "lm_eval_memrisk" / "data" / "episodes_v1.jsonl").read_text().splitlines()
    partial = tmp_path / "r1only.jsonl"
    partial.write_text("\n".join([ln for ln in lines if '"risk":"R1"' in ln][:3]) + "\n")
    monkeypatch.chdir(tmp_path)
    rc = eval_cli.main(["--model", "memrisk-agent", "--model_args", "agent=oracle",
                        "--tasks", "memriskbench", "--metadata", '{"episodes": "r1only.jsonl"}',
                        "--output_path", str(tmp_path / "out")])  # fmt: skip
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err
    assert "memrisk eval: episodes file r1only.jsonl: no episodes for risk=R2" in err
    assert "holds risks R1 only" in err and "--tasks memriskbench_r1" in err
