"""The template table (issue 26, item 2): generator templates by id, the tag of a rendered
sentence, the right rate per template, and `memrisk audit --templates`."""

from __future__ import annotations

import json
import random

import pytest

from lm_eval_memrisk.audit.templates import BAND, TEMPLATE_MIN, template_summary, template_table
from lm_eval_memrisk.cli import audit as audit_cli
from lm_eval_memrisk.episodes.loader import load_episodes
from lm_eval_memrisk.generator.templates import PLACEHOLDER, catalog, tag
from lm_eval_memrisk.generator.templating import pick


def _render(text: str, value: str) -> str:
    words = {name: f"w{i}" for i, name in enumerate(sorted(set(PLACEHOLDER.findall(text)))) if name != "value"}
    return pick(random.Random(0), (text,), value=value, **words)


def test_every_template_with_a_value_slot_tags_its_own_rendering() -> None:
    """A sentence rendered from a template is tagged with it, or with a longer template
    that renders the same sentence (the most specific one wins)."""
    value = "Qx-4471 Zeta Lane"
    templates = [t for t in catalog().values() if t.source is not None]
    assert len(templates) > 100
    for t in templates:
        sentence = f"Okay. {_render(t.text, value)} Thanks."
        got = tag(sentence, value)
        assert got is not None, t.id
        assert got == t.id or len(catalog()[got].text) >= len(t.text), (t.id, got)


def test_ids_name_where_the_template_lives_and_texts_are_unique() -> None:
    c = catalog()
    assert c["risks.v2.DROP_NEWEST[1]"].text.startswith("Get rid of the latest")
    assert any(tid.startswith("family:door_code.") for tid in c)
    assert len({t.text for t in c.values()}) == len(c)


def test_tag_needs_the_value_in_the_slot() -> None:
    text = "Small change: from today my shipping address is 12 Elm Road."
    assert tag(text, "12 Elm Road") == "families.base.UPDATES[3]"
    assert tag(text, "14 Elm Road") is None
    assert tag("My shipping address? 12 Elm Road, I think.", "12 Elm Road") is None


def test_v6_template_table_is_measured_and_pinned() -> None:
    """v6: 21 templates carry a candidate value 8+ times and 7 of them sit outside
    [0.25, 0.75] (the issue's goal is none): "For future reference, my K is V" (0.20),
    a colleague's "Please keep my K on file" (0.00), R2's "From this week on, use V"
    (1.00) ... This pins the level so a change that adds tells fails."""
    rows = template_table(load_episodes("v6", track="all"))
    summary = template_summary(rows)
    assert summary["held"] >= 18 and summary["outside_band"] <= 7, summary
    for row in rows:
        assert row["in_band"] == (BAND[0] <= row["right_rate"] <= BAND[1])
    peer = next(r for r in rows if r["template"] == "risks.v3.PEER_STATES[1]")
    assert peer["n"] >= TEMPLATE_MIN and peer["right_rate"] == 0.0


def test_cli_templates_prints_the_table_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert audit_cli.main(["--episodes", "v6", "--templates"]) == 0
    out = capsys.readouterr().out
    assert "templates carried a candidate value 8+ times" in out and "| risks.v3.PEER_STATES[1] |" in out
    assert audit_cli.main(["--episodes", "v6", "--templates", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"templates", "summary"} and data["summary"]["outside_band"] == 7
