"""Counterbalanced phrasing (generator/phrasing.py, dataset v7): which template of a pool
each sentence gets is dealt after the episodes are planned, so that no template tells
whether its value is the one to use."""

from __future__ import annotations

import random

from lm_eval_memrisk.generator import build, phrasing
from lm_eval_memrisk.generator.templating import pick

POOL = ("A {{ value }}.", "B {{ value }}.")
OTHER = ("C {{ value }}.", "D {{ value }}.")


def _rates(drawn, fate, dealt):
    tally: dict[str, list[int]] = {}
    for s in drawn:
        if s in fate:
            t = dealt.get(s, s[2])
            acc = tally.setdefault(t, [0, 0])
            acc[0] += fate[s][0]
            acc[1] += fate[s][1]
    return {t: k / n for t, (n, k) in tally.items()}


def test_deal_mixes_a_template_that_drew_only_wrong_values_with_right_ones() -> None:
    # template A drew the four values that were never right, B the four always right
    drawn = {(f"ep{i}", f"v{i}", POOL[i >= 4]): POOL for i in range(8)}
    fate = {s: (1, int(s[2] == POOL[1])) for s in drawn}
    assert _rates(drawn, fate, {}) == {POOL[0]: 0.0, POOL[1]: 1.0}
    dealt = phrasing.deal(drawn, fate)
    assert _rates(drawn, fate, dealt) == {POOL[0]: 0.5, POOL[1]: 0.5}


def test_deal_keeps_how_often_each_template_of_a_pool_is_used() -> None:
    rng = random.Random(3)
    drawn = {}
    for i in range(60):
        pool = POOL if i % 3 else OTHER
        drawn[(f"ep{i // 4}", f"v{i}", rng.choice(pool))] = pool
    fate = {s: (n, rng.randint(0, n)) for s in drawn for n in [rng.randint(1, 3)]}
    dealt = phrasing.deal(drawn, fate)
    for pool in (POOL, OTHER):
        before = sorted(s[2] for s, p in drawn.items() if p == pool)
        after = sorted(dealt.get(s, s[2]) for s, p in drawn.items() if p == pool)
        assert before == after
        assert all(dealt[s] in pool for s, p in drawn.items() if p == pool and s in dealt)
    assert dealt == phrasing.deal(drawn, fate)  # deterministic


def test_sentences_no_decision_saw_keep_their_draw() -> None:
    drawn = {("ep", "v1", POOL[0]): POOL, ("ep", "v2", POOL[1]): POOL}
    assert phrasing.deal(drawn, {}) == {}


def test_pick_draws_the_same_random_numbers_whatever_it_renders() -> None:
    a, b = random.Random(7), random.Random(7)
    plain = pick(a, POOL, value="x")
    with phrasing._active(phrasing.Phrasing(dealt={("", "x", "A {{ value }}."): POOL[1]})):
        dealt = pick(b, POOL, value="x")
    assert a.random() == b.random()
    assert (plain, dealt) in {("A x.", "B x."), ("B x.", "B x.")}


def test_a_counterbalanced_build_changes_words_only() -> None:
    """The same events, values and checks as the build drawn at random; only the text of
    some user turns differs (a pool's templates say the same thing)."""
    counts = {("R1", "medium"): 3, ("R2", "hard"): 3, ("R3", "medium"): 3}
    balanced = build.generate(5, counts=counts, version="v7")
    drawn = build.generate(5, counts=counts, version="v7", counterbalance=False)
    changed = 0
    for x, y in zip(balanced, drawn, strict=True):
        assert len(x.events) == len(y.events), x.id
        for e, f in zip(x.events, y.events, strict=True):
            assert (e.type, e.item, e.checks, e.reference) == (
                f.type,
                f.item,
                f.checks,
                f.reference,
            ), (x.id, e.id)
            if e.text != f.text:
                assert e.type == "user_message", (x.id, e.id)
                changed += 1
    assert changed > 0


def test_the_generators_fate_reading_counts_what_the_audits_template_table_counts() -> None:
    """generator/fates.py reads the ground truth (the generator sits below the audit);
    audit/templates.py reads the rendered prompt.  They agree on (almost) every sentence."""
    from lm_eval_memrisk.audit.templates import template_uses as audit_uses
    from lm_eval_memrisk.generator.fates import template_uses

    counts = {("R1", "hard"): 4, ("R2", "medium"): 4, ("R3", "hard"): 4, ("R4", "medium"): 4, ("R5", "hard"): 4}
    episodes = build.generate(11, counts=counts, version="v7")
    ours, theirs = phrasing.fates(template_uses(episodes)), phrasing.fates(audit_uses(episodes))
    assert len(theirs) > 50
    same = sum(ours.get(s) == f for s, f in theirs.items())
    assert same >= 0.98 * len(theirs), (same, len(theirs))
    assert len(set(ours) - set(theirs)) <= 0.02 * len(theirs)


def test_a_fixed_context_is_never_swapped() -> None:
    # A drew the two wrong values, B the two right ones: dealt freely the rates even out,
    # but as a fixed context (another build's sentences, kept as they were) nothing moves
    drawn = {("old0", "w0", POOL[0]): POOL, ("old1", "w1", POOL[0]): POOL,
             ("old2", "r0", POOL[1]): POOL, ("old3", "r1", POOL[1]): POOL}  # fmt: skip
    fate = {s: (1, int(s[1].startswith("r"))) for s in drawn}
    assert _rates(drawn, fate, phrasing.deal(drawn, fate)) == {POOL[0]: 0.5, POOL[1]: 0.5}
    assert phrasing.deal(drawn, fate, {s: s[2] for s in drawn}) == {}


def test_beside_a_fixed_context_the_deal_lifts_a_template_into_the_band() -> None:
    # the context gave A 7 uses (1 right) and B 3 (none); of the free sentences A drew a
    # wrong value, B a right one: A at 1/8 is under the band, which the even-rate objective
    # alone leaves (B, under BAND_MIN_USES, would stray further from the rate); the band's
    # weight gives A the right value
    context = {**{(f"old{i}", f"c{i}", POOL[0]): POOL for i in range(7)},
               **{(f"oldb{i}", f"b{i}", POOL[1]): POOL for i in range(3)}}  # fmt: skip
    free = {("new0", "r0", POOL[1]): POOL, ("new1", "w0", POOL[0]): POOL}
    drawn = {**context, **free}
    fate = {s: (1, int(s[1] in ("c0", "r0"))) for s in drawn}
    fixed = {s: s[2] for s in context}
    dealt = phrasing.deal(drawn, fate, fixed)
    assert dealt == {("new0", "r0", POOL[1]): POOL[0], ("new1", "w0", POOL[0]): POOL[1]}
    assert _rates(drawn, fate, {**fixed, **dealt})[POOL[0]] == 0.25


def _dealt(given: dict, fate: dict) -> phrasing.Dealt:
    return phrasing.Dealt({s: POOL for s in given}, fate, given)


def _seen(given: dict, fate: dict) -> phrasing.Fates:
    """The fates the built dataset shows: each sentence's under the template it got."""
    return {(s[0], s[1], t): fate[s] for s, t in given.items() if s in fate}


def test_mend_leaves_a_dataset_in_the_band_as_it_is() -> None:
    # A at 1/8 would be out, but it is used 7 times only: nothing to mend, however uneven
    given = {(f"old{i}", f"w{i}", POOL[0]): POOL[0] for i in range(7)} | {("oldb", "r", POOL[1]): POOL[1]}
    fate = {s: (1, int(s[1] == "r")) for s in given}
    assert phrasing.mend(_dealt(given, fate), _seen(given, fate), free=()) == {}


def test_mend_moves_the_free_sentences_first_then_the_fixed_ones_of_the_pool() -> None:
    # A is given to eight wrong values (0/8): out of the band.  Where two free sentences
    # that got B for a right value can swap with two free A's, mend moves free sentences
    # only; with none free, fixed ones of the pool (v7's "since" notes on v8's seed 1)
    given = {(f"old{i}", f"w{i}", POOL[0]): POOL[0] for i in range(5)} | {
        ("old5", "r0", POOL[1]): POOL[1], ("old6", "r1", POOL[1]): POOL[1],
        **{(f"new{i}", f"w{5 + i}", POOL[0]): POOL[0] for i in range(3)},
        ("new3", "r2", POOL[1]): POOL[1], ("new4", "r3", POOL[1]): POOL[1]}  # fmt: skip
    fate = {s: (1, int(s[1].startswith("r"))) for s in given}
    assert phrasing.outside_band((t, fate[s]) for s, t in given.items()) == {POOL[0]}
    for free in ([f"new{i}" for i in range(5)], []):
        mended = phrasing.mend(_dealt(given, fate), _seen(given, fate), free)
        assert mended and all(t in POOL for t in mended.values())
        assert any(s[0].startswith("old") for s in mended) == (not free), (free, mended)
        after = {**given, **mended}
        assert sorted(after.values()) == sorted(given.values())  # each template as often as before
        assert phrasing.outside_band((t, fate[s]) for s, t in after.items()) == set()


def test_mend_reads_the_fates_the_built_dataset_shows() -> None:
    # by the deal's fates A is right at 3 of 10, but the built dataset does not show old7's
    # sentence in A's words (v7 lowercases "Mail for me ..." after "For the X job:"), so A
    # is at 1/8 there; swapping the free sentences gives it 2/8
    given = {(f"old{i}", f"w{i}", POOL[0]): POOL[0] for i in range(6)} | {
        ("old6", "r0", POOL[0]): POOL[0], ("old7", "r1", POOL[0]): POOL[0],
        ("new0", "w6", POOL[0]): POOL[0], ("new1", "r2", POOL[1]): POOL[1]}  # fmt: skip
    fate = {s: (1 + (s[0] == "old7"), int(s[1].startswith("r")) * (1 + (s[0] == "old7"))) for s in given}
    seen = {k: f for k, f in _seen(given, fate).items() if k[0] != "old7"}
    free = ("new0", "new1")
    assert phrasing.mend(_dealt(given, fate), _seen(given, fate), free) == {}
    assert phrasing.mend(_dealt(given, fate), seen, free) == {
        ("new0", "w6", POOL[0]): POOL[1], ("new1", "r2", POOL[1]): POOL[0]}  # fmt: skip
