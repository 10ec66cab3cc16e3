"""Agreement of the label rule with two blind reviewers (scorer 3.4; docs/scoring.md).

``python docs/reader_study/labels_3.4/tally.py`` scores every case of ``cases.json``
with the installed scorer's ``names_match`` and with 3.3's reading (the request's words
and the right call's values not counted; on these cases it gives 3.3's verdicts), and
prints each reviewer's agreement."""

from __future__ import annotations

import json
import re
from pathlib import Path

from lm_eval_memrisk.scoring.checks import names_match

HERE = Path(__file__).parent


def reviewer(name: str) -> dict[int, bool]:
    """Case number -> ACCEPT, from ``verdicts_reviewer_<name>.md``."""
    text = (HERE / f"verdicts_reviewer_{name}.md").read_text(encoding="utf-8")
    return {int(m[1]): m[2] == "ACCEPT" for m in re.finditer(r"Case (\d+): (ACCEPT|REJECT)", text)}


def verdicts(rule: str) -> dict[int, bool]:
    """Case number -> the label passes, under ``rule`` ("3.4": this scorer; "3.3")."""
    cases = json.loads((HERE / "cases.json").read_text(encoding="utf-8"))
    return {
        c["case"]: names_match(c["label"], c["name"], label=True,
                               request=c["request"] if rule == "3.4" else "",
                               known=c["known"] if rule == "3.4" else "")
        for c in cases
    }  # fmt: skip


def main() -> None:
    for rule in ("3.3", "3.4"):
        scored = verdicts(rule)
        agree = {who: sum(reviewer(who)[k] == v for k, v in scored.items()) for who in ("a", "b")}
        print(f"scorer {rule}: passes {sum(scored.values())}/{len(scored)}; "
              f"reviewer A agrees on {agree['a']}, reviewer B on {agree['b']}")


if __name__ == "__main__":
    main()
