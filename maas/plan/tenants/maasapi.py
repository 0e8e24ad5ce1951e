"""A tenant's maas-api (upstream-platform.md §4.2, §4.3): Deployment, Service, key-cleanup CronJob and HTTPRoute in
the shared infra namespace, the serving Certificate on xKS, and the gateway's backend TLS in the gateway namespace.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ... import naming
from ...config import MaasConfig, TenantConfig
from ..desired import Desired, k8s_object
from .payload import DESTINATION_RULE_API_VERSION

HTTP_ROUTE_API_VERSION = "gateway.networking.k8s.io/v1"
CERTIFICATE_API_VERSION = "cert-manager.io/v1"
SERVING_CERT_ANNOTATION = "service.beta.openshift.io/serving-cert-secret-name"
TLS_DIR = "/etc/maas-api/tls"
CA_DIR = "/etc/ssl/certs/openshift-service-ca"
REWRITTEN_PATH = "/maas-api"  # served at the root of maas-api
CA_ISSUER = "rhai-ca-issuer"  # the cert-manager ClusterIssuer of maas-api's certificate on xKS


@dataclass(frozen=True)
class MaasApi:
    config: MaasConfig
    tenant: TenantConfig

    @property
    def name(self) -> str:
        return naming.maas_api_name(self.tenant.name)

    @property
    def namespace(self) -> str:
        return self.config.platform.infraNamespace

    @property
    def xks(self) -> bool:
        return self.config.platform.flavor == "xks"

    @property
    def host(self) -> str:
        """What the gateway connects to (and, on OpenShift, the name maas-api's certificate must carry)."""
        return f"{self.name}.{self.namespace}.svc.cluster.local"

    @property
    def gateway_namespace(self) -> str:
        return self.config.platform.gateway.namespace

    @property
    def backend_tls_name(self) -> str:
        return naming.for_tenant("maas-api-backend-tls", self.tenant.name)

    @property
    def serving_secret(self) -> str:
        """xKS: the Certificate writes its own name (upstream mounted another name there); OpenShift: service CA."""
        if self.xks:
            return naming.for_tenant("maas-api-serving-cert", self.tenant.name)
        return f"{self.name}-serving-cert"

    @property
    def labels(self) -> dict[str, str]:
        return {**naming.platform_labels(), **naming.tenant_labels(self.tenant.name)}

    @property
    def pod_labels(self) -> dict[str, str]:
        return {**naming.maas_api_selector(), naming.TENANT_INSTANCE_LABEL: self.name}

    def obj(self, api_version: str, kind: str, name: str, namespace: str, spec: Any, **fields: Any) -> Desired:
        return Desired(k8s_object(api_version, kind, name, namespace, spec, self.labels, **fields))


def maas_api(config: MaasConfig, tenant: TenantConfig) -> list[Desired]:
    """Every maas-api object of a tenant; the Deployment is what `pulumi up` waits for."""
    api = MaasApi(config, tenant)
    objects = [_deployment(api), _service(api), _cleanup(api), _route(api), _backend_tls(api)]
    if api.xks:
        objects.append(_certificate(api))
    return objects


def _env(api: MaasApi) -> list[dict[str, Any]]:
    platform = api.config.platform
    values = {
        "SECURE": "true",
        "TLS_CERT": f"{TLS_DIR}/tls.crt",
        "TLS_KEY": f"{TLS_DIR}/tls.key",
        "SSL_CERT_DIR": f"/etc/ssl/certs:{CA_DIR}",
        "MAAS_SUBSCRIPTION_NAMESPACE": api.tenant.namespace,
        "METRICS_PORT": "9090",
        "GATEWAY_NAMESPACE": platform.gateway.namespace,
        "GATEWAY_NAME": api.tenant.gateway_name(platform),
        "API_KEY_MAX_EXPIRATION_DAYS": str(api.tenant.apiKeys.maxExpirationDays),
        "TENANT_NAME": api.tenant.name,
    }
    own_namespace = {"name": "NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}
    return [own_namespace] + [{"name": name, "value": value} for name, value in values.items()]


def _volumes(api: MaasApi) -> list[dict[str, Any]]:
    """The serving certificate and the CA that signs cluster services (a Secret on xKS, a ConfigMap on OpenShift)."""
    if api.xks:
        items = [{"key": "tls.crt", "path": "service-ca.crt"}]
        ca = {"secret": {"secretName": "opendatahub-ca", "items": items, "optional": True}}
    else:
        ca = {"configMap": {"name": naming.SERVICE_CA_CONFIGMAP}}
    return [
        {"name": "maas-api-tls", "secret": {"secretName": api.serving_secret}},
        {"name": "openshift-service-ca", **ca},
    ]


def _probe(initial_delay: int, period: int, timeout: int) -> dict[str, Any]:
    return {
        "httpGet": {"path": "/health", "port": "https", "scheme": "HTTPS"},
        "initialDelaySeconds": initial_delay,
        "periodSeconds": period,
        "timeoutSeconds": timeout,
        "failureThreshold": 3,
    }


RESTRICTED = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "readOnlyRootFilesystem": True,
    "runAsNonRoot": True,
}


def _deployment(api: MaasApi) -> Desired:
    """Awaited by Pulumi (Deployment readiness), as upstream waits for maas-api before reporting Ready."""
    container = {
        "name": naming.MAAS_API,
        "image": api.config.platform.images.maasApi,
        "imagePullPolicy": "Always",
        "ports": [
            {"containerPort": naming.MAAS_API_PORT, "name": "https", "protocol": "TCP"},
            {"containerPort": 9090, "name": "metrics", "protocol": "TCP"},
        ],
        "env": _env(api),
        "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"cpu": "200m", "memory": "128Mi"}},
        "livenessProbe": _probe(30, 10, 5),
        "readinessProbe": _probe(5, 5, 3),
        "securityContext": {**RESTRICTED, "seccompProfile": {"type": "RuntimeDefault"}},
        "volumeMounts": [
            {"name": "maas-api-tls", "mountPath": TLS_DIR, "readOnly": True},
            {"name": "openshift-service-ca", "mountPath": CA_DIR, "readOnly": True},
        ],
    }
    spec = {
        "replicas": api.tenant.maasApiReplicas,
        # shared by every tenant's maas-api, as upstream (selectors are immutable); the Service adds the instance
        "selector": {"matchLabels": naming.maas_api_selector()},
        "template": {
            "metadata": {"labels": api.pod_labels},
            "spec": {
                "serviceAccountName": naming.MAAS_API,
                "securityContext": {"runAsNonRoot": True},
                "terminationGracePeriodSeconds": 30,
                "containers": [container],
                "volumes": _volumes(api),
            },
        },
    }
    return api.obj("apps/v1", "Deployment", api.name, api.namespace, spec)


def _service(api: MaasApi) -> Desired:
    port = {"name": "https", "port": naming.MAAS_API_PORT, "targetPort": "https", "protocol": "TCP"}
    spec = {"type": "ClusterIP", "selector": api.pod_labels, "ports": [port]}
    annotations = None if api.xks else {SERVING_CERT_ANNOTATION: api.serving_secret}
    return api.obj("v1", "Service", api.name, api.namespace, spec, annotations=annotations)


def _cleanup(api: MaasApi) -> Desired:
    """Every 15 minutes, maas-api deletes expired API keys; the job only pokes its internal endpoint."""
    command = f"curl -sf -k -X POST https://{api.name}:{naming.MAAS_API_PORT}/internal/v1/api-keys/cleanup"
    container = {
        "name": "cleanup",
        "image": api.config.platform.images.keyCleanup,
        "command": ["/bin/sh", "-c", command],
        "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}, "limits": {"cpu": "50m", "memory": "32Mi"}},
        "securityContext": RESTRICTED,
    }
    pod = {
        "metadata": {"labels": {"app": naming.MAAS_API_CLEANUP}},
        "spec": {
            "serviceAccountName": naming.MAAS_API_CLEANUP,
            "automountServiceAccountToken": False,
            "restartPolicy": "OnFailure",
            "securityContext": {"runAsNonRoot": True},
            "containers": [container],
        },
    }
    spec = {
        "schedule": "*/15 * * * *",
        "concurrencyPolicy": "Forbid",
        "successfulJobsHistoryLimit": 3,
        "failedJobsHistoryLimit": 3,
        "jobTemplate": {"spec": {"activeDeadlineSeconds": 60, "backoffLimit": 2, "template": pod}},
    }
    name = naming.bounded(naming.for_tenant("maas-api-key-cleanup", api.tenant.name), 52)
    return api.obj("batch/v1", "CronJob", name, api.namespace, spec)


def _route(api: MaasApi) -> Desired:
    backend = [{"name": api.name, "port": naming.MAAS_API_PORT, "weight": 100}]
    rewrite = {"type": "URLRewrite", "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}}}

    def rule(path: str) -> dict[str, Any]:
        body: dict[str, Any] = {"matches": [{"path": {"type": "PathPrefix", "value": path}}]}
        if path == REWRITTEN_PATH:
            body["filters"] = [rewrite]
        return {**body, "backendRefs": backend}

    platform = api.config.platform
    spec = {
        "parentRefs": [{"name": api.tenant.gateway_name(platform), "namespace": platform.gateway.namespace}],
        "rules": [rule(path) for path in naming.MAAS_API_PATHS],
    }
    return api.obj(
        HTTP_ROUTE_API_VERSION, "HTTPRoute", naming.maas_api_route_name(api.tenant.name), api.namespace, spec
    )


def _backend_tls(api: MaasApi) -> Desired:
    """The gateway re-encrypts to maas-api, on port 8443 (`_backend_tls_settings` says how it checks the peer)."""
    spec = {
        "host": api.host,
        "trafficPolicy": {
            "portLevelSettings": [{"port": {"number": naming.MAAS_API_PORT}, "tls": _backend_tls_settings(api)}]
        },
    }
    return api.obj(DESTINATION_RULE_API_VERSION, "DestinationRule", api.backend_tls_name, api.gateway_namespace, spec)


def _backend_tls_settings(api: MaasApi) -> dict[str, Any]:
    """On OpenShift the service CA signs maas-api's certificate, and OpenShift mounts that CA's bundle (ConfigMap
    `openshift-service-ca.crt`) into every pod, the gateway's too: the gateway verifies maas-api against that file
    (`caCertificates`, a path in the proxy) and its service names. `credentialName` is not used: Istio reads it
    from a Secret in the gateway namespace, and the service CA is published only as ConfigMaps.

    On xKS the certificate comes from cert-manager's ClusterIssuer, whose CA the gateway cannot read: no
    verification there (`unverified_tls_notes` says so and what would enable it)."""
    if api.xks:
        return {"mode": "SIMPLE", "insecureSkipVerify": True}
    return {
        "mode": "SIMPLE",
        "caCertificates": naming.SERVICE_CA_FILE,
        "sni": api.host,
        "subjectAltNames": [f"{api.name}.{api.namespace}.svc", api.host],
    }


def unverified_tls_notes(config: MaasConfig, tenant: TenantConfig) -> list[str]:
    """The tenant's maas-api DestinationRule, when it cannot verify maas-api's certificate (xKS)."""
    api = MaasApi(config, tenant)
    if not api.xks:
        return []
    return [
        f"maas:tenants ({tenant.name}): DestinationRule {api.gateway_namespace}/{api.backend_tls_name} skips "
        "certificate verification (insecureSkipVerify) on flavor xks: maas-api's certificate comes from the "
        f"cert-manager ClusterIssuer {CA_ISSUER}, whose CA the gateway cannot read. Verifying it needs that CA as "
        f"key ca.crt of a Secret in {api.gateway_namespace} for the DestinationRule to name as credentialName; no "
        "setting of this program names one yet"
    ]


def _certificate(api: MaasApi) -> Desired:
    host = f"{api.name}.{api.namespace}.svc"
    spec = {
        "secretName": api.serving_secret,
        "issuerRef": {"name": CA_ISSUER, "kind": "ClusterIssuer", "group": "cert-manager.io"},
        "dnsNames": [host, f"{host}.cluster.local"],
        "duration": "2160h",
        "renewBefore": "360h",
    }
    return api.obj(CERTIFICATE_API_VERSION, "Certificate", api.serving_secret, api.namespace, spec)
