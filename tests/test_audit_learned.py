"""The learned surface reader of ``memrisk audit``: it learns a planted cue, trains on
other episodes than it is tested on, and its JSON rows are shaped and deterministic."""

from __future__ import annotations

import json
import random

import pytest
from episode_factory import SHIP, chain, item

from lm_eval_memrisk.audit.learned import (
    DEFAULT_TRAIN_SEED,
    learned_audit,
    reader,
    train,
    training_episodes,
)
from lm_eval_memrisk.audit.logreg import fit
from lm_eval_memrisk.audit.run import passes, tally
from lm_eval_memrisk.audit.shortcuts import SHORTCUTS
from lm_eval_memrisk.cli import audit as audit_cli
from lm_eval_memrisk.cli import main as memrisk
from lm_eval_memrisk.episodes.errors import AuditError
from lm_eval_memrisk.episodes.records import MAIN_RISKS, Check, Episode
from lm_eval_memrisk.generator.seeding import DEFAULT_SEED

STREETS = [
    "Oak Street",
    "Elm Road",
    "Mill Lane",
    "Park Row",
    "Quay Side",
    "Bank Walk",
    "Hill Rise",
    "Dock Way",
]


def planted(n: int, seed: int) -> list[Episode]:
    """Two addresses per episode, the right one said after the word "zebra", older or
    newer at random: the newest note is right half of the time, the cue always."""
    rng = random.Random(seed)
    out = []
    for k in range(n):
        a, b = rng.sample(STREETS, 2)
        right, wrong = f"{rng.randint(1, 99)} {a}, Leeds", f"{rng.randint(100, 199)} {b}, York"
        first, second = (right, wrong) if rng.random() < 0.5 else (wrong, right)
        said = {right: f"Zebra: my address is {right}.", wrong: f"My address is {wrong}."}
        events = [
            dict(type="scope_switch", scopes=("user:alice", "workspace:acme"),
                 text="Session 1 — Monday 2 March 2026 — signed in as Alice Ames (workspace Acme)"),
            dict(type="memory_write", item=item("m1", "shipping address", first, t=2)),
            dict(type="user_message", text=said[first]),
            dict(type="memory_write", item=item("m2", "shipping address", second, t=4)),
            dict(type="user_message", text=said[second]),
            dict(type="user_message", text="Ship my order to my address, please."),
            dict(id="dp1", type="decision_point",
                 checks=(Check(id="c1", kind="tool_arg_equals", tool="ship_order", argument="address",
                               expected=right, expected_original=f"address: {right}"),),
                 reference={"tool": "ship_order", "arguments": {"address": right}},
                 naive={"tool": "ship_order", "arguments": {"address": "{{mem:shipping address}}"}},
                 terminal_tool="ship_order"),
        ]  # fmt: skip
        out.append(Episode(
            id=f"P-{seed}-{k}", version="5.0", risk="R1", tier="easy", track="main", family="shipping_address",
            description="planted cue", tools=(SHIP,), events=chain(events),
        ))  # fmt: skip
    return out


def test_the_reader_learns_a_planted_cue() -> None:
    """Trained on one planted set, tested on another: the reader follows "zebra" and
    passes nearly all, where the newest note passes about half."""
    train_set, test_set = planted(40, 1), planted(40, 2)
    assert not {e.id for e in train_set} & {e.id for e in test_set}
    learned = reader(train(train_set))
    newest = next(s for s in SHORTCUTS if s.name == "newest-in-scope")
    got = tally(test_set, lambda ep: passes(learned, ep))["main"]["passed"]
    base = tally(test_set, lambda ep: passes(newest, ep))["main"]["passed"]
    assert got >= 38 and base <= 28, (got, base)


def test_logreg_separates_and_is_deterministic() -> None:
    rows = [["a", "x"], ["a"], ["b", "x"], ["b"]] * 3
    labels = [True, True, False, False] * 3
    m1, m2 = fit(rows, labels), fit(rows, labels)
    assert m1 == m2
    assert m1.score(["a"]) > 0 > m1.score(["b"])
    with pytest.raises(ValueError):
        fit(rows, labels[:-1])


def test_training_episodes_differ_from_the_audited_ones() -> None:
    audited = planted(2, 3)
    assert DEFAULT_TRAIN_SEED not in (DEFAULT_SEED, 1, 2, 3)
    assert audit_cli.DEFAULT_TRAIN_SEED == DEFAULT_TRAIN_SEED
    from lm_eval_memrisk.generator.build import generate

    same = generate(7, version="v5")
    with pytest.raises(AuditError, match="another --train-seed"):
        training_episodes(same, 7)
    with pytest.raises(AuditError, match="non-negative"):
        training_episodes(audited, -1)
    other = training_episodes(same, 8)
    assert {e.version for e in other} == {"5.0"}
    assert [e.events for e in other] != [e.events for e in same]


def test_unknown_version_is_a_clear_error() -> None:
    ep = planted(1, 4)[0]
    odd = Episode(**{**ep.__dict__, "version": "99.0"})
    with pytest.raises(AuditError, match="cannot build training episodes"):
        training_episodes([odd], DEFAULT_TRAIN_SEED)


def test_learned_json_rows_are_shaped_and_deterministic(capsys: pytest.CaptureFixture[str]) -> None:
    assert memrisk(["audit", "--episodes", "v5", "--json", "--train-seed", "11"]) == 0
    first = capsys.readouterr().out
    assert memrisk(["audit", "--episodes", "v5", "--json", "--train-seed", "11"]) == 0
    assert capsys.readouterr().out == first
    out = json.loads(first)
    assert "shortcuts" in out and out["learned_setup"]["train_seed"] == 11
    assert out["learned_setup"]["train_version"] == "v5"
    for key in ("learned", "learned_cv"):
        assert set(out[key]) == {*MAIN_RISKS, "R6", "main"}
        assert out[key]["main"]["n"] == 120 and out[key]["R6"]["n"] == 24
        assert 0 <= out[key]["main"]["passed"] <= 120
    assert memrisk(["audit", "--episodes", "v5", "--train-seed", "11"]) == 0
    assert "| learned (trained on seed 11) | learned |" in capsys.readouterr().out


def test_bad_train_seed_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        memrisk(["audit", "--train-seed", "minus-one"])
    assert "--train-seed" in capsys.readouterr().err


def test_learned_audit_on_a_generated_file_beats_chance() -> None:
    """On v5 seed 5 (trained on the default seed), the reader passes more than the
    best single-cue agent of the shipped audit (newest-in-scope, ~30/120)."""
    from lm_eval_memrisk.generator.build import generate

    result = learned_audit(generate(5, version="v5"))
    assert result["learned"]["main"]["passed"] > 40, result["learned"]
