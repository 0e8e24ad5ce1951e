"""Payload processing (IPP) of a tenant, in the gateway namespace (upstream-platform.md §4.2, §4.3, §10.1).

Two ext_proc services sit in the tenant Gateway's filter chain: `payload-pre-processing` before Kuadrant's wasm
filter (extracts the model name for auth) and `payload-processing` after it (translation, key injection).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ... import naming
from ...config import MaasConfig, TenantConfig
from ..desired import Desired, k8s_object
from .extproc import ENVOY_FILTER_API_VERSION, GRPC_PORT, ExtProcFilters
from .netpol import dns_egress, gateway_pods, namespace_peer, network_policy, tcp
from .rbac import cluster_role_binding, service_account_subject

DESTINATION_RULE_API_VERSION = "networking.istio.io/v1"
METRICS_PORT = 9005
CONFIG_VOLUME = "plugins-config-volume"
IPP_CONFIG = "custom-ipp-config.yaml"
PRE_IPP_CONFIG = "custom-pre-processing-ipp-config.yaml"

# The product default (`plugins-configmap.yaml` after #1284: response translation off); operators edit it live.
PLUGINS_DEFAULT = {
    PRE_IPP_CONFIG: """apiVersion: llm-d.ai/v1alpha1
kind: PayloadProcessorConfig
plugins:
- type: body-field-to-header
  name: model-extractor
  parameters:
    fieldName: model
    headerName: X-Gateway-Model-Name
- type: model-provider-resolver
profiles:
- name: default
  plugins:
    request:
    - pluginRef: model-extractor
    - pluginRef: model-provider-resolver
""",
    IPP_CONFIG: """apiVersion: llm-d.ai/v1alpha1
kind: PayloadProcessorConfig
plugins:
- type: maas-headers-guard
  name: maas-headers-guard
- type: stream-usage-enforcer
- type: model-provider-resolver
- type: api-translation
- type: apikey-injection
profiles:
- name: default
  plugins:
    request:
    - pluginRef: maas-headers-guard
    - pluginRef: stream-usage-enforcer
    - pluginRef: model-provider-resolver
    - pluginRef: api-translation
    - pluginRef: apikey-injection
    response: []
""",
}


@dataclass(frozen=True)
class Names:
    """One tenant's IPP names (`[-{tenant}]` suffixes, bounded where Kubernetes limits them)."""

    processing: str
    pre_processing: str
    plugins: str
    reader: str

    @classmethod
    def of(cls, tenant: str) -> Names:
        return cls(
            processing=naming.for_tenant(naming.PAYLOAD_PROCESSING, tenant),
            pre_processing=naming.bounded(naming.for_tenant(naming.PAYLOAD_PRE_PROCESSING, tenant), 63),
            plugins=naming.payload_plugins_name(tenant),
            reader=naming.for_tenant(naming.PAYLOAD_PROCESSING_READER, tenant),
        )


@dataclass(frozen=True)
class Context:
    config: MaasConfig
    tenant: TenantConfig
    names: Names

    @property
    def namespace(self) -> str:
        return self.config.platform.gateway.namespace

    @property
    def gateway(self) -> str:
        return self.tenant.gateway_name(self.config.platform)

    @property
    def labels(self) -> dict[str, str]:
        return {**naming.platform_labels(), **naming.tenant_labels(self.tenant.name)}

    def host(self, service: str) -> str:
        return f"{service}.{self.namespace}.svc.cluster.local"

    def obj(self, api_version: str, kind: str, name: str, spec: Any = None, **fields: Any) -> dict[str, Any]:
        return k8s_object(api_version, kind, name, self.namespace, spec, self.labels, **fields)


def payload_processing(config: MaasConfig, tenant: TenantConfig) -> tuple[list[Desired], list[str]]:
    """Every IPP object of a tenant, with the warnings its settings raise."""
    ctx = Context(config, tenant, Names.of(tenant.name))
    names = ctx.names
    bodies = [
        _processing_deployment(ctx),
        _pre_processing_deployment(ctx),
        *(_service(ctx, name, app) for name, app in _instances(names)),
        *(_destination_rule(ctx, name) for name, _ in _instances(names)),
        _envoy_filter(ctx),
        ctx.obj("v1", "ServiceAccount", names.processing),
        _network_policy(ctx),
    ]
    autoscaling = tenant.payloadProcessing.autoscaling
    warnings = []
    if autoscaling is not None:
        hpa, warnings = _autoscaler(ctx)
        bodies.append(hpa)
    reader = service_account_subject(names.processing, ctx.namespace)
    bodies.append(cluster_role_binding(names.reader, naming.PAYLOAD_PROCESSING_READER, reader, ctx.labels))
    bodies += _credential_readers(ctx, reader)
    objects = [Desired(body) for body in bodies] + [_plugins(ctx)]
    return objects, warnings


def _credential_namespaces(config: MaasConfig, tenant: TenantConfig) -> list[str]:
    """Where the tenant's ExternalModels live, sorted: each names its credential Secret in its own namespace."""
    externals = (m for m in config.models if m.tenant == tenant.name and m.modelRef.kind == "ExternalModel")
    return sorted({model.namespace for model in externals})


def _credential_readers(ctx: Context, reader: dict[str, str]) -> list[dict[str, Any]]:
    """A RoleBinding to the Secret-reading ClusterRole in each namespace holding the tenant's ExternalModels;
    computed from configuration, so the binding of a namespace goes when its last ExternalModel does."""
    name = naming.payload_credentials_reader_name(ctx.tenant.name)
    return [
        cluster_role_binding(name, naming.PAYLOAD_CREDENTIALS_READER, reader, ctx.labels, namespace)
        for namespace in _credential_namespaces(ctx.config, ctx.tenant)
    ]


def unverified_tls_note(config: MaasConfig, tenant: TenantConfig) -> str:
    """Why both processors' DestinationRules keep `insecureSkipVerify`, for the plan's warnings."""
    ctx = Context(config, tenant, Names.of(tenant.name))
    rules = " and ".join(f"{ctx.namespace}/{name}" for name, _ in _instances(ctx.names))
    return (
        f"maas:tenants ({tenant.name}).payloadProcessing: DestinationRules {rules} skip certificate verification "
        "(insecureSkipVerify): the payload processor serves a self-signed certificate it generates at every start, "
        "which no CA can verify. Verifying it needs a payload-processing image that serves a mounted certificate "
        "(such as the OpenShift serving certificate of its Service); no setting of this program can provide one"
    )


def _instances(names: Names) -> list[tuple[str, str]]:
    """(object name, `app` label) of both processors."""
    return [(names.processing, naming.PAYLOAD_PROCESSING), (names.pre_processing, naming.PAYLOAD_PRE_PROCESSING)]


def _pod_labels(name: str, app: str) -> dict[str, str]:
    return {"app": app, naming.TENANT_INSTANCE_LABEL: name}


def _deployment(ctx: Context, name: str, app: str, container: dict[str, Any], replicas: int | None) -> dict:
    """Upstream keeps the default tenant's `{app}` selector (selectors are immutable); others add the instance."""
    selector = {"app": app} if ctx.tenant.is_default else _pod_labels(name, app)
    spec: dict[str, Any] = {} if replicas is None else {"replicas": replicas}
    spec["selector"] = {"matchLabels": selector}
    spec["template"] = {
        "metadata": {"labels": _pod_labels(name, app)},
        "spec": {
            "serviceAccountName": ctx.names.processing,
            "securityContext": {"runAsNonRoot": True},
            "containers": [container],
            "volumes": [{"name": CONFIG_VOLUME, "configMap": {"name": ctx.names.plugins}}],
        },
    }
    return ctx.obj("apps/v1", "Deployment", name, spec)


def _container(ctx: Context, app: str, config_file: str, requests: tuple, limits: tuple, ports: dict) -> dict:
    return {
        "name": app,
        "image": ctx.config.platform.images.payloadProcessing,
        "imagePullPolicy": "IfNotPresent",
        "args": ["--config-file", f"/config/{config_file}", "--v=3", "--tracing=false"],
        "ports": [{"containerPort": port, "name": name, "protocol": "TCP"} for name, port in ports.items()],
        "resources": {
            "requests": {"cpu": requests[0], "memory": requests[1]},
            "limits": {"cpu": limits[0], "memory": limits[1]},
        },
        "livenessProbe": {"tcpSocket": {"port": "grpc"}, "initialDelaySeconds": 15, "periodSeconds": 20},
        "readinessProbe": {"tcpSocket": {"port": "grpc"}, "initialDelaySeconds": 5, "periodSeconds": 10},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "readOnlyRootFilesystem": True,
        },
        "volumeMounts": [{"name": CONFIG_VOLUME, "mountPath": "/config"}],
    }


def _processing_deployment(ctx: Context) -> dict[str, Any]:
    app = naming.PAYLOAD_PROCESSING
    ports = {"grpc": GRPC_PORT, "metrics": METRICS_PORT}
    container = _container(ctx, app, IPP_CONFIG, ("50m", "64Mi"), ("500m", "256Mi"), ports)
    env = [
        {"name": "GATEWAY_NAMESPACE", "value": ctx.namespace},
        {"name": "GATEWAY_NAME", "value": ctx.gateway},
        {"name": "TENANT_NAMESPACE", "value": ctx.tenant.namespace},
    ]
    if not ctx.tenant.is_default:
        env.append({"name": "DISABLE_EXTERNAL_MODEL_CONTROLLER", "value": "true"})
    container["env"] = env
    settings = ctx.tenant.payloadProcessing
    replicas = None if settings.autoscaling is not None else settings.replicas or 1  # the HPA owns replicas
    return _deployment(ctx, ctx.names.processing, app, container, replicas)


def _pre_processing_deployment(ctx: Context) -> dict[str, Any]:
    app = naming.PAYLOAD_PRE_PROCESSING
    container = _container(ctx, app, PRE_IPP_CONFIG, ("25m", "32Mi"), ("200m", "128Mi"), {"grpc": GRPC_PORT})
    return _deployment(ctx, ctx.names.pre_processing, app, container, 1)


def _service(ctx: Context, name: str, app: str) -> dict[str, Any]:
    port = {"name": "grpc", "port": GRPC_PORT, "targetPort": GRPC_PORT, "protocol": "TCP", "appProtocol": "HTTP2"}
    spec = {"type": "ClusterIP", "selector": _pod_labels(name, app), "ports": [port]}
    return ctx.obj("v1", "Service", name, spec)


def _destination_rule(ctx: Context, name: str) -> dict[str, Any]:
    """TLS without verification: the processor's certificate is self-signed at start (`unverified_tls_note`)."""
    spec = {"host": ctx.host(name), "trafficPolicy": {"tls": {"mode": "SIMPLE", "insecureSkipVerify": True}}}
    return ctx.obj(DESTINATION_RULE_API_VERSION, "DestinationRule", name, spec)


def _envoy_filter(ctx: Context) -> dict[str, Any]:
    filters = ExtProcFilters(
        ctx.namespace,
        ctx.gateway,
        ctx.host(ctx.names.pre_processing),
        ctx.host(ctx.names.processing),
        f"{ctx.config.platform.infraNamespace}.{naming.maas_api_route_name(ctx.tenant.name)}",
    )
    return ctx.obj(ENVOY_FILTER_API_VERSION, "EnvoyFilter", ctx.names.processing, filters.spec())


def _plugins(ctx: Context) -> Desired:
    """Written once with the product default, then left to operators (upstream's `managed: "false"` stamp)."""
    body = ctx.obj("v1", "ConfigMap", ctx.names.plugins, data=dict(PLUGINS_DEFAULT))
    return Desired(body, ignore_changes=("data",))


def _network_policy(ctx: Context) -> dict[str, Any]:
    instances = [name for name, _ in _instances(ctx.names)]
    monitoring = [namespace_peer(ns) for ns in ("openshift-monitoring", "openshift-user-workload-monitoring")]
    spec = {
        "podSelector": {
            "matchExpressions": [{"key": naming.TENANT_INSTANCE_LABEL, "operator": "In", "values": instances}]
        },
        "policyTypes": ["Ingress", "Egress"],
        "ingress": [
            {"from": [gateway_pods(ctx.namespace)], "ports": tcp(GRPC_PORT)},
            {"from": monitoring, "ports": tcp(METRICS_PORT, 9090)},
        ],
        "egress": [dns_egress(), {"ports": tcp(443, 6443)}],
    }
    return network_policy(ctx.names.processing, ctx.namespace, ctx.labels, spec)


def _autoscaler(ctx: Context) -> tuple[dict[str, Any], list[str]]:
    settings = ctx.tenant.payloadProcessing
    autoscaling = settings.autoscaling
    minimum = settings.replicas or 1
    maximum = max(autoscaling.maxReplicas, minimum)
    warnings = []
    if maximum != autoscaling.maxReplicas:
        warnings.append(
            f"maas:tenants ({ctx.tenant.name}).payloadProcessing: replicas {minimum} is above "
            f"autoscaling.maxReplicas {autoscaling.maxReplicas}; maxReplicas is raised to {minimum}. "
            f"Raise autoscaling.maxReplicas or lower replicas"
        )
    targets = {"cpu": autoscaling.targetCPUUtilization, "memory": autoscaling.targetMemoryUtilization}
    spec = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": ctx.names.processing},
        "minReplicas": minimum,
        "maxReplicas": maximum,
        "metrics": [
            {
                "type": "Resource",
                "resource": {"name": name, "target": {"type": "Utilization", "averageUtilization": value}},
            }
            for name, value in targets.items()
        ],
        "behavior": {
            "scaleDown": {
                "stabilizationWindowSeconds": 300,
                "policies": [{"type": "Percent", "value": 25, "periodSeconds": 60}],
            },
            "scaleUp": {
                "stabilizationWindowSeconds": 0,
                "policies": [
                    {"type": "Percent", "value": 100, "periodSeconds": 15},
                    {"type": "Pods", "value": 4, "periodSeconds": 15},
                ],
                "selectPolicy": "Max",
            },
        },
    }
    return ctx.obj("autoscaling/v2", "HorizontalPodAutoscaler", ctx.names.processing, spec), warnings
