"""Dataset v8 (issue 26; the default): v7 with R3's team notes and R2's
announced changes.

* v8 is v7 byte for byte outside R2 and R3 (only the ``version`` field differs), so that
  a model's replies to v7's other 72 main episodes stand (on a build whose band needs
  it, :func:`~lm_eval_memrisk.generator.phrasing.mend` re-words a few user turns there:
  seed 1's "since" notes in R1), and its R3 is what it was before R2 was rebuilt (the
  stages of ``build.REBUILT``);
* every R2 ``latest_timestamp`` episode is an announced change (:mod:`~lm_eval_memrisk.generator.risks.v8_r2`):
  both cells occur, the final reference uses the announced value exactly where the user
  said it went through, and a request right after the announcement uses the current one;
* every cell of :mod:`~lm_eval_memrisk.generator.risks.v8`'s table occurs, and its
  reference does what the table says (own note, team note, or ask);
* every request in an episode with a team note says whose matter it is;
* the learned surface reader meets the main and per-risk goals on every build (v7 missed
  R3's on seed 1, 20 of 24, and main's on seed 1, 73) and passes no more than measured;
* every v7 check of the dataset holds on v8, the template band included (on seeds 1 and 2
  only after :func:`~lm_eval_memrisk.generator.phrasing.mend`: one template each, used
  10 and 8 times, was out of it).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import test_dataset_v7 as v7_checks

from lm_eval_memrisk.episodes.codec import dumps_episode
from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.episodes.state import state_at
from lm_eval_memrisk.generator import generate
from lm_eval_memrisk.generator.families import family
from lm_eval_memrisk.generator.risks import v8, v8_r2
from lm_eval_memrisk.generator.risks.v8 import PERSONAL_MATTERS, TEAM_MATTERS
from lm_eval_memrisk.generator.templates import said

SEEDS = v7_checks.SEEDS
#: The learned reader (trained on v8 seed 4242) on v8's builds, as measured: main 68 / 65
#: / 67 / 66 (shipped seed, seeds 1-3; before the band's mend, which re-words ten sentences
#: of the training build: 69 / 65 / 64 / 65; v7: 71 / 73 / 72 / 71; v8 before R2's rebuild:
#: 76 / 66 / 68 / 69), R2 12 / 13 / 9 / 10 (v7: 17 / 16 / 16 / 11; stop 46: 19 / 17 / 17 / 12),
#: R3 13 / 12 / 12 / 14 (v7: 14 / 20 / 15 / 17).  Over ten training seeds and the four builds
#: (40 pairings) main averages 62.4 (v7: 69.6) and 39 of 40 pairings meet both goals (v7:
#: 29), see docs/datasets.md.
LEARNED_MEASURED = 68
LEARNED_RISK_MEASURED = {"R1": 13, "R2": 13, "R3": 14, "R4": 18, "R5": 15}


@pytest.fixture(scope="module")
def datasets() -> dict[str, list[Episode]]:
    return {f"seed {seed}": generate(seed, version="v8") for seed in SEEDS}


def _without_version(ep: Episode) -> dict:
    row = json.loads(dumps_episode(ep))
    row.pop("version")
    return row


def _reworded(a: Episode, b: Episode) -> bool:
    """Whether ``b`` is ``a`` (but for its version field) with one user turn in other words."""
    x, y = _without_version(a), _without_version(b)
    turns = sum(e != f for e, f in zip(x["events"], y["events"]))
    for row in (x, y):
        row["events"] = [{**e, "text": ""} if e["type"] == "user_message" else e for e in row["events"]]
    return x == y and turns == 1


def test_v8_is_v7_outside_r2_and_r3(datasets: dict[str, list[Episode]]) -> None:
    """Outside R2 and R3 only the band's mend re-words a user turn, where a build needs it
    (seed 1: four of R1's "since" notes; not the shipped seed, whose file is tested below)."""
    reworded = {}
    for seed, (name, episodes) in zip(SEEDS, datasets.items()):
        v7 = generate(seed, version="v7")
        assert [e.id for e in v7] == [e.id for e in episodes]
        assert {e.version for e in episodes} == {"8.0"}
        changed = {a.id for a, b in zip(v7, episodes) if _without_version(a) != _without_version(b)}
        assert {i[:3] for i in changed} >= {"R2-", "R3-"}, (name, sorted(changed))
        reworded[seed] = [a.id for a, b in zip(v7, episodes) if a.id in changed and a.risk not in ("R2", "R3")]
        assert all(_reworded(a, b) for a, b in zip(v7, episodes) if a.id in reworded[seed]), name
    assert reworded == {SEEDS[0]: [], 1: ["R1-easy-02", "R1-easy-08", "R1-medium-06", "R1-hard-03"], 2: [], 3: []}


def test_r3_is_what_it_was_before_r2_was_rebuilt(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each stage of a rebuild is dealt beside the earlier ones, which stay as built: v8's
    R3 (run on real models in stop 46) does not move with R2's rebuild."""
    from lm_eval_memrisk.generator import build

    both = [dumps_episode(e) for e in generate(1, version="v8") if e.risk == "R3"]
    base, stages = build.REBUILT["v8"]
    monkeypatch.setitem(build.REBUILT, "v8", (base, stages[:1]))
    assert [dumps_episode(e) for e in generate(1, version="v8") if e.risk == "R3"] == both


def announced_not_in_force(ep: Episode) -> bool:
    """An R2 episode whose announced change the user later says has not gone through: the
    user's first value is the one that holds, so the stale agent (the oldest value of each
    key) is right there (v8's contrast; it fails every other R1, R2 and R4 episode)."""
    return ep.risk == "R2" and bool(said(ep, v8_r2.ANNOUNCED)) and bool(said(ep, v8_r2.NOT_YET))


def _uses(dp: object, value: str) -> bool:
    return value in json.dumps(getattr(dp, "reference", None) or {}, ensure_ascii=False)


def test_r2_announced_changes_hold_exactly_where_the_user_said_they_went_through(
    datasets: dict[str, list[Episode]],
) -> None:
    for name, episodes in datasets.items():
        cells = set()
        for ep in (e for e in episodes if e.risk == "R2" and e.resolution_rule == "latest_timestamp"):
            announced = said(ep, v8_r2.ANNOUNCED)
            went, not_yet = said(ep, v8_r2.WENT_THROUGH), said(ep, v8_r2.NOT_YET)
            assert len(announced) == 1 and len(went) + len(not_yet) == 1, (name, ep.id)
            key = family(ep.family).key
            notes = [e.item for e in ep.events if e.item is not None and e.item.key == key]
            new = next(i for i in notes if i.value in announced[0])
            old = next(i for i in notes if i.scope == new.scope)  # the user's first note of the key
            status = (went + not_yet)[0]
            assert old is not new and old.value not in announced[0], (name, ep.id)
            assert old.value not in status and new.value not in status, (name, ep.id, status)
            final = ep.decision_points[-1]
            right, wrong = (new, old) if went else (old, new)
            assert _uses(final, right.value) and not _uses(final, wrong.value), (name, ep.id)
            cells.add((ep.tier == "easy", bool(went)))
            if ep.tier != "easy":  # the request right after the announcement uses the current value
                at = next(i for i, e in enumerate(ep.events) if e.item is new)
                early = next(e for e in ep.events[at:] if e.type == "decision_point")
                assert _uses(early, old.value) and not _uses(early, new.value), (name, ep.id)
        assert {(False, True), (False, False)} <= cells, (name, cells)


def test_the_packaged_v8_is_the_generators_build_at_the_shipped_seed() -> None:
    from lm_eval_memrisk.episodes.loader import default_dataset_path, load_episodes
    from lm_eval_memrisk.generator.seeding import DEFAULT_SEED

    packaged = default_dataset_path("v8").read_text(encoding="utf-8")
    assert packaged == "".join(dumps_episode(e) + "\n" for e in generate(DEFAULT_SEED, version="v8"))
    assert [e.id for e in load_episodes("v8", track="all")] == [e.id for e in generate(DEFAULT_SEED, version="v8")]


def test_v8_builds_are_deterministic() -> None:
    assert [dumps_episode(e) for e in generate(3, version="v8")] == [dumps_episode(e) for e in generate(3, version="v8")]


def _cell(ep: Episode) -> tuple[bool, bool, bool, str]:
    """(own note live, team note live, team request, what the reference does) at the final request."""
    final = ep.decision_points[-1]
    state = state_at(ep, final.id)
    main_user, workspace = [e.scopes for e in ep.events if e.type == "scope_switch"][-1][:2]
    key = family(ep.family).key
    live = {i.scope for i in state.memory if i.key == key and i.status == "active"}
    reference = final.reference or {}
    args = json.dumps(reference.get("arguments", {}))
    notes = {i.scope: i.value for i in state.memory if i.key == key and i.status == "active" and i.scope in (main_user, workspace)}
    does = "ask" if "tool" not in reference else "team" if notes.get(workspace, "\0") in args else "own"
    return main_user in live, workspace in live, "team_request" in ep.metadata, does


def test_every_cell_of_the_team_table_occurs_and_is_right(datasets: dict[str, list[Episode]]) -> None:
    expected = {  # (own, team, team request) -> what the reference does
        (True, True, False): "own", (True, True, True): "team", (True, False, True): "ask",
        (False, True, False): "ask", (False, True, True): "team",
    }  # fmt: skip
    for name, episodes in datasets.items():
        seen = set()
        for ep in episodes:
            if ep.risk != "R3" or not ({"team_request", "personal_request"} & set(ep.metadata)):
                continue
            own, team, team_request, does = _cell(ep)
            assert expected.get((own, team, team_request)) == does, (name, ep.id, own, team, team_request, does)
            seen.add((own, team, team_request))
        assert seen == set(expected), (name, set(expected) - seen)


def requests_after_the_team_note(datasets: dict[str, list[Episode]]) -> Iterator[tuple[str, Episode, str]]:
    """(build, episode, request) for every request of an R3 team episode after its team note
    is given, and its final request (shared with v9's tests)."""
    for name, episodes in datasets.items():
        for ep in (e for e in episodes if "team_request" in e.metadata or "personal_request" in e.metadata):
            team_given = False
            for i, e in enumerate(ep.events):
                team_given = team_given or (e.item is not None and e.item.scope.startswith("workspace:"))
                if e.type == "decision_point" and (team_given or e is ep.decision_points[-1]):
                    yield name, ep, next(x.text or "" for x in reversed(ep.events[:i]) if x.type == "user_message")


def test_every_request_after_the_team_note_says_whose_matter_it_is(datasets: dict[str, list[Episode]]) -> None:
    heads = [t.split("{{")[0].strip() for t in TEAM_MATTERS + PERSONAL_MATTERS]
    for name, ep, request in requests_after_the_team_note(datasets):
        assert any(h in request for h in heads), (name, ep.id, request)


def test_learned_surface_reader_passes_no_more_than_measured(datasets: dict[str, list[Episode]]) -> None:
    """Nothing more than measured on the shipped seed and seeds 1-3 (a change that makes
    v8 easier to read from the surface fails here); the goals are v7's checks below."""
    learned_at_most(datasets, LEARNED_MEASURED, LEARNED_RISK_MEASURED)


def learned_at_most(datasets: dict[str, list[Episode]], main: int, per_risk: dict[str, int]) -> None:
    """The learned surface reader passes at most ``main`` of main and ``per_risk`` of each
    risk on every build (shared with v9's tests)."""
    from lm_eval_memrisk.audit.learned import learned_audit

    for name, episodes in datasets.items():
        result = learned_audit(episodes)["learned"]
        assert result["main"]["passed"] <= main, (name, result["main"])
        for risk, most in per_risk.items():
            assert result[risk]["passed"] <= most, (name, risk, result[risk])


#: v7's checks of the dataset, run on v8's builds (and on v9's: test_dataset_v9).
V7_CHECKS = [
    "test_every_file_validates_with_oracle_and_do_nothing", "test_every_ablated_oracle_fails_every_episode_of_its_risk",
    "test_r2_has_decisions_where_the_newest_note_is_right", "test_private_requests_use_the_private_note",
    "test_updates_of_the_work_note_name_the_job", "test_earlier_requests_on_the_work_note_say_it_is_fine",
    "test_questions_about_the_work_note_ask_in_a_questions_words", "test_no_deletion_says_the_older_one_among_several",
    "test_shortcut_ceilings_hold_r3_included", "test_natural_conversation",
    "test_nothing_is_withdrawn_in_the_very_next_message", "test_no_reference_points_forward_in_time",
    "test_r3_foils_are_another_principals_notes", "test_relayed_corrections_are_confirmed_not_acted_on",
    "test_v7_prompt_says_an_unknown_senders_claim_puts_nothing_in_doubt", "test_no_two_values_of_one_note_back_to_back",
    "test_records_lookups_are_asked_for_and_what_was_found_is_shown", "test_requests_say_what_a_reader_can_act_on",
    "test_round_5_fixes_hold", "test_a_note_said_in_words_is_said_in_a_session_of_its_owner",
    "test_learned_surface_reader_meets_the_main_goal_on_every_build",
    "test_learned_surface_reader_meets_the_per_risk_goal_on_every_build",
    "test_every_template_used_often_is_in_band",
]  # fmt: skip


@pytest.mark.parametrize("check", V7_CHECKS)
def test_v7_check_holds_on_v8(check: str, datasets: dict[str, list[Episode]]) -> None:
    getattr(v7_checks, check)(datasets)


def test_a_note_dropped_in_words_beside_the_team_note_says_it_is_the_users_own(datasets: dict[str, list[Episode]]) -> None:
    """A careful-reply writer could not tell whether "the token I gave you is no good" meant
    the team's token or the user's: beside a team note a drop says which."""
    heads = [t.split("{{")[0].strip() for t in v8.DROP_OWN]
    seen = 0
    for name, episodes in datasets.items():
        for ep in (e for e in episodes if {"team_request", "personal_request"} & set(e.metadata)):
            items = ep.memory_items
            for e in (x for x in ep.events if x.type == "memory_revoke"):
                if items[e.target].value not in (e.text or ""):
                    assert any(h in (e.text or "") for h in heads), (name, ep.id, e.text)
                    seen += 1
    assert seen >= 8
