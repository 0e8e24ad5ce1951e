"""The object that carries a Gateway's wasm configuration, `kuadrant-{gateway}` in the Gateway's namespace.

Kuadrant 1.5+ writes an EnvoyFilter (`buildIstioEnvoyFilterForGateway`, `internal/istio/utils.go`): the wasm HTTP
filter patch with the configuration as one JSON string (`typed_config.value.config.configuration.value`), and the
cluster of the operator's wasm server. Kuadrant 1.4.x writes a WasmPlugin with the configuration as nested JSON in
`spec.pluginConfig` (`buildIstioWasmPluginForGateway`). The operator's defaults are assumed: namespace
`kuadrant-system`, wasm server port 8082, the upstream wasm-shim image. Not counted: what the API server adds
(`uid`, `resourceVersion`, `creationTimestamp`, `generation`, `managedFields`), well under 1 KiB.
"""

from __future__ import annotations

from typing import Any

from ... import naming
from ...config.types import KUADRANT_VERSION
from .encoding import Composite, CompositeList, Embedded, Measure
from .routes import Gateway

OPERATOR_NAMESPACE = "kuadrant-system"
WASM_SERVER_CLUSTER = "kuadrant-operator-wasm"
WASM_SERVER_HOST = f"{WASM_SERVER_CLUSTER}.{OPERATOR_NAMESPACE}.svc.cluster.local"
WASM_SERVER_PORT = 8082
WASM_FILE_SHA256 = "0" * 64  # the SHA-256 of the operator's embedded wasm-shim: unknown here, always 64 hex
WASM_SHIM_IMAGE = "quay.io/kuadrant/wasm-shim:v0.12.3"  # RELATED_IMAGE_WASMSHIM of kuadrant-operator v1.4.6
MANAGED = {"kuadrant.io/managed": "true"}
STRING_VALUE = "type.googleapis.com/google.protobuf.StringValue"


def uses_wasm_plugin(kuadrant_version: str) -> bool:
    """1.4.x writes a WasmPlugin; 1.5 and later an EnvoyFilter."""
    match = KUADRANT_VERSION.fullmatch(kuadrant_version)
    return match is not None and int(match.group(1)) == 4


def carried_as(part: Measure, kuadrant_version: str) -> Measure:
    """A part of the wasm configuration as its object carries it: nested as is in the WasmPlugin, inside one JSON
    string in the EnvoyFilter (each quote and backslash escaped once more)."""
    return part if uses_wasm_plugin(kuadrant_version) else part.as_string


def object_kind(kuadrant_version: str) -> str:
    return "WasmPlugin" if uses_wasm_plugin(kuadrant_version) else "EnvoyFilter"


def object_name(gateway: Gateway) -> str:
    return f"kuadrant-{gateway.name}"


def wasm_object(gateway: Gateway, config: Composite, kuadrant_version: str) -> Composite:
    """The object as Kuadrant writes it, around `config`."""
    if uses_wasm_plugin(kuadrant_version):
        return _wasm_plugin(gateway, config)
    return _envoy_filter(gateway, config)


def _metadata(gateway: Gateway, labels: dict[str, str]) -> dict[str, Any]:
    owner = {
        "apiVersion": f"{naming.GATEWAY_API_GROUP}/v1",
        "kind": "Gateway",
        "name": gateway.name,
        "uid": gateway.uid,
        "blockOwnerDeletion": True,
        "controller": True,
    }
    return {"name": object_name(gateway), "namespace": gateway.namespace, "labels": labels, "ownerReferences": [owner]}


def _target_refs(gateway: Gateway) -> list[dict[str, str]]:
    return [{"group": naming.GATEWAY_API_GROUP, "kind": "Gateway", "name": gateway.name}]


def _wasm_plugin(gateway: Gateway, config: Composite) -> Composite:
    spec = Composite(targetRefs=_target_refs(gateway), url=WASM_SHIM_IMAGE, pluginConfig=config, phase="STATS")
    return Composite(
        apiVersion="extensions.istio.io/v1alpha1", kind="WasmPlugin", metadata=_metadata(gateway, MANAGED), spec=spec
    )


def _envoy_filter(gateway: Gateway, config: Composite) -> Composite:
    shim = Composite(
        name="kuadrant-wasm-shim",
        root_id="kuadrant_wasm_shim",
        vm_config={
            "runtime": "envoy.wasm.runtime.v8",
            "code": {
                "remote": {
                    "http_uri": {
                        "uri": f"http://{WASM_SERVER_HOST}:{WASM_SERVER_PORT}/plugin.wasm",
                        "timeout": "10s",
                        "cluster": WASM_SERVER_CLUSTER,
                    },
                    "sha256": WASM_FILE_SHA256,
                }
            },
            "allow_precompiled": True,
        },
        failure_policy="FAIL_RELOAD",
        configuration=Composite({"@type": STRING_VALUE, "value": Embedded(config)}),
    )
    typed = Composite(
        {
            "@type": "type.googleapis.com/udpa.type.v1.TypedStruct",
            "type_url": "type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm",
            "value": Composite(config=shim),
        }
    )
    router = {
        "name": "envoy.filters.network.http_connection_manager",
        "subFilter": {"name": "envoy.filters.http.router"},
    }
    wasm_patch = Composite(
        applyTo="HTTP_FILTER",
        match={"context": "GATEWAY", "listener": {"filterChain": {"filter": router}}},
        patch=Composite(operation="INSERT_BEFORE", value=Composite(name="envoy.filters.http.wasm", typed_config=typed)),
    )
    spec = Composite(targetRefs=_target_refs(gateway), configPatches=CompositeList([wasm_patch, _wasm_server_patch()]))
    labels = {**MANAGED, "kuadrant.io/wasm": "true"}
    return Composite(
        apiVersion="networking.istio.io/v1alpha3", kind="EnvoyFilter", metadata=_metadata(gateway, labels), spec=spec
    )


def _wasm_server_patch() -> dict[str, Any]:
    """The cluster of the operator's wasm server (`buildClusterPatch`, no mTLS)."""
    address = {"socket_address": {"address": WASM_SERVER_HOST, "port_value": WASM_SERVER_PORT}}
    cluster = {
        "name": WASM_SERVER_CLUSTER,
        "type": "STRICT_DNS",
        "connect_timeout": "1s",
        "lb_policy": "ROUND_ROBIN",
        "load_assignment": {
            "cluster_name": WASM_SERVER_CLUSTER,
            "endpoints": [{"lb_endpoints": [{"endpoint": {"address": address}}]}],
        },
        "http2_protocol_options": {},
    }
    return {
        "applyTo": "CLUSTER",
        "match": {"cluster": {"service": WASM_SERVER_HOST}},
        "patch": {"operation": "ADD", "value": cluster},
    }
