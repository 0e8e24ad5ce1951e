"""Property tests: nothing leaks between tenants, for any configuration hypothesis can build."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maas import naming
from maas.config import ConfigError, load_config
from maas.observe import Observed
from maas.plan.build import build_plan

TENANTS = ["models-as-a-service", "blue", "green"]
MAAS_API_HOST = re.compile(r"(maas-api(?:-[a-z0-9-]+)?)\.odh-ai-gateway-infra\.svc")


@st.composite
def multi_tenant_configurations(draw):
    models = [
        {"name": f"m{i}", "namespace": f"ns{i % 2}", "tenant": draw(st.sampled_from(TENANTS)),
         "modelRef": {"kind": "LLMInferenceService", "name": f"m{i}"}}
        for i in range(draw(st.integers(1, 5)))
    ]  # fmt: skip
    entries = {"subscriptions": [], "authPolicies": []}
    for key, entry_list in entries.items():
        for index in range(draw(st.integers(0, 6))):
            tenant = draw(st.sampled_from(TENANTS))
            own = [m for m in models if m["tenant"] == tenant]
            if not own:
                continue
            refs = draw(st.lists(st.sampled_from(own), min_size=1, max_size=len(own), unique_by=lambda m: m["name"]))
            entry = {"name": f"{key.lower()}-{index}", "namespace": naming.tenant_namespace(tenant)}
            if key == "subscriptions":
                entry["owner"] = {"users": ["u"]}
                entry["modelRefs"] = [{"name": m["name"], "namespace": m["namespace"], "unlimited": True} for m in refs]
            else:
                entry["subjects"] = {"groups": [{"name": f"g-{tenant}"}]}
                entry["modelRefs"] = [{"name": m["name"], "namespace": m["namespace"]} for m in refs]
            entry_list.append(entry)
    return {"tenants": [{"name": t} for t in TENANTS], "models": models, **entries}


def tenant_of_namespace(namespace: str) -> str:
    return namespace.removeprefix(naming.TENANT_NAMESPACE_PREFIX)


@settings(max_examples=40, deadline=None)
@given(multi_tenant_configurations())
def test_policies_of_a_model_only_name_its_own_tenants_subscriptions_and_policies(raw):
    config = load_config(raw)
    tenant_of_model = {m.key: m.tenant for m in config.models}
    for owner in build_plan(config, Observed.nothing()).owners:
        if owner.kind != "Model":
            continue
        for obj in owner.objects:
            annotations = obj.body["metadata"].get("annotations", {})
            for key in (naming.SUBSCRIPTIONS_ANNOTATION, naming.AUTH_POLICIES_ANNOTATION):
                for source in filter(None, annotations.get(key, "").split(",")):
                    assert tenant_of_namespace(source.split("/")[0]) == tenant_of_model[owner.name]


@settings(max_examples=20, deadline=None)
@given(multi_tenant_configurations())
def test_tenant_objects_call_only_their_own_maas_api_and_carry_their_own_labels(raw):
    for owner in build_plan(load_config(raw), Observed.nothing()).owners:
        if owner.kind != "Tenant":
            continue
        expected_api = naming.maas_api_name(owner.name)
        for obj in owner.objects:
            text = json.dumps(obj.body)
            assert set(MAAS_API_HOST.findall(text)) <= {expected_api}, (obj.kind, obj.name)
            labels = obj.body["metadata"].get("labels", {})
            assert labels.get(naming.TENANT_NAME_LABEL, owner.name) == owner.name, (obj.kind, obj.name)


@settings(max_examples=30, deadline=None)
@given(multi_tenant_configurations(), st.sampled_from(["subscriptions", "authPolicies"]), st.data())
def test_any_reference_across_tenants_is_a_configuration_error(raw, key, data):
    entries = raw[key]
    if not entries:
        return
    entry = data.draw(st.sampled_from(entries))
    foreign = [m for m in raw["models"] if naming.tenant_namespace(m["tenant"]) != entry["namespace"]]
    if not foreign:
        return
    model = data.draw(st.sampled_from(foreign))
    ref = {"name": model["name"], "namespace": model["namespace"]}
    entry["modelRefs"] = [r for r in entry["modelRefs"] if r["name"] != model["name"]]
    entry["modelRefs"].append({**ref, "unlimited": True} if key == "subscriptions" else ref)
    with pytest.raises(ConfigError, match="tenant isolation"):
        load_config(raw)
