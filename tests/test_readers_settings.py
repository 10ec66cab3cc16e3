"""Issue 28 item 3 and issue 29 item 1, the parts the one-reader commit left open.

* The signature records the effective generation settings (``--gen_kwargs``, the
  model's own args, lm-eval's ``--seed``); greedy defaults stay compact.
* lm-eval's ``--seed`` reaches the llama-cpp sampler (a ``seed`` model_arg wins).
* ``scripts/memory_baseline.py`` reads run folders through the run reader.
* Two runs of one system into one ``--output_path`` are one system, the newer run per
  task winning.
* A samples file whose failed rows were deleted never ranks its system, whether or not
  another system ran the whole track; nor does one that stops early (``--limit N``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from script_loading import load_script

import lm_eval_memrisk._autoload  # noqa: F401  (the lm-eval hook, before any lm-eval import)
from lm_eval_memrisk.running.generation import generation_settings
from lm_eval_memrisk.scoring.signature import signature

# ----------------------------------------------------------------------------- signature


def test_greedy_defaults_stay_compact() -> None:
    assert generation_settings(None) == {}
    assert generation_settings({"temperature": 0.0, "do_sample": False, "max_gen_toks": 192}) == {}
    # greedy ignores top_p/top_k/seed: they do not split greedy runs
    assert generation_settings({"top_p": 0.5, "seed": 3}) == {}
    assert signature("sha256:x") == signature("sha256:x", generation={})
    assert "temperature" not in signature("sha256:x", generation=generation_settings(None))


def test_runs_that_sampled_differently_never_share_a_signature() -> None:
    def sig(gen_kwargs=None, model_args=None, run_seed=None) -> str:
        return signature("sha256:x", generation=generation_settings(gen_kwargs, model_args, run_seed))

    greedy = sig()
    warm = sig({"temperature": 0.7, "do_sample": True}, run_seed=1234)
    variants = [
        greedy, warm,
        sig({"temperature": 0.9, "do_sample": True}, run_seed=1234),
        sig({"temperature": 0.7, "do_sample": True}, run_seed=7),
        sig({"temperature": 0.7, "do_sample": True, "seed": 9}, run_seed=1234),
        sig({"temperature": 0.7, "do_sample": True, "top_p": 0.9}, run_seed=1234),
        sig({"temperature": 0.7, "do_sample": True, "top_k": 10}, run_seed=1234),
        sig({"max_gen_toks": 64}),
    ]
    assert len(set(variants)) == len(variants), variants
    assert "|temperature=0.7|" in warm and "|seed=1234" in warm
    # do_sample=False keeps lm-eval's greedy decoding whatever the temperature ...
    assert sig({"temperature": 0.7, "do_sample": False}) == greedy
    # ... but a temperature in the model's own args samples (the llama-cpp model applies it)
    assert sig({"do_sample": False}, {"temperature": "0.7", "seed": "5"}) == sig(
        {"temperature": 0.7, "do_sample": True, "seed": 5})
    # the repeated-sampling form keeps its order: k, then the temperature
    assert signature("sha256:x", k=4, temperature=0.7).endswith("|k=4|temperature=0.7")


def test_memrisk_run_signs_its_generation_settings(tmp_path: Path) -> None:
    from lm_eval_memrisk.running.pipeline import system_generation
    from lm_eval_memrisk.running.systems import System

    agent = System("oracle", lambda batch: [], {"agent": "oracle"})
    assert system_generation(agent) == {}
    model = System("m", lambda batch: [], {"model": "llama-cpp", "model_args": "model=x,temperature=0.5",
                                           "gen_kwargs": {"max_gen_toks": 64}}, _info=lambda: {"seed": 42})
    assert system_generation(model) == {"do_sample": True, "temperature": 0.5, "seed": 42, "max_gen_toks": 64}


# ----------------------------------------------------------------------------- lm-eval path

lm_eval = pytest.importorskip("lm_eval")


def _evaluate(seed: int | None, gen_kwargs: str | None, model: str = "memrisk-agent",
              model_args: str = "agent=oracle", task: str = "memriskbench_r1") -> dict:
    from lm_eval import simple_evaluate  # after the hook (imported at the top, as the .pth does)
    from lm_eval.tasks import TaskManager

    from lm_eval_memrisk._autoload import tasks_dir

    assert getattr(simple_evaluate, "_memrisk_patched", False), "the hook did not wrap simple_evaluate"
    kwargs = {} if seed is None else {"torch_random_seed": seed}
    return simple_evaluate(model=model, model_args=model_args, tasks=[task], limit=1, bootstrap_iters=0,
                           log_samples=True, gen_kwargs=gen_kwargs,
                           task_manager=TaskManager(include_path=str(tasks_dir()), include_defaults=False),
                           **kwargs)


def _signature(res: dict) -> str:
    (rows,) = res["samples"].values()
    return rows[0]["episodes"]["signature"]


def test_lm_eval_gen_kwargs_and_seed_reach_the_sample_signature() -> None:
    greedy = _signature(_evaluate(None, None))
    assert "temperature" not in greedy and "seed" not in greedy
    hot7 = _evaluate(7, "temperature=0.5,do_sample=True")
    hot8 = _evaluate(8, "temperature=0.5,do_sample=True")
    assert "|temperature=0.5|seed=7" in _signature(hot7)
    assert "|temperature=0.5|seed=8" in _signature(hot8)
    (rows,) = hot7["samples"].values()
    assert rows[0]["episodes"]["generation"] == {"do_sample": True, "temperature": 0.5, "seed": 7}


def test_the_run_seed_is_set_only_while_lm_eval_runs() -> None:
    from lm_eval_memrisk.harness.llama_cpp import DEFAULT_SEED, _seed
    from lm_eval_memrisk.lm_eval_patches import RUN_SEED

    assert RUN_SEED.get() is None and _seed(None) == (DEFAULT_SEED, "default")
    token = RUN_SEED.set(7)
    try:
        assert _seed(None) == (7, "lm_eval --seed")
        assert _seed("3") == (3, "model_args")  # the model's own seed wins
    finally:
        RUN_SEED.reset(token)


@pytest.mark.model
def test_lm_eval_seed_reaches_the_llama_cpp_sampler() -> None:
    pytest.importorskip("llama_cpp")
    args = "model=smollm2-135m,n_ctx=4096"
    res = _evaluate(7, "temperature=0.9,do_sample=True", model="llama-cpp", model_args=args)
    assert res["config"]["seed"] == 7 and res["config"]["seed_source"] == "lm_eval --seed"
    assert res["config"]["effective_generation"]["seed"] == [7]
    assert "|temperature=0.9|seed=7" in _signature(res)
    own = _evaluate(7, None, model="llama-cpp", model_args=args + ",seed=11")
    assert own["config"]["seed"] == 11 and own["config"]["seed_source"] == "model_args"


# ----------------------------------------------------------------------------- run folders


def _lm_eval_run(out: Path, agent: str, tasks: list[str]) -> None:
    from lm_eval_memrisk.cli import main

    assert main(["eval", "--model", "memrisk-agent", "--model_args", f"agent={agent}",
                 "--tasks", ",".join(tasks), "--output_path", str(out), "--log_samples"]) == 0


@pytest.fixture(scope="module")
def two_stale_runs(tmp_path_factory) -> Path:
    """Two lm_eval runs of memrisk-agent agent=stale into one --output_path: all tasks,
    then R1 only (lm-eval names each folder with a random id)."""
    out = tmp_path_factory.mktemp("stale-twice") / "out"
    _lm_eval_run(out, "stale", ["memriskbench"])
    _lm_eval_run(out, "stale", ["memriskbench_r1"])
    assert len([d for d in out.iterdir() if d.is_dir()]) == 2
    return out


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory) -> Path:
    """The oracle's whole run (its own --output_path: lm-eval's random folder ids repeat
    from one in-process run to the next)."""
    out = tmp_path_factory.mktemp("oracle") / "out"
    _lm_eval_run(out, "oracle", ["memriskbench"])
    (folder,) = [d for d in out.iterdir() if d.is_dir()]
    return folder


def test_two_runs_of_one_system_into_one_output_path_are_one_system(two_stale_runs: Path, capsys) -> None:
    from lm_eval_memrisk.cli import main
    from lm_eval_memrisk.logs.runs import read_runs, standings

    (stale,) = read_runs([two_stale_runs])
    assert stale.name == "memrisk-agent:stale" and len(stale.samples) == 120
    # per task the newer run wins: R1 from the R1-only run, the rest from the first
    r1 = [f for f in stale.files if "memriskbench_r1_" in f.name]
    dates = sorted(f.name.rsplit("_", 1)[1] for f in two_stale_runs.glob("*/samples_memriskbench_r1_*.jsonl"))
    assert len(dates) == 2 and len(r1) == 1 and r1[0].name.endswith(dates[-1])
    assert {s.where.rsplit(":", 1)[0] for s in stale.samples if s.episode.risk == "R1"} == {str(r1[0])}
    assert len(stale.files) == 5 and stale.dir == r1[0].parent  # the newest run's folder
    assert standings([stale])["memrisk-agent:stale"].status == "complete"
    assert main(["runs", str(two_stale_runs), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [x["system"] for x in listed] == ["memrisk-agent:stale"]


def _delete_failed_rows(src: Path, dest: Path) -> int:
    """Copy one model folder, deleting the rows of its failed episodes; its passes."""
    from lm_eval_memrisk.logs.runs import read_runs

    (log,) = read_runs([src])
    failed = {s.episode_id for s in log.samples if not s.passed}
    shutil.copytree(src, dest)
    for path in dest.glob("samples_*.jsonl"):
        lines = [x for x in path.read_text(encoding="utf-8").splitlines()
                 if json.loads(x)["doc"]["episode_id"] not in failed]
        path.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
        if not lines:
            path.unlink()
    return len(log.samples) - len(failed)


def test_deleting_failed_rows_never_ranks_with_or_above_the_oracle(
    two_stale_runs: Path, oracle_run: Path, tmp_path: Path, capsys
) -> None:
    """Neither beside a whole run of the track, nor when no system ran the whole track."""
    from lm_eval_memrisk.cli import main
    from lm_eval_memrisk.leaderboard import build, collect
    from lm_eval_memrisk.logs.runs import read_runs, standings

    stale_dir = next(d for d in two_stale_runs.iterdir() if len(list(d.glob("samples_*"))) == 5)
    oracle_dir = oracle_run
    forged = tmp_path / "forged"
    passes = _delete_failed_rows(stale_dir, forged)
    assert 0 < passes < 120

    # the forged run alone, and beside the oracle's run of only the tasks the forged rows
    # come from (R2 and R3 on v8: no system ran the whole track)
    tasks = {f.name.rsplit("_", 1)[0] for f in forged.glob("samples_*")}  # (files left empty are gone)
    assert tasks and len(tasks) < 5
    oracle_part = tmp_path / "oracle-part"
    oracle_part.mkdir()
    for f in oracle_dir.iterdir():
        if f.name.startswith("results_") or f.name.rsplit("_", 1)[0] in tasks:
            shutil.copy(f, oracle_part / f.name)
    for others in ([], [f"oracle={oracle_part}"], [f"oracle={oracle_dir}"]):
        runs = [f"stale={forged}", *others]
        logs = read_runs(runs)
        table = standings(logs)
        assert not table["stale"].ranked and table["stale"].status.startswith("incomplete (")
        assert table["stale"].rows_removed and "rows were removed" in table["stale"].rows_removed[0]
        warned: list[str] = []
        board = build(collect(runs, warned.append))
        assert "stale" not in [r.system.name for r in board.rows]
        assert [r.system.name for r in board.incomplete] == ["stale"]
        assert any(w.startswith("INCOMPLETE stale: incomplete (") for w in warned)
        if others:
            assert [r.system.name for r in board.rows] == ["oracle"] and board.rows[0].rank == 1
        capsys.readouterr()
        assert main(["runs", *runs, "--json"]) == 0
        listed = {x["system"]: x for x in json.loads(capsys.readouterr().out)}
        assert listed["stale"]["status"].startswith("incomplete (") and listed["stale"]["rows_removed"]
        if others:
            assert main(["stats", *runs, "--json"]) == 2
            assert "system 'stale' is incomplete" in capsys.readouterr().err


def test_a_limit_run_is_incomplete_not_a_deletion(oracle_run: Path, tmp_path: Path) -> None:
    """lm-eval's --limit N logs docs 0..N-1: no rows were removed, but the run owes its
    tasks' other docs, so it is incomplete and never ranked, even alone (issue 29 item 1)."""
    from lm_eval_memrisk.logs.runs import read_runs, standings

    limited = tmp_path / "limited"
    shutil.copytree(oracle_run, limited)
    for path in limited.glob("samples_*.jsonl"):
        lines = path.read_text(encoding="utf-8").splitlines()
        kept = sorted(lines, key=lambda x: json.loads(x)["doc_id"])[:3]
        path.write_text("".join(x + "\n" for x in kept), encoding="utf-8")
    (log,) = read_runs([f"oracle={limited}"])
    assert not log.rows_removed and len(log.samples) == 15
    assert len(log.owed) == 120  # every doc of memriskbench_r1..r5
    alone = standings([log])["oracle"]
    assert alone.status == "incomplete (15/120)" and not alone.ranked


# ----------------------------------------------------------------------------- memory_baseline


def test_memory_baseline_reads_through_the_run_reader(
    two_stale_runs: Path, oracle_run: Path, tmp_path: Path
) -> None:
    from lm_eval_memrisk.episodes.errors import SamplesError

    mb = load_script("memory_baseline")
    rows = mb.logged_rows([two_stale_runs, oracle_run])
    table = {r.split("|")[1].strip(): r for r in rows if r.startswith("| memrisk-agent")}
    assert sorted(table) == ["memrisk-agent:oracle", "memrisk-agent:stale"]  # two runs of stale, one system
    assert "| 120/120 (0 + 0) |" in table["memrisk-agent:oracle"]

    # an edited episode is refused (the old reader scored the log's own copy)
    edited = tmp_path / "edited"
    shutil.copytree(oracle_run, edited)
    path = next(edited.glob("samples_memriskbench_r1_*.jsonl"))
    lines = path.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    episode = json.loads(first["doc"]["episode_json"])
    episode["description"] = "edited"
    first["doc"]["episode_json"] = json.dumps(episode)
    path.write_text("".join(x + "\n" for x in [json.dumps(first), *lines[1:]]), encoding="utf-8")
    with pytest.raises(SamplesError, match="differs from that episode"):
        mb.logged_rows([edited])
