"""Issue 18, hostile inputs: live objects (from a cluster, or a snapshot someone edited) of the wrong shape, and a
known absence that an unknown must not override. Each ends in a safe result or a clean error naming the place."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from maas.config import ConfigError, load_config
from maas.observe import KINDS, ObjectRef, ObservationError, ObservationRequest, Observed, Scope
from maas.observe.reader import read_cluster
from maas.observe.snapshot import thawed
from maas.plan.build import build_plan
from maas.plan.checks.identities import identity_issues
from maas.plan.status.model import model_status
from maas.tools.render import render
from tests.fake_kube import FakeKube, Request, all_crds, dev_cluster_objects, llm_inference_service
from tests.test_model_status import GRANITE
from tests.test_quota import raw, subscription, upgraded_from
from tests.test_scope import orphan_snapshot

# ------------------------------------------------------------------------------- a known absence stays absent


def test_hostile_backend_known_absent_is_failed_although_its_route_was_not_listed():
    """LLMInferenceServices of `llm` were listed and this one is not among them; HTTPRoutes were not listed."""
    observed = Observed.of(
        [llm_inference_service("llm", "another-model", ready=True)], listed=[Scope("LLMInferenceService", "llm")]
    )
    assert observed.lookup("HTTPRoute", "llm", GRANITE.route_name).state == "unknown"
    status = model_status(GRANITE, observed)
    assert (status["phase"], status["endpoint"]) == ("Failed", "")
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["message"]) == ("False", "LLMInferenceService llm/granite-7b-instruct not found")


def test_an_unknown_backend_with_an_unknown_route_is_still_the_intended_status():
    status = model_status(GRANITE, Observed.of([], listed=[Scope("Gateway", "openshift-ingress")]))
    assert status["phase"] == "Ready"


# ------------------------------------------------------------------------------ wrong-shape live objects


def test_hostile_live_token_rate_limit_policy_with_a_text_spec_is_no_crash_of_the_quota_report():
    before = raw(subscription("s1"))
    observed = upgraded_from(before, edit=lambda policy: {**policy, "spec": "x"})
    plan = build_plan(load_config(before), observed)
    assert not [w for w in plan.warnings if "quota reset" in w]


@pytest.mark.parametrize("spec", ["x", {"targetRef": "x"}, {"targetRef": {"kind": "HTTPRoute", "name": 5}}])
def test_hostile_opted_out_orphan_of_the_wrong_shape_is_no_crash_of_the_identity_checks(spec):
    orphan = copy.deepcopy(thawed(next(iter(orphan_snapshot("ai-tenant-x/y").objects.values()))))
    orphan["spec"] = spec
    plan = build_plan(load_config(raw(subscription("s1"))), Observed.of([orphan]))
    assert identity_issues(plan) == []


def test_hostile_opted_out_orphan_with_a_text_spec_renders_as_a_clean_error_naming_it():
    orphan = copy.deepcopy(thawed(next(iter(orphan_snapshot("ai-tenant-x/y").objects.values()))))
    orphan["spec"] = "x"
    with pytest.raises(ConfigError, match=r"TokenRateLimitPolicy llm/maas-trlp-gone: spec: 'x' is not of type"):
        render(raw(subscription("s1")), observed=Observed.of([orphan]))


# ------------------------------------------------------------------------ observe: list answers of any shape


class HostileKube(FakeKube):
    """Answers every request whose path ends with `suffix` with `body`."""

    def __init__(self, body: Any, suffix: str = "/configmaps") -> None:
        super().__init__(dev_cluster_objects() + all_crds())
        self.body, self.suffix = body, suffix

    def answer(self, request: Request) -> tuple[int, Any]:
        if request.path.endswith(self.suffix):
            self.requests.append(request)
            return 200, self.body
        return super().answer(request)


LIST_OF_CONFIGMAPS = ObservationRequest(lists=(Scope("ConfigMap", "openshift-ingress"),), gets=())
PATH = "/api/v1/namespaces/openshift-ingress/configmaps"


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({"kind": "ConfigMapList", "items": 5}, f"the answer to {PATH} is not a list of objects (items: int 5)"),
        ({"kind": "ConfigMapList", "items": ["x", 5]}, f'{PATH} items[0] is not a Kubernetes object (str "x")'),
        ({"items": [{"metadata": "x"}]}, f"{PATH} items[0] is not a Kubernetes object of its kind (ConfigMap has"),
        ({"items": [{"metadata": {"namespace": "a"}}]}, f"{PATH} items[0] is not a Kubernetes object of its kind"),
        ({"items": [], "metadata": {"continue": 7}}, f"the answer to {PATH} has a metadata.continue that is not"),
        (["x", 5], f"the answer to {PATH} is not a JSON object (list"),
    ],
)
def test_hostile_observe_list_answers_of_the_wrong_shape_are_a_clean_error_naming_the_answer(body, problem):
    with HostileKube(body) as kube, pytest.raises(ObservationError) as caught:
        read_cluster(LIST_OF_CONFIGMAPS, kubeconfig=kube.kubeconfig(), context="maas-dev")
    assert f"cannot observe the cluster {kube.url} (context maas-dev): {problem}" in str(caught.value)


def test_hostile_crd_whose_versions_are_text_is_not_installed_rather_than_a_crash():
    name = KINDS["LLMInferenceService"].crd_name
    body = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": name}}
    request = ObservationRequest(lists=(), gets=(ObjectRef("CustomResourceDefinition", None, name),))
    with HostileKube({**body, "spec": {"versions": "v1alpha2"}}, suffix=f"/{name}") as kube:
        observed = read_cluster(request, kubeconfig=kube.kubeconfig(), context="maas-dev")
    assert observed.installed("LLMInferenceService") is False
