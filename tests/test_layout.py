"""The architecture holds: the pure core (configuration, observation, the plan) never imports Pulumi."""

from __future__ import annotations

import ast

import pytest

from tests.conftest import ROOT

PURE = ("maas/config", "maas/observe", "maas/plan", "maas/crdschema")


def imported_modules(path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("package", PURE)
def test_the_pure_core_imports_no_pulumi(package):
    files = sorted((ROOT / package).rglob("*.py"))
    assert files
    assert [str(f.relative_to(ROOT)) for f in files if {"pulumi", "pulumi_kubernetes"} & imported_modules(f)] == []
