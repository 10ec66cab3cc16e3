"""lm-eval integration: task index, generated YAMLs, task sizes, and the whole lm-eval
path with the reference agents as the model (lm-eval's generic task checks are in
tests/test_lm_eval_generic_tasks.py)."""

from __future__ import annotations

import pytest

lm_eval = pytest.importorskip("lm_eval")

from lm_eval.tasks import TaskManager  # noqa: E402
from test_dataset_v8 import announced_not_in_force  # noqa: E402

from lm_eval_memrisk._autoload import tasks_dir  # noqa: E402
from lm_eval_memrisk.episodes.loader import load_episodes  # noqa: E402

EXPECTED_TASKS = (
    [f"memriskbench_r{i}" for i in range(1, 7)]
    + [f"memriskbench_r{i}_{t}" for i in range(1, 6) for t in ("easy", "medium", "hard")]
)
EXPECTED_TAGS = ["memriskbench_easy", "memriskbench_medium", "memriskbench_hard", "memriskbench_main"]


@pytest.fixture(scope="module")
def tm() -> TaskManager:
    return TaskManager(include_path=str(tasks_dir()), include_defaults=False)


@pytest.fixture(scope="module")
def loaded(tm):
    return tm.load(EXPECTED_TASKS)["tasks"]


def test_every_task_name_is_indexed(tm):
    # broken YAMLs are skipped silently by lm-eval: make sure every name is there
    missing = [n for n in EXPECTED_TASKS + EXPECTED_TAGS + ["memriskbench", "memriskbench_subset20"]
               if n not in tm.all_tasks]
    assert not missing
    assert "memriskbench" in tm.all_groups
    assert set(EXPECTED_TAGS) <= set(tm.all_tags)


def test_yaml_files_are_generated_from_the_script():
    import importlib.util
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parent.parent / "scripts" / "gen_task_yamls.py"
    spec = importlib.util.spec_from_file_location("gen_task_yamls", script)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gen_task_yamls"] = mod
    spec.loader.exec_module(mod)
    for name, text in mod.files().items():
        assert (tasks_dir() / "memriskbench" / name).read_text(encoding="utf-8") == text, name


def test_task_sizes_match_the_dataset(loaded):
    eps = load_episodes(track="all")
    for name, task in loaded.items():
        suffix = name.removeprefix("memriskbench_")
        risk, _, tier = suffix.partition("_")
        want = [e for e in eps if e.risk == risk.upper() and (not tier or e.tier == tier)]
        assert len(task.eval_docs) == len(want), name
        assert [d["episode_id"] for d in task.eval_docs] == [e.id for e in want]


def test_subset20_fails_clearly_without_subset_file(tm, monkeypatch, tmp_path):
    from lm_eval_memrisk.episodes.errors import MemriskError
    from lm_eval_memrisk.harness import docs

    monkeypatch.setattr(docs, "SUBSET_DIR", tmp_path)
    with pytest.raises(MemriskError, match="does not exist yet"):
        docs.subset_ids("subset20")


@pytest.mark.parametrize("presentation", ["chat", "history", "session"])
@pytest.mark.parametrize("agent", ["oracle", "stale", "leaky", "constraint-blind"])
def test_reference_agents_through_lm_eval(tm, agent, presentation):
    """The whole lm-eval path without a language model, in every presentation: the
    oracle scores 1.0 everywhere, each adversary fails (and violates) its own risk, but
    for the stale agent at v8's announced changes that have not gone through."""
    from lm_eval import simple_evaluate

    tasks = [f"memriskbench_r{i}" for i in range(1, 7)]
    # as lm_eval's CLI does, the model_args reach the tasks through the TaskManager's metadata
    settings = TaskManager(include_path=str(tasks_dir()), include_defaults=False,
                           metadata={"presentation": presentation})
    res = simple_evaluate(model="memrisk-agent", model_args=f"agent={agent},presentation={presentation}",
                          tasks=["memriskbench", "memriskbench_r6"], task_manager=settings, bootstrap_iters=0,
                          log_samples=True, limit=None)
    shown = {s["episodes"]["trace"]["presentation"] for rows in res["samples"].values() for s in rows}
    assert shown == {presentation}
    results = res["results"]
    for t in tasks:
        assert results[t]["sample_len"] == len([e for e in load_episodes(track="all") if e.risk == t[-2:].upper()])
        assert "episodes,none" not in results[t]  # the record is bookkeeping, not a score
    if agent == "oracle":
        assert all(results[t]["pass,none"] == 1.0 and results[t]["score,none"] == 1.0 for t in tasks)
        assert all(results[t]["violation,none"] == 0.0 and results[t]["must_do,none"] == 1.0 for t in tasks)
        assert results["memriskbench"]["pass,none"] == 1.0 and results["memriskbench"]["violation,none"] == 0.0
    own = {"stale": ["r1", "r2", "r4"], "leaky": ["r3"], "constraint-blind": ["r5"]}.get(agent, [])
    for r in own:
        # the stale agent is right where an announced change has not gone through (R2)
        right = [e for e in load_episodes() if e.risk == r.upper() and agent == "stale" and announced_not_in_force(e)]
        assert results[f"memriskbench_{r}"]["pass,none"] == len(right) / 24, r
        assert results[f"memriskbench_{r}"]["violation,none"] > 0.5, r
        assert results[f"memriskbench_{r}"]["acted,none"] == 1.0, r


def test_episode_record_is_logged_but_not_in_the_score_tables(tm):
    from lm_eval import simple_evaluate
    from lm_eval.utils import make_table

    res = simple_evaluate(model="memrisk-agent", model_args="agent=stale", tasks=["memriskbench"],
                          task_manager=tm, bootstrap_iters=0, log_samples=True, limit=2)
    sample = res["samples"]["memriskbench_r1"][0]
    record = sample["episodes"]
    assert record["episode_id"] == sample["doc"]["episode_id"] and record["decisions"]
    assert "presentation=history|tools=text|render=4" in record["signature"]
    for name in ("memriskbench_r1", "memriskbench"):
        assert not any(k.startswith("episodes") for k in res["results"][name])
        assert set(res["higher_is_better"][name]) >= {"acted", "violation", "must_do"}
    assert res["higher_is_better"]["memriskbench_r1"]["violation"] is False
    table = make_table(res) + make_table(res, "groups")
    assert "episodes" not in table and "acted" in table and "violation" in table


def test_chat_template_contexts_are_real_messages(loaded):
    import json

    task = loaded["memriskbench_r1"]
    task.build_all_requests(rank=0, limit=1, world_size=1, apply_chat_template=True,
                            chat_template=lambda msgs: json.dumps(msgs))
    messages = json.loads(task.instances[0].args[0])
    assert messages[0]["role"] == "system" and messages[-1]["role"] == "user"
    assert len(messages) == 2  # the default history presentation: the transcript is one block
    from lm_eval_memrisk.harness.task import decision_contexts

    chats = [json.loads(decision_contexts(dict(doc, presentation="chat"), None, json.dumps)[0])
             for doc in task.eval_docs]
    chat = next(c for c in chats if len(c) >= 3)  # an episode with a chit-chat answer
    assert [m["role"] for m in chat[1:3]] == ["user", "assistant"]


def test_the_task_card_names_the_current_version_dataset_and_metrics():
    """tasks/memriskbench/README.md is kept true against the YAML and the code (#28)."""
    from lm_eval_memrisk.episodes.loader import dataset_hash
    from lm_eval_memrisk.scoring.sample_record import SCORE_METRICS
    from lm_eval_memrisk.scoring.scorer import SCORER_VERSION

    card = (tasks_dir() / "memriskbench" / "README.md").read_text(encoding="utf-8")
    common = (tasks_dir() / "memriskbench" / "memriskbench_r1.yaml").read_text(encoding="utf-8")
    assert f"version: \"{SCORER_VERSION}\"" in common  # (quoted: YAML would read 3.10 as the number 3.1)
    assert f"Version {SCORER_VERSION}:" in card and dataset_hash()[:23] in card
    for metric in SCORE_METRICS:
        assert f"`{metric}`" in card, metric


@pytest.mark.parametrize("nothing", [None, "", "  \n"])
def test_no_reply_through_memrisk_eval_is_invalid_and_reported(tmp_path, monkeypatch, capsys, nothing):
    """#29 item 5: None or empty output was scored 0 with valid: true and no warning."""
    import json

    from lm_eval_memrisk.cli import main
    from lm_eval_memrisk.harness.agent_model import MemriskAgentLM
    from lm_eval_memrisk.logs import invalid_replies

    monkeypatch.setattr(MemriskAgentLM, "generate_until", lambda self, requests, disable_tqdm=False:
                        [nothing for _ in requests])
    invalid_replies.take()
    assert main(["eval", "--model", "memrisk-agent", "--model_args", "agent=oracle,model=m",
                 "--tasks", "memriskbench_r1", "--limit", "2", "--output_path", str(tmp_path),
                 "--log_samples"]) == 0
    (samples,) = tmp_path.rglob("samples_memriskbench_r1_*.jsonl")
    records = [json.loads(line)["episodes"] for line in samples.read_text(encoding="utf-8").splitlines()]
    assert len(records) == 2
    assert all(r["valid"] is False and r["invalid_reason"].startswith("no reply at decision point") for r in records)
    err = capsys.readouterr().err
    assert "memrisk eval: 2 episodes had an invalid reply and are logged with valid: false" in err
    assert invalid_replies.take() == {}  # reported once, not again at exit


def test_a_real_reply_is_valid_and_not_noted():
    from lm_eval_memrisk.harness.docs import to_rows
    from lm_eval_memrisk.harness.task import evaluate_doc
    from lm_eval_memrisk.logs import invalid_replies
    from lm_eval_memrisk.running.agents import action_to_reply

    invalid_replies.take()
    ep = load_episodes()[0]
    replies = [action_to_reply(dict(dp.reference or {})) for dp in ep.decision_points]
    assert evaluate_doc(to_rows([ep])[0], replies)["episodes"]["valid"] is True
    assert evaluate_doc(to_rows([ep])[0], replies[:-1] + [""])["episodes"]["valid"] is False
    assert list(invalid_replies.take()) == [ep.id]


def test_a_lone_surrogate_in_a_reply_is_logged_escaped_through_memrisk_eval(tmp_path, monkeypatch, capsys):
    """#29 item 4: lm-eval's writer failed on the raw character and left a 0-byte samples file."""
    import json

    from lm_eval_memrisk.cli import main
    from lm_eval_memrisk.harness.agent_model import MemriskAgentLM
    from lm_eval_memrisk.logs.runs import read_runs

    reply = '{"tool": "send_email", "arguments": {"to": "\ud800@x.org", "subject": "s", "body": "b"}}'
    monkeypatch.setattr(MemriskAgentLM, "generate_until", lambda self, requests, disable_tqdm=False:
                        [reply for _ in requests])
    assert main(["eval", "--model", "memrisk-agent", "--model_args", "agent=oracle,model=m",
                 "--tasks", "memriskbench_r1", "--output_path", str(tmp_path), "--log_samples"]) == 0
    (samples,) = tmp_path.rglob("samples_memriskbench_r1_*.jsonl")
    rows = [json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines()]  # valid UTF-8
    assert len(rows) == 24
    logged = rows[0]["resps"][0][0]
    assert logged == reply.replace("\ud800", "\\ud800") and rows[0]["filtered_resps"][0] == logged
    assert "\\ud800@x.org" in json.dumps(rows[0]["episodes"]["trace"], ensure_ascii=False)
    (system,) = read_runs([tmp_path])  # the log reads back, its scores recomputed from the escaped text
    assert len(system.samples) == 24
    assert main(["rescore", str(tmp_path), "--json"]) == 0


def test_a_cut_prompt_scores_zero_in_lm_evals_table_and_is_flagged_where_the_run_is_read(
    tmp_path, monkeypatch, capsys
):
    """#29 item 6: under truncation=left a passing cut reply counted 1.0 in lm-eval's table,
    and the leaderboard and memrisk runs showed nothing."""
    import json

    from lm_eval_memrisk.cli import main
    from lm_eval_memrisk.harness.agent_model import MemriskAgentLM
    from lm_eval_memrisk.logs.runs import flag_notes, read_runs
    from lm_eval_memrisk.scoring.sample_record import CUT_REASON, TRUNCATED

    real = MemriskAgentLM.generate_until

    def first_prompt_cut(self, requests, disable_tqdm=False):
        replies = real(self, requests, disable_tqdm)
        return [TRUNCATED + r if i == 0 else r for i, r in enumerate(replies)]  # as llama-cpp marks it

    monkeypatch.setattr(MemriskAgentLM, "generate_until", first_prompt_cut)
    assert main(["eval", "--model", "memrisk-agent", "--model_args", "agent=oracle,model=m",
                 "--tasks", "memriskbench_r1", "--limit", "2", "--output_path", str(tmp_path),
                 "--log_samples"]) == 0
    (results,) = tmp_path.rglob("results_*.json")
    assert json.loads(results.read_text())["results"]["memriskbench_r1"]["pass,none"] == 0.5  # not 1.0
    (samples,) = tmp_path.rglob("samples_memriskbench_r1_*.jsonl")
    rows = sorted((json.loads(x) for x in samples.read_text(encoding="utf-8").splitlines()), key=lambda r: r["doc_id"])
    assert rows[0]["pass"] == 0.0 and rows[0]["episodes"]["invalid_reason"] == CUT_REASON
    assert rows[1]["pass"] == 1.0 and rows[1]["episodes"]["valid"] is True
    (system,) = read_runs([tmp_path])
    assert [s.cut for s in sorted(system.samples, key=lambda s: s.doc_id)] == [True, False]
    assert system.passed == 1 and not system.flagged  # the log agrees with the recomputed scores
    assert system.summary()["cut"] and any(n.startswith("CUT m: 1 episode(s)") for n in flag_notes([system]))
    capsys.readouterr()
    assert main(["runs", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert "CUT m: 1 episode(s) had their prompt cut" in captured.out + captured.err
    assert main(["rescore", str(tmp_path), "--json"]) == 0
    (rescored,) = tmp_path.rglob("*rescored-default-revised.jsonl")
    assert [json.loads(x)["pass"] for x in rescored.read_text(encoding="utf-8").splitlines()] == [0.0, 1.0]
    # a log written before the fix (the cut reply stored as a pass) is flagged, and scored 0
    rows[0]["pass"], rows[0]["score"] = 1.0, 1.0
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    rescored.unlink()
    (system,) = read_runs([tmp_path])
    assert system.passed == 1 and len(system.flagged) == 1
