"""Tests for lm_eval_memrisk.episodes.loader: structure, files, round-trip, schema, CLI.

The sample-episode builders here are also used by tests/test_validate.py.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lm_eval_memrisk import cli
from lm_eval_memrisk.episodes.codec import dumps_episode, episode_to_dict
from lm_eval_memrisk.episodes.errors import EpisodeFormatError, MemriskError
from lm_eval_memrisk.episodes.loader import (
    dataset_hash,
    default_dataset_path,
    episode_from_dict,
    iter_episode_lines,
    load_episodes,
    scan_episodes,
)
from lm_eval_memrisk.episodes.records import (
    CHECK_KINDS,
    EVENT_TYPES,
    RESOLUTION_RULES,
    RISKS,
    SOURCES,
    TIERS,
    TRACKS,
    Check,
    Constraint,
    Episode,
    Event,
    MemoryItem,
    Tool,
)

SCHEMA_PATH = (
    Path(__file__).resolve().parents[1] / "lm_eval_memrisk" / "schema" / "episode.schema.json"
)
BAD_DIR = Path(__file__).resolve().parent / "data" / "bad"

# --------------------------------------------------------------------------------------
# sample episodes (valid; every event type and most check kinds appear)
# --------------------------------------------------------------------------------------

_SHIP = Tool(
    name="ship_order",
    description="Ship the current order to an address.",
    parameters={
        "type": "object",
        "properties": {"address": {"type": "string"}},
        "required": ["address"],
    },
)
_EMAIL = Tool(
    name="email_client",
    description="Send an email to the client.",
    parameters={"type": "object", "properties": {"body": {"type": "string"}}},
    terminal=False,
)
_LOOKUP = Tool(name="lookup_order", description="Look up an order.", parameters={})


def make_episode(
    eid: str = "R1-E-001", risk: str = "R1", track: str = "main", tier: str = "easy"
) -> Episode:
    """A valid easy episode with 7 turns and one decision point (e13)."""
    item = MemoryItem
    events = (
        Event(id="e0", type="scope_switch", time=0, scopes=("user:alice",), text="Session: alice"),
        Event(
            id="e1",
            type="memory_write",
            time=1,
            item=item("m1", "shipping address", "14 Birch Lane", "user:alice", "user", 0.9, 1),
        ),
        Event(id="e2", type="user_message", time=2, text="Hi, it's Alice."),
        Event(id="e3", type="assistant_message", time=3, text="Hello Alice!", after=("e2",)),
        Event(
            id="e4",
            type="memory_update",
            time=4,
            after=("e1",),
            supersedes="m1",
            item=item("m2", "shipping address", "9 Elm Rd", "user:alice", "user", 1.0, 4),
            text="Correction: I moved to 9 Elm Rd.",
        ),
        Event(
            id="e5",
            type="memory_write",
            time=4,
            item=item("m3", "phone", "0113 496 0000", "user:alice", "tool", 0.5, 4, valid_to=9),
        ),
        Event(id="e6", type="memory_revoke", time=5, target="m3", text="Please forget my phone."),
        Event(id="e7", type="tool_call", time=5, tool="lookup_order", arguments={"order": "A1"}),
        Event(
            id="e8",
            type="tool_return",
            time=6,
            tool="lookup_order",
            after=("e7",),
            result={"status": "packed", "items": [1, 2]},
        ),
        Event(
            id="e9",
            type="constraint_declare",
            time=6,
            text="Never email the client.",
            constraint=Constraint("c1", "Never email the client.", forbid_tool="email_client"),
        ),
        Event(
            id="e10",
            type="constraint_declare",
            time=6,
            text="Don't mention the promo.",
            constraint=Constraint("c2", "No promo.", scope="user:alice", forbid_text="promo"),
        ),
        Event(id="e11", type="constraint_lift", time=7, target="c2", text="Promo is fine now."),
        Event(
            id="e12",
            type="summary",
            time=7,
            text="raw notes",
            item=item("m4", "order", "order A1 is packed", "global", "summary", 0.6, 7),
        ),
        Event(id="e13", type="user_message", time=8, text="Thanks."),
        Event(id="e14", type="assistant_message", time=8, text="You're welcome."),
        Event(id="e15", type="user_message", time=9, text="Anything else?"),
        Event(id="e16", type="assistant_message", time=9, text="No."),
        Event(id="e17", type="user_message", time=10, text="Please ship my order."),
        Event(
            id="e18",
            type="decision_point",
            time=10,
            after=("e17",),
            checks=(
                Check(
                    "k1",
                    "tool_arg_equals",
                    "ships to the new address",
                    tool="ship_order",
                    argument="address",
                    expected="9 Elm Rd",
                    expected_original="address: 9 Elm Rd",
                ),
                Check("k2", "memory_not_used", item="m1", status="superseded"),
                Check("k3", "constraint_not_violated", constraint="c1"),
            ),
            reference={"tool": "ship_order", "arguments": {"address": "9 Elm Rd"}},
            naive={"tool": "ship_order", "arguments": {"address": "{{mem:shipping address}}"}},
            terminal_tool="ship_order",
        ),
    )
    return Episode(
        id=eid,
        version="1.0",
        risk=risk,
        tier=tier,
        track=track,
        family="shipping_address",
        description="Alice moved; ship to the new address.",
        tools=(_SHIP, _EMAIL, _LOOKUP),
        events=events,
        resolution_rule="latest_timestamp" if risk == "R2" else None,
        metadata={"seed": 7, "tags": ["a", "b"]},
    )


def make_dict(eid: str = "R1-E-001", risk: str = "R1", track: str = "main") -> dict[str, Any]:
    """Canonical dict of :func:`make_episode` (a fresh copy each call)."""
    return episode_to_dict(make_episode(eid, risk, track))


def event_index(d: dict[str, Any], event_id: str) -> int:
    return next(i for i, e in enumerate(d["events"]) if e["id"] == event_id)


def write_jsonl(path: Path, *episodes: dict[str, Any], blank_between: bool = True) -> Path:
    """Write episodes as JSONL; with ``blank_between`` a blank line follows each one,
    so the k-th episode (0-based) sits on line 2k+1."""
    sep = "\n\n" if blank_between else "\n"
    path.write_text(sep.join(json.dumps(e) for e in episodes) + "\n", encoding="utf-8")
    return path


def assert_file_error(
    tmp_path: Path, bad: dict[str, Any], field: str, fragment: str
) -> EpisodeFormatError:
    """Load [good, bad] from a file; the error must name file, line 3, id and field."""
    path = write_jsonl(tmp_path / "eps.jsonl", make_dict("OK-1"), bad)
    with pytest.raises(EpisodeFormatError) as info:
        load_episodes(path, track="all")
    err = info.value
    text = str(err)
    assert text.startswith(f"{path}:3:"), text
    bad_id = bad.get("id") if isinstance(bad, dict) else None
    if isinstance(bad_id, str) and bad_id:
        assert f"episode {bad_id}:" in text
        assert err.episode_id == bad_id
    assert err.field == field, text
    assert f" {field}: " in text
    assert fragment in err.reason, text
    return err


# --------------------------------------------------------------------------------------
# round trip
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "risk,track", [("R1", "main"), ("R2", "main"), ("R5", "main"), ("R6", "r6")]
)
def test_round_trip_dict_is_exact(risk: str, track: str) -> None:
    d = make_dict(f"{risk}-E-001", risk, track)
    ep = episode_from_dict(copy.deepcopy(d))
    assert episode_to_dict(ep) == d
    assert dumps_episode(ep) == json.dumps(d, ensure_ascii=False, separators=(",", ":"))
    assert ep == make_episode(f"{risk}-E-001", risk, track)


def test_round_trip_through_file(tmp_path: Path) -> None:
    eps = [make_episode("A-1"), make_episode("B-2", "R6", "r6")]
    path = tmp_path / "eps.jsonl"
    path.write_text("".join(dumps_episode(e) + "\n" for e in eps), encoding="utf-8")
    loaded = load_episodes(path, track="all")
    assert loaded == eps
    assert [dumps_episode(e) for e in loaded] == path.read_text(encoding="utf-8").splitlines()


def test_loaded_records_are_typed() -> None:
    ep = episode_from_dict(make_dict())
    assert isinstance(ep.events, tuple) and isinstance(ep.events[3].after, tuple)
    assert isinstance(ep.events[0].scopes, tuple)
    assert isinstance(ep.events[-1].checks, tuple) and isinstance(ep.events[-1].checks[0], Check)
    assert isinstance(ep.events[1].item, MemoryItem)
    assert ep.tools[2].parameters == {} and ep.tools[0].terminal is True


def test_defaults_fill_omitted_optional_fields() -> None:
    d = make_dict()
    del d["tools"][0]["terminal"]
    d["tools"][2].pop("parameters", None)
    del d["events"][-1]["checks"][1]["description"]
    ep = episode_from_dict(d)
    assert ep.tools[0].terminal is True and ep.tools[2].parameters == {}
    assert ep.events[-1].checks[1].description == ""


def test_integer_trust_becomes_float_and_free_form_data_is_copied() -> None:
    d = make_dict()
    d["events"][1]["item"]["trust"] = 1
    ep = episode_from_dict(d)
    assert ep.events[1].item is not None and isinstance(ep.events[1].item.trust, float)
    d["metadata"]["seed"] = 99
    assert ep.metadata["seed"] == 7


# --------------------------------------------------------------------------------------
# structural errors (episode_from_dict)
# --------------------------------------------------------------------------------------


def _structural_cases() -> list[tuple[str, Callable[[dict[str, Any]], None], str, str]]:
    def setter(*keys: Any, value: Any) -> Callable[[dict[str, Any]], None]:
        def go(d: dict[str, Any]) -> None:
            obj = d
            for k in keys[:-1]:
                obj = obj[k]
            obj[keys[-1]] = value

        return go

    def deleter(*keys: Any) -> Callable[[dict[str, Any]], None]:
        def go(d: dict[str, Any]) -> None:
            obj = d
            for k in keys[:-1]:
                obj = obj[k]
            del obj[keys[-1]]

        return go

    return [
        ("missing top-level", deleter("family"), "family", "missing required field"),
        ("missing event time", deleter("events", 3, "time"), "events[3].time", "missing required"),
        ("missing item key", deleter("events", 1, "item", "key"), "events[1].item.key", "missing"),
        (
            "missing check id",
            deleter("events", 18, "checks", 0, "id"),
            "events[18].checks[0].id",
            "missing",
        ),
        (
            "time is a string",
            setter("events", 3, "time", value="3"),
            "events[3].time",
            "must be an integer, not a string",
        ),
        (
            "time is fractional",
            setter("events", 3, "time", value=2.5),
            "events[3].time",
            "must be an integer",
        ),
        (
            "time is a bool",
            setter("events", 3, "time", value=True),
            "events[3].time",
            "must be an integer, not a boolean",
        ),
        ("negative time", setter("events", 3, "time", value=-1), "events[3].time", ">= 0"),
        (
            "trust is text",
            setter("events", 1, "item", "trust", value="high"),
            "events[1].item.trust",
            "must be a number",
        ),
        ("null optional", setter("events", 2, "text", value=None), "events[2].text", "not null"),
        (
            "after not a list",
            setter("events", 3, "after", value="e2"),
            "events[3].after",
            "must be an array",
        ),
        (
            "after entry not str",
            setter("events", 3, "after", value=[2]),
            "events[3].after[0]",
            "must be a string",
        ),
        ("events not a list", setter("events", value={}), "events", "must be an array"),
        ("empty events", setter("events", value=[]), "events", "at least one event"),
        ("event not an object", setter("events", 2, value="hi"), "events[2]", "must be an object"),
        (
            "arguments not object",
            setter("events", 7, "arguments", value=[1]),
            "events[7].arguments",
            "must be an object",
        ),
        (
            "terminal not bool",
            setter("tools", 0, "terminal", value="yes"),
            "tools[0].terminal",
            "true or false",
        ),
        ("empty id", setter("events", 2, "id", value=" "), "events[2].id", "must not be empty"),
        (
            "unknown event type",
            setter("events", 2, "type", value="user_msg"),
            "events[2].type",
            "unknown event type 'user_msg'",
        ),
        (
            "unknown check kind",
            setter("events", 18, "checks", 0, "kind", value="text_equals"),
            "events[18].checks[0].kind",
            "unknown check kind 'text_equals'",
        ),
        (
            "unknown source",
            setter("events", 1, "item", "source", value="web"),
            "events[1].item.source",
            "unknown source 'web'",
        ),
        (
            "unknown status",
            setter("events", 18, "checks", 1, "status", value="stale"),
            "events[18].checks[1].status",
            "unknown memory status 'stale'",
        ),
        ("unknown risk", setter("risk", value="R7"), "risk", "unknown risk 'R7'"),
        ("unknown tier", setter("tier", value="expert"), "tier", "unknown tier 'expert'"),
        ("unknown track", setter("track", value="side"), "track", "unknown track 'side'"),
        (
            "unknown resolution rule",
            setter("resolution_rule", value="newest"),
            "resolution_rule",
            "unknown resolution rule 'newest'",
        ),
        ("unknown top-level key", setter("notes", value="x"), "notes", "unknown field 'notes'"),
        (
            "unknown event key",
            setter("events", 3, "tiem", value=3),
            "events[3].tiem",
            "did you mean 'time'?",
        ),
        (
            "unknown check key",
            setter("events", 18, "checks", 2, "weight", value=1),
            "events[18].checks[2].weight",
            "unknown field",
        ),
        (
            "unknown item key",
            setter("events", 1, "item", "owner", value="x"),
            "events[1].item.owner",
            "unknown field",
        ),
        (
            "unknown constraint key",
            setter("events", 9, "constraint", "severity", value=1),
            "events[9].constraint.severity",
            "unknown field",
        ),
    ]


@pytest.mark.parametrize(
    "mutate,field,fragment",
    [c[1:] for c in _structural_cases()],
    ids=[c[0] for c in _structural_cases()],
)
def test_structural_error_names_file_line_episode_and_field(
    tmp_path: Path, mutate: Callable[[dict[str, Any]], None], field: str, fragment: str
) -> None:
    bad = make_dict("BAD-7")
    mutate(bad)
    assert_file_error(tmp_path, bad, field, fragment)


def test_structural_error_from_dict_defaults_to_memory_path() -> None:
    d = make_dict("X-1")
    d["risk"] = "R9"
    with pytest.raises(EpisodeFormatError) as info:
        episode_from_dict(d)
    assert str(info.value).startswith("<memory>: episode X-1: risk: unknown risk 'R9'")
    assert info.value.line is None


def test_missing_episode_id_reports_without_id(tmp_path: Path) -> None:
    d = make_dict()
    del d["id"]
    path = write_jsonl(tmp_path / "x.jsonl", d)
    with pytest.raises(EpisodeFormatError) as info:
        load_episodes(path)
    assert str(info.value) == f"{path}:1: id: missing required field"


def test_non_mapping_is_rejected() -> None:
    with pytest.raises(EpisodeFormatError, match=r"\$: must be an object, not an array"):
        episode_from_dict([1, 2])  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------
# files
# --------------------------------------------------------------------------------------


def test_blank_lines_skipped_and_line_numbers_kept(tmp_path: Path) -> None:
    path = tmp_path / "eps.jsonl"
    path.write_text(
        "\n" + json.dumps(make_dict("A-1")) + "\n   \n\n" + json.dumps(make_dict("B-2")) + "\n\n",
        encoding="utf-8",
    )
    assert [ep.id for ep in load_episodes(path)] == ["A-1", "B-2"]
    assert [n for n, _ in iter_episode_lines(path)] == [2, 5]


@pytest.mark.parametrize(
    "line,fragment",
    [
        ('{"id": "A-1", ', "invalid JSON"),
        ("[1, 2]", "each line must be a JSON object, not an array"),
        ('"text"', "each line must be a JSON object, not a string"),
        ('{"id": "A", "id": "B"}', "duplicate key 'id'"),
        ('{"x": NaN}', "NaN is not valid JSON"),
    ],
)
def test_bad_json_line_names_file_and_line(tmp_path: Path, line: str, fragment: str) -> None:
    path = tmp_path / "eps.jsonl"
    path.write_text(json.dumps(make_dict("A-1")) + "\n\n" + line + "\n", encoding="utf-8")
    with pytest.raises(EpisodeFormatError) as info:
        load_episodes(path)
    assert str(info.value).startswith(f"{path}:3: $: ")
    assert fragment in str(info.value)


def test_invalid_utf8_names_line(tmp_path: Path) -> None:
    path = tmp_path / "eps.jsonl"
    path.write_bytes(json.dumps(make_dict("A-1")).encode() + b'\n{"id": "\xff"}\n')
    with pytest.raises(EpisodeFormatError, match=r":2: \$: not valid UTF-8"):
        load_episodes(path)


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "eps.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(make_dict("A-1")).encode() + b"\n")
    assert [e.id for e in load_episodes(path)] == ["A-1"]


def test_duplicate_episode_ids_across_file(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "eps.jsonl", make_dict("A-1"), make_dict("B-2"), make_dict("A-1"))
    with pytest.raises(EpisodeFormatError) as info:
        load_episodes(path)
    assert str(info.value) == (
        f"{path}:5: episode A-1: id: duplicate episode id (first used on line 1)"
    )


def test_semantic_problems_are_reported_by_load(tmp_path: Path) -> None:
    bad = make_dict("BAD-1")
    bad["events"][18]["checks"][0]["tool"] = "fax"
    err = assert_file_error(tmp_path, bad, "events[18].checks[0].tool", "unknown tool 'fax'")
    assert err.line == 3


@pytest.mark.parametrize(
    "track,ids", [("main", ["A-1", "C-3"]), ("r6", ["B-2"]), ("all", ["A-1", "B-2", "C-3"])]
)
def test_track_filter(tmp_path: Path, track: str, ids: list[str]) -> None:
    path = write_jsonl(
        tmp_path / "eps.jsonl", make_dict("A-1"), make_dict("B-2", "R6", "r6"), make_dict("C-3")
    )
    assert [e.id for e in load_episodes(path, track=track)] == ids


def test_bad_track_is_a_clear_error(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "eps.jsonl", make_dict())
    with pytest.raises(MemriskError, match="unknown track 'R6'.*main, r6, all"):
        load_episodes(path, track="R6")


def test_missing_file_directory_and_empty_file(tmp_path: Path) -> None:
    with pytest.raises(MemriskError, match="no such file: .*nope.jsonl"):
        load_episodes(tmp_path / "nope.jsonl")
    with pytest.raises(MemriskError, match="is a directory"):
        load_episodes(tmp_path)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(MemriskError, match="no episodes found"):
        load_episodes(empty)


def test_dataset_hash(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "eps.jsonl", make_dict())
    from lm_eval_memrisk.episodes.codec import dumps_episode

    line = dumps_episode(episode_from_dict(make_dict()))  # the canonical form, not the file's
    digest = hashlib.sha256(line.encode("utf-8")).hexdigest()[:16]
    assert dataset_hash(path) == "sha256:" + digest
    assert dataset_hash(str(path)) == dataset_hash(path)
    path.write_bytes(path.read_bytes() + b"\n")  # formatting does not change the hash
    assert dataset_hash(path) == "sha256:" + digest
    changed = make_dict()
    changed["description"] = "something else"
    assert dataset_hash(write_jsonl(tmp_path / "other.jsonl", changed)) != "sha256:" + digest


def test_default_dataset_path_points_into_package() -> None:
    p = default_dataset_path()
    assert p.parts[-3:] == ("lm_eval_memrisk", "data", "episodes_v8.jsonl")
    assert default_dataset_path("v1").parts[-1] == "episodes_v1.jsonl"
    assert default_dataset_path("v2").parts[-1] == "episodes_v2.jsonl"


def test_versions_load_by_name_and_hash_apart() -> None:
    names = ("v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10")
    loaded = [load_episodes(v, track="all") for v in names]
    assert [{e.version for e in v} for v in loaded] == [{f"{k}.0"} for k in range(1, 11)]
    assert load_episodes(track="all") == loaded[names.index("v8")]  # (v8 stays the default)
    assert len({dataset_hash(v) for v in names}) == 10
    assert dataset_hash("v8") == dataset_hash()
    with pytest.raises(MemriskError, match="unknown dataset version"):
        default_dataset_path("v11")


def test_scan_collects_every_problem(tmp_path: Path) -> None:
    bad1 = make_dict("BAD-1")
    bad1["risk"] = "R0"
    bad2 = make_dict("BAD-2")
    bad2["events"][18]["checks"][0]["tool"] = "fax"
    bad2["events"][3]["after"] = ["e99"]
    path = write_jsonl(tmp_path / "eps.jsonl", make_dict("A-1"), bad1, bad2, make_dict("A-1"))
    scan = scan_episodes(path)
    assert [e.id for e in scan.episodes] == ["A-1"] and scan.lines == [1]
    got = [(p.line, p.episode_id, p.field) for p in scan.problems]
    assert got == [
        (3, "BAD-1", "risk"),
        (5, "BAD-2", "events[3].after[0]"),
        (5, "BAD-2", "events[18].checks[0].tool"),
        (7, "A-1", "id"),
    ]
    assert not scan.ok


@pytest.mark.parametrize("name", ["not_json.jsonl", "array_line.jsonl", "unknown_key.jsonl"])
def test_hand_written_bad_files(name: str) -> None:
    path = BAD_DIR / name
    with pytest.raises(EpisodeFormatError) as info:
        load_episodes(path)
    assert str(info.value).startswith(f"{path}:2:")


def test_shipped_dataset_if_present() -> None:
    if not default_dataset_path().is_file():
        pytest.skip("lm_eval_memrisk/data/episodes_v1.jsonl not generated yet")
    eps = load_episodes(track="all")
    assert eps and {e.track for e in eps} <= set(TRACKS)
    assert load_episodes() == [e for e in eps if e.track == "main"]
    assert dataset_hash() == dataset_hash(default_dataset_path())
    for ep in eps:
        assert episode_from_dict(episode_to_dict(ep)) == ep


# --------------------------------------------------------------------------------------
# JSON Schema
# --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def schema_validator() -> Any:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_schema_accepts_samples(schema_validator: Any) -> None:
    for risk, track in [("R1", "main"), ("R2", "main"), ("R6", "r6")]:
        d = make_dict(f"{risk}-X", risk, track)
        errors = [e.message for e in schema_validator.iter_errors(d)]
        assert errors == []


def test_schema_enums_match_records() -> None:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    props, defs = schema["properties"], schema["$defs"]
    assert props["risk"]["enum"] == list(RISKS)
    assert props["tier"]["enum"] == list(TIERS)
    assert props["track"]["enum"] == list(TRACKS)
    assert props["resolution_rule"]["enum"] == list(RESOLUTION_RULES)
    assert defs["event"]["properties"]["type"]["enum"] == list(EVENT_TYPES)
    assert defs["check"]["properties"]["kind"]["enum"] == list(CHECK_KINDS)
    assert defs["memoryItem"]["properties"]["source"]["enum"] == list(SOURCES)


def _drop(d: dict[str, Any], *keys: Any) -> dict[str, Any]:
    obj = d
    for k in keys[:-1]:
        obj = obj[k]
    del obj[keys[-1]]
    return d


def _put(d: dict[str, Any], *keys: Any, value: Any) -> dict[str, Any]:
    obj = d
    for k in keys[:-1]:
        obj = obj[k]
    obj[keys[-1]] = value
    return d


BROKEN: dict[str, Callable[[], dict[str, Any]]] = {
    "no id": lambda: _drop(make_dict(), "id"),
    "no events": lambda: _drop(make_dict(), "events"),
    "bad risk": lambda: _put(make_dict(), "risk", value="R9"),
    "unknown key": lambda: _put(make_dict(), "extra", value=1),
    "time as string": lambda: _put(make_dict(), "events", 2, "time", value="2"),
    "bad check kind": lambda: _put(make_dict(), "events", 18, "checks", 0, "kind", value="x"),
    "bad source": lambda: _put(make_dict(), "events", 1, "item", "source", value="web"),
    "null text": lambda: _put(make_dict(), "events", 2, "text", value=None),
    "item missing value": lambda: _drop(make_dict(), "events", 1, "item", "value"),
    "seven checks": lambda: _put(
        make_dict(),
        "events",
        18,
        "checks",
        value=make_dict()["events"][18]["checks"]
        + [
            {"id": f"k{k}", "kind": "tool_called", "tool": "ship_order", "description": ""}
            for k in range(4, 8)
        ],
    ),
    "check without its field": lambda: _drop(make_dict(), "events", 18, "checks", 0, "expected"),
    "decision without reference": lambda: _drop(make_dict(), "events", 18, "reference"),
    "reference shape": lambda: _put(make_dict(), "events", 18, "reference", value={"tool": "x"}),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_dicts_rejected_by_schema_and_loader(
    schema_validator: Any, tmp_path: Path, name: str
) -> None:
    d = BROKEN[name]()
    assert not schema_validator.is_valid(d), name
    path = write_jsonl(tmp_path / "x.jsonl", d)
    with pytest.raises(EpisodeFormatError):
        load_episodes(path)


@pytest.mark.parametrize(
    "keys",
    [
        ("tools",),
        ("metadata",),
        ("resolution_rule",),
        ("events", 3, "after"),
        ("events", 5, "item", "valid_to"),
        ("tools", 0, "terminal"),
        ("tools", 0, "parameters"),
        ("events", 18, "checks", 0, "description"),
        ("events", 9, "constraint", "scope"),
        ("events", 7, "arguments"),
        ("events", 18, "naive"),
    ],
)
def test_optional_fields_are_optional_in_schema_and_loader(
    schema_validator: Any, keys: tuple[Any, ...]
) -> None:
    d = make_dict("R2-X", "R2") if keys == ("resolution_rule",) else make_dict()
    if keys == ("tools",):
        d["events"] = [e for e in d["events"] if e["type"] not in ("tool_call", "tool_return")]
    _drop(d, *keys)
    assert schema_validator.is_valid(d)
    episode_from_dict(d)  # structurally fine


# --------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------


def test_cli_ok(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_jsonl(
        tmp_path / "eps.jsonl", make_dict("A-1"), make_dict("B-2", "R6", "r6"), make_dict("C-3")
    )
    assert cli.main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.strip() == f"OK: 3 episodes (main 2, r6 1) in {path}"


def test_cli_reports_every_problem(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = make_dict("BAD-1")
    bad["events"][18]["checks"][0]["tool"] = "fax"
    path = write_jsonl(tmp_path / "eps.jsonl", make_dict("A-1"), bad, make_dict("A-1"))
    assert cli.main(["validate", str(path)]) == 1
    captured = capsys.readouterr()
    err = captured.err
    assert f"{path}:3: episode BAD-1: events[18].checks[0].tool: unknown tool 'fax'" in err
    assert f"{path}:5: episode A-1: id: duplicate episode id" in err
    assert "FAILED: 2 problems" in err and "Traceback" not in err + captured.out


def test_cli_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write_jsonl(tmp_path / "good.jsonl", make_dict("A-1"))
    assert cli.main(["validate", str(good), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is True and report["episodes"] == 1
    assert report["tracks"] == {"main": 1, "r6": 0}
    assert report["dataset_hash"] == dataset_hash(good)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{oops\n", encoding="utf-8")
    assert cli.main(["validate", str(bad), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False
    assert report["problems"][0]["line"] == 1 and report["problems"][0]["field"] == "$"


def test_cli_missing_and_empty_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["validate", str(tmp_path / "nope.jsonl")]) == 1
    captured = capsys.readouterr()
    assert "no such file" in captured.err and "Traceback" not in captured.err
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    assert cli.main(["validate", str(empty)]) == 1
    assert "no episodes found" in capsys.readouterr().err
    assert cli.main(["validate", str(tmp_path / "nope.jsonl"), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["ok"] is False


def test_cli_default_file(capsys: pytest.CaptureFixture[str]) -> None:
    rc = cli.main(["validate"])
    captured = capsys.readouterr()
    if default_dataset_path().is_file():
        assert rc == 0 and captured.out.startswith("OK: ")
    else:
        assert rc == 1 and "shipped dataset" in captured.err


def test_deeply_nested_free_form_json_is_a_clear_error(tmp_path: Path) -> None:
    d = make_dict("DEEP-1")
    d["metadata"] = {"x": json.loads("[" * 500 + "]" * 500)}
    path = write_jsonl(tmp_path / "x.jsonl", d)
    with pytest.raises(EpisodeFormatError, match=r":1: episode DEEP-1: metadata\.x\[0\].*nested"):
        load_episodes(path)
    path.write_text("[" * 20_000 + "]" * 20_000 + "\n", encoding="utf-8")
    with pytest.raises(EpisodeFormatError, match=r":1: \$: invalid JSON"):
        load_episodes(path)


def test_non_json_values_in_memory_are_rejected() -> None:
    d = make_dict("X-1")
    d["events"][7]["arguments"] = {"order": {1, 2}}
    with pytest.raises(
        EpisodeFormatError, match=r"events\[7\]\.arguments\.order: set is not a JSON"
    ):
        episode_from_dict(d)


# --------------------------------------------------------------------------------------
# text UTF-8 cannot encode (#29 item 4)
# --------------------------------------------------------------------------------------


def test_a_lone_surrogate_is_a_clean_error_naming_file_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = make_dict("BAD-1")
    bad["events"][1]["text"] = "ship to \ud800 Elm"
    path = write_jsonl(tmp_path / "eps.jsonl", make_dict("A-1"), bad, blank_between=False)
    assert "\\ud800" in path.read_text(encoding="utf-8")  # a JSON escape, as an attacker writes it
    with pytest.raises(EpisodeFormatError) as exc:
        load_episodes(path)
    assert (exc.value.line, exc.value.episode_id, exc.value.field) == (2, "BAD-1", "events[1].text")
    assert "lone surrogate (\\ud800) at character 9" in str(exc.value)
    assert cli.main(["validate", str(path)]) == 1
    captured = capsys.readouterr()
    assert f"{path}:2: episode BAD-1: events[1].text: contains a lone surrogate" in captured.err
    assert "Traceback" not in captured.err + captured.out
    assert cli.main(["validate", str(path), "--json"]) == 1  # --json reports it too
    assert json.loads(capsys.readouterr().out)["problems"][0]["field"] == "events[1].text"


def test_a_surrogate_pair_is_a_character_not_an_error(tmp_path: Path) -> None:
    good = make_dict("A-1")
    good["description"] = "party \ud83c\udf89"  # written as a pair of escapes: one emoji
    path = tmp_path / "eps.jsonl"
    path.write_text(json.dumps(good) + "\n", encoding="utf-8")
    (ep,) = load_episodes(path)
    assert ep.description == "party \U0001f389"


# --------------------------------------------------------------------------------------
# size limits (#29 item 7)
# --------------------------------------------------------------------------------------


def test_a_field_over_the_length_limit_names_file_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from lm_eval_memrisk.episodes.loader import MAX_FIELD_CHARS

    bad = make_dict("BIG-1")
    bad["events"][1]["text"] = "x" * 20_000_000  # the 20 MB string
    path = write_jsonl(tmp_path / "eps.jsonl", make_dict("A-1"), bad, blank_between=False)
    assert cli.main(["validate", str(path)]) == 1
    err = capsys.readouterr().err
    assert (f"{path}:2: episode BIG-1: events[1].text: 20,000,000 characters, "
            f"over the limit of {MAX_FIELD_CHARS:,} per field") in err
    with pytest.raises(EpisodeFormatError, match="over the limit"):
        load_episodes(path)
    ok = make_dict("OK-1")
    ok["events"][1]["text"] = "x" * MAX_FIELD_CHARS  # the limit itself is fine
    load_episodes(write_jsonl(tmp_path / "ok.jsonl", ok))


def test_too_many_events_name_the_episode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from lm_eval_memrisk.episodes.loader import MAX_EVENTS

    bad = make_dict("LONG-1")
    bad["events"] = bad["events"] * (MAX_EVENTS // len(bad["events"]) + 1)
    path = write_jsonl(tmp_path / "eps.jsonl", bad)
    assert cli.main(["validate", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"{path}:1: episode LONG-1: events: {len(bad['events']):,} events, over the limit of {MAX_EVENTS}" in err


def test_a_file_over_the_size_limit_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from lm_eval_memrisk.episodes import loader

    path = write_jsonl(tmp_path / "eps.jsonl", make_dict("A-1"))
    monkeypatch.setattr(loader, "MAX_FILE_BYTES", path.stat().st_size - 1)
    assert cli.main(["validate", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"{path}: {path.stat().st_size:,} bytes, over the limit of" in err and "Traceback" not in err
    with pytest.raises(MemriskError, match="bytes, over the limit"):
        load_episodes(path)
