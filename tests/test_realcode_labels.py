"""The label format of the real-code sets (tests/realcode.py), without the fetched trees."""

from __future__ import annotations

import io

import pytest

import realcode

HEADER = "package,file,line,expect,rules,mode,why\n"


def _labels(*rows: str) -> list[realcode.Label]:
    return realcode.read_labels(io.StringIO(HEADER + "".join(r + "\n" for r in rows)), ("PTL2", "PTL4"))


def test_a_span_is_read_as_first_and_last_line():
    one, span = _labels("p-1,a.cu,12,flag,PTL403,,mma", "p-1,a.cu,20-26,flag,PTL403 PTL201,,multi-line asm")
    assert list(one.lines) == [12] and one.where == "12"
    assert list(span.lines) == [20, 21, 22, 23, 24, 25, 26] and span.where == "20-26"
    assert span.rules == ("PTL403", "PTL201")


@pytest.mark.parametrize("line", ["0", "7-7", "9-3", "4-", "-4", "a-b", "3-5-7", "12 "])
def test_a_malformed_line_or_span_fails_loudly(line):
    with pytest.raises(realcode.LabelError, match="bad line"):
        _labels(f"p-1,a.cu,{line},flag,,,why")


def test_labels_of_one_file_may_not_overlap():
    with pytest.raises(realcode.LabelError, match="overlaps"):
        _labels("p-1,a.cu,20-26,flag,,,asm statement", "p-1,a.cu,24,quiet,,,a line inside it")
    # another file, another mode, or lines beside the span are fine
    assert len(_labels("p-1,a.cu,20-26,flag,,,asm", "p-1,b.cu,24,quiet,,,other file",
                       "p-1,a.cu,24,quiet,,rocm,other mode", "p-1,a.cu,27,quiet,,,next line")) == 4


def test_a_flag_span_matches_a_finding_on_any_of_its_lines():
    labels = _labels("p-1,a.cu,20-26,flag,PTL403,,asm starting at 20", "p-1,a.cu,40-44,flag,PTL401,,asm at 40",
                     "p-1,a.cu,60,flag,PTL403,,one line")
    found = {("p-1", "inferred", "a.cu", 23): ["PTL403"],  # the mma on the fourth line of the statement
             ("p-1", "inferred", "a.cu", 45): ["PTL401"],  # one line past the span: not this site
             ("p-1", "inferred", "a.cu", 61): ["PTL403"]}  # a one-line label matches its line only
    out = realcode.score(labels, found)
    assert (out.flags, out.hits) == (3, 1)
    assert [label.where for label, _ in out.misses] == ["40-44", "60"]


def test_a_flag_span_needs_a_finding_of_its_rules():
    labels = _labels("p-1,a.cu,20-26,flag,PTL403,,mma asm")
    out = realcode.score(labels, {("p-1", "inferred", "a.cu", 21): ["PTL201"], ("p-1", "inferred", "a.cu", 25): ["PTL205"]})
    assert out.hits == 0 and out.misses[0][1] == ["PTL201", "PTL205"]


def test_a_trap_span_is_hit_by_a_finding_on_any_of_its_lines():
    labels = _labels("p-1,a.cu,10-14,quiet,PTL309,,multimem under an arch gate", "p-1,a.cu,30-33,quiet,PTL302,,fence")
    found = {("p-1", "inferred", "a.cu", 14): ["PTL309"],  # the last line of the statement
             ("p-1", "inferred", "a.cu", 31): ["PTL201"],  # another rule: not this trap's
             ("p-1", "inferred", "a.cu", 29): ["PTL302"]}  # before the span
    out = realcode.score(labels, found)
    assert (out.quiets, out.trap_hits) == (2, 1)
    assert [(label.where, got) for label, got in out.false_alarms] == [("10-14", ["PTL309"])]
