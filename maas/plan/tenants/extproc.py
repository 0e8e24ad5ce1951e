"""The payload-processing EnvoyFilter (upstream-platform.md §4.3): two ext_proc filters in a tenant Gateway.

Pre-processing runs before Kuadrant's wasm (auth) filter and may fail open: it only adds the model header the
auth policy reads. Processing runs after it and fails closed: it enforces usage reporting and injects provider
keys. The maas-api routes skip both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ... import naming

ENVOY_FILTER_API_VERSION = "networking.istio.io/v1alpha3"
GRPC_PORT = 9004
EXT_PROC = "type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor"
EXT_PROC_PER_ROUTE = "type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExtProcPerRoute"
PRE_FILTER = "envoy.filters.http.ext_proc.ipp-pre"
FILTER = "envoy.filters.http.ext_proc.ipp"
# Anchor of the wasm filter: a WasmPlugin on ODH / community Kuadrant, a plain wasm filter on RHCL 1.4.
WASM_FILTER = "envoy.filters.http.wasm"
PRE_MODE = {
    "request_header_mode": "SEND",
    "response_header_mode": "SKIP",
    "request_body_mode": "FULL_DUPLEX_STREAMED",
    "response_body_mode": "NONE",
    "request_trailer_mode": "SEND",
}
MODE = {
    "request_header_mode": "SEND",
    "response_header_mode": "SEND",
    "request_body_mode": "FULL_DUPLEX_STREAMED",
    "response_body_mode": "FULL_DUPLEX_STREAMED",
    "request_trailer_mode": "SEND",
    "response_trailer_mode": "SEND",
}


@dataclass(frozen=True)
class ExtProcFilters:
    """One tenant's filters: its Gateway, both processors' service hosts, and its maas-api route (`ns.name`)."""

    gateway_namespace: str
    gateway: str
    pre_processing_host: str
    processing_host: str
    maas_api_route: str

    def spec(self) -> dict[str, Any]:
        """Eight patches: both filters around either wasm anchor, then ext_proc off on the four maas-api rules."""
        anchors = [f"extensions.istio.io/wasmplugin/{self.gateway_namespace}.kuadrant-{self.gateway}", WASM_FILTER]
        filters = [patch for anchor in anchors for patch in self._filter_patches(anchor)]
        routes = [_skip_route(f"{self.maas_api_route}.{index}") for index in range(len(naming.MAAS_API_PATHS))]
        return {
            "priority": 10,  # after Kuadrant's EnvoyFilter (priority 0), which inserts the wasm anchor
            "workloadSelector": {"labels": {naming.GATEWAY_NAME_LABEL: self.gateway}},
            "configPatches": filters + routes,
        }

    def _filter_patches(self, anchor: str) -> list[dict[str, Any]]:
        pre = _ext_proc(PRE_FILTER, self.pre_processing_host, True, PRE_MODE)
        post = _ext_proc(FILTER, self.processing_host, False, MODE)
        return [_http_filter(anchor, "INSERT_BEFORE", pre), _http_filter(anchor, "INSERT_AFTER", post)]


def _http_filter(anchor: str, operation: str, value: dict[str, Any]) -> dict[str, Any]:
    manager = {"name": "envoy.filters.network.http_connection_manager", "subFilter": {"name": anchor}}
    return {
        "applyTo": "HTTP_FILTER",
        "match": {"context": "GATEWAY", "listener": {"filterChain": {"filter": manager}}},
        "patch": {"operation": operation, "value": value},
    }


def _ext_proc(name: str, host: str, failure_mode_allow: bool, mode: dict[str, str]) -> dict[str, Any]:
    return {
        "name": name,
        "typed_config": {
            "@type": EXT_PROC,
            "failure_mode_allow": failure_mode_allow,
            "allow_mode_override": True,
            "processing_mode": dict(mode),
            "grpc_service": {"envoy_grpc": {"cluster_name": f"outbound|{GRPC_PORT}||{host}"}, "timeout": "300s"},
            "message_timeout": "300s",
        },
    }


def _skip_route(route: str) -> dict[str, Any]:
    disabled = {"@type": EXT_PROC_PER_ROUTE, "disabled": True}
    return {
        "applyTo": "HTTP_ROUTE",
        "match": {"context": "GATEWAY", "routeConfiguration": {"vhost": {"route": {"name": route}}}},
        "patch": {"operation": "MERGE", "value": {"typed_per_filter_config": {PRE_FILTER: disabled, FILTER: disabled}}},
    }
