"""Layout rules and docs that must stay true: the harness boundary, the module map,
relative links in the README and docs."""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "lm_eval_memrisk"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
#: The system-under-test builder (and the CLI shell) may load an lm-eval model as an
#: agent, inside their functions only.
SHELL_MAY_IMPORT = {"lm_eval_memrisk.harness.lm_adapter"}
SHELL_FILES = ("lm_eval_memrisk/cli/", "lm_eval_memrisk/running/systems.py")


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(imported module, at module level?) for every import in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    top = {id(n) for n in tree.body}
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, id(node) in top) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            out += [(f"{base}.{a.name}" if a.name != "*" else base, id(node) in top) for a in node.names]
    return out


def _sources() -> list[Path]:
    return sorted([*PACKAGE.rglob("*.py"), *(ROOT / "selector").rglob("*.py")])


def test_nothing_outside_harness_imports_harness() -> None:
    bad = []
    for path in _sources():
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("lm_eval_memrisk/harness/"):
            continue
        for name, top_level in _imports(path):
            if not (name == "lm_eval_memrisk.harness" or name.startswith("lm_eval_memrisk.harness.")):
                continue
            shell_ok = rel.startswith(SHELL_FILES) and not top_level and any(
                name == m or name.startswith(m + ".") for m in SHELL_MAY_IMPORT)
            if not shell_ok:
                bad.append(f"{rel}: imports {name}")
    assert not bad, "the core must not import the lm-eval glue:\n" + "\n".join(bad)


def test_the_rule_catches_a_harness_import(tmp_path: Path) -> None:
    probe = PACKAGE / "_probe_for_test.py"
    try:
        probe.write_text("from lm_eval_memrisk.harness.docs import select\n", encoding="utf-8")
        assert ("lm_eval_memrisk.harness.docs.select", True) in _imports(probe)
        with pytest.raises(AssertionError, match="_probe_for_test.py: imports lm_eval_memrisk.harness"):
            test_nothing_outside_harness_imports_harness()
    finally:
        probe.unlink()


def test_memory_backends_do_not_import_the_policies() -> None:
    for path in sorted((PACKAGE / "memory").glob("*.py")):
        names = [n for n, _ in _imports(path)]
        assert not [n for n in names if n.startswith("lm_eval_memrisk.running.policies")], path


def _module_map() -> str:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    return text[text.index("```\nlm_eval_memrisk/"): text.index("tasks/memriskbench/")]


def _listed(block: str, header: str) -> set[str]:
    """The entries indented under the map line that starts with ``header``."""
    names: set[str] = set()
    inside = False
    for line in block.splitlines():
        if not line.startswith(" "):
            inside = line.split(" ", 1)[0] == header
            continue
        m = re.match(r"^  (\S+)", line)
        if inside and m:
            names.add(m.group(1))
    return names


def test_the_module_map_lists_every_module() -> None:
    block = _module_map()
    package = {p.name for p in PACKAGE.glob("*.py")} | {
        p.name + "/" for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    selector = {p.name for p in (ROOT / "selector").glob("*.py")}
    listed_package, listed_selector = _listed(block, "lm_eval_memrisk/"), _listed(block, "selector/")
    assert sorted(package - listed_package) == []
    assert sorted(selector - listed_selector) == []
    # and nothing it lists is gone
    assert sorted(listed_package - package) == [] and sorted(listed_selector - selector) == []


def _tracked() -> set[str]:
    try:
        out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return set(out.splitlines())


LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_every_relative_link_in_the_readme_and_docs_resolves_to_a_tracked_file() -> None:
    tracked = _tracked()
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), ROOT / "tasks/memriskbench/README.md"]
    broken = []
    for page in pages:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            path = (page.parent / target.split("#", 1)[0]).resolve()
            rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
            if rel not in tracked and not any(t.startswith(rel + "/") for t in tracked):
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert not broken, "links to files that are not in the repository:\n" + "\n".join(broken)
