"""Import a file of ``scripts/`` as a module (the scripts are not part of the package)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def load_script(name: str) -> ModuleType:
    """``scripts/<name>.py``, imported as the module ``name``."""
    return load_file(SCRIPTS / f"{name}.py")


def load_file(path: Path) -> ModuleType:
    """The Python file at ``path`` (a script outside the package), imported as a module."""
    name = path.stem.replace(".", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
