"""Shared fixtures: the example stack and offline rendering under Pulumi mocks."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import pytest

from maas.config import load_config, raw_from_stack_file
from maas.observe import Observed
from maas.plan.policies.identity import effective_identities
from maas.tools.render import Rendering, render

ROOT = Path(__file__).resolve().parent.parent

DEV_STACK = ROOT / "Pulumi.dev.yaml"


@pytest.fixture
def dev_raw() -> dict[str, Any]:
    """The `maas:` keys of Pulumi.dev.yaml, a fresh copy per test so tests may edit it."""
    raw, _ = raw_from_stack_file(DEV_STACK)
    return copy.deepcopy(raw)


@pytest.fixture
def dev_config(dev_raw):
    return load_config(dev_raw)


@pytest.fixture(scope="session")
def dev_rendering() -> Rendering:
    raw, _ = raw_from_stack_file(DEV_STACK)
    return render(raw)


def objects_of(rendering: Rendering, kind: str) -> dict[str, dict[str, Any]]:
    """Rendered objects of one kind keyed by `namespace/name` (or `name` when cluster-scoped)."""
    found = {}
    for body in rendering.objects():
        if body["kind"] == kind:
            metadata = body["metadata"]
            key = f"{metadata['namespace']}/{metadata['name']}" if "namespace" in metadata else metadata["name"]
            found[key] = body
    return found


@pytest.fixture(scope="session")
def dev_raw_static() -> dict[str, Any]:
    """The dev stack's raw configuration for tests that only read it (hypothesis needs a session fixture)."""
    raw, _ = raw_from_stack_file(DEV_STACK)
    return raw


def owned(rendering: Rendering, component_kind: str, component_name: str) -> dict[tuple[str, str], Any]:
    """Registrations of the Kubernetes objects one component owns, keyed by (kind, logical name)."""
    component = next(
        r for r in rendering.registrations if r.type == f"maas:index:{component_kind}" and r.name == component_name
    )
    return {
        (r.inputs["kind"], r.name): r
        for r in rendering.registrations
        if r.is_kubernetes_object and r.parent == component.urn
    }


def identities(config) -> dict[str, str]:
    """Each subscription's rate-limit identity when nothing is observed: configuration's, else short."""
    return effective_identities(config, Observed.nothing()).of


@pytest.fixture(autouse=True)
def fresh_settle_window():
    """Every test is a `pulumi up` of its own: the status writer's route window opens again."""
    from maas.deploy.status_writer import ROUTE_WINDOW

    ROUTE_WINDOW.reset()


def _hypothesis_profiles() -> None:
    """`make test` explores new examples at every run; CI (`.ci/run`: MAAS_HYPOTHESIS_PROFILE=ci) draws the same
    ones every time, so that a submission lands or not on its own merits, never on a random draw."""
    from hypothesis import settings

    settings.register_profile("ci", derandomize=True)
    settings.load_profile(os.environ.get("MAAS_HYPOTHESIS_PROFILE", "default"))


_hypothesis_profiles()
