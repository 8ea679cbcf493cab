"""The `[effort]` table of each rule file: how much work a finding is to port."""

from __future__ import annotations

from pathlib import Path

import pytest

from portlint.core import catalog as rules

ROOT = Path(__file__).resolve().parent.parent


def test_every_rule_file_ends_with_an_effort_table():
    for path in sorted((ROOT / "rules").glob("*/PTL*.toml")):
        text = path.read_text(encoding="utf-8")
        tail = text[text.rfind("\n[") + 1:]
        assert tail.startswith("[effort]\n"), f"{path.name}: [effort] is not the last table"
        rule = rules.parse_rule(path)
        assert rule.effort in rules.EFFORT_LEVELS, path.name
        assert len(rule.effort_why.split()) >= 5, f"{path.name}: effort.why is not a rationale"


def test_safe_fix_rules_are_not_called_redesign():
    # a safe fix is mechanical by definition; a rule whose findings all have one cannot need a redesign
    for rule in rules.load_rules().values():
        if rule.fix == "safe":
            assert rule.effort != "redesign", rule.id


def _rule_text(family: str = "cuda_warp", effort: str | None = 'level = "local"\nwhy = "A few lines at the call."') -> str:
    body = (
        'id = "PTL199"\nname = "a-test-rule"\n'
        f'family = "{family}"\nlanguage = "cuda"\nsummary = "s"\nmessage = "m"\n'
        'confidence = "high"\nproof = "unproven: a rule made up by this test"\nfix = "none"\n\n[severity]\nrocm = "error"\n\n'
        '[docs]\nfinds = "f"\nexample = "e"\nrewrite = "r"\n\n[docs.why]\nrocm = "w"\n'
    )
    return body + (f"\n[effort]\n{effort}\n" if effort is not None else "")


def _parse(tmp_path, text: str) -> rules.Rule:
    path = tmp_path / "PTL199-a-test-rule.toml"
    path.write_text(text, encoding="utf-8")
    return rules.parse_rule(path)


def test_a_valid_effort_table_is_read(tmp_path):
    rule = _parse(tmp_path, _rule_text())
    assert (rule.effort, rule.effort_why) == ("local", "A few lines at the call.")
    assert rule.markdown_doc().rstrip().endswith("local: A few lines at the call.")


@pytest.mark.parametrize(
    "effort, error",
    [
        (None, "missing table [effort]"),
        ('level = "easy"\nwhy = "x"', "effort.level must be one of"),
        ('level = "local"', "missing key 'why'"),
        ('level = "local"\nwhy = "   "', "effort.why must give a rationale"),
        ('level = "local"\nwhy = "x"\nhours = 3', "unknown keys in [effort]"),
    ],
)
def test_a_bad_effort_table_is_refused(tmp_path, effort, error):
    with pytest.raises(rules.RuleError, match=error.replace("[", r"\[").replace("]", r"\]")):
        _parse(tmp_path, _rule_text(effort=effort))


def test_effort_must_be_a_table(tmp_path):
    text = _rule_text(effort=None).replace('confidence = "high"', 'effort = "local"\nconfidence = "high"')
    with pytest.raises(rules.RuleError, match="'effort' must be a table"):
        _parse(tmp_path, text)


def test_the_tools_own_rules_may_leave_effort_out(tmp_path):
    rule = _parse(tmp_path, _rule_text(family="tool", effort=None))
    assert rule.effort == ""
