"""Models: routes, endpoints, modelDetails and the ExternalModel children (upstream-policies.md 3.1-3.7, vector 30)."""

from __future__ import annotations

import hashlib

import pytest

from maas import crdschema, naming
from maas.config import ConfigError, load_config
from maas.observe import Observed
from maas.plan.models.resources import model_facts
from maas.plan.models.routing import external_model_objects, model_details, route_of
from maas.plan.status.model import model_status

GOVERNED = {"subscription", "authPolicy"}


def intended(config, governed_by=GOVERNED):
    """The status of the only model with nothing observed: what configuration alone says."""
    return model_status(model_facts(config, only_model(config), set(governed_by)), Observed.nothing())


def external(name="gpt-4o", namespace="llm", target="gpt-4o", **extra) -> dict:
    model = {
        "name": name,
        "namespace": namespace,
        "modelRef": {"kind": "ExternalModel", "name": name},
        "external": {
            "provider": "openai",
            "targetModel": target,
            "endpoint": "api.openai.com",
            "credentialRef": {"name": "openai-api-key"},
            **extra.pop("external", {}),
        },
    }
    return {**model, **extra}


def llmisvc(name="granite-7b", backend="granite-7b-instruct", **extra) -> dict:
    return {"name": name, "namespace": "llm", "modelRef": {"kind": "LLMInferenceService", "name": backend}, **extra}


def config_with(*models, platform=None, tenants=None):
    raw = {"models": list(models), "platform": platform or {}}
    if tenants is not None:
        raw["tenants"] = tenants
    return load_config(raw)


def only_model(config):
    return config.models[0]


def by_kind(objects) -> dict[str, dict]:
    return {o["kind"]: o for o in objects}


# ------------------------------------------------------------------------------------------------ routes


def test_llminferenceservice_route_defaults_to_kserve_route_in_model_namespace():
    config = config_with(llmisvc())
    route = route_of(config, only_model(config))
    assert (route.name, route.namespace) == ("granite-7b-instruct-kserve-route", "llm")
    assert (route.gateway_name, route.gateway_namespace) == ("maas-default-gateway", "openshift-ingress")


def test_llminferenceservice_route_override_wins():
    config = config_with(llmisvc(route={"name": "custom", "namespace": "serving", "hostnames": ["a.example.com"]}))
    route = route_of(config, only_model(config))
    assert (route.key, route.hostnames) == ("serving/custom", ("a.example.com",))


def test_external_model_route_is_maas_prefixed_backend_name():
    config = config_with({**external(name="gpt"), "modelRef": {"kind": "ExternalModel", "name": "openai-gpt4"}})
    assert route_of(config, only_model(config)).key == "llm/maas-openai-gpt4"


def test_external_model_route_on_the_tenant_gateway():
    config = config_with(external(tenant="redteam"), tenants=[{"name": "models-as-a-service"}, {"name": "redteam"}])
    route = route_of(config, only_model(config))
    assert (route.gateway_name, route.gateway_namespace) == ("redteam", "openshift-ingress")


def test_external_model_route_name_override_is_a_config_error():
    with pytest.raises(ConfigError, match=r"route\.name and route\.namespace are only for LLMInferenceService"):
        config_with(external(route={"name": "mine"}))


def test_external_model_name_must_fit_the_externalname_service():
    long = "a" * 59
    with pytest.raises(ConfigError, match=f"would name the ExternalName Service 'maas-{long}'"):
        config_with(external(name="gpt", **{"modelRef": {"kind": "ExternalModel", "name": long}}))


def test_child_names_over_253_characters_are_shortened_as_upstream():
    name = "a" * 253
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    assert naming.external_model_route_name(name) == "maas-" + "a" * 239 + "-" + digest
    assert len(naming.external_model_route_name(name)) == 253
    assert naming.external_model_route_name("e2e-external-model") == "maas-e2e-external-model"
    assert naming.external_model_route_name("a" * 248) == "maas-" + "a" * 248  # exactly 253: unchanged


def test_shortened_name_trims_trailing_separators_before_the_hash():
    name = "a" * 238 + "-." + "b" * 20
    assert naming.external_model_route_name(name).startswith("maas-" + "a" * 238 + "-")
    assert "-.-" not in naming.external_model_route_name(name)


# --------------------------------------------------------------------------------------------- endpoints


@pytest.mark.parametrize(
    ("model", "platform", "expected"),
    [
        (llmisvc(route={"hostnames": ["models.example.com"]}), {}, "https://models.example.com/granite-7b"),
        (llmisvc(), {"gateway": {"hostname": "maas.example.com"}}, "https://maas.example.com/granite-7b"),
        (llmisvc(), {}, None),
        (external(route={"hostnames": ["maas.example.com"]}), {}, "https://maas.example.com"),
        (external(), {"gateway": {"hostname": "maas.cluster.example.com"}}, "https://maas.cluster.example.com"),
        (external(), {}, None),
        (llmisvc(route={"hostnames": ["*.example.com", "m.example.com"]}), {}, "https://m.example.com/granite-7b"),
        (
            llmisvc(route={"hostnames": ["*.example.com"]}),
            {"gateway": {"hostname": "gw.example.com"}},
            "https://gw.example.com/granite-7b",
        ),
    ],
)
def test_discovered_endpoint_from_route_hostnames_else_gateway_hostname(model, platform, expected):
    config = config_with(model, platform=platform)
    assert intended(config)["endpoint"] == (expected or "")


def test_route_hostname_wins_over_gateway_hostname():
    config = config_with(
        external(route={"hostnames": ["a.example.com", "b.example.com"]}),
        platform={"gateway": {"hostname": "gw.example.com"}},
    )
    assert intended(config)["endpoint"] == "https://a.example.com"


def test_tenant_gateway_hostname_serves_its_models():
    tenants = [{"name": "models-as-a-service"}, {"name": "redteam", "gateway": {"hostname": "red.example.com"}}]
    config = config_with(
        llmisvc(tenant="redteam"), platform={"gateway": {"hostname": "gw.example.com"}}, tenants=tenants
    )
    assert intended(config)["endpoint"] == "https://red.example.com/granite-7b"


def test_platform_hostname_does_not_leak_to_another_tenants_gateway():
    tenants = [{"name": "models-as-a-service"}, {"name": "redteam"}]
    config = config_with(
        llmisvc(tenant="redteam"), platform={"gateway": {"hostname": "gw.example.com"}}, tenants=tenants
    )
    assert intended(config)["endpoint"] == ""


def test_gateway_hostname_must_be_a_host_name():
    with pytest.raises(ConfigError, match=r"platform\.gateway\.hostname: 'https://x' is not a host name"):
        config_with(platform={"gateway": {"hostname": "https://x"}})


@pytest.mark.parametrize("kind", ["llm", "external"])
def test_endpoint_override_replaces_the_endpoint_of_a_ready_model(kind):
    model = (llmisvc if kind == "llm" else external)(endpointOverride="https://override.example.com/model")
    config = config_with(model, platform={"gateway": {"hostname": "discovered.example.com"}})
    status = intended(config)
    assert (status["phase"], status["endpoint"]) == ("Ready", "https://override.example.com/model")


@pytest.mark.parametrize("governed_by", [set(), {"subscription"}, {"authPolicy"}])
def test_endpoint_override_never_makes_an_ungoverned_model_ready(governed_by):
    config = config_with(llmisvc(endpointOverride="https://override.example.com/model"))
    status = intended(config, governed_by)
    assert (status["phase"], status["endpoint"]) == ("Pending", "")
    conditions = {c["type"]: (c["status"], c["reason"]) for c in status["conditions"]}
    assert conditions["GovernanceAttached"] == ("False", "NoPairingFound")
    assert conditions["Ready"] == ("False", "BackendNotReady")


# -------------------------------------------------------------------------------- annotations, modelDetails


def test_model_details_map_seed_004_annotations():
    annotations = {
        "openshift.io/display-name": "Llama 2 7B Chat",
        "openshift.io/description": "A large language model optimized for chat use cases",
        "opendatahub.io/genai-use-case": "chat",
        "opendatahub.io/context-window": "4096",
        "opendatahub.io/model-capabilities": '["text-generation","chat"]',
        "example.com/other": "ignored",
    }
    assert model_details(annotations) == {
        "displayName": "Llama 2 7B Chat",
        "description": "A large language model optimized for chat use cases",
        "genaiUseCase": "chat",
        "contextWindow": "4096",
        "modelCapabilities": ["text-generation", "chat"],
    }


def test_model_details_omitted_when_all_empty():
    assert model_details({}) is None
    assert model_details({"openshift.io/display-name": "", "opendatahub.io/model-capabilities": "[]"}) is None


@pytest.mark.parametrize("value", ["text-generation", '{"a": 1}', '["chat", 1]', "[chat]"])
def test_capabilities_annotation_must_be_a_json_string_array(value):
    with pytest.raises(ConfigError, match=r"annotations: opendatahub.io/model-capabilities must be a JSON array"):
        config_with(llmisvc(annotations={"opendatahub.io/model-capabilities": value}))


def test_capabilities_annotation_accepts_a_json_string_array():
    config = config_with(llmisvc(annotations={"opendatahub.io/model-capabilities": '["chat"]'}))
    assert model_details(only_model(config).annotations) == {"modelCapabilities": ["chat"]}


# ------------------------------------------------------------------------- ExternalModel children (vector 30)


def test_external_model_children_match_upstream_vector_30():
    config = config_with(external())
    objects = by_kind(external_model_objects(config, only_model(config)))
    assert set(objects) == {"ExternalModel", "Service", "ServiceEntry", "DestinationRule", "HTTPRoute"}
    route = objects["HTTPRoute"]
    assert (route["metadata"]["namespace"], route["metadata"]["name"]) == ("llm", "maas-gpt-4o")
    assert route["spec"]["parentRefs"] == [{"name": "maas-default-gateway", "namespace": "openshift-ingress"}]
    path_rule, header_rule = route["spec"]["rules"]
    assert path_rule["matches"] == [{"path": {"type": "PathPrefix", "value": "/llm/gpt-4o"}}]
    assert header_rule["matches"] == [
        {"headers": [{"name": "X-Gateway-Model-Name", "type": "Exact", "value": "gpt-4o"}]}
    ]
    for rule in (path_rule, header_rule):
        assert rule["backendRefs"] == [{"name": "maas-gpt-4o", "port": 443}]
        assert rule["filters"] == [
            {
                "type": "RequestHeaderModifier",
                "requestHeaderModifier": {"set": [{"name": "Host", "value": "api.openai.com"}]},
            }
        ]
        assert rule["timeouts"] == {"request": "300s"}


def test_bedrock_variant_of_vector_30():
    config = config_with(external(name="my-bedrock", target="openai.gpt-oss-20b"))
    route = by_kind(external_model_objects(config, only_model(config)))["HTTPRoute"]
    path_rule, header_rule = route["spec"]["rules"]
    assert path_rule["matches"][0]["path"]["value"] == "/llm/my-bedrock"
    assert header_rule["matches"][0]["headers"][0]["value"] == "openai.gpt-oss-20b"
    assert {r["backendRefs"][0]["name"] for r in (path_rule, header_rule)} == {"maas-my-bedrock"}


def test_external_children_service_entry_and_destination_rule_with_tls():
    config = config_with(external())
    objects = by_kind(external_model_objects(config, only_model(config)))
    assert objects["Service"]["spec"] == {
        "type": "ExternalName",
        "externalName": "api.openai.com",
        "ports": [{"port": 443, "targetPort": 443}],
    }
    assert objects["ServiceEntry"]["spec"] == {
        "hosts": ["api.openai.com"],
        "location": "MESH_EXTERNAL",
        "resolution": "DNS",
        "ports": [{"number": 443, "name": "https", "protocol": "HTTPS"}],
    }
    assert objects["DestinationRule"]["spec"] == {
        "host": "api.openai.com",
        "trafficPolicy": {"tls": {"mode": "SIMPLE"}},
    }
    assert {
        o["metadata"]["labels"]["maas.opendatahub.io/external-model"]
        for k, o in objects.items()
        if k != "ExternalModel"
    } == {"gpt-4o"}


def test_no_destination_rule_without_tls():
    config = config_with(external(external={"tls": False, "port": 8080}))
    objects = by_kind(external_model_objects(config, only_model(config)))
    assert "DestinationRule" not in objects
    assert objects["ServiceEntry"]["spec"]["ports"] == [{"number": 8080, "name": "http", "protocol": "HTTP"}]
    assert objects["HTTPRoute"]["spec"]["rules"][0]["backendRefs"] == [{"name": "maas-gpt-4o", "port": 8080}]
    assert objects["ExternalModel"]["metadata"]["annotations"] == {
        "maas.opendatahub.io/port": "8080",
        "maas.opendatahub.io/tls": "false",
    }


def test_external_model_cr_with_credential_ref():
    config = config_with(external())
    cr = by_kind(external_model_objects(config, only_model(config)))["ExternalModel"]
    assert (cr["apiVersion"], cr["metadata"]["name"], cr["metadata"]["namespace"]) == (
        "maas.opendatahub.io/v1alpha1",
        "gpt-4o",
        "llm",
    )
    assert cr["spec"] == {
        "provider": "openai",
        "targetModel": "gpt-4o",
        "endpoint": "api.openai.com",
        "credentialRef": {"name": "openai-api-key"},
    }
    assert "annotations" not in cr["metadata"]  # defaults (443, TLS) are not written


def test_route_hostnames_are_set_on_the_external_model_route():
    config = config_with(external(route={"hostnames": ["maas.example.com"]}))
    route = by_kind(external_model_objects(config, only_model(config)))["HTTPRoute"]
    assert route["spec"]["hostnames"] == ["maas.example.com"]


@pytest.mark.parametrize("tls", [True, False])
def test_external_children_pass_the_crd_validator(tls):
    config = config_with(external(external={"tls": tls}, route={"hostnames": ["maas.example.com"]}))
    for body in external_model_objects(config, only_model(config)):
        assert crdschema.validate(body) == [], body["kind"]


def test_external_model_cr_is_registered_after_its_children(dev_rendering):
    """With a controller still running, the CR landing first would make the controller create the children."""
    registered = {(r.inputs.get("kind"), r.name): r for r in dev_rendering.registrations if r.is_kubernetes_object}
    cr = registered[("ExternalModel", "external-models/gpt-4o")]
    children = {
        registered[(kind, "external-models/maas-gpt-4o")].urn
        for kind in ("Service", "ServiceEntry", "DestinationRule", "HTTPRoute")
    }
    assert set(cr.dependencies) == children
