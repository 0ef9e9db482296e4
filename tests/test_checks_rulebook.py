"""The merge's refusal rules stay a rulebook: every rule in the ordered tuples of
`fastapply/merge/checks/` is a named, documented function, defined in exactly one module of the
package, run by exactly one tuple, and importable from `fastapply.merge.checks`; and every
function a module defines from one context to a reason is run by a tuple (none is left out of the book)."""

from __future__ import annotations

import ast
import inspect
import pkgutil
from pathlib import Path

import fastapply.merge.checks as checks

TUPLES = ("REGION_CHECKS", "FILE_CHECKS", "TREE_CHECKS", "DEFINITION_CHECKS", "CONTAINER_CHECKS",
          "DELETE_CHECKS", "MEMBER_CHECKS", "NEW_MEMBER_CHECKS", "SECTION_CHECKS")
CONTEXTS = {"RegionFit", "LinePlan", "DefinitionMatch", "ShownDefinition", "MemberList", "DeletedRun",
            "ShownMember", "NewMember", "SectionEdit"}
PACKAGE = Path(checks.__file__).parent


def _rules() -> list:
    return [rule for name in TUPLES for rule in getattr(checks, name)]


def _defined_in() -> dict[str, list[str]]:
    """Module name -> the top-level functions its source defines, for every module of the package."""
    out = {}
    for info in pkgutil.iter_modules([str(PACKAGE)]):
        tree = ast.parse((PACKAGE / f"{info.name}.py").read_text(encoding="utf-8"))
        out[info.name] = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    return out


def test_every_rule_is_a_named_documented_function_run_once():
    rules = _rules()
    assert len({id(r) for r in rules}) == len(rules), "a rule is run by two tuples (or twice by one)"
    for rule in rules:
        assert inspect.isfunction(rule) and not rule.__name__.startswith(("_", "<")), rule
        assert (inspect.getdoc(rule) or "").strip(), f"{rule.__name__} has no docstring"
        assert getattr(checks, rule.__name__) is rule, f"{rule.__name__} is not re-exported by checks"


def test_every_rule_is_defined_in_exactly_one_module_of_the_package():
    defined = _defined_in()
    for rule in _rules():
        homes = [m for m, names in defined.items() if rule.__name__ in names]
        assert homes == [rule.__module__.rsplit(".", 1)[-1]], (rule.__name__, homes)
        assert rule.__module__.startswith("fastapply.merge.checks."), rule.__module__


def test_every_rule_a_module_defines_is_in_a_tuple():
    run = {r.__name__ for r in _rules()}
    for info in pkgutil.iter_modules([str(PACKAGE)]):
        tree = ast.parse((PACKAGE / f"{info.name}.py").read_text(encoding="utf-8"))
        for n in tree.body:
            args = n.args.args if isinstance(n, ast.FunctionDef) else []
            one_context = len(args) == 1 and isinstance(args[0].annotation, ast.Name) and \
                args[0].annotation.id in CONTEXTS and ast.unparse(n.returns) == "str | None"
            if one_context and not n.name.startswith("_"):
                assert n.name in run, f"{info.name}.{n.name} reads a context but no tuple runs it"
