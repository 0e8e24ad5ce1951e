"""The self-check's shortcuts: the compiled quick check answers as jsonschema does, and a status write is checked on
its status alone instead of validating its object again."""

from __future__ import annotations

import jsonschema
import pytest

from bench.render_scale import configuration
from maas.config import load_config
from maas.crdschema import default_registry
from maas.crdschema.quick_check import quick_check
from maas.crdschema.validators import CoreJsonValidator, CrdJsonValidator
from maas.observe import Observed
from maas.plan.build import build_plan
from maas.plan.checks import selfcheck


def _subscription_validator():
    return default_registry().lookup("maas.opendatahub.io", "v1alpha1", "MaaSSubscription").validator


def _subscription(**spec):
    body = {
        "owner": {"groups": [{"name": "team-a"}]},
        "modelRefs": [{"name": "m", "namespace": "llm", "tokenRateLimits": [{"limit": 10, "window": "1m"}]}],
        **spec,
    }
    return {"apiVersion": "maas.opendatahub.io/v1alpha1", "kind": "MaaSSubscription", "metadata": {}, "spec": body}


def test_quick_check_agrees_with_jsonschema_on_valid_and_invalid_objects():
    validator = _subscription_validator()
    instances = [
        _subscription(),
        _subscription(unknownField=1),
        _subscription(priority="high"),
        _subscription(owner={"groups": [{"name": 7}]}),
        {"apiVersion": "maas.opendatahub.io/v1alpha1", "kind": "MaaSSubscription", "spec": {}},
    ]
    answers = [quick_check(validator)(instance) for instance in instances]
    assert answers == [not list(validator.iter_errors(instance)) for instance in instances]
    assert answers == [True, False, False, False, False]


def test_a_keyword_the_quick_check_does_not_reproduce_is_never_known_valid():
    validator = jsonschema.Draft4Validator({"type": "array", "uniqueItems": True})
    assert list(validator.iter_errors([1, 2])) == []
    assert quick_check(validator)([1, 2]) is False


@pytest.mark.parametrize(
    ("schema", "instance"),
    [
        ({"not": {"enum": [1]}}, 1),
        ({"not": {"uniqueItems": True}}, [1, 2]),
        ({"not": {"multipleOf": 2}}, 4),
        ({"oneOf": [{"enum": [1]}, {"type": "integer"}]}, 1),
        ({"properties": {"a": {"not": {"enum": [None]}}}}, {"a": None}),
    ],
)
def test_not_sure_is_never_turned_into_valid_by_not_or_one_of(schema, instance):
    """A sub-check's False means "not sure": negating or counting it must not make an invalid object pass."""
    validator = jsonschema.Draft4Validator(schema)
    assert list(validator.iter_errors(instance))
    assert quick_check(validator)(instance) is False


def test_a_pattern_re2_cannot_compile_leaves_the_instance_to_jsonschema_without_raising():
    validator = jsonschema.Draft4Validator({"properties": {"a": {"type": "string", "pattern": "(?=x)"}}})
    assert quick_check(validator)({"a": "x"}) is False  # not sure: jsonschema decides
    assert quick_check(validator)({"b": 1}) is True and list(validator.iter_errors({"b": 1})) == []


def test_a_status_write_does_not_validate_its_object_again(monkeypatch):
    plan = build_plan(load_config(configuration(3, "short")), Observed.nothing())
    validated = []
    for name in ("validate", "validate_measured"):
        real = getattr(selfcheck, name)
        monkeypatch.setattr(selfcheck, name, lambda body, *args, real=real: validated.append(body) or real(body, *args))
    assert selfcheck.check_plan(plan) == []
    objects = [obj for owner in plan.owners for obj in owner.objects if obj.subresource is None]
    assert len(validated) == len(objects)  # each object once; each status write on its status alone


_STRING = {"type": "string", "minLength": 2, "maxLength": 4, "pattern": "^[a-z]+$", "enum": ["ab", "abc", "ABC", 1]}


@pytest.mark.parametrize("instance", ["ab", "abc", "a", "abcde", "ABC", "xy", 1, None, ["ab"]])
@pytest.mark.parametrize("schema", [_STRING, {"type": "string", "maxLength": 3}, {"type": "string", "format": "ipv4"}])
def test_a_string_node_checked_in_one_call_answers_as_jsonschema(schema, instance):
    validator = CrdJsonValidator({"properties": {"a": schema}}, format_checker=jsonschema.FormatChecker())
    assert quick_check(validator)({"a": instance}) == (not list(validator.iter_errors({"a": instance})))


_ARRAY = {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 2}
_NULLABLE_OBJECT = {"type": ["object", "null"], "properties": {"b": {"type": "string"}}, "additionalProperties": False}


@pytest.mark.parametrize("instance", [[1], [1, 2], [], [1, 2, 3], ["x"], (1,), None, {"b": "x"}, {"b": 1}, {"c": 1}])
@pytest.mark.parametrize(
    "schema",
    [
        _ARRAY,
        {"type": "array", "minItems": 2},
        _NULLABLE_OBJECT,
        {"type": ["null", "object"], "required": ["b"]},
        {"type": ["string", "null"]},
        {"type": "integer", "format": "int64"},
        {"type": "string", "format": "int-or-string"},
    ],
)
def test_a_fused_array_or_nullable_object_node_answers_as_jsonschema(schema, instance):
    """Arrays with their items and lengths, `[object, null]` objects (core schemas), type unions and formats the
    checker does not know, each compiled into fewer calls."""
    for make in (CrdJsonValidator, CoreJsonValidator):
        validator = make({"properties": {"a": schema}}, format_checker=jsonschema.FormatChecker())
        assert quick_check(validator)({"a": instance}) == (not list(validator.iter_errors({"a": instance})))
