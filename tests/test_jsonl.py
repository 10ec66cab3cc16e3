"""JSON Lines readers: only "\\n" ends a line (logged replies may hold U+2028, U+0085)."""

import json

import pytest

from lm_eval_memrisk.episodes.errors import MemriskError, SamplesError
from lm_eval_memrisk.episodes.jsonl import numbered_lines, read_sample_objects
from lm_eval_memrisk.running.run_store import parse_traces

ODD = "a\u2028b\u2029c\x85d"  # str.splitlines() would cut here


def test_numbered_lines_split_on_newline_only_and_skip_blanks():
    text = json.dumps({"r": ODD}, ensure_ascii=False) + "\n\n  \n" + '{"x": 1}\r\n'
    assert [(n, json.loads(line)) for n, line in numbered_lines(text)] == [
        (1, {"r": ODD}),
        (4, {"x": 1}),
    ]


def test_read_sample_objects_keeps_filter_none_and_names_the_line(tmp_path):
    path = tmp_path / "samples.jsonl"
    lines = [{"doc_id": 0, "resps": [[ODD]]}, {"doc_id": 1, "filter": "other"}, {"doc_id": 2}]
    path.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n", "utf-8")
    got = list(read_sample_objects(path))
    assert [(w, d["doc_id"]) for w, d in got] == [(f"{path}:1", 0), (f"{path}:3", 2)]
    assert got[0][1]["resps"] == [[ODD]]
    path.write_text('{"doc_id": 0}\n[1]\n', "utf-8")
    with pytest.raises(SamplesError, match=r":2: a sample line must be a JSON object"):
        list(read_sample_objects(path))


def test_parse_traces_names_the_bad_line():
    with pytest.raises(MemriskError, match=r"^t\.jsonl:2: not a trace \(KeyError"):
        list(parse_traces('\n{"episode_id": "x"}\n', "t.jsonl"))
