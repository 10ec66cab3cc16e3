"""The task YAMLs under tasks/memriskbench, read as text (shared by the README and task
card tests)."""

from __future__ import annotations

import re
from pathlib import Path

TASKS = Path(__file__).resolve().parent.parent / "tasks" / "memriskbench"


def yaml_texts() -> dict[str, str]:
    """File name -> text of every task YAML, in name order."""
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(TASKS.glob("*.yaml"))}


def yaml_task_names() -> set[str]:
    """Every task, group and tag name the task YAMLs define."""
    names: set[str] = set()
    for text in yaml_texts().values():
        names |= set(re.findall(r"^(?:task|group): (\S+)$", text, re.M))
        tags = re.search(r"^tag:\n((?:  - \S+\n)+)", text, re.M)
        if tags:
            names |= set(re.findall(r"- (\S+)", tags.group(1)))
    return names
