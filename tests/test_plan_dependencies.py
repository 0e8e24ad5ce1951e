"""`Plan.resolve_dependencies` and the memoised configuration validators: same results on the fast paths."""

from __future__ import annotations

from dataclasses import fields

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


def test_a_dependency_names_an_object_never_a_status_write():
    plan = Plan()
    target = _object("a")
    status = Desired(k8s_object("v1", "ConfigMap", "a", "ns"), subresource="status")
    plan.add("Platform", "platform", target, status, _object("b", ("ConfigMap:ns/a", "ConfigMap:ns/a/status")))
    plan.resolve_dependencies()
    assert plan.owner("Platform", "platform").objects[2].depends_on == ("ConfigMap:ns/a",)


def test_objects_of_a_kind_leave_out_status_writes_and_keep_the_plan_order():
    plan = Plan()
    policy = Desired(k8s_object("kuadrant.io/v1", "AuthPolicy", "p", "ns"))
    status = Desired(k8s_object("kuadrant.io/v1", "AuthPolicy", "p", "ns"), subresource="status")
    plan.add("Model", "b", policy, status, _object("a"))
    plan.add("Model", "a", _object("b"))
    assert plan.objects_of("AuthPolicy") == [policy]
    assert plan.objects_of("ConfigMap") == [o for o in plan.objects() if o.kind == "ConfigMap"]


def test_replace_objects_changes_each_owners_objects_in_place_of_the_old():
    plan = Plan()
    plan.add("Model", "b", _object("a"), _object("b"))
    plan.add("Model", "a", _object("c"))
    plan.replace_objects(lambda obj: obj.annotated("seen", "true") if obj.name != "b" else obj)
    assert [(o.name, o.body["metadata"].get("annotations")) for o in plan.objects()] == [
        ("c", {"seen": "true"}),
        ("a", {"seen": "true"}),
        ("b", None),
    ]


def test_an_annotated_copy_keeps_every_other_field():
    """`annotated` builds its copy field by field (faster than `replace`): a field added later must be copied too."""
    original = Desired(
        k8s_object("v1", "ConfigMap", "a", "ns", annotations={"old": "1"}),
        retain_on_delete=True,
        ignore_changes=("data",),
        depends_on=("Namespace:ns",),
        subresource="status",
        adopt=True,
        status_facts={"fact": 1},
        import_id="ns/a",
    )
    copy = original.annotated("new", "2")
    assert copy.body["metadata"]["annotations"] == {"old": "1", "new": "2"}
    assert original.body["metadata"]["annotations"] == {"old": "1"}
    for field in fields(Desired)[1:]:  # every field but the body, each set to other than its default above
        assert getattr(original, field.name) != field.default, field.name
        assert getattr(copy, field.name) == getattr(original, field.name), field.name


@pytest.mark.parametrize(
    ("annotation", "bad", "message"), [(DnsLabel, "Bad_Name", "not a DNS label"), (Window, "7d", "not a valid window")]
)
def test_memoised_validators_reject_a_bad_value_every_time(annotation, bad, message):
    adapter = TypeAdapter(annotation)
    for _ in range(2):
        with pytest.raises(ValidationError, match=message):
            adapter.validate_python(bad)
    assert adapter.validate_python("ok1" if annotation is DnsLabel else "1m") in {"ok1", "1m"}
