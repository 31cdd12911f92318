"""Rule names are one closed set: every finding names a rule of ``RULE_NAMES``."""

from __future__ import annotations

import ast
import json
import textwrap
from pathlib import Path

import pytest

from tablesight.rules.errors import InputError
from tablesight.rules.referee import referee_for
from tablesight.rules.ruleset import Ruleset, available, load_ruleset
from tablesight.rules.scenario import Scenario
from tablesight.rules.verdict import RULE_NAMES, is_rule_name

RULES = Path(__file__).resolve().parents[2] / "rules"
SCENARIOS = RULES.parent / "samples" / "scenarios"


def _names_in_source() -> set[str]:
    """The rule names the referees' code passes to ``flag``, ``advise`` or a ``report``
    (either of them), and the ones it sets with ``rule=`` or returns as a ``RuleName``."""
    names: set[str] = set()
    for path in RULES.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if called in ("flag", "advise", "report") and node.args:
                    names |= _strings(node.args[0])
                for kw in node.keywords:
                    if kw.arg == "rule":
                        names |= _strings(kw.value)
            elif (
                isinstance(node, ast.FunctionDef)
                and ast.unparse(node.returns or ast.Constant(None)) == "RuleName"
            ):
                for ret in ast.walk(node):
                    if isinstance(ret, ast.Return) and ret.value is not None:
                        names |= _strings(ret.value)
    return names


def _strings(node: ast.expr) -> set[str]:
    """The string constants an expression may evaluate to."""
    return {
        n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }


def _advisories_in_games() -> set[str]:
    """The rule names the games' files give their actions' advisories."""
    return {
        a.advisory
        for name in available()
        for a in load_ruleset(name).actions.values()
        if a.advisory is not None
    }


def test_every_name_the_code_or_a_game_uses_is_in_the_set_and_none_is_unused():
    used = _names_in_source() | _advisories_in_games()
    assert used == set(RULE_NAMES)
    assert len(RULE_NAMES) == len(set(RULE_NAMES))


def test_every_sample_scenario_finds_only_rules_of_the_set():
    seen: set[str] = set()
    paths = sorted(p for p in SCENARIOS.glob("*.json") if p.name != "expected.json")
    assert paths
    for path in paths:
        scenario = Scenario.from_file(path)
        verdict = referee_for(scenario.scene, scenario.ruleset).judge()
        for finding in (*verdict.violations, *verdict.advisories):
            assert is_rule_name(finding.rule), (path.name, finding)
            seen.add(finding.rule)
    assert seen  # the samples do flag something


def test_the_samples_expected_findings_name_rules_of_the_set():
    expected = json.loads((SCENARIOS / "expected.json").read_text(encoding="utf-8"))
    named = {
        rule
        for verdict in expected.values()
        for rule in (*verdict["violations"], *verdict["advisories"])
    }
    assert named and named <= set(RULE_NAMES)


def test_a_game_file_with_an_unknown_advisory_is_refused(tmp_path):
    path = tmp_path / "game.toml"
    path.write_text(
        'name = "g"\ntitle = "G"\nsource = "s"\n'
        '[actions.move]\n[actions.dash]\nadvisory = "risky_rol"\n',
        encoding="utf-8",
    )
    with pytest.raises(InputError, match=r"actions\.dash\.advisory: Input should be 'movement'"):
        Ruleset.from_toml(path)


def test_is_rule_name():
    assert is_rule_name("control_zone")
    assert not is_rule_name("control-zone")


@pytest.mark.slow
def test_mypy_catches_a_misspelt_rule_name(tmp_path):
    api = pytest.importorskip("mypy.api")
    snippet = tmp_path / "misspelt.py"
    snippet.write_text(
        textwrap.dedent(
            """
            from tablesight.rules.verdict import Finding, Findings

            Findings().flag("movment", "a", "moved too far")
            Finding("control_zone", "a", "in a zone")
            """
        ),
        encoding="utf-8",
    )
    out, _, status = api.run(["--strict", "--no-incremental", str(snippet)])
    assert status == 1
    assert out.count("error:") == 1 and "incompatible type \"Literal['movment']\"" in out
