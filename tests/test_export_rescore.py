"""export-hf round trip through `datasets`, and rescore of real lm-eval sample logs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lm_eval_memrisk.cli import main
from lm_eval_memrisk.episodes.loader import load_episodes
from lm_eval_memrisk.harness.docs import episode_of
from lm_eval_memrisk.scoring.scorer import SCORER_VERSION


def test_export_hf_roundtrip(tmp_path):
    datasets = pytest.importorskip("datasets")
    out = tmp_path / "hub"
    assert main(["export-hf", str(out)]) == 0
    card = (out / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\n") and "config_name: r3" in card
    everything = load_episodes(track="all")
    for config, risk in (("r3", "R3"), ("r6", "R6")):
        # a private cache: datasets' shared cache can serve another run's export of "hub"
        ds = datasets.load_dataset(str(out), config, split="test", cache_dir=str(tmp_path / "c"))
        want = [e for e in everything if e.risk == risk]
        assert [episode_of(r) for r in ds] == want
    all_main = datasets.load_dataset(str(out), "all", split="test", cache_dir=str(tmp_path / "c"))
    assert len(all_main) == 120


def test_tasks_load_from_an_exported_folder(tmp_path):
    from lm_eval_memrisk.episodes.export_hf import export
    from lm_eval_memrisk.harness.dataset import load_docs

    export(load_episodes(track="all"), tmp_path / "hub")
    docs = load_docs(risk="R2", dataset=str(tmp_path / "hub"))["test"]
    assert [d["episode_id"] for d in docs] == [e.id for e in load_episodes() if e.risk == "R2"]


def _doc_hash(doc):
    """The doc_hash lm-eval logs for a doc (lm_eval.evaluator, --log_samples)."""
    from lm_eval.utils import handle_non_serializable, hash_string

    return hash_string(json.dumps(doc, indent=2, default=handle_non_serializable, ensure_ascii=False))


def test_the_dataset_card_describes_every_field_and_gives_version_and_citation(tmp_path):
    from lm_eval_memrisk.episodes.doc_rows import COLUMNS
    from lm_eval_memrisk.episodes.export_hf import export
    from lm_eval_memrisk.episodes.loader import dataset_hash

    export(load_episodes(track="all"), tmp_path / "hub")
    card = (tmp_path / "hub" / "README.md").read_text(encoding="utf-8")
    fields = card[card.index("## Fields"):card.index("## Citation")]
    assert re.findall(r"^\| `(\w+)` \| string \| .+ \|$", fields, re.M) == list(COLUMNS)
    assert "Dataset version: v8 (episode `version` `8.0`; the packaged `episodes_v8.jsonl`)" in card
    assert f"Dataset hash: `{dataset_hash()}`" in card
    assert "MemRiskBench: Trace-Aware Risk-Preserving Evaluation for Long-Horizon LLM Agents" in card
    assert "Jiang, Jianhua and Yuan, Dongbo and Li, Weihua" in card and "eprint        = {2609.14976}" in card
    # an older version names itself; an edited set does not claim to be a packaged file
    export(load_episodes("v3", track="all"), tmp_path / "v3")
    assert "Dataset version: v3 (episode `version` `3.0`;" in (tmp_path / "v3" / "README.md").read_text()
    export(load_episodes(track="all")[:30], tmp_path / "part")
    assert "not the packaged v8 file" in (tmp_path / "part" / "README.md").read_text()


def test_an_exported_episode_has_the_packaged_doc_hash(tmp_path):
    """#28: the export wrote each row's keys sorted, so a doc loaded from it serialised
    differently and lm-eval logged another doc_hash for the same episode."""
    datasets = pytest.importorskip("datasets")
    from lm_eval_memrisk.episodes.doc_rows import COLUMNS
    from lm_eval_memrisk.harness.dataset import load_docs

    out = tmp_path / "hub"
    assert main(["export-hf", str(out)]) == 0
    raw = datasets.load_dataset(str(out), "r3", split="test", cache_dir=str(tmp_path / "c"))
    assert raw.column_names == list(COLUMNS)  # the file itself is in the packaged order
    packaged = load_docs(risk="R3")["test"]
    exported = load_docs(risk="R3", dataset=str(out))["test"]
    assert [_doc_hash(d) for d in exported] == [_doc_hash(d) for d in packaged]
    assert [_doc_hash(dict(d)) for d in raw] == [_doc_hash(d) for d in packaged]
    # an export written before the fix (sorted keys) still loads with the packaged hashes
    old = tmp_path / "old"
    (old / "data").mkdir(parents=True)
    (old / "README.md").write_text((out / "README.md").read_text())
    for f in (out / "data").iterdir():
        rows = [json.loads(line) for line in f.read_text(encoding="utf-8").splitlines()]
        (old / "data" / f.name).write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n"
                                                   for r in rows), encoding="utf-8")
    assert [_doc_hash(d) for d in load_docs(risk="R3", dataset=str(old))["test"]] == [
        _doc_hash(d) for d in packaged]


def test_lm_eval_logs_the_same_doc_hash_from_the_export(tmp_path, monkeypatch):
    """End to end: two lm-eval runs of one task, package data vs the exported folder."""
    datasets = pytest.importorskip("datasets")
    # a private datasets cache: the shared one keeps features of earlier exports named "hub"
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")
    hub = tmp_path / "hub"
    assert main(["export-hf", str(hub)]) == 0
    hashes = {}
    for name, extra in (("packaged", []), ("export", ["--metadata", json.dumps({"dataset": str(hub)})])):
        out = tmp_path / name
        assert main(["eval", "--model", "memrisk-agent", "--model_args", "agent=oracle,model=oracle",
                     "--tasks", "memriskbench_r3", "--limit", "4", "--output_path", str(out),
                     "--log_samples", *extra]) == 0
        (samples,) = out.rglob("samples_memriskbench_r3_*.jsonl")
        rows = [json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines()]
        hashes[name] = [(r["doc"]["episode_id"], r["doc_hash"]) for r in rows]
    assert len(hashes["packaged"]) == 4 and hashes["export"] == hashes["packaged"]


def test_a_second_export_under_the_same_folder_name_is_not_served_from_the_cache(tmp_path):
    """datasets caches a local folder by its name: a v6 export (v8 now) into b/hub was read back as
    the v3 export of a/hub loaded before it."""
    pytest.importorskip("datasets")
    from lm_eval_memrisk.episodes.export_hf import export
    from lm_eval_memrisk.harness.dataset import load_docs

    name = f"hub-{tmp_path.name}"  # one cache entry for this test, in the shared cache
    export(load_episodes("v3", track="all"), tmp_path / "a" / name)
    assert {d["version"] for d in load_docs(risk="R3", dataset=str(tmp_path / "a" / name))["test"]} == {"3.0"}
    export(load_episodes("v8", track="all"), tmp_path / "b" / name)
    docs = load_docs(risk="R3", dataset=str(tmp_path / "b" / name))["test"]
    assert {d["version"] for d in docs} == {"8.0"}
    assert [d["episode_json"] for d in docs] == [d["episode_json"] for d in load_docs(risk="R3")["test"]]


@pytest.fixture(scope="module")
def stale_run(tmp_path_factory):
    """A real lm-eval run (reference agent 'stale') with --log_samples."""
    out = tmp_path_factory.mktemp("stale_run")
    rc = main(["eval", "--model", "memrisk-agent", "--model_args", "agent=stale,model=stale",
               "--tasks", "memriskbench_r1,memriskbench_r3", "--output_path", str(out), "--log_samples"])
    assert rc == 0
    return out


def test_rescore_writes_new_files_and_audits(stale_run, capsys):
    originals = {p: p.read_bytes() for p in stale_run.rglob("samples_*.jsonl")}
    assert main(["rescore", str(stale_run), "--variant", "safety_aware", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert {r["risk"] for r in report["audit"]} == {"R1", "R3"}
    assert all(r["n"] == 24 for r in report["audit"])
    for p, data in originals.items():
        assert p.read_bytes() == data  # never overwritten
    written = [Path(p) for p in report["written"]]
    assert all(p.exists() and ".rescored-safety_aware-revised" in p.name for p in written)
    # a second rescore does not overwrite the first
    assert main(["rescore", str(stale_run), "--variant", "safety_aware", "--json"]) == 0
    second = [Path(p) for p in json.loads(capsys.readouterr().out)["written"]]
    assert set(second).isdisjoint(written)


def test_rescore_original_expected_changes_oracle_scores(tmp_path, capsys):
    out = tmp_path / "oracle"
    assert main(["eval", "--model", "memrisk-agent", "--model_args", "agent=oracle,model=oracle",
                 "--tasks", "memriskbench_r1", "--output_path", str(out), "--log_samples"]) == 0
    capsys.readouterr()
    assert main(["rescore", str(out), "--expected", "original", "--json"]) == 0
    audit = json.loads(capsys.readouterr().out)["audit"]
    # the oracle emits bare values, so strict "label: value" matching fails exactly the
    # episodes that carry an original expected value
    n_original = sum(
        any(c.expected_original for dp in e.decision_points for c in dp.checks)
        for e in load_episodes() if e.risk == "R1"
    )
    assert n_original > 0
    assert audit == [{"model": "oracle", "risk": "R1", "n": 24, "pass->fail": n_original}]


def test_rescore_bad_line_names_file_and_line(tmp_path):
    from lm_eval_memrisk.episodes.errors import SamplesError
    from lm_eval_memrisk.logs.rescore import rescore_dir

    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "samples_memriskbench_r1_2026-01-01T00-00-00.000000.jsonl").write_text('{"doc": {}}\n', encoding="utf-8")
    with pytest.raises(SamplesError, match=r"samples_memriskbench_r1_.*\.jsonl:1"):
        rescore_dir(tmp_path)


def test_logged_samples_load_as_hub_details_datasets(stale_run):
    """lm-eval's --hf_hub_log_args uploads these files as the per-sample details dataset;
    the Hub (and `datasets`) must be able to read them back with the json builder."""
    datasets = pytest.importorskip("datasets")
    for path in sorted(stale_run.rglob("samples_memriskbench_r*.jsonl")):
        ds = datasets.load_dataset("json", data_files=str(path), split="train")
        assert len(ds) == 24
        assert {"doc", "pass", "score", "episodes"} <= set(ds.column_names)


def test_rescore_rebuilds_every_metric_and_the_decision_records(stale_run, tmp_path, capsys):
    """Rescored lines carry what process_results would write now: the decision classes,
    acted/violation/must_do and the record, not the logged ones (here: tampered)."""
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(stale_run, copy)
    (path,) = [p for p in copy.rglob("samples_memriskbench_r1_*.jsonl") if "rescored" not in p.name]
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    honest = [(x["acted"], x["violation"], x["episodes"]["decisions"]) for x in lines]
    for x in lines:
        x["acted"], x["violation"] = 0.0, 0.0
        x["episodes"]["decisions"] = [dict(d, decision_class="invalid", acted=False) for d in x["episodes"]["decisions"]]
        x["episodes"]["scorer_version"] = "0.9"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    assert main(["rescore", str(copy), "--json"]) == 0
    (new,) = [p for p in copy.rglob("samples_memriskbench_r1_*rescored-default-revised.jsonl")]
    rescored = [json.loads(x) for x in new.read_text(encoding="utf-8").splitlines()]
    assert [(x["acted"], x["violation"], x["episodes"]["decisions"]) for x in rescored] == honest
    assert {x["episodes"]["scorer_version"] for x in rescored} == {SCORER_VERSION}


def test_rescore_keeps_the_memory_policys_view_and_its_attribution(tmp_path):
    """A scripted run under recency:3 is replayed under recency:3: the notes shown and the
    policy-hidden labels are the run's (a policy-free replay showed every note and
    relabelled every policy-hidden failure as the agent's).  On dataset v2, where
    recency:3 hides a needed value in three R1 episodes (v3 keeps every such value in
    view)."""
    out = tmp_path / "vo"
    assert main(["run", "--agent", "visible-oracle", "--memory-policy", "recency:3", "--risk", "R1",
                 "--episodes", "v2", "--out", str(out), "--json"]) == 0
    logged = {}
    for path in out.rglob("samples_memriskbench_r1_*.jsonl"):
        for x in map(json.loads, path.read_text(encoding="utf-8").splitlines()):
            logged[x["episodes"]["episode_id"]] = x["episodes"]
    hidden = {k for k, v in logged.items() if v["failure"] == "policy_hidden"}
    assert hidden  # recency:3 hides a needed value in some R1 episodes (the ceiling table in docs/interactive.md)
    assert main(["rescore", str(out), "--json"]) == 0
    rescored = {}
    for path in out.rglob("samples_memriskbench_r1_*rescored-default-revised.jsonl"):
        for x in map(json.loads, path.read_text(encoding="utf-8").splitlines()):
            rescored[x["episodes"]["episode_id"]] = x["episodes"]
    assert rescored.keys() == logged.keys()
    for k, rec in rescored.items():
        assert (rec["failure"], rec["hidden_decisions"]) == (logged[k]["failure"], logged[k]["hidden_decisions"]), k
        shown = [d["visible_items"] for d in rec["trace"]["decisions"]]
        assert shown == [d["visible_items"] for d in logged[k]["trace"]["decisions"]], k
        assert all(len(v) <= 3 for v in shown), k


def test_rescore_of_a_reply_with_a_lone_surrogate_writes_it_escaped(tmp_path):
    """#29: a model's lone surrogate crashed rescore (UnicodeEncodeError) and left a 0-byte .tmp."""
    from lm_eval_memrisk.episodes.codec import fingerprint
    from lm_eval_memrisk.episodes.jsonl import numbered_lines
    from lm_eval_memrisk.logs.rescore import rescore_dir
    from lm_eval_memrisk.running.pipeline import run_benchmark, select_episodes
    from lm_eval_memrisk.running.systems import System

    everything = load_episodes(track="all")
    episodes = select_episodes(everything, risk="R1")
    system = System("surrogate", lambda batch: ["send it to \ud800 please" for _ in batch], {"model": "s"})
    run_benchmark(system, episodes, dataset_hash=fingerprint(everything), out=tmp_path, progress=False)
    audit, written = rescore_dir(tmp_path)
    (path,) = written
    text = path.read_text(encoding="utf-8")  # valid UTF-8
    rows = [json.loads(line) for _, line in numbered_lines(text)]
    assert len(rows) == 24 and rows[0]["resps"][0][0] == "send it to \ud800 please"  # the same reply back
    assert not list(tmp_path.rglob("*.tmp"))


def test_write_atomic_leaves_no_tmp_file_when_the_write_fails(tmp_path, monkeypatch):
    from lm_eval_memrisk.episodes.jsonl import write_atomic

    def full_disk(self, *args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "replace", full_disk)  # after the .tmp file was written
    with pytest.raises(OSError):
        write_atomic(tmp_path / "x.jsonl", "data\n")
    assert list(tmp_path.iterdir()) == []
