"""maas.selfcheck: what the API server would refuse is refused before anything is registered, naming its entry."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from maas.config import ConfigError, ConfigIssue, load_config, raw_from_stack_file
from maas.crdschema import CRDS_DIR_ENV, CrdRegistry, crds_dir
from maas.observe import Observed
from maas.plan.build import build_plan
from maas.plan.checks.selfcheck import MAX_OBJECT_BYTES, check_plan, encoded_size, owner_path
from maas.plan.desired import Desired, Owner, Plan, k8s_object
from maas.tools.render import RecordingMonitor, render
from tests.conftest import DEV_STACK

STACKS = [DEV_STACK, *sorted((Path(__file__).parent / "stacks").glob("Pulumi.*.yaml"))]
GRANITE = ("Model", "llm/granite-7b")
QUALIFIED_RULE = (
    "an optional DNS-1123 subdomain prefix (at most 253 characters) and '/', then 1-63 alphanumerics, '-', '_' or "
    "'.', starting and ending alphanumeric (e.g. 'example.com/my-name')"
)


def plan_of(raw: dict[str, Any]) -> Plan:
    return build_plan(load_config(raw), Observed.nothing())


def edited(plan: Plan, owner: tuple[str, str], kind: str, subresource: str | None, edit) -> Plan:
    """`plan` with one object's body changed by `edit` (a function of a deep copy of the body)."""
    objects = plan.owners_by_key[owner].objects
    index = next(i for i, o in enumerate(objects) if o.kind == kind and o.subresource == subresource)
    body = copy.deepcopy(objects[index].body)
    edit(body)
    objects[index] = replace(objects[index], body=body)
    return plan


def single_owner_plan(owner: tuple[str, str], *objects: Desired) -> Plan:
    plan = Plan()
    plan.add(*owner, *objects)
    return plan


# ------------------------------------------------------------------------------------------- through the program


def test_an_object_the_api_server_refuses_is_an_issue_of_its_entry_and_nothing_is_registered(dev_raw):
    dev_raw["models"][0]["annotations"]["display name"] = "Granite"  # the config accepts any printable key
    monitor = RecordingMonitor()
    with pytest.raises(ConfigError) as caught:
        render(dev_raw, monitor=monitor)
    assert caught.value.issues == [
        ConfigIssue(
            "maas:models (llm/granite-7b)",
            'MaaSModelRef llm/granite-7b: metadata.annotations["display name"]: key is not a qualified name '
            f"(invalid characters in the name): {QUALIFIED_RULE}",
        )
    ]
    assert monitor.registrations == []
    assert "nothing was registered" in str(caught.value)


@pytest.mark.parametrize("stack", STACKS, ids=[s.name for s in STACKS])
def test_every_object_of_every_test_stack_passes(stack):
    raw, _ = raw_from_stack_file(stack)
    plan = plan_of(raw)
    assert plan.objects()
    assert check_plan(plan) == []


def test_the_dev_stack_check_covers_its_status_writes_and_xks_its_unchecked_certificates():
    dev = plan_of(raw_from_stack_file(DEV_STACK)[0])
    assert {o.kind for o in dev.objects() if o.subresource == "status"} == {
        "MaaSModelRef",
        "MaaSSubscription",
        "MaaSAuthPolicy",
        "MaasTenantConfig",
    }
    xks = plan_of(raw_from_stack_file(STACKS[-1])[0])
    assert any(o.kind == "Certificate" for o in xks.objects())  # no CRD in crds/: accepted unchecked


# ------------------------------------------------------------------------------------------- CRD schemas and rules


def test_a_crd_rule_violation_names_the_model_entry(dev_config):
    def bad_group(body: dict) -> None:
        body["spec"]["targetRef"]["group"] = "networking.istio.io"

    plan = edited(build_plan(dev_config, Observed.nothing()), GRANITE, "TokenRateLimitPolicy", None, bad_group)
    assert check_plan(plan) == [
        ConfigIssue(
            "maas:models (llm/granite-7b)",
            "TokenRateLimitPolicy llm/maas-trlp-granite-7b: spec.targetRef: Invalid targetRef.group. The only "
            "supported value is 'gateway.networking.k8s.io' (rule: self.group == 'gateway.networking.k8s.io')",
        )
    ]


def test_a_kind_without_any_schema_is_an_issue_unless_allow_listed():
    widget = Desired(k8s_object("example.com/v1", "Widget", "w", "llm", spec={}))
    [issue] = check_plan(single_owner_plan(("Platform", "platform"), widget))
    assert issue == ConfigIssue(
        "maas:platform",
        f"Widget llm/w: <root>: no schema for example.com/v1/Widget (neither a CRD in {crds_dir()} nor a core kind)",
    )


def test_a_trailing_newline_in_a_name_is_refused():
    config_map = Desired(k8s_object("v1", "ConfigMap", "maas-config\n", "opendatahub", data={}))
    assert check_plan(single_owner_plan(("Tenant", "blue"), config_map)) == [
        ConfigIssue(
            "maas:tenants (blue)",
            "ConfigMap opendatahub/\"maas-config\\n\": metadata.name: 'maas-config\\n' must be a DNS-1123 subdomain "
            "(lower-case alphanumerics, '-' or '.', starting and ending alphanumeric); at most 253 characters",
        )
    ]


def test_annotations_over_256_kib_are_refused_with_the_api_server_rule(dev_raw):
    dev_raw["models"][0]["annotations"]["openshift.io/description"] = "x" * (256 * 1024)
    assert check_plan(plan_of(dev_raw)) == [
        ConfigIssue(
            "maas:models (llm/granite-7b)",
            "MaaSModelRef llm/granite-7b: metadata.annotations: annotations total 262361 bytes (keys plus values); "
            "the API server allows at most 262144 bytes (256 KiB)",
        )
    ]


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        ("a/b/c", "more than one '/'"),
        ("/display-name", "empty prefix"),
        ("open shift.io/x", "the prefix is not a DNS-1123 subdomain"),
    ],
)
def test_an_invalid_annotation_key_is_refused_with_the_qualified_name_rule(dev_raw, key, reason):
    dev_raw["subscriptions"][0]["annotations"] = {key: "v"}
    subscription = dev_raw["subscriptions"][0]
    [issue] = check_plan(plan_of(dev_raw))
    assert issue.path == f"maas:subscriptions (models-as-a-service/{subscription['name']})"
    assert issue.message.endswith(f"{json.dumps(key)}]: key is not a qualified name ({reason}): {QUALIFIED_RULE}")


# ------------------------------------------------------------------------------------------- size


def padded_policy(dev_config, size: int) -> Plan:
    """The dev plan with granite's TokenRateLimitPolicy grown to exactly `size` bytes by one long predicate."""

    def pad(body: dict) -> None:
        limit = body["spec"]["limits"]["tokens-unlimited"]
        limit["when"].append({"predicate": ""})
        limit["when"][-1]["predicate"] = "x" * (size - encoded_size(body))

    return edited(build_plan(dev_config, Observed.nothing()), GRANITE, "TokenRateLimitPolicy", None, pad)


def test_an_object_over_1_5_mib_is_refused_naming_the_limit(dev_config):
    assert check_plan(padded_policy(dev_config, MAX_OBJECT_BYTES)) == []
    assert check_plan(padded_policy(dev_config, MAX_OBJECT_BYTES + 1)) == [
        ConfigIssue(
            "maas:models (llm/granite-7b)",
            "TokenRateLimitPolicy llm/maas-trlp-granite-7b is 1572865 bytes; the API server stores at most 1.5 MiB "
            "(1572864 bytes); split it: give the model fewer subscriptions (one per group, not per user) or rate sets",
        )
    ]


# ------------------------------------------------------------------------------------------- status writes


def test_a_status_write_that_violates_the_status_schema_is_refused(dev_config):
    def bad_phase(body: dict) -> None:
        body["status"]["phase"] = "Bogus"
        body["status"]["observedAt"] = "now"

    plan = edited(build_plan(dev_config, Observed.nothing()), GRANITE, "MaaSModelRef", "status", bad_phase)
    issues = check_plan(plan)
    assert [issue.path for issue in issues] == ["maas:models (llm/granite-7b)"] * 2
    assert [issue.message.split(": ")[1] for issue in issues] == ["status.observedAt", "status.phase"]
    assert issues[0].message.endswith("unknown field (the API server would silently prune it)")
    assert issues[1].message.startswith("MaaSModelRef llm/granite-7b: status.phase: 'Bogus' is not one of")


def test_a_status_write_is_checked_without_its_object_and_reports_no_missing_spec():
    status = {"phase": "Bogus", "conditions": [{"type": "Ready", "status": "False", "reason": "R", "message": "m"}]}
    write = Desired(
        k8s_object("maas.opendatahub.io/v1alpha1", "MaaSModelRef", "m", "llm", status=status), subresource="status"
    )
    [issue] = check_plan(single_owner_plan(("Model", "llm/m"), write))
    assert issue.message.startswith("MaaSModelRef llm/m: status.phase: 'Bogus' is not one of")


def test_an_object_problem_is_not_reported_again_with_its_status(dev_config):
    def no_model_ref(body: dict) -> None:
        del body["spec"]["modelRef"]

    plan = edited(build_plan(dev_config, Observed.nothing()), GRANITE, "MaaSModelRef", None, no_model_ref)
    assert [issue.message for issue in check_plan(plan)] == [
        "MaaSModelRef llm/granite-7b: spec: 'modelRef' is a required property"
    ]


def test_only_the_status_fields_the_vendored_crd_predates_are_tolerated(dev_config):
    key = ("Subscription", "models-as-a-service/premium")
    plan = build_plan(dev_config, Observed.nothing())
    [write] = [o for o in plan.owners_by_key[key].objects if o.subresource == "status"]
    assert write.body["status"]["rateLimitIdentity"] == "short"  # a 3.6 field the mirror CRD lacks: tolerated
    plan = edited(plan, key, "MaaSSubscription", "status", lambda body: body["status"].update(rateLimitId="x"))
    assert [issue.message for issue in check_plan(plan)] == [
        "MaaSSubscription models-as-a-service/premium: status.rateLimitId: unknown field (the API server would "
        "silently prune it)"
    ]


# ------------------------------------------------------------------------------------------- paths, folder, cache


@pytest.mark.parametrize(
    ("kind", "name", "path"),
    [
        ("Platform", "platform", "maas:platform"),
        ("Tenant", "blue", "maas:tenants (blue)"),
        ("Model", "llm/granite", "maas:models (llm/granite)"),
        ("Subscription", "models-as-a-service/gold", "maas:subscriptions (models-as-a-service/gold)"),
        ("AuthPolicy", "models-as-a-service/team", "maas:authPolicies (models-as-a-service/team)"),
        ("Gadget", "g", "maas (Gadget g)"),
    ],
)
def test_owner_paths_name_configuration_entries(kind, name, path):
    assert owner_path(Owner(kind, name)) == path


def test_a_missing_crd_folder_is_one_issue_with_the_fix(monkeypatch, tmp_path):
    monkeypatch.setenv(CRDS_DIR_ENV, str(tmp_path / "absent"))
    [issue] = check_plan(Plan())
    assert issue.path == "$MAAS_CRDS_DIR"
    assert issue.message.startswith(f"CRD folder {tmp_path / 'absent'} not found; point $MAAS_CRDS_DIR at a folder")


def test_identical_bodies_are_validated_once():
    registry = CrdRegistry(crds_dir())
    body = k8s_object("v1", "ConfigMap", "shared", "llm", data={"a": "b"})
    plan = Plan()
    for index in range(50):
        plan.add("Subscription", f"ns/s{index}", Desired(body))
    assert check_plan(plan, registry) == []
    assert len(registry.problem_cache) == 1
