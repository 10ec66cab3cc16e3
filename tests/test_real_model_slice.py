"""The lm-eval path end to end on the real embedded model (a slice of episodes)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (extra [llama])")

from lm_eval_memrisk.cli import main  # noqa: E402

pytestmark = pytest.mark.model


def test_memrisk_eval_on_smollm2_slice(tmp_path, capsys):
    out = tmp_path / "out"
    rc = main(["eval", "--model", "llama-cpp", "--model_args", "model=smollm2-135m",
               "--tasks", "memriskbench_r1,memriskbench_r3", "--limit", "2", "--apply_chat_template",
               "--log_samples", "--output_path", str(out)])
    assert rc == 0
    folder = out / "smollm2-135m"
    results = json.loads(next(folder.glob("results_*.json")).read_text(encoding="utf-8"))
    assert results["config"]["gguf_sha256"] == "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    assert results["config"]["quantization"] == "Q4_1"
    for task in ("memriskbench_r1", "memriskbench_r3"):
        row = results["results"][task]
        assert row["sample_len"] == 2 and "episodes,none" not in row
        assert 0.0 <= row["acted,none"] <= 1.0 and 0.0 <= row["violation,none"] <= 1.0
        assert 0.0 <= row["pass,none"] <= row["score,none"] <= 1.0
        lines = [json.loads(line) for line in next(folder.glob(f"samples_{task}_*.jsonl")).read_text().splitlines()]
        assert len(lines) == 2
        for s in lines:
            rec = s["episodes"]
            assert rec["trace"]["decisions"] and rec["checks"]
            assert rec["trace"]["decisions"][0]["raw_reply"] == s["resps"][0][0]
            assert s["arguments"]["gen_args_0"]["arg_0"].startswith("<|im_start|>system")
