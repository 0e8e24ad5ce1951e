"""Models: the route each model is served by, its `modelDetails`, and the routing children of an ExternalModel.

Upstream, KServe creates an LLMInferenceService's HTTPRoute and the maas-controller's ExternalModel reconciler
creates the route of an external provider (`upstream-policies.md` 3.7). Without that reconciler this program
creates the ExternalModel and its children itself, named and shaped as upstream so that a cluster can move
between the two without renaming anything. Endpoints are part of the model's status (`plan/status/model.py`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ... import naming
from ...config import MaasConfig, ModelConfig, TenantConfig
from ...config.schema import CAPABILITIES_ANNOTATION, External
from ..desired import Desired, k8s_object, object_identity

REQUEST_TIMEOUT = "300s"

# Seed 004: MaaSModelRef annotations maas-api returns in `modelDetails` of GET /v1/models.
MODEL_DETAILS = {
    "openshift.io/display-name": "displayName",
    "openshift.io/description": "description",
    "opendatahub.io/genai-use-case": "genaiUseCase",
    "opendatahub.io/context-window": "contextWindow",
}


@dataclass(frozen=True)
class Route:
    """The HTTPRoute serving a model and the Gateway it must attach to."""

    name: str
    namespace: str
    hostnames: tuple[str, ...]
    gateway_name: str
    gateway_namespace: str

    @property
    def key(self) -> str:
        return naming.qualified(self.namespace, self.name)


def route_policy(
    model: ModelConfig,
    api_version: str,
    kind: str,
    name: str,
    part_of: str,
    component: str,
    annotations: dict[str, str],
    **spec: Any,
) -> dict[str, Any]:
    """A Kuadrant policy of one model: in the route namespace, targeting the model's HTTPRoute, with the model
    labels, because Kuadrant attaches policies to routes and the controller labels them by model."""
    return k8s_object(
        api_version,
        kind,
        name,
        model.route_namespace,
        labels=naming.model_labels(model.name, model.namespace, part_of, component),
        annotations=annotations,
        spec={"targetRef": {"group": naming.GATEWAY_API_GROUP, "kind": "HTTPRoute", "name": model.route_name}, **spec},
    )


def tenant_of(config: MaasConfig, model: ModelConfig) -> TenantConfig:
    return next(t for t in config.tenants if t.name == model.tenant)


def route_of(config: MaasConfig, model: ModelConfig) -> Route:
    """`route` from config, else KServe's `{backend}-kserve-route` or the ExternalModel's `maas-{backend}`."""
    gateway = tenant_of(config, model).gateway_name(config.platform)
    return Route(
        model.route_name, model.route_namespace, model.route.hostnames, gateway, config.platform.gateway.namespace
    )


def model_details(annotations: dict[str, str]) -> dict[str, Any] | None:
    """What maas-api returns as `modelDetails`: non-empty fields only, None when all are empty."""
    details: dict[str, Any] = {field: annotations[key] for key, field in MODEL_DETAILS.items() if annotations.get(key)}
    capabilities = json.loads(annotations.get(CAPABILITIES_ANNOTATION) or "[]")  # a JSON string array (schema)
    if capabilities:
        details["modelCapabilities"] = capabilities
    return details or None


# ------------------------------------------------------------------------------------- ExternalModel children


def external_model_objects(config: MaasConfig, model: ModelConfig) -> list[dict[str, Any]]:
    """The ExternalModel CR and its ExternalName Service, ServiceEntry, DestinationRule (TLS only) and HTTPRoute."""
    external = model.external
    assert external is not None, "external_model_objects is only for ExternalModel models"
    name = model.modelRef.name
    child = naming.external_model_route_name(name)
    labels = {naming.MANAGED_BY: naming.MANAGER, naming.EXTERNAL_MODEL_LABEL: name}
    objects = [
        _external_model(model, external),
        k8s_object(
            "v1",
            "Service",
            child,
            model.namespace,
            labels=labels,
            spec={
                "type": "ExternalName",
                "externalName": external.endpoint,
                "ports": [{"port": external.port, "targetPort": external.port}],
            },
        ),
        k8s_object(
            naming.ISTIO_NETWORKING_API_VERSION,
            "ServiceEntry",
            child,
            model.namespace,
            labels=labels,
            spec={
                "hosts": [external.endpoint],
                "location": "MESH_EXTERNAL",
                "resolution": "DNS",
                "ports": [_service_entry_port(external)],
            },
        ),
        _http_route(route_of(config, model), model, external, labels),
    ]
    if external.tls:
        objects.append(
            k8s_object(
                naming.ISTIO_NETWORKING_API_VERSION,
                "DestinationRule",
                child,
                model.namespace,
                labels=labels,
                spec={"host": external.endpoint, "trafficPolicy": {"tls": {"mode": "SIMPLE"}}},
            )
        )
    return objects


def external_model_desired(config: MaasConfig, model: ModelConfig) -> list[Desired]:
    """The ExternalModel CR waits for its children: a maas-controller still running (`coexist`) creates missing
    children for every ExternalModel it sees, which would make the program's own creates fail."""
    bodies = external_model_objects(config, model)
    children = tuple(
        object_identity(body["kind"], body["metadata"]["namespace"], body["metadata"]["name"])
        for body in bodies
        if body["kind"] != "ExternalModel"
    )
    return [Desired(body, depends_on=children if body["kind"] == "ExternalModel" else ()) for body in bodies]


def _external_model(model: ModelConfig, external: External) -> dict[str, Any]:
    """Port and TLS go in the upstream annotations, written only when they differ from the defaults (443, true)."""
    annotations = {}
    if external.port != 443:
        annotations[naming.EXTERNAL_PORT_ANNOTATION] = str(external.port)
    if not external.tls:
        annotations[naming.EXTERNAL_TLS_ANNOTATION] = "false"
    return k8s_object(
        naming.MAAS_API_VERSION,
        "ExternalModel",
        model.modelRef.name,
        model.namespace,
        labels=naming.tenant_labels(model.tenant),
        annotations=annotations,
        spec={
            "provider": external.provider,
            "targetModel": external.targetModel,
            "endpoint": external.endpoint,
            "credentialRef": {"name": external.credentialRef.name},
        },
    )


def _service_entry_port(external: External) -> dict[str, Any]:
    protocol = "HTTPS" if external.tls else "HTTP"
    return {"number": external.port, "name": protocol.lower(), "protocol": protocol}


def _http_route(route: Route, model: ModelConfig, external: External, labels: dict[str, str]) -> dict[str, Any]:
    """Path rule `/{ns}/{name}` and body-routing header rule, both rewriting Host to the provider."""
    name = model.modelRef.name
    forward = {
        "backendRefs": [{"name": route.name, "port": external.port}],
        "filters": [
            {
                "type": "RequestHeaderModifier",
                "requestHeaderModifier": {"set": [{"name": "Host", "value": external.endpoint}]},
            }
        ],
        "timeouts": {"request": REQUEST_TIMEOUT},
    }
    spec: dict[str, Any] = {
        "parentRefs": [{"name": route.gateway_name, "namespace": route.gateway_namespace}],
        "rules": [
            {"matches": [{"path": {"type": "PathPrefix", "value": f"/{model.namespace}/{name}"}}], **forward},
            {
                "matches": [
                    {"headers": [{"name": naming.MODEL_NAME_HEADER, "type": "Exact", "value": external.targetModel}]}
                ],
                **forward,
            },
        ],
    }
    if route.hostnames:
        spec["hostnames"] = list(route.hostnames)
    return k8s_object(naming.HTTPROUTE_API_VERSION, "HTTPRoute", route.name, route.namespace, labels=labels, spec=spec)
