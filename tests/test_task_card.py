"""tasks/memriskbench/README.md (the lm-eval task card) is kept true against the task
YAMLs and the packaged dataset (issue #28): version, task names, metric names, dataset
version and hash, and the paper it cites."""

from __future__ import annotations

import re
from pathlib import Path

from task_yamls import TASKS, yaml_task_names, yaml_texts

ROOT = Path(__file__).resolve().parent.parent
CARD = TASKS / "README.md"
PAPER = ROOT.parent / "shared" / "papers" / "memriskbench.txt"


def _card() -> str:
    return CARD.read_text(encoding="utf-8")


def _expand(name: str) -> set[str]:
    """``memriskbench_rN_{easy,medium,hard}`` -> the 15 names it stands for."""
    names = {name}
    while any("{" in n or "rN" in n for n in names):
        out = set()
        for n in names:
            m = re.search(r"\{([^}]*)\}", n)
            if m:
                out |= {n[: m.start()] + part + n[m.end():] for part in m.group(1).split(",")}
            elif "rN" in n:
                out |= {n.replace("rN", f"r{i}", 1) for i in range(1, 6)}
            else:
                out.add(n)
        names = out
    return names


def _card_names() -> set[str]:
    text = _card()
    section = text[text.index("### Groups, Tags, and Tasks"):text.index("### Metrics")]
    names: set[str] = set()
    for token in re.findall(r"`(memriskbench[^`]*)`", section):
        names |= _expand(token)
    first, last = re.search(r"`memriskbench_r(\d)` \.\.\. `memriskbench_r(\d)`", section).groups()  # type: ignore[union-attr]
    names |= {f"memriskbench_r{i}" for i in range(int(first), int(last) + 1)}
    return names


def test_the_card_names_the_version_of_every_yaml() -> None:
    versions = {re.search(r"^  version: \"?([^\s\"]+)\"?$", text, re.M).group(1)  # type: ignore[union-attr]
                for name, text in yaml_texts().items()}
    assert len(versions) == 1, versions
    (version,) = versions
    assert f"Version {version}:" in _card()
    from lm_eval_memrisk.scoring.scorer import SCORER_VERSION

    assert version == SCORER_VERSION  # the task version follows the scorer version


def test_the_card_lists_exactly_the_tasks_groups_and_tags_of_theyaml_texts() -> None:
    assert _card_names() == yaml_task_names()


def test_the_card_metric_table_is_the_yaml_metric_list() -> None:
    yaml_metrics = re.findall(r"- metric: (\w+)", (TASKS / "_memriskbench_common").read_text(encoding="utf-8"))
    group = re.findall(r"- metric: (\w+)", (TASKS / "memriskbench.yaml").read_text(encoding="utf-8"))
    assert group == yaml_metrics
    text = _card()
    table = text[text.index("### Metrics"):text.index("### Checklist")]
    assert re.findall(r"^\| `(\w+)` \|", table, re.M) == yaml_metrics
    for metric, better in re.findall(r"- metric: (\w+)\n    aggregation: mean\n    higher_is_better: (\w+)",
                                     (TASKS / "_memriskbench_common").read_text(encoding="utf-8")):
        row = re.search(rf"^\| `{metric}` \|.*\| (higher|lower) \|$", table, re.M)
        assert row and (row.group(1) == "higher") == (better == "true"), metric


def test_the_card_names_the_packaged_default_dataset_and_its_hash() -> None:
    from lm_eval_memrisk.episodes.loader import DEFAULT_DATASET, dataset_hash

    assert f"dataset {DEFAULT_DATASET} (`{dataset_hash()}`, the default" in _card()


def test_the_card_cites_the_paper_as_given() -> None:
    card = _card()
    title = "MemRiskBench: Trace-Aware Risk-Preserving Evaluation for Long-Horizon LLM Agents"
    assert title in card and "2609.14976" in card
    assert "Jiang, Jianhua and Yuan, Dongbo and Li, Weihua" in card
    if PAPER.exists():  # the paper's own text, where this checkout has it
        paper = PAPER.read_text(encoding="utf-8")
        assert title in paper and "Jianhua Jiang, Dongbo Yuan, Weihua Li" in paper
        assert "arXiv:2609.14976" in paper
