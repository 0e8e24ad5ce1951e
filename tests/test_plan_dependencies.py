"""`Plan.resolve_dependencies` and the memoised configuration validators: same results on the fast paths."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from maas.config.types import DnsLabel, Window
from maas.plan.desired import Desired, Plan, k8s_object


def _object(name: str, depends_on: tuple[str, ...] = ()) -> Desired:
    return Desired(k8s_object("v1", "ConfigMap", name, "ns"), depends_on=depends_on)


def test_sorted_known_dependencies_keep_the_same_object():
    plan = Plan()
    first, second = _object("a"), _object("b")
    dependent = _object("c", ("ConfigMap:ns/a", "ConfigMap:ns/b"))
    plan.add("Platform", "platform", first, second, dependent)
    plan.resolve_dependencies()
    assert plan.owner("Platform", "platform").objects[2] is dependent


def test_unsorted_repeated_or_unknown_dependencies_are_cleaned():
    plan = Plan()
    plan.add("Platform", "platform", _object("a"), _object("b"))
    plan.add("Platform", "platform", _object("c", ("ConfigMap:ns/b", "ConfigMap:ns/a", "ConfigMap:ns/b")))
    plan.add("Platform", "platform", _object("d", ("ConfigMap:ns/a", "ConfigMap:ns/missing")))
    plan.resolve_dependencies()
    objects = plan.owner("Platform", "platform").objects
    assert objects[2].depends_on == ("ConfigMap:ns/a", "ConfigMap:ns/b")
    assert objects[3].depends_on == ("ConfigMap:ns/a",)


@pytest.mark.parametrize(
    ("annotation", "bad", "message"), [(DnsLabel, "Bad_Name", "not a DNS label"), (Window, "7d", "not a valid window")]
)
def test_memoised_validators_reject_a_bad_value_every_time(annotation, bad, message):
    adapter = TypeAdapter(annotation)
    for _ in range(2):
        with pytest.raises(ValidationError, match=message):
            adapter.validate_python(bad)
    assert adapter.validate_python("ok1" if annotation is DnsLabel else "1m") in {"ok1", "1m"}
