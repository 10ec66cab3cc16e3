"""``memrisk audit --learned-groups``: the learned reader retrained on families of its
features.  Every feature has a family, a planted word cue is found by the words alone
and not by the order, and the JSON rows are shaped and deterministic."""

from __future__ import annotations

import json

import pytest
from test_audit_learned import planted

from lm_eval_memrisk.audit.features import options
from lm_eval_memrisk.audit.learned import _views, reader, train
from lm_eval_memrisk.audit.learned_groups import FAMILIES, _keeping, family, row_names
from lm_eval_memrisk.audit.run import passes, tally
from lm_eval_memrisk.cli import main as memrisk
from lm_eval_memrisk.episodes.loader import load_episodes


def test_every_feature_of_the_default_dataset_has_one_family() -> None:
    seen: dict[str, set[str]] = {}
    for ep in load_episodes("v6")[::6]:
        for view, _ in _views(ep):
            for opt in options(view):
                for f in opt.features:
                    seen.setdefault(family(f), set()).add(f)
    assert set(seen) == {*FAMILIES, "frame"}, sorted(seen)
    assert {"L:my", "user:R:please", "ask:w:the"} & seen["words"]
    assert "trust:low" in seen["labels"] and "scope:other" in seen["labels"]
    assert "rank:newest" in seen["order"] and "scope-rank:only" in seen["order"]
    assert "called" in seen["messages"] and "ask" in seen["frame"]
    with pytest.raises(ValueError, match="no family"):
        family("colour:blue")


def test_rows_cover_each_family_alone_and_left_out() -> None:
    names = [name for name, _ in row_names()]
    assert names[0] == "all" and len(names) == 1 + 2 * len(FAMILIES)
    kept = dict(row_names())
    assert kept["only words"] == {"words"} and "words" not in kept["without words"]
    keep = _keeping(frozenset({"order"}))
    assert keep("rank:middle") and keep("ask") and not keep("L:zebra") and not keep("trust:high")


def test_a_planted_word_cue_is_found_by_words_not_by_order() -> None:
    """The right address follows the word "zebra" and is newer half of the time: the
    words alone pass nearly every held-out episode, the order alone about half."""
    train_set, test_set = planted(40, 1), planted(40, 2)
    cache: dict = {}

    def passed(families: set[str]) -> int:
        sc = reader(train(train_set, cache, keep=_keeping(frozenset(families))))
        return int(tally(test_set, lambda ep: passes(sc, ep))["main"]["passed"])

    words, order = passed({"words"}), passed({"order"})
    assert words >= 38 and order <= 28, (words, order)


def test_json_rows_are_shaped_and_deterministic(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["audit", "--episodes", "v6", "--learned-groups", "--json", "--train-seed", "11"]
    assert memrisk(argv) == 0
    first = capsys.readouterr().out
    assert memrisk(argv) == 0
    assert capsys.readouterr().out == first
    out = json.loads(first)
    assert out["learned_setup"]["train_seed"] == 11
    assert list(out["learned_groups"]) == sorted(name for name, _ in row_names())
    for row in out["learned_groups"].values():
        assert row["main"]["n"] == 120 and 0 <= row["main"]["passed"] <= 120
    assert memrisk(["audit", "--episodes", "v6", "--learned-groups", "--train-seed", "11"]) == 0
    assert "| only order |" in capsys.readouterr().out
