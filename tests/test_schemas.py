"""Every object rendered from every stack file validates against the real CRDs and Kubernetes schemas."""

from __future__ import annotations

from pathlib import Path

import pytest

from maas.config import raw_from_stack_file
from maas.crdschema import validate_all
from maas.tools.render import render
from tests.conftest import DEV_STACK

STACKS = [DEV_STACK, *sorted((Path(__file__).parent / "stacks").glob("Pulumi.*.yaml"))]
# cert-manager is not among the CRDs we were given; its Certificate is checked by tests of its own shape.
NO_SCHEMA = {("cert-manager.io/v1", "Certificate")}


@pytest.mark.parametrize("stack", STACKS, ids=[s.name for s in STACKS])
def test_every_rendered_object_is_valid(stack):
    raw, _ = raw_from_stack_file(stack)
    objects = render(raw).objects()
    assert objects
    assert validate_all(objects, unknown_ok=NO_SCHEMA) == []
