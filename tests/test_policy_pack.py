"""The policy pack in policy/: each guardrail fails on a crafted bad resource and passes on every test stack.

Resources come from rendering the stacks with `maas.tools.render`: each registration's type, inputs and options go
to the policy exactly as the Pulumi engine passes them (inputs wrapped in pulumi_policy's unknown-checking proxies).
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml
from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc
from pulumi_policy import (
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
)
from pulumi_policy.proxy import unknown_checking_proxy

from maas.config import raw_from_stack_file
from maas.tools.render import Registration, Rendering, render
from policy.guardrails import POLICIES
from tests.conftest import DEV_STACK, ROOT

POLICY_DIR = ROOT / "policy"
TEST_STACKS = [DEV_STACK, *sorted((ROOT / "tests" / "stacks").glob("Pulumi.*.yaml"))]
XKS_STACK = ROOT / "tests" / "stacks" / "Pulumi.xks-coexist.yaml"
BY_NAME = {policy.name: policy for policy in POLICIES}
EXEMPTION = '!request.url_path.endsWith("/v1/models")'


@functools.cache
def rendered(path: Path) -> Rendering:
    return render(raw_from_stack_file(path)[0])


@functools.cache
def rendered_with_discovery_exemption(path: Path) -> Rendering:
    """A test stack with `platform.exemptModelDiscovery` at its default (true), as the guardrail requires."""
    raw, _ = raw_from_stack_file(path)
    platform = raw.get("platform", {})
    if "exemptModelDiscovery" not in platform:
        return rendered(path)
    return render({**raw, "platform": {k: v for k, v in platform.items() if k != "exemptModelDiscovery"}})


def options(registration: Registration) -> PolicyResourceOptions:
    return PolicyResourceOptions(
        False, list(registration.ignore_changes), None, [], PolicyCustomTimeouts(0, 0, 0), [], registration.parent
    )


def resource_args(registration: Registration) -> ResourceValidationArgs:
    props = unknown_checking_proxy(copy.deepcopy(registration.inputs))
    return ResourceValidationArgs(
        registration.type, props, registration.urn, registration.name, options(registration), None
    )


def stack_args(registrations: list[Registration]) -> StackValidationArgs:
    resources = [
        PolicyResource(
            r.type, unknown_checking_proxy(copy.deepcopy(r.inputs)), r.urn, r.name, options(r), None, None, [], {}
        )
        for r in registrations
    ]
    return StackValidationArgs(resources)


def violations(name: str, registrations: list[Registration]) -> list[tuple[str, str | None]]:
    """(message, urn) of every violation one policy reports on these resources."""
    found: list[tuple[str, str | None]] = []
    policy = BY_NAME[name]
    if isinstance(policy, ResourceValidationPolicy):
        for registration in registrations:
            policy.validate(
                resource_args(registration), lambda message, urn=None, r=registration: found.append((message, r.urn))
            )
    else:
        policy.validate(stack_args(registrations), lambda message, urn=None: found.append((message, urn)))
    return found


def messages(name: str, registrations: list[Registration]) -> list[str]:
    return [message for message, _ in violations(name, registrations)]


def dev() -> list[Registration]:
    return rendered(DEV_STACK).registrations


def find(registrations: list[Registration], kind: str, logical_name: str) -> Registration:
    return next(
        r for r in registrations if r.is_kubernetes_object and r.inputs["kind"] == kind and r.name == logical_name
    )


def changed(registration: Registration, edit, **options: Any) -> Registration:
    """A copy of a registration whose inputs `edit` changed in place (and with other `options`)."""
    inputs = copy.deepcopy(registration.inputs)
    edit(inputs)
    return dataclasses.replace(registration, inputs=inputs, **options)


def replaced(registrations: list[Registration], new: Registration) -> list[Registration]:
    return [new if r.urn == new.urn else r for r in registrations]


# ----------------------------------------------------------------------------------------------- every test stack


@pytest.mark.parametrize("stack", TEST_STACKS, ids=lambda path: path.name)
def test_every_policy_passes_on_every_test_stack(stack):
    """With the discovery exemption at its default; the stack that turns it off is the next test."""
    registrations = rendered_with_discovery_exemption(stack).registrations
    assert {name: messages(name, registrations) for name in BY_NAME} == {name: [] for name in BY_NAME}


def test_a_stack_that_turns_the_discovery_exemption_off_fails_that_policy_only():
    registrations = rendered(XKS_STACK).registrations
    limits = [
        "blue-routes/maas-trlp-phi-3: spec.limits.tokens-100-per-1m-100-per-60s",
        "blue-routes/maas-trlp-phi-3: spec.limits.tokens-100-per-1m-100-per-60s-id",
        "green-models/maas-trlp-claude: spec.limits.tokens-unlimited",
    ]
    assert sorted(messages("maas-token-limits-exempt-model-discovery", registrations)) == [
        f"TokenRateLimitPolicy {limit} {NOT_EXEMPT}" for limit in limits
    ]
    assert [name for name in sorted(BY_NAME) if messages(name, registrations)] == [
        "maas-token-limits-exempt-model-discovery"
    ]


# ----------------------------------------------------------------------------------------- each policy's failure


def test_a_policy_targeting_another_namespace_is_refused():
    trlp = find(dev(), "TokenRateLimitPolicy", "llm/maas-trlp-granite-7b")
    elsewhere = changed(trlp, lambda body: body["spec"]["targetRef"].update(namespace="redteam-models"))
    same = changed(trlp, lambda body: body["spec"]["targetRef"].update(namespace="llm"))
    assert messages("maas-targets-in-own-namespace", [elsewhere, same]) == [
        "TokenRateLimitPolicy llm/maas-trlp-granite-7b: spec.targetRef targets HTTPRoute "
        "redteam-models/granite-7b-instruct-kserve-route in another namespace; a policy may target only its own "
        "namespace (llm): drop spec.targetRef.namespace and put the policy beside its target"
    ]


def test_tenant_labels_that_name_another_tenant_are_refused():
    subscription = find(dev(), "MaaSSubscription", "models-as-a-service/basic")
    claims_redteam = changed(
        subscription,
        lambda body: body["metadata"]["labels"].update(
            {"maas.opendatahub.io/tenant-name": "redteam", "maas.opendatahub.io/tenant-namespace": "ai-tenant-redteam"}
        ),
    )
    mismatched = changed(
        find(dev(), "Deployment", "odh-ai-gateway-infra/maas-api"),
        lambda body: body["metadata"]["labels"].update({"maas.opendatahub.io/tenant-namespace": "ai-tenant-redteam"}),
    )
    assert messages("maas-tenant-labels-agree", [claims_redteam, mismatched]) == [
        "MaaSSubscription models-as-a-service/basic: label maas.opendatahub.io/tenant-namespace=ai-tenant-redteam "
        "does not agree with its namespace models-as-a-service: it lives in one tenant's namespace and claims another",
        "Deployment odh-ai-gateway-infra/maas-api: label maas.opendatahub.io/tenant-namespace=ai-tenant-redteam is "
        "not the namespace of tenant models-as-a-service (models-as-a-service); one of the two tenant labels names "
        "another tenant",
    ]


def test_a_subscription_reaching_another_tenants_model_is_refused():
    subscription = find(dev(), "MaaSSubscription", "models-as-a-service/basic")
    reaching = changed(
        subscription,
        lambda body: body["spec"]["modelRefs"].append(
            {"name": "claude-sonnet", "namespace": "redteam-models", "tokenRateLimits": [{"limit": 1, "window": "1m"}]}
        ),
    )
    assert violations("maas-no-cross-tenant-references", replaced(dev(), reaching)) == [
        (
            "MaaSSubscription models-as-a-service/basic: spec.modelRefs[1] is model redteam-models/claude-sonnet of "
            "the tenant in ai-tenant-redteam; a MaaSSubscription of the tenant in models-as-a-service may reach only "
            "its own tenant's models",
            subscription.urn,
        )
    ]


def test_a_model_policy_aggregating_another_tenants_entry_is_refused():
    trlp = find(dev(), "TokenRateLimitPolicy", "redteam-models/maas-trlp-claude-sonnet")
    annotation = "maas.opendatahub.io/subscriptions"
    foreign = changed(
        trlp,
        lambda body: body["metadata"]["annotations"].update(
            {annotation: "ai-tenant-redteam/redteam-eval,models-as-a-service/premium"}
        ),
    )
    assert violations("maas-no-cross-tenant-references", replaced(dev(), foreign)) == [
        (
            f"TokenRateLimitPolicy redteam-models/maas-trlp-claude-sonnet: {annotation} lists "
            "models-as-a-service/premium, which is not of model redteam-models/claude-sonnet's tenant "
            "(ai-tenant-redteam): another tenant's entry reaches this model",
            trlp.urn,
        )
    ]


def with_predicate(predicate: str) -> Registration:
    trlp = find(dev(), "TokenRateLimitPolicy", "external-models/maas-trlp-gpt-4o")
    return changed(
        trlp, lambda body: body["spec"]["limits"]["tokens-20000-per-24h"].update(when=[{"predicate": predicate}])
    )


CLAUSE = 'auth.identity.selected_subscription_id == "488831b7441565a5"'
WHERE = "TokenRateLimitPolicy external-models/maas-trlp-gpt-4o: spec.limits.tokens-20000-per-24h"
NOT_EXEMPT = f"applies to model discovery: no `when` predicate ends in `&& {EXEMPTION}` (set platform.exemptModelDiscovery: true)"


@pytest.mark.parametrize(
    ("predicate", "problem"),
    [
        (f"{CLAUSE} && {EXEMPTION}", None),
        (f'({CLAUSE} || auth.identity.selected_subscription_id == "x") && {EXEMPTION}', None),
        (CLAUSE, NOT_EXEMPT),
        (f"{CLAUSE} || {EXEMPTION}", NOT_EXEMPT),  # a caller matching the clause is limited on /v1/models too
        (f"{EXEMPTION} ? {CLAUSE} : false", NOT_EXEMPT),
        (
            f'{CLAUSE} && !request.path.endsWith("/v1/models")',
            "exempts model discovery on request.path, which includes the query string, so `...?x=/v1/models` "
            f"escapes the limit; write `&& {EXEMPTION}`",
        ),
        (f"{CLAUSE} &&", "has a predicate that is not CEL ("),
    ],
)
def test_every_model_token_limit_must_exempt_model_discovery(predicate, problem):
    found = messages("maas-token-limits-exempt-model-discovery", [with_predicate(predicate)])
    if problem is None:
        assert found == []
    else:
        assert len(found) == 1 and found[0].startswith(f"{WHERE} {problem}")


def test_the_gateway_default_deny_policy_is_not_a_model_limit():
    """Its predicate reads `request.url_path` (whole-segment exemptions) but is no model's token limit."""
    deny = find(dev(), "TokenRateLimitPolicy", "openshift-ingress/gateway-default-deny")
    assert messages("maas-token-limits-exempt-model-discovery", [deny]) == []


def test_an_unmanaged_object_without_an_owner_is_refused():
    trlp = find(dev(), "TokenRateLimitPolicy", "llm/maas-trlp-granite-7b")
    no_owner = changed(trlp, lambda body: body["metadata"]["labels"].pop("app.kubernetes.io/managed-by"))
    opted_out = changed(
        no_owner, lambda body: body["metadata"]["annotations"].update({"opendatahub.io/managed": "false"})
    )
    listed = changed(no_owner, lambda body: None, ignore_changes=tuple(sorted(no_owner.inputs)))
    handed_over = changed(
        opted_out,
        lambda body: body["metadata"]["annotations"].update({"maas.opendatahub.io/handed-over-by-pulumi": "true"}),
    )
    owners = "label app.kubernetes.io/managed-by, annotation maas.opendatahub.io/handed-over-by-pulumi"
    assert messages("maas-unmanaged-has-owner", [no_owner, opted_out, listed, handed_over]) == [
        'TokenRateLimitPolicy llm/maas-trlp-granite-7b is unmanaged (annotation opendatahub.io/managed: "false") and '
        f"names no owner; set one of: {owners}",
        "TokenRateLimitPolicy llm/maas-trlp-granite-7b is unmanaged (maas:unmanaged: Pulumi ignores changes to every "
        f"field) and names no owner; set one of: {owners}",
    ]


# -------------------------------------------------------------------------------------------- the pack as Pulumi


def test_pulumi_policy_yaml_runs_the_pack_in_the_project_virtualenv():
    settings = yaml.safe_load((POLICY_DIR / "PulumiPolicy.yaml").read_text())
    assert settings["runtime"] == {"name": "python", "options": {"toolchain": "pip", "virtualenv": "../.venv"}}
    assert (POLICY_DIR / settings["runtime"]["options"]["virtualenv"]).resolve() == (ROOT / ".venv").resolve()


def struct(value: dict[str, Any]) -> struct_pb2.Struct:
    message = struct_pb2.Struct()
    json_format.ParseDict(value, message)
    return message


def test_the_pack_answers_the_engine_over_grpc():
    """The pack as the Python language host starts it (`python -m pulumi.policy ENGINE DIR` runs DIR/__main__.py):
    a gRPC analyzer on 127.0.0.1 whose port it prints, answering as the engine asks during a preview."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    pack = subprocess.Popen(
        [sys.executable, "-u", "-m", "pulumi.policy", "127.0.0.1:1", str(POLICY_DIR)],
        cwd=POLICY_DIR,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        port = pack.stdout.readline().strip()
        assert port.isdigit(), pack.stderr.read()
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            analyzer = analyzer_pb2_grpc.AnalyzerStub(channel)
            info = analyzer.GetAnalyzerInfo(empty_pb2.Empty(), timeout=10)
            bad = with_predicate(CLAUSE)
            request = analyzer_pb2.AnalyzeRequest(
                type=bad.type, properties=struct(bad.inputs), urn=bad.urn, name=bad.name
            )
            response = analyzer.Analyze(request, timeout=10)
    finally:
        pack.kill()
        pack.wait()
    assert info.name == "maas-guardrails"
    assert [policy.name for policy in info.policies] == [policy.name for policy in POLICIES]
    assert [(d.policyName, d.message.splitlines()[-1]) for d in response.diagnostics] == [
        ("maas-token-limits-exempt-model-discovery", f"{WHERE} {NOT_EXEMPT}")
    ]


# ----------------------------------------------------------------------------------------- subscription batches


def batched_dev() -> list[Registration]:
    raw, _ = raw_from_stack_file(DEV_STACK)
    return render({**raw, "platform": {**raw["platform"], "subscriptionBatches": True}}).registrations


def test_batched_subscriptions_pass_every_policy_and_hide_nothing_from_them():
    """`platform.subscriptionBatches`: a batch's objects are checked as the objects they are."""
    registrations = batched_dev()
    assert {name: messages(name, registrations) for name in BY_NAME} == {name: [] for name in BY_NAME}
    batch = next(r for r in registrations if r.name == "subscriptions/models-as-a-service")

    def reach_and_relabel(inputs: dict) -> None:
        objects = json.loads(inputs["objects"])
        body = objects["MaaSSubscription/models-as-a-service/basic"]["body"]
        body["spec"]["modelRefs"].append({"name": "claude-sonnet", "namespace": "redteam-models", "unlimited": True})
        body["metadata"]["labels"]["maas.opendatahub.io/tenant-namespace"] = "ai-tenant-redteam"
        inputs["objects"] = json.dumps(objects)

    edited = replaced(registrations, changed(batch, reach_and_relabel))
    assert [urn for _, urn in violations("maas-no-cross-tenant-references", edited)] == [batch.urn]
    assert messages("maas-no-cross-tenant-references", edited)[0].startswith(
        "MaaSSubscription models-as-a-service/basic: spec.modelRefs[1] is model redteam-models/claude-sonnet"
    )
    assert (
        "MaaSSubscription models-as-a-service/basic: label maas.opendatahub.io/tenant-namespace=ai-tenant-redteam "
        "does not agree with its namespace models-as-a-service: it lives in one tenant's namespace and claims another"
    ) in messages("maas-tenant-labels-agree", edited)
