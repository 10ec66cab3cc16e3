"""Layout rules and docs that must stay true: the layers and their import order, the
lm-eval and harness boundaries, no import cycles, the module map, relative links in the
README and docs.

Every rule is a function over the sources (``(path, text)`` pairs) that returns its
violations; each rule's test runs it on the repository, and a companion test plants a
violation in memory (an extra source, nothing written into the package) and checks the
rule names it.
"""

from __future__ import annotations

import ast
import re
import subprocess
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

import lm_eval_memrisk

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "lm_eval_memrisk"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
#: The system-under-test builder (and the CLI shell) may load an lm-eval model as an
#: agent, inside their functions only.
SHELL_MAY_IMPORT = {"lm_eval_memrisk.harness.lm_adapter"}
SHELL_FILES = ("lm_eval_memrisk/cli/", "lm_eval_memrisk/running/systems.py")

#: The units of the code, lowest first: a module may import its own unit and the units
#: before it, nothing after it (docs/architecture.md, "Layering").  ``root`` is the
#: package's ``__init__`` (the public API, re-exported lazily: no import statements);
#: ``hook`` is the discovery hook (``_autoload.py``, ``lm_eval_patches.py``).
LAYERS = (
    "root", "episodes", "scoring", "running", "logs",
    "generator", "audit", "fuzz", "leaderboard", "selector", "hook", "harness", "cli",
)
#: Folders of ``lm_eval_memrisk/`` that are units; modules at the package root belong to
#: ``root`` or ``hook``; anything else is outside every layer (a rule violation).
PACKAGE_UNITS = frozenset(LAYERS) - {"root", "hook", "selector"}
HOOK_MODULES = frozenset({"_autoload", "lm_eval_patches"})
#: Names the package root itself holds (its public API, re-exported from the layers).
ROOT_NAMES = frozenset(lm_eval_memrisk.__all__)
#: The core: the layers that lm-eval, the CLI and the apps build on.
CORE = ("episodes", "scoring", "running", "logs")


@dataclass(frozen=True)
class Allowed:
    """An upward import the layering allows: from ``path``, inside function ``function``
    only, of modules starting with one of ``targets``; ``why`` is the reason in the docs."""

    path: str
    function: str
    targets: tuple[str, ...]
    why: str


#: The named upward imports (docs/architecture.md lists the same two).
UPWARD = (
    Allowed("lm_eval_memrisk/episodes/validate.py", "behaviour_problems",
               ("lm_eval_memrisk.running.", "lm_eval_memrisk.scoring."),
               "`memrisk validate` runs the oracle and a do-nothing agent on each episode"),
    Allowed("lm_eval_memrisk/running/systems.py", "build_system",
               ("lm_eval_memrisk.harness.lm_adapter",),
               "`memrisk run --model` loads an lm-eval model as the agent"),
)
#: Outside harness/ and the hook, only ``memrisk eval`` imports lm-eval (it runs
#: lm-eval's own CLI), inside its functions.
LM_EVAL_SHELL = ("lm_eval_memrisk/cli/eval.py",)
#: The one module cycle: the hook imports its patches only once lm-eval loads, and the
#: patches read the hook's task folder.
ALLOWED_MODULE_CYCLES = (frozenset({"lm_eval_memrisk._autoload", "lm_eval_memrisk.lm_eval_patches"}),)

Source = tuple[str, str]  # (path relative to the repository, text)


@dataclass(frozen=True)
class Import:
    name: str  # the imported module or ``module.name``
    top_level: bool  # runs when the module is imported (not inside a function)
    function: str | None  # the outermost function it sits in


def _module_of(rel: str) -> str:
    return ".".join(Path(rel).with_suffix("").parts).removesuffix(".__init__")


def _parse(rel: str, text: str) -> list[Import]:
    """Every import in one source, with where it sits."""
    tree = ast.parse(text, filename=rel)
    module = _module_of(rel)
    package = module if rel.endswith("__init__.py") else module.rpartition(".")[0]
    out: list[Import] = []

    def visit(node: ast.AST, function: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, function or child.name)
                continue
            if isinstance(child, ast.Import):
                out.extend(Import(a.name, function is None, function) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = package.split(".")
                    parent = parts[: len(parts) - child.level + 1]
                    base = ".".join([*parent, base] if base else parent)
                out.extend(Import(f"{base}.{a.name}" if a.name != "*" else base, function is None, function)
                           for a in child.names)
            visit(child, function)

    visit(tree, None)
    return out


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(imported module, at module level?) for every import in ``path``."""
    rel = path.relative_to(ROOT).as_posix()
    return [(i.name, i.top_level) for i in _parse(rel, path.read_text(encoding="utf-8"))]


def _sources() -> list[Source]:
    paths = sorted([*PACKAGE.rglob("*.py"), *(ROOT / "selector").rglob("*.py")])
    return [(p.relative_to(ROOT).as_posix(), p.read_text(encoding="utf-8")) for p in paths]


def _unit_of_module(module: str) -> str | None:
    """The unit of a dotted name of ours (a module, or a name imported from one); None for
    a third-party module; ``?NAME`` for a module of the package outside every unit."""
    parts = module.split(".")
    if parts[0] == "selector":
        return "selector"
    if parts[0] != "lm_eval_memrisk":
        return None
    if len(parts) == 1 or parts[1] in ROOT_NAMES:
        return "root"
    if parts[1] in HOOK_MODULES:
        return "hook"
    if parts[1] in PACKAGE_UNITS:
        return parts[1]
    return "?" + parts[1]


def _unit_of_path(rel: str) -> str:
    """The unit of a source file (``?NAME`` outside every unit)."""
    parts = Path(rel).with_suffix("").parts
    if parts[0] == "selector":
        return "selector"
    if len(parts) == 2:
        return "root" if parts[1] == "__init__" else "hook" if parts[1] in HOOK_MODULES else "?" + parts[1]
    return parts[1] if parts[1] in PACKAGE_UNITS else "?" + parts[1]


def _is_lm_eval(name: str) -> bool:
    return name == "lm_eval" or name.startswith("lm_eval.")


def _allowed_upward(rel: str, imp: Import) -> bool:
    return any(rel == e.path and imp.function == e.function and imp.name.startswith(e.targets) for e in UPWARD)


# -- the rules ------------------------------------------------------------------------


def outside_every_layer(sources: Sequence[Source]) -> list[str]:
    """Modules of the package that belong to no unit (a new module at the root, say)."""
    return [rel for rel, _ in sources if _unit_of_path(rel).startswith("?")]


def imports_above(sources: Sequence[Source], units: Iterable[str], ceiling: str) -> list[str]:
    """Imports, from modules of ``units``, of any unit after ``ceiling`` in :data:`LAYERS`
    (the named :data:`UPWARD` imports aside)."""
    units, top = set(units), LAYERS.index(ceiling)
    bad = []
    for rel, text in sources:
        if _unit_of_path(rel) not in units:
            continue
        for imp in _parse(rel, text):
            target = _unit_of_module(imp.name)
            if target is None or _allowed_upward(rel, imp):
                continue
            if target.startswith("?") or LAYERS.index(target) > top:
                bad.append(f"{rel}: imports {imp.name} ({target})")
    return bad


def layer_order_violations(sources: Sequence[Source]) -> list[str]:
    """Imports of a unit after the importer's own unit in :data:`LAYERS`."""
    bad = []
    for rel, text in sources:
        own = _unit_of_path(rel)
        if own.startswith("?"):
            continue
        for imp in _parse(rel, text):
            target = _unit_of_module(imp.name)
            if target is None or target == own or _allowed_upward(rel, imp):
                continue
            if target.startswith("?") or LAYERS.index(target) > LAYERS.index(own):
                bad.append(f"{rel} ({own}): imports {imp.name} ({target})")
    return bad


def lm_eval_imports(sources: Sequence[Source]) -> list[str]:
    """Imports of lm-eval outside harness/ and the hook (``memrisk eval``'s functions aside)."""
    bad = []
    for rel, text in sources:
        if _unit_of_path(rel) in ("harness", "hook"):
            continue
        for imp in _parse(rel, text):
            if _is_lm_eval(imp.name) and not (rel in LM_EVAL_SHELL and imp.function is not None):
                bad.append(f"{rel}: imports {imp.name}")
    return bad


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return found


def unit_cycles(sources: Sequence[Source]) -> list[list[str]]:
    """Cycles in the graph of units (subpackages, the selector), lazy imports included,
    the named :data:`UPWARD` imports left out."""
    graph: dict[str, set[str]] = defaultdict(set)
    for rel, text in sources:
        own = _unit_of_path(rel)
        for imp in _parse(rel, text):
            target = _unit_of_module(imp.name)
            if target is not None and target != own and not _allowed_upward(rel, imp):
                graph[own].add(target)
    return _cycles(graph)


def module_cycles(sources: Sequence[Source]) -> list[list[str]]:
    """Cycles in the graph of modules, imports inside functions included (a lazy import
    hides a cycle, it does not remove it); :data:`ALLOWED_MODULE_CYCLES` aside."""
    modules = {_module_of(rel) for rel, _ in sources}

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = defaultdict(set)
    for rel, text in sources:
        own = _module_of(rel)
        for imp in _parse(rel, text):
            target = resolve(imp.name)
            # a package's __init__ is not an edge: importing a.b runs a's __init__, which here
            # imports nothing (each subpackage's __init__ is a docstring)
            if target is not None and target != own and not own.startswith(target + "."):
                graph[own].add(target)
    return [c for c in _cycles(graph) if frozenset(c) not in ALLOWED_MODULE_CYCLES]


# -- the tests ------------------------------------------------------------------------


def _plant(rel: str, text: str) -> list[Source]:
    return [*_sources(), (rel, text)]


def test_every_module_belongs_to_a_layer() -> None:
    assert outside_every_layer(_sources()) == []


def test_the_layer_rule_catches_a_module_outside_the_layers() -> None:
    assert outside_every_layer(_plant("lm_eval_memrisk/helpers.py", "")) == ["lm_eval_memrisk/helpers.py"]


def test_the_episode_model_imports_nothing_above_it() -> None:
    bad = imports_above(_sources(), ["episodes"], ceiling="episodes")
    assert not bad, "the episode model must not import the layers above it:\n" + "\n".join(bad)


def test_the_episode_rule_catches_a_scoring_import_and_outside_the_named_function() -> None:
    planted = _plant("lm_eval_memrisk/episodes/probe.py", "from lm_eval_memrisk.scoring.scorer import score\n")
    assert imports_above(planted, ["episodes"], "episodes") == [
        "lm_eval_memrisk/episodes/probe.py: imports lm_eval_memrisk.scoring.scorer.score (scoring)"]
    # the named exception holds inside behaviour_problems only
    validate = next(t for r, t in _sources() if r == "lm_eval_memrisk/episodes/validate.py")
    moved = [(r, t) for r, t in _sources() if r != "lm_eval_memrisk/episodes/validate.py"]
    moved.append(("lm_eval_memrisk/episodes/validate.py", validate + "\n\ndef elsewhere():\n"
                  "    from lm_eval_memrisk.running.runner import run_episode\n"))
    assert imports_above(moved, ["episodes"], "episodes") == [
        "lm_eval_memrisk/episodes/validate.py: imports lm_eval_memrisk.running.runner.run_episode (running)"]


def test_the_scoring_core_imports_nothing_above_it() -> None:
    bad = imports_above(_sources(), ["scoring"], ceiling="scoring")
    assert not bad, "scoring may import only the episode model:\n" + "\n".join(bad)
    # no upward import of scoring is named either
    assert not [e for e in UPWARD if e.path.startswith("lm_eval_memrisk/scoring/")]


@pytest.mark.parametrize("name", ["lm_eval_memrisk.running.agents", "lm_eval_memrisk.logs.runs",
                                  "lm_eval_memrisk.harness.task", "lm_eval_memrisk.cli", "selector.stats",
                                  "lm_eval_memrisk.leaderboard", "lm_eval_memrisk.audit.cues",
                                  "lm_eval_memrisk.generator.build", "lm_eval_memrisk.fuzz.operators"])
def test_the_scoring_rule_catches_an_import_from_above(name: str) -> None:
    planted = _plant("lm_eval_memrisk/scoring/probe.py", f"def f():\n    import {name}\n")
    assert [b.split(": imports ")[1].split(" (")[0] for b in imports_above(planted, ["scoring"], "scoring")] == [name]


def test_every_unit_imports_only_the_layers_below_it() -> None:
    bad = layer_order_violations(_sources())
    assert not bad, f"layer order {' < '.join(LAYERS)} broken:\n" + "\n".join(bad)


def test_the_layer_order_catches_an_upward_import() -> None:
    planted = _plant("lm_eval_memrisk/running/probe.py", "from lm_eval_memrisk.logs.runs import read_runs\n")
    assert layer_order_violations(planted) == [
        "lm_eval_memrisk/running/probe.py (running): imports lm_eval_memrisk.logs.runs.read_runs (logs)"]
    # the knot the selector used to tie: the leaderboard importing the selector
    planted = _plant("lm_eval_memrisk/leaderboard/probe.py", "from selector.stats import holm\n")
    assert layer_order_violations(planted) == [
        "lm_eval_memrisk/leaderboard/probe.py (leaderboard): imports selector.stats.holm (selector)"]


def test_no_import_cycles_between_subpackages() -> None:
    assert unit_cycles(_sources()) == []


def test_the_cycle_rule_catches_a_cycle_between_subpackages() -> None:
    planted = _plant("lm_eval_memrisk/episodes/probe.py", "def f():\n    from lm_eval_memrisk.logs import runs\n")
    assert unit_cycles(planted) == [["episodes", "logs", "running", "scoring"]]


def test_no_import_cycles_between_modules() -> None:
    """agents -> weak / visible_oracle -> attribution -> agents was one (issue 28)."""
    assert module_cycles(_sources()) == []


def test_the_cycle_rule_catches_a_lazy_module_cycle() -> None:
    agents = next(t for r, t in _sources() if r == "lm_eval_memrisk/running/agents.py")
    planted = [(r, t) for r, t in _sources() if r != "lm_eval_memrisk/running/agents.py"]
    planted.append(("lm_eval_memrisk/running/agents.py",
                    agents + "\n\ndef get_weak():\n    from lm_eval_memrisk.running.weak import parse_weak\n"))
    assert module_cycles(planted) == [["lm_eval_memrisk.running.agents", "lm_eval_memrisk.running.weak"]]


def test_nothing_outside_harness_imports_lm_eval() -> None:
    bad = lm_eval_imports(_sources())
    assert not bad, "only harness/ (and the hook, and `memrisk eval`) import lm-eval:\n" + "\n".join(bad)


@pytest.mark.parametrize("where", ["lm_eval_memrisk/running/probe.py", "lm_eval_memrisk/logs/probe.py",
                                   "lm_eval_memrisk/leaderboard/probe.py", "selector/probe.py",
                                   "lm_eval_memrisk/cli/run.py"])
def test_the_lm_eval_rule_catches_an_lm_eval_import(where: str) -> None:
    planted = _plant(where, "def f():\n    from lm_eval.utils import sanitize_model_name\n")
    assert lm_eval_imports(planted) == [f"{where}: imports lm_eval.utils.sanitize_model_name"]
    # and does not take our own package for lm-eval
    assert lm_eval_imports(_plant(where, "import lm_eval_memrisk.running.runner\n")) == []


def test_run_folders_are_named_as_lm_eval_names_them() -> None:
    """run_store copies lm-eval's folder-name pattern instead of importing lm-eval."""
    from lm_eval.utils import sanitize_model_name

    from lm_eval_memrisk.running.run_store import LM_EVAL_FOLDER_CHARS, model_folder

    names = ["oracle", "org/model", "..\\..\\x", 'a<b>c:d"e|f?g*h[i]j', "model=../../x", "weak:late"]
    for name in names:
        assert LM_EVAL_FOLDER_CHARS.sub("__", name) == sanitize_model_name(name)
        assert model_folder(Path("out"), name) == Path("out") / sanitize_model_name(name)


def test_nothing_outside_harness_imports_harness() -> None:
    bad = []
    for path in sorted([*PACKAGE.rglob("*.py"), *(ROOT / "selector").rglob("*.py")]):
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


def _backend_imports_of_policies(sources: Sequence[Source]) -> list[str]:
    return [f"{rel}: imports {i.name}" for rel, text in sources
            if rel.startswith("lm_eval_memrisk/running/memory/")
            for i in _parse(rel, text) if i.name.startswith("lm_eval_memrisk.running.policies")]


def test_memory_backends_do_not_import_the_policies() -> None:
    assert _backend_imports_of_policies(_sources()) == []


def test_the_backend_rule_catches_a_policies_import() -> None:
    planted = _plant("lm_eval_memrisk/running/memory/probe.py",
                     "from lm_eval_memrisk.running.policies import make_policy\n")
    assert _backend_imports_of_policies(planted) == [
        "lm_eval_memrisk/running/memory/probe.py: imports lm_eval_memrisk.running.policies.make_policy"]


def test_the_public_api_lives_in_the_layers() -> None:
    for name, module in lm_eval_memrisk._EXPORTS.items():
        assert _unit_of_module(module) in CORE, (name, module)
        assert getattr(lm_eval_memrisk, name).__module__ == module, name


# -- the module map -------------------------------------------------------------------

#: Folders whose every module the map lists, one line each (the other folders are
#: described as a whole; their modules' docstrings say the rest).
MAPPED_FOLDERS = ("episodes", "scoring", "running", "running/memory", "logs")
_ENTRY = re.compile(r"^( {0,8})([\w.-]+(?:\.py|/))(?:\s|$)")


def _module_map(text: str | None = None) -> str:
    text = ARCHITECTURE.read_text(encoding="utf-8") if text is None else text
    return text[text.index("```\nlm_eval_memrisk/"): text.index("tasks/memriskbench/")]


def _listed_paths(block: str) -> set[str]:
    """Paths of the map's entries (``lm_eval_memrisk/episodes/records.py``, folders end in
    ``/``): an entry is a name ending in ``.py`` or ``/`` at an indentation of 0-8 spaces,
    under the nearest entry less indented; descriptions continue further right."""
    stack: list[tuple[int, str]] = []
    paths: set[str] = set()
    for line in block.splitlines():
        m = _ENTRY.match(line)
        if not m or len(m.group(1)) % 2:
            continue
        indent, name = len(m.group(1)), m.group(2)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = "".join(n for _, n in stack) + name
        paths.add(path)
        if name.endswith("/"):
            stack.append((indent, name))
    return paths


def map_problems(text: str | None = None) -> list[str]:
    """Modules the map leaves out, and entries that name nothing in the tree."""
    listed = _listed_paths(_module_map(text))
    actual = {f"lm_eval_memrisk/{p.name}" for p in PACKAGE.glob("*.py")}
    actual |= {f"lm_eval_memrisk/{p.name}/" for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    actual |= {f"selector/{p.name}" for p in (ROOT / "selector").glob("*.py")}
    for folder in MAPPED_FOLDERS:
        here = PACKAGE / folder
        actual |= {f"lm_eval_memrisk/{folder}/{p.name}" for p in here.glob("*.py") if p.name != "__init__.py"}
        actual |= {f"lm_eval_memrisk/{folder}/{p.name}/" for p in here.iterdir()
                   if p.is_dir() and p.name != "__pycache__"}
    # inside the folders described as a whole, only what the map names must exist
    mapped = ("lm_eval_memrisk/", "selector/", *(f"lm_eval_memrisk/{f}/" for f in MAPPED_FOLDERS))

    def checked(path: str) -> bool:
        parent = path.rstrip("/").rpartition("/")[0] + "/"
        return parent in mapped

    missing = sorted(p for p in actual - listed if checked(p))
    gone = sorted(p for p in listed - actual if checked(p) or not (ROOT / p).exists())
    return [f"not in the map: {p}" for p in missing] + [f"in the map, not in the tree: {p}" for p in gone]


def test_the_module_map_lists_every_module() -> None:
    problems = map_problems()
    assert not problems, "docs/architecture.md's map and the tree differ:\n" + "\n".join(problems)


def test_the_map_rule_catches_a_missing_and_a_stale_entry() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    line = next(ln for ln in text.splitlines() if ln.startswith("    records.py "))
    assert map_problems(text.replace(line + "\n", "")) == ["not in the map: lm_eval_memrisk/episodes/records.py"]
    ghost = text.replace(line + "\n", line + "\n    ghost.py        a module that is not there\n")
    assert map_problems(ghost) == ["in the map, not in the tree: lm_eval_memrisk/episodes/ghost.py"]
    moved = text.replace(line + "\n", "").replace("  logs/ ", "  records.py  a module in the wrong folder\n  logs/ ")
    assert map_problems(moved) == ["not in the map: lm_eval_memrisk/episodes/records.py",
                                   "in the map, not in the tree: lm_eval_memrisk/records.py"]


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
