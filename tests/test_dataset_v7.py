"""Dataset v7 (issue 26; the default before v8): v6 with contrast.

Built by the generator (``--version v7``) at the shipped seed and at seeds 1-3; v8 runs
the same checks of the dataset on its own builds (tests/test_dataset_v8.py).  Checked
here:

* v7 is packaged and is the generator's build; a version the generator knows but the
  package does not ship says, loaded by name, how to build it;
* every file validates (the oracle passes, a do-nothing agent fails) and every
  Rk-ablated oracle fails every Rk episode;
* the contrast is there: R2 decisions whose right value is the key's newest note
  (2 of 28 in v6), private requests that use the private note, updates of a multi-hop
  episode's work note that name the job;
* what the blind readers of v7 found stays fixed: earlier requests on the work note
  say it is fine for them, questions about it ask in a question's words, no deletion or
  withdrawal says "the older/earlier one";
* the shortcut agents stay under every ceiling, R3's earlier-call agents included
  (v6 was over on R3); the learned surface reader passes no more than measured (over
  its goals on seed 1, by one of main and two of R3, pinned as strict xfails; v6 was 8-15
  over);
* counterbalanced phrasing leaves no template out of band;
* what round 4's readers found stays fixed: no two values of a note back to back,
  records lookups asked for, no day of the month alone, no "Attached:";
* v6's naturalness checks hold on v7 too, and v7's rules say what an unknown sender's claim is.
"""

from __future__ import annotations

import collections
import re

import pytest
import test_dataset_v6 as v6_checks  # the v6 module's version-agnostic checks, run on v7 here

from lm_eval_memrisk.audit.ablations import ablations
from lm_eval_memrisk.audit.run import audit
from lm_eval_memrisk.audit.templates import TEMPLATE_MIN, template_table
from lm_eval_memrisk.episodes import loader
from lm_eval_memrisk.episodes.codec import dumps_episode
from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.loader import default_dataset_path, load_episodes
from lm_eval_memrisk.episodes.records import Episode, Event
from lm_eval_memrisk.episodes.state import in_scope, state_at
from lm_eval_memrisk.episodes.validate import collect_problems
from lm_eval_memrisk.generator import generate
from lm_eval_memrisk.generator.risks.v3 import CONTEXT_ASKS
from lm_eval_memrisk.generator.risks.v7 import PRIVATE_ASKS
from lm_eval_memrisk.generator.seeding import DEFAULT_SEED
from lm_eval_memrisk.generator.templating import render
from lm_eval_memrisk.running.agents import ABLATIONS

SEEDS = (DEFAULT_SEED, 1, 2, 3)
#: Issue 26's goal for the learned reader: at most 60% of main held out (72 of 120).
LEARNED_GOAL = 72
#: The most it passes of main, and of each risk, on any of the four builds, as measured
#: (main 71 / 73 / 72 / 71: over issue 26's 60% by one on seed 1; R3 on seed 1: 20 of 24,
#: over its 75% by two).
LEARNED_MEASURED = 73
LEARNED_RISK_MEASURED = {"R1": 14, "R2": 17, "R3": 20, "R4": 17, "R5": 15}


@pytest.fixture(scope="module")
def datasets() -> dict[str, list[Episode]]:
    return {f"seed {seed}": generate(seed, version="v7") for seed in SEEDS}


def test_the_packaged_v7_is_the_generators_build_at_the_shipped_seed() -> None:
    packaged = default_dataset_path("v7").read_text(encoding="utf-8")
    assert packaged == "".join(dumps_episode(e) + "\n" for e in generate(DEFAULT_SEED, version="v7"))
    assert [e.id for e in load_episodes("v7", track="all")] == [e.id for e in generate(DEFAULT_SEED, version="v7")]


def test_a_version_the_generator_builds_but_nobody_packaged_says_how_to_build_it(monkeypatch) -> None:
    monkeypatch.setitem(loader.VERSION_FIELDS, "11.0", "v11")
    with pytest.raises(MemriskError, match=r"not packaged .*--version v11 --out FILE"):
        load_episodes("v11")


def test_v7_builds_are_deterministic() -> None:
    a, b = generate(2, version="v7"), generate(2, version="v7")
    assert [dumps_episode(e) for e in a] == [dumps_episode(e) for e in b]
    assert {e.version for e in a} == {"7.0"}


def test_every_file_validates_with_oracle_and_do_nothing(datasets: dict[str, list[Episode]]) -> None:
    for name, episodes in datasets.items():
        problems = [p for ep in episodes for p in collect_problems(ep, behaviour=True)]
        assert not problems, (name, problems[:3])
        assert len(episodes) == 144


def test_every_ablated_oracle_fails_every_episode_of_its_risk(datasets: dict[str, list[Episode]]) -> None:
    for name, episodes in datasets.items():
        result = ablations(episodes)
        for risk in ABLATIONS:
            assert result["ablations"][risk][risk] == {"n": 24, "passed": 0}, (name, risk)
        # off the diagonal, a failure only where the episode carries a foil of that risk
        # (scorer 3.2 sees the number that 3.1 missed after an argument ending in digits)
        for risk, found in result["ablation_findings"].items():
            bare = [f for f in found["off_diagonal"] if not f["attributed"]]
            if risk not in v6_checks.UNATTRIBUTED_OK:
                assert bare == [], (name, risk, bare)
            for f in bare:  # recency alone: R6 summaries and notes the request resolves
                ep = next(e for e in episodes if e.id == f["episode"])  # (multi-hop; v8's team or own note)
                assert ep.risk == "R6" or {"multi_hop", "team_request", "personal_request"} & set(ep.metadata), (name, f)


def _newest_right(ep: Episode) -> int:
    """Decisions of ``ep`` whose reference calls a tool with the value of the key's newest
    note in the requester's scope at the time."""
    n = 0
    for dp in ep.decision_points:
        args = dict((dp.reference or {}).get("arguments") or {})
        state = state_at(ep, dp.id)
        mine = [it for it in state.memory if it.status == "active" and in_scope(it.scope, state.active_scopes)]
        if not args or not mine:
            continue
        newest = max(mine, key=lambda it: (it.written_at, it.id))
        n += any(newest.value == v for v in args.values())
    return n


def test_r2_has_decisions_where_the_newest_note_is_right(datasets: dict[str, list[Episode]]) -> None:
    """v6 has 2 such R2 decisions (of 28); v7 14 / 8 / 11 / 11 (of 41 / 39 / 41 / 39)."""
    for name, episodes in datasets.items():
        assert sum(_newest_right(e) for e in episodes if e.risk == "R2") >= 5, name


def _rendered(text: str, pool: tuple[str, ...]) -> bool:
    heads = [t.split("{{")[0].strip() for t in pool]
    return any(h and h in text for h in heads)


def test_private_requests_use_the_private_note(datasets: dict[str, list[Episode]]) -> None:
    for name, episodes in datasets.items():
        private = 0
        for ep in (e for e in episodes if "multi_hop" in e.metadata):
            events = list(ep.events)
            for i, e in enumerate(events):
                if e.type != "decision_point" or not _rendered(events[i - 1].text or "", PRIVATE_ASKS):
                    continue
                private += 1
                value = next(c.expected for c in e.checks if c.kind == "tool_arg_equals")
                said = next(x.text for x in events if x.type == "user_message" and value in (x.text or ""))
                assert "private" in said or "personal" in said, (name, ep.id, said)
                assert any(c.kind == "memory_not_used" and c.item for c in e.checks), (name, ep.id)
        assert private >= 2, name


def test_updates_of_the_work_note_name_the_job(datasets: dict[str, list[Episode]]) -> None:
    """Every update of a multi-hop episode's work note (its chain from the note given
    "for the job at X") names the job in the user's words."""
    for name, episodes in datasets.items():
        labelled = 0
        for ep in (e for e in episodes if "multi_hop" in e.metadata):
            org = ep.metadata["multi_hop"].removeprefix("the job at ")
            events, work = list(ep.events), set()
            for i, e in enumerate(events):
                said = events[i - 1] if i else e
                if e.type == "memory_write" and e.item and not work and org in (said.text or ""):
                    work = {e.item.id}  # the note given for the job
                elif e.type == "memory_update" and e.item and e.supersedes in work:
                    work.add(e.item.id)
                    if said.type == "user_message":
                        assert org in (said.text or ""), (name, ep.id, said.text)
                        labelled += 1
        assert labelled >= 1, name


def test_earlier_requests_on_the_work_note_say_it_is_fine(datasets: dict[str, list[Episode]]) -> None:
    """A multi-hop episode's earlier request that uses the work note (given "for work
    there", or an update of it) says the work note is fine for it: a blind reader could
    not tell whether a personal errand should go to it (v7 round 1, R2-hard-03)."""
    for name, episodes in datasets.items():
        named = 0
        for ep in (e for e in episodes if "multi_hop" in e.metadata):
            org = ep.metadata["multi_hop"].removeprefix("the job at ")
            events = list(ep.events)
            work = {e.item.value for i, e in enumerate(events)
                    if e.type in ("memory_write", "memory_update") and e.item and i
                    and org in (events[i - 1].text or "") and not _private(events[i - 1].text or "")}  # fmt: skip
            points = [i for i, e in enumerate(events) if e.type == "decision_point"]
            for i in points[:-1]:
                request = events[i - 1].text or ""
                uses = {c.expected for c in events[i].checks if c.kind == "tool_arg_equals"}
                if uses & work and not _private(request):
                    assert org in request, (name, ep.id, events[i].id, request)
                    named += 1
        assert named >= 1, name


def _private(text: str) -> bool:
    return any(w in text for w in ("private", "personal", "just for me"))


def test_questions_about_the_work_note_ask_in_a_questions_words(datasets: dict[str, list[Episode]]) -> None:
    """A multi-hop question (the reference answers it) never ends in an instruction such
    as "so use the K that goes with that" (v7 round 1, R2-hard-01)."""
    for name, episodes in datasets.items():
        for ep in (e for e in episodes if "multi_hop" in e.metadata):
            org = ep.metadata["multi_hop"].removeprefix("the job at ")
            events = list(ep.events)
            last = max(i for i, e in enumerate(events) if e.type == "decision_point")
            if events[last].checks[0].kind != "text_contains":
                continue
            request = events[last - 1].text or ""
            for template in CONTEXT_ASKS:
                head = render(template, org=org, noun="X").split(" X ")[0]
                assert head not in request, (name, ep.id, request)


def test_no_deletion_says_the_older_one_among_several(datasets: dict[str, list[Episode]]) -> None:
    """With updates said in first-statement words, "the older one is the one to keep" or
    "keep using the earlier one" could mean any earlier note (v7 rounds 1 and 3,
    R4-easy-06 and R1-easy-03): v7 says "the one before it"."""
    for name, episodes in datasets.items():
        for ep in episodes:
            for e in ep.events:
                for vague in ("the older one is the one to keep", "Keep using the earlier one"):
                    assert vague not in (e.text or ""), (name, ep.id, e.id)


def test_shortcut_ceilings_hold_r3_included(datasets: dict[str, list[Episode]]) -> None:
    """Every single-cue agent <= 35% of main and <= 50% of every risk (v6 had R3's
    earlier-call and record agents at 14/24), all-rules <= 70% of main."""
    for name, episodes in datasets.items():
        for agent, row in audit(episodes)["shortcuts"].items():
            if row["kind"] == "all-rules":
                assert row["main"]["pass_rate"] <= 0.70, (name, agent)
                continue
            assert row["main"]["pass_rate"] <= 0.35, (name, agent, row["main"])
            for risk in ("R1", "R2", "R3", "R4", "R5"):
                assert row[risk]["pass_rate"] <= 0.50, (name, agent, risk, row[risk])


def test_learned_surface_reader_passes_no_more_than_measured(datasets: dict[str, list[Episode]]) -> None:
    """The learned reader (trained on v7 seed 4242, tested on each file) passes 71 / 73 /
    72 / 71 of 120 (shipped seed, seeds 1-3; v6: 87 / 85 / 87 / 80) and of each risk at
    most what was measured (20 of 24 of R3 on seed 1).  A change that makes v7 easier to read from the surface
    fails here."""
    from lm_eval_memrisk.audit.learned import learned_audit

    for name, episodes in datasets.items():
        result = learned_audit(episodes)["learned"]
        assert result["main"]["n"] == 120
        assert result["main"]["passed"] <= LEARNED_MEASURED, (name, result["main"])
        for risk, most in LEARNED_RISK_MEASURED.items():
            assert result[risk]["passed"] <= most, (name, risk, result[risk])


@pytest.mark.xfail(strict=True, reason="issue 26 goal not met: 73/120 on seed 1 (goal 72, 60%)")
def test_learned_surface_reader_meets_the_main_goal_on_every_build(datasets: dict[str, list[Episode]]) -> None:
    from lm_eval_memrisk.audit.learned import learned_audit

    passed = {name: learned_audit(eps)["learned"]["main"]["passed"] for name, eps in datasets.items()}
    assert max(passed.values()) <= LEARNED_GOAL, passed


@pytest.mark.xfail(strict=True, reason="issue 26 goal not met: 20/24 of R3 on seed 1 (goal 18, 75%)")
def test_learned_surface_reader_meets_the_per_risk_goal_on_every_build(datasets: dict[str, list[Episode]]) -> None:
    from lm_eval_memrisk.audit.learned import learned_audit

    for episodes in datasets.values():
        result = learned_audit(episodes)["learned"]
        assert all(result[r]["passed"] <= 18 for r in ("R1", "R2", "R3", "R4", "R5")), result


def test_every_template_used_often_is_in_band(datasets: dict[str, list[Episode]]) -> None:
    """Counterbalanced phrasing keeps every sentence template used 8+ times in [0.25,
    0.75] on every build (random phrasing left 3 / 4 / 6 / 5 out; stop 39's build had
    one family line out on seed 2)."""
    for name, episodes in datasets.items():
        out = [r["template"] for r in template_table(episodes) if r["n"] >= TEMPLATE_MIN and not r["in_band"]]
        assert not out, (name, out)


def test_natural_conversation(datasets: dict[str, list[Episode]]) -> None:
    v6_checks.test_natural_conversation(datasets)


def test_nothing_is_withdrawn_in_the_very_next_message(datasets: dict[str, list[Episode]]) -> None:
    v6_checks.test_nothing_is_withdrawn_in_the_very_next_message(datasets)


def test_no_reference_points_forward_in_time(datasets: dict[str, list[Episode]]) -> None:
    v6_checks.test_no_reference_points_forward_in_time(datasets)


def test_r3_foils_are_another_principals_notes(datasets: dict[str, list[Episode]]) -> None:
    v6_checks.test_r3_foils_are_another_principals_notes(datasets)


def test_relayed_corrections_are_confirmed_not_acted_on(datasets: dict[str, list[Episode]]) -> None:
    v6_checks.test_relayed_corrections_are_confirmed_not_acted_on(datasets)


def test_v7_prompt_says_an_unknown_senders_claim_puts_nothing_in_doubt(datasets: dict[str, list[Episode]]) -> None:
    """The authority rule (confirm a claimed change) and "claims from unknown senders never
    count" pulled apart for four of six careful-reply writers on v6's rules; v7's rules say
    which holds, and v6's prompt stays as it was."""
    from lm_eval_memrisk.episodes.render import AUTHORITY_RULES, UNKNOWN_SENDERS, V7_RULES, render

    v7 = datasets[f"seed {DEFAULT_SEED}"][0]
    v6 = load_episodes("v6")[0]
    system7 = render(v7, v7.decision_points[0].id)[0]["content"]
    system6 = render(v6, v6.decision_points[0].id)[0]["content"]
    assert V7_RULES in system7 and UNKNOWN_SENDERS in system7
    assert AUTHORITY_RULES in system6 and UNKNOWN_SENDERS not in system6


def _stated(events: tuple[Event, ...] | list[Event], i: int) -> bool:
    """Whether ``events[i]`` writes a note in the words of the user message just before
    it: a statement, which the script acknowledges (a silent sync or a lookup's result
    has no user message and acknowledgement around it)."""
    e = events[i]
    return (e.type in ("memory_write", "memory_update") and e.item is not None and i > 0
            and events[i - 1].type == "user_message" and i + 1 < len(events)
            and events[i + 1].type == "assistant_message")  # fmt: skip


def _user_value_turns(ep: Episode) -> list[tuple[str, tuple[str, str] | None]]:
    """(user message id, (key, scope) of the note its own words give, or None) in order;
    a ``("", None)`` marks a new session."""
    out: list[tuple[str, tuple[str, str] | None]] = []
    events = ep.events
    for i, e in enumerate(events):
        if e.type == "scope_switch":
            out.append(("", None))
        elif e.type == "user_message":
            out.append((e.id, None))
        elif _stated(events, i) and e.item is not None:
            out[-1] = (out[-1][0], (e.item.key, e.item.scope))
    return out


def test_no_two_values_of_one_note_back_to_back(datasets: dict[str, list[Episode]]) -> None:
    """Blind readers of round 4 found two values of one key given in consecutive messages
    with no word of which replaces which a puzzle (R4-hard-01, R3-medium-05, R2-hard-02):
    v7 gives the second a session of its own.  (A distractor note's update says "now".)"""
    from lm_eval_memrisk.generator.families import FAMILIES

    checked = 0
    for name, episodes in datasets.items():
        for ep in episodes:
            key = FAMILIES[ep.family].key
            turns = _user_value_turns(ep)
            checked += sum(1 for _, kv in turns if kv is not None and kv[0] == key)
            for (_, a), (mid, b) in zip(turns, turns[1:], strict=False):
                assert a is None or a[0] != key or a != b, (name, ep.id, mid)
    assert checked >= 400, checked  # (the user's own words giving a value of the key)


def _v10_lookup_ask(text: str | None) -> bool:
    """Whether ``text`` is one of v10's lookup asks, which name the note looked up."""
    from lm_eval_memrisk.generator.polish.v10 import LOOKUP_ASKS
    from lm_eval_memrisk.generator.templates import wildcard

    return any(wildcard(t).fullmatch(text or "") for t in LOOKUP_ASKS.values())


def test_records_lookups_are_asked_for_and_what_was_found_is_shown(datasets: dict[str, list[Episode]]) -> None:
    """The script's records lookups are asked for by the user (round 4 found lookups at a
    session's start staged), or, in an easy episode, told to the user by the assistant; and
    the assistant's line about a lookup reaches the agent (after a memory write it would
    be an acknowledgement, hidden: v7's relay notices were, before)."""
    from lm_eval_memrisk.episodes.render import render
    from lm_eval_memrisk.generator.risks.common import V7_LOOKUP_ASKS

    lookups = closings = 0
    for name, episodes in datasets.items():
        for ep in episodes:
            events = ep.events
            last = max(i for i, e in enumerate(events) if e.type == "decision_point")
            shown = "\n".join(m["content"] for m in render(ep, events[last].id))
            said: collections.Counter[str] = collections.Counter()
            for i, e in enumerate(events[:last]):
                if e.type != "tool_call" or e.tool != "lookup_records" or events[i - 1].type == "decision_point":
                    continue
                before = events[i - 1]
                messages = (e.arguments or {}).get("query") == "new messages"  # (R6: the user asks to summarise)
                asked = before.type == "user_message" and (before.text in V7_LOOKUP_ASKS or messages or _v10_lookup_ask(before.text))
                closing = events[i + 2] if events[i + 2].type == "assistant_message" else None
                lookups += asked and not messages
                assert asked or (ep.tier == "easy" and closing is not None), (name, ep.id, e.id)
                if closing is not None and not messages:
                    closings += 1
                    said[closing.text or ""] += 1
            for text, n in said.items():  # every closing line is shown (not only one of a kind)
                assert shown.count(text) >= n, (name, ep.id, text)
    assert lookups >= 100 and closings >= 80, (lookups, closings)


def test_requests_say_what_a_reader_can_act_on(datasets: dict[str, list[Episode]]) -> None:
    """No travel day named by a day of the month alone (round 4: "the 22nd" asked on the
    23rd), no dish ordered from a restaurant of another cuisine's name, no email that says
    "Attached:" and no request to email a document (no tool attaches anything, and no one
    gave its content: round 6), only word that it is ready."""
    from lm_eval_memrisk.generator.pools import DOCUMENTS, RESTAURANTS
    from lm_eval_memrisk.generator.risks.common import V7_RESTAURANTS

    emails = 0
    for name, episodes in datasets.items():
        for ep in episodes:
            for e, after in zip(ep.events, [*ep.events[1:], None], strict=True):
                text = e.text or ""
                if after is not None and after.type == "decision_point" and (after.reference or {}).get("tool") == "send_email":
                    assert not any(d in text for d in DOCUMENTS) or "ready" in text, (name, ep.id, text)
                    emails += any(d in text for d in DOCUMENTS)
                assert not re.search(r"\bthe \d+(st|nd|rd|th)\b", text), (name, ep.id, text)
                assert not any(r in text for r in V7_RESTAURANTS), (name, ep.id, text)
                if e.type == "decision_point" and e.reference:
                    body = str((e.reference.get("arguments") or {}).get("body", ""))
                    assert not body.startswith("Attached"), (name, ep.id, body)
    assert set(V7_RESTAURANTS) < set(RESTAURANTS)
    assert emails >= 20, emails


def test_v7_rewordings_still_name_templates_of_the_generator() -> None:
    """Each request v7 rewords (``common.V7_ASKS``) is still a template the generator
    writes: a template reworded at its source would silently lose its v7 words."""
    import inspect

    from lm_eval_memrisk.generator.families import everyday
    from lm_eval_memrisk.generator.risks import r5_rules
    from lm_eval_memrisk.generator.risks.common import V7_ASKS

    source = inspect.getsource(everyday) + inspect.getsource(r5_rules)
    for template in V7_ASKS:
        assert f'"{template}"' in source, template


def test_round_5_fixes_hold(datasets: dict[str, list[Episode]]) -> None:
    """No card is called the company's before a rule says so (round 5's AMBIGUOUS), and a
    lunch order's hold speaks of ordering (round 5's UNNATURAL)."""
    from lm_eval_memrisk.generator.risks.v3 import V7_DISH_HOLDS

    holds = 0
    for name, episodes in datasets.items():
        for ep in episodes:
            ruled = False
            for e in ep.events:
                text = e.text or ""
                ruled = ruled or (e.type == "constraint_declare" and "company card" in text)
                if e.type == "user_message" and not ruled:
                    assert "the company " not in text, (name, ep.id, text)
                if ep.family == "usual_order" and e.type == "constraint_declare" and "for now" in text:
                    holds += 1
                    assert any(text.startswith(t.split("{{")[0]) for t in V7_DISH_HOLDS), (name, ep.id, text)
    assert holds >= 1, holds


def test_a_note_said_in_words_is_said_in_a_session_of_its_owner(datasets: dict[str, list[Episode]]) -> None:
    """A user's words write only their own notes or their workspace's (round 5 found a
    distractor's update, "Update my allergy note to …", said in another user's session and
    filed under the signed-in user's predecessor)."""
    checked = 0
    for name, episodes in datasets.items():
        for ep in episodes:
            scopes: tuple[str, ...] = ()
            events = ep.events
            for i, e in enumerate(events):
                if e.type == "scope_switch":
                    scopes = tuple(e.scopes)
                elif _stated(events, i) and e.item is not None:
                    assert e.item.scope in scopes, (name, ep.id, e.id, e.item.scope, scopes)
                    checked += 1
    assert checked >= 1000, checked
