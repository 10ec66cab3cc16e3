"""Write the hand-made lm-eval run folders used by tests/test_selector_*.py.

Run from the repository root: ``python tests/data/samples/make_samples.py``.  The pass
table below is the whole fixture; every other field is derived from it.

Layouts (both are lm-eval's): ``run_<name>/<model folder>/samples_*.jsonl`` (pass the
run folder or the model folder).  ``run_beta`` also holds an older, different run of
memriskbench_r1 (the newest must win); ``run_delta`` is the new system of the drift check.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATE_OLD, DATE = "2026-01-01T09-00-00.000000", "2026-01-02T09-00-00.000000"
HASH = "sha256:0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"
TIERS = {"E": "easy", "M": "medium", "H": "hard"}
#            alpha beta gamma omega delta
TABLE = """
R1-E-001     1    1    1    1    1
R1-M-002     1    1    1    0    1
R1-H-003     1    0    0    0    0
R2-E-001     1    1    1    1    1
R2-M-002     1    1    0    0    1
R2-H-003     1    1    0    0    0
R3-E-001     1    1    0    1    1
R3-M-002     1    0    0    0    0
R3-H-003     0    0    0    0    0
R4-E-001     1    1    1    1    1
R4-M-002     1    1    1    0    1
R4-H-003     0    1    0    0    0
R5-E-001     1    1    1    1    1
R5-M-002     1    0    1    1    0
R5-H-003     1    1    0    0    1
"""
SYSTEMS = ("alpha", "beta", "gamma", "omega", "delta")


def rows() -> list[tuple[str, dict[str, int]]]:
    out = []
    for line in TABLE.strip().splitlines():
        ep, *flags = line.split()
        out.append((ep, dict(zip(SYSTEMS, map(int, flags)))))
    return out


def sample_line(doc_id: int, ep: str, passed: int, system: str) -> dict:
    risk, tier_code, num = ep.split("-")
    tier = TIERS[tier_code]
    k = int(num)
    features = {"n_turns": 4 + 5 * k, "n_memories": 2 + k, "n_checks": k, "n_tool_calls": k - 1,
                "n_constraints": int(risk == "R5"), "n_decisions": 1 + (k > 1), "n_distractors": k % 2,
                "n_risk_types": 1 + (k == 3), "n_tools": 2, "n_events": 10 + k}
    reply = "ok" if passed else f"wrong answer from {system}"
    action = {"kind": "tool_call" if passed else "answer", "text": reply, "tool": None, "arguments": {}, "reason": None}
    trace = {"episode_id": ep, "episode_version": "1.0", "agent": "lm-eval", "mode": "scripted",
             "memory_policy": "full", "format": 1,
             "decisions": [{"decision_id": "d1", "messages": [], "raw_reply": reply, "action": action,
                            "state": {}, "memory_used": ["m1"] * (1 + passed), "visible_items": [], "steps": []}]}
    score = 1.0 if passed else (0.5 if k % 2 else 0.0)
    record = {"episode_id": ep, "risk": risk, "tier": tier, "family": "fixture", "track": "main",
              "dataset_hash": HASH, "scorer_version": "1.0", "success": bool(passed), "score": score,
              "violations": [] if passed else ["check failed"],
              "checks": [{"check_id": "c1", "kind": "text_contains", "channel": "text", "decision_id": "d1",
                          "passed": bool(passed), "evidence": ""}],
              "features": features, "trace": trace,
              "signature": f"memrisk:v1|data={HASH}|scorer=1.0|variant=default|policy=full|mode=scripted"}
    doc = {"episode_id": ep, "risk": risk, "tier": tier, "track": "main", "family": "fixture",
           "version": "1.0", "episode_json": "{}"}
    return {"doc_id": doc_id, "doc": doc, "target": "", "resps": [[reply]], "filtered_resps": [reply],
            "filter": "none", "metrics": ["pass", "score", "pass_safety_aware", "pass_original", "episodes"],
            "pass": float(passed), "score": score, "pass_safety_aware": float(passed),
            "pass_original": float(passed), "episodes": record}


def write(system: str, model_dir: Path, date: str, flip_r1: bool = False) -> None:
    model_dir.mkdir(parents=True, exist_ok=True)
    by_task: dict[str, list[tuple[str, int]]] = {}
    for ep, flags in rows():
        by_task.setdefault(ep[:2].lower(), []).append((ep, flags[system]))
    for risk, eps in sorted(by_task.items()):
        if flip_r1 and risk != "r1":
            continue
        lines = [sample_line(i, ep, (1 - p) if flip_r1 else p, system) for i, (ep, p) in enumerate(eps)]
        lines.reverse()  # file order must not matter
        text = "".join(json.dumps(x, sort_keys=True) + "\n" for x in lines)
        (model_dir / f"samples_memriskbench_{risk}_{date}.jsonl").write_text(text, encoding="utf-8")
    (model_dir / f"results_{date}.json").write_text('{"results": {}}\n', encoding="utf-8")


def main() -> None:
    for system in SYSTEMS:
        write(system, HERE / f"run_{system}" / f"org__{system}", DATE)
    write("beta", HERE / "run_beta" / "org__beta", DATE_OLD, flip_r1=True)


if __name__ == "__main__":
    main()
