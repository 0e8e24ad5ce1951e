"""The per-tenant platform: names (upstream-platform.md §4.4), shapes (§4.2, §4.3), options and outputs."""

from __future__ import annotations

import copy

import pytest
import yaml

from maas import crdschema
from maas.config import load_config
from maas.observe import Observed
from maas.plan.tenants.platform import tenant_platform
from maas.tools.render import render
from tests.conftest import objects_of, owned

INFRA = "odh-ai-gateway-infra"
GW_NS = "openshift-ingress"
CERTIFICATE = ("cert-manager.io/v1", "Certificate")  # cert-manager's CRD is not in shared/crds: accepted unchecked
AUTOSCALING = {"autoscaling": {}}
TWO_TENANTS = {
    "tenants": [
        {"name": "models-as-a-service", "payloadProcessing": AUTOSCALING},
        {"name": "x", "payloadProcessing": AUTOSCALING},
    ]
}


@pytest.fixture(scope="module")
def two_tenants():
    return render(copy.deepcopy(TWO_TENANTS))


def _body(tenant_objects, kind, name):
    return next(o.body for o in tenant_objects if o.kind == kind and o.name == name)


def _built(raw, tenant_name):
    config = load_config(raw)
    tenant = next(t for t in config.tenants if t.name == tenant_name)
    return tenant_platform(config, tenant, Observed.nothing())


# (kind, namespace or None, default tenant's name, tenant x's name): the table of upstream §4.4
NAMING_TABLE = [
    ("Namespace", None, "models-as-a-service", "ai-tenant-x"),
    ("MaasTenantConfig", "{tenant_ns}", "default-tenant", "default-tenant"),
    ("Role", "{tenant_ns}", "aitenant-models-as-a-service-tenant-admin", "aitenant-x-tenant-admin"),
    ("Deployment", INFRA, "maas-api", "maas-api-x"),
    ("Service", INFRA, "maas-api", "maas-api-x"),
    ("HTTPRoute", INFRA, "maas-api-route", "maas-api-route-x"),
    ("CronJob", INFRA, "maas-api-key-cleanup", "maas-api-key-cleanup-x"),
    ("DestinationRule", GW_NS, "maas-api-backend-tls", "maas-api-backend-tls-x"),
    ("TokenRateLimitPolicy", GW_NS, "gateway-default-deny", "gateway-default-deny-x"),
    ("TelemetryPolicy", GW_NS, "maas-telemetry", "maas-telemetry-x"),
    ("Telemetry", GW_NS, "latency-per-subscription", "latency-per-subscription-x"),
    ("Deployment", GW_NS, "payload-processing", "payload-processing-x"),
    ("Deployment", GW_NS, "payload-pre-processing", "payload-pre-processing-x"),
    ("Service", GW_NS, "payload-processing", "payload-processing-x"),
    ("Service", GW_NS, "payload-pre-processing", "payload-pre-processing-x"),
    ("DestinationRule", GW_NS, "payload-processing", "payload-processing-x"),
    ("DestinationRule", GW_NS, "payload-pre-processing", "payload-pre-processing-x"),
    ("EnvoyFilter", GW_NS, "payload-processing", "payload-processing-x"),
    ("ServiceAccount", GW_NS, "payload-processing", "payload-processing-x"),
    ("NetworkPolicy", GW_NS, "payload-processing", "payload-processing-x"),
    ("HorizontalPodAutoscaler", GW_NS, "payload-processing", "payload-processing-x"),
    ("ConfigMap", GW_NS, "payload-processing-plugins", "payload-processing-plugins-x"),
    ("ClusterRoleBinding", None, "payload-processing-reader", "payload-processing-reader-x"),
    ("AuthPolicy", GW_NS, "maas-gateway-auth", "x-maas-auth"),
]


@pytest.mark.parametrize(("kind", "namespace", "default_name", "other_name"), NAMING_TABLE)
def test_naming_table_default_and_additional_tenant(two_tenants, kind, namespace, default_name, other_name):
    for tenant, tenant_ns, name in [
        ("models-as-a-service", "models-as-a-service", default_name),
        ("x", "ai-tenant-x", other_name),
    ]:
        ns = namespace.format(tenant_ns=tenant_ns) if namespace else None
        logical = f"{ns}/{name}" if ns else name
        assert (kind, logical) in owned(two_tenants, "Tenant", tenant), (kind, logical, tenant)


def test_naming_table_env_gateway_and_serving_secret(two_tenants):
    deployments = objects_of(two_tenants, "Deployment")
    services = objects_of(two_tenants, "Service")
    routes = objects_of(two_tenants, "HTTPRoute")
    for name, tenant, gateway in [
        ("maas-api", "models-as-a-service", "maas-default-gateway"),
        ("maas-api-x", "x", "x"),
    ]:
        pod = deployments[f"{INFRA}/{name}"]["spec"]["template"]["spec"]
        env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
        assert env["TENANT_NAME"] == tenant and env["GATEWAY_NAME"] == gateway
        secret = f"{name}-serving-cert"
        assert pod["volumes"][0] == {"name": "maas-api-tls", "secret": {"secretName": secret}}
        annotations = services[f"{INFRA}/{name}"]["metadata"]["annotations"]
        assert annotations["service.beta.openshift.io/serving-cert-secret-name"] == secret
    assert routes[f"{INFRA}/maas-api-route-x"]["spec"]["parentRefs"] == [{"name": "x", "namespace": GW_NS}]


def test_no_platform_object_is_registered_twice(two_tenants):
    names = [(r.type, r.name) for r in two_tenants.registrations]
    assert len(names) == len(set(names))


def test_maas_api_env_of_upstream_4_2(dev_raw):
    dev_raw["tenants"][1]["apiKeys"] = {"maxExpirationDays": 30}
    deployment = _body(_built(dev_raw, "redteam").objects, "Deployment", "maas-api-redteam")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env == {
        "NAMESPACE": None,
        "SECURE": "true",
        "TLS_CERT": "/etc/maas-api/tls/tls.crt",
        "TLS_KEY": "/etc/maas-api/tls/tls.key",
        "SSL_CERT_DIR": "/etc/ssl/certs:/etc/ssl/certs/openshift-service-ca",
        "MAAS_SUBSCRIPTION_NAMESPACE": "ai-tenant-redteam",
        "METRICS_PORT": "9090",
        "GATEWAY_NAMESPACE": "openshift-ingress",
        "GATEWAY_NAME": "redteam",
        "API_KEY_MAX_EXPIRATION_DAYS": "30",
        "TENANT_NAME": "redteam",
    }
    assert container["env"][0]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}
    assert container["image"] == "quay.io/opendatahub/maas-api:latest"
    assert deployment["spec"]["replicas"] == 2
    assert deployment["metadata"]["namespace"] == INFRA


def test_maas_api_image_and_infra_namespace_come_from_platform(dev_raw):
    dev_raw["platform"]["images"] = {"maasApi": "registry.example.com/maas-api:3.6"}
    dev_raw["platform"]["infraNamespace"] = "maas-infra"
    objects = _built(dev_raw, "models-as-a-service").objects
    deployment = _body(objects, "Deployment", "maas-api")
    assert deployment["metadata"]["namespace"] == "maas-infra"
    assert deployment["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.example.com/maas-api:3.6"
    rule = _body(objects, "DestinationRule", "maas-api-backend-tls")
    assert rule["spec"]["host"] == "maas-api.maas-infra.svc.cluster.local"


def test_xks_mounts_the_secret_its_certificate_writes(dev_raw):
    """Upstream mounts `maas-api-{id}-serving-cert` while the Certificate writes `maas-api-serving-cert-{id}`."""
    dev_raw["platform"]["flavor"] = "xks"
    for tenant, name, secret in [
        ("models-as-a-service", "maas-api", "maas-api-serving-cert"),
        ("redteam", "maas-api-redteam", "maas-api-serving-cert-redteam"),
    ]:
        objects = _built(dev_raw, tenant).objects
        certificate = _body(objects, "Certificate", secret)
        assert certificate["spec"]["secretName"] == secret
        assert certificate["spec"]["dnsNames"] == [f"{name}.{INFRA}.svc", f"{name}.{INFRA}.svc.cluster.local"]
        pod = _body(objects, "Deployment", name)["spec"]["template"]["spec"]
        assert pod["volumes"][0]["secret"]["secretName"] == secret
        assert pod["volumes"][1] == {
            "name": "openshift-service-ca",
            "secret": {
                "secretName": "opendatahub-ca",
                "items": [{"key": "tls.crt", "path": "service-ca.crt"}],
                "optional": True,
            },
        }
        assert "annotations" not in _body(objects, "Service", name)["metadata"]


def test_openshift_has_no_certificate(dev_raw):
    assert not [o for o in _built(dev_raw, "redteam").objects if o.kind == "Certificate"]


def test_maas_api_route_has_the_four_rules_in_upstream_order(dev_raw):
    route = _body(_built(dev_raw, "redteam").objects, "HTTPRoute", "maas-api-route-redteam")
    rules = route["spec"]["rules"]
    assert [r["matches"][0]["path"] for r in rules] == [
        {"type": "PathPrefix", "value": p} for p in ("/v1/models", "/v1/subscriptions", "/v1/api-keys", "/maas-api")
    ]
    assert all(r["backendRefs"] == [{"name": "maas-api-redteam", "port": 8443, "weight": 100}] for r in rules)
    assert [r.get("filters") for r in rules[:3]] == [None, None, None]
    assert rules[3]["filters"] == [
        {"type": "URLRewrite", "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}}}
    ]


def test_cleanup_cronjob_calls_its_own_maas_api(dev_raw):
    cronjob = _body(_built(dev_raw, "redteam").objects, "CronJob", "maas-api-key-cleanup-redteam")
    pod = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert pod["containers"][0]["command"][-1] == (
        "curl -sf -k -X POST https://maas-api-redteam:8443/internal/v1/api-keys/cleanup"
    )
    assert pod["serviceAccountName"] == "maas-api-cleanup" and pod["automountServiceAccountToken"] is False
    assert cronjob["spec"]["schedule"] == "*/15 * * * *" and cronjob["spec"]["concurrencyPolicy"] == "Forbid"


def test_envoy_filter_has_the_eight_patches_of_upstream(dev_raw):
    dev_raw["platform"]["infraNamespace"] = "maas-infra"
    spec = _body(_built(dev_raw, "redteam").objects, "EnvoyFilter", "payload-processing-redteam")["spec"]
    assert spec["priority"] == 10
    assert spec["workloadSelector"] == {"labels": {"gateway.networking.k8s.io/gateway-name": "redteam"}}
    assert "targetRefs" not in spec
    patches = spec["configPatches"]
    assert len(patches) == 8
    anchors = [p["match"]["listener"]["filterChain"]["filter"]["subFilter"]["name"] for p in patches[:4]]
    wasm_plugin = "extensions.istio.io/wasmplugin/openshift-ingress.kuadrant-redteam"
    assert anchors == [wasm_plugin, wasm_plugin, "envoy.filters.http.wasm", "envoy.filters.http.wasm"]
    operations = [p["patch"]["operation"] for p in patches]
    assert operations == ["INSERT_BEFORE", "INSERT_AFTER"] * 2 + ["MERGE"] * 4
    configs = [p["patch"]["value"]["typed_config"] for p in patches[:4]]
    clusters = [c["grpc_service"]["envoy_grpc"]["cluster_name"] for c in configs]
    pre = "outbound|9004||payload-pre-processing-redteam.openshift-ingress.svc.cluster.local"
    post = "outbound|9004||payload-processing-redteam.openshift-ingress.svc.cluster.local"
    assert clusters == [pre, post, pre, post]
    assert [c["failure_mode_allow"] for c in configs] == [True, False, True, False]
    assert configs[0]["processing_mode"]["response_header_mode"] == "SKIP"
    assert configs[1]["processing_mode"]["response_body_mode"] == "FULL_DUPLEX_STREAMED"
    routes = [p["match"]["routeConfiguration"]["vhost"]["route"]["name"] for p in patches[4:]]
    assert routes == [f"maas-infra.maas-api-route-redteam.{i}" for i in range(4)]
    for patch in patches[4:]:
        per_filter = patch["patch"]["value"]["typed_per_filter_config"]
        assert set(per_filter) == {"envoy.filters.http.ext_proc.ipp-pre", "envoy.filters.http.ext_proc.ipp"}
        assert all(v["disabled"] is True for v in per_filter.values())


def test_ipp_deployments_select_their_own_tenant_instance(dev_raw):
    objects = _built(dev_raw, "redteam").objects
    deployment = _body(objects, "Deployment", "payload-processing-redteam")
    selector = {"app": "payload-processing", "maas.opendatahub.io/tenant-instance": "payload-processing-redteam"}
    assert deployment["spec"]["selector"] == {"matchLabels": selector}
    assert _body(objects, "Service", "payload-processing-redteam")["spec"]["selector"] == selector
    pod = deployment["spec"]["template"]["spec"]
    env = {e["name"]: e["value"] for e in pod["containers"][0]["env"]}
    assert env == {
        "GATEWAY_NAMESPACE": "openshift-ingress",
        "GATEWAY_NAME": "redteam",
        "TENANT_NAMESPACE": "ai-tenant-redteam",
        "DISABLE_EXTERNAL_MODEL_CONTROLLER": "true",
    }
    assert pod["serviceAccountName"] == "payload-processing-redteam"
    assert pod["volumes"] == [
        {"name": "plugins-config-volume", "configMap": {"name": "payload-processing-plugins-redteam"}}
    ]
    binding = _body(objects, "ClusterRoleBinding", "payload-processing-reader-redteam")
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "payload-processing-redteam", "namespace": "openshift-ingress"}
    ]
    assert binding["roleRef"]["name"] == "payload-processing-reader"


def test_default_tenant_keeps_the_upstream_ipp_selector(dev_raw):
    deployment = _body(_built(dev_raw, "models-as-a-service").objects, "Deployment", "payload-processing")
    assert deployment["spec"]["selector"] == {"matchLabels": {"app": "payload-processing"}}
    env = [e["name"] for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]]
    assert "DISABLE_EXTERNAL_MODEL_CONTROLLER" not in env


def test_ipp_network_policy_selects_both_processors_and_the_gateway_namespace(dev_raw):
    dev_raw["platform"]["gateway"]["namespace"] = "gateways"
    spec = _body(_built(dev_raw, "redteam").objects, "NetworkPolicy", "payload-processing-redteam")["spec"]
    assert spec["podSelector"]["matchExpressions"][0]["values"] == [
        "payload-processing-redteam",
        "payload-pre-processing-redteam",
    ]
    peer = spec["ingress"][0]["from"][0]
    assert peer["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "gateways"}}


def test_plugins_configmap_is_the_product_default_and_written_once(dev_rendering):
    registration = owned(dev_rendering, "Tenant", "redteam")[
        ("ConfigMap", "openshift-ingress/payload-processing-plugins-redteam")
    ]
    assert registration.ignore_changes == ("data",) and registration.retain_on_delete is False
    main = yaml.safe_load(registration.inputs["data"]["custom-ipp-config.yaml"])
    assert main["profiles"][0]["plugins"] == {
        "request": [
            {"pluginRef": p}
            for p in (
                "maas-headers-guard",
                "stream-usage-enforcer",
                "model-provider-resolver",
                "api-translation",
                "apikey-injection",
            )
        ],
        "response": [],
    }
    pre = yaml.safe_load(registration.inputs["data"]["custom-pre-processing-ipp-config.yaml"])
    assert pre["plugins"][0]["parameters"] == {"fieldName": "model", "headerName": "X-Gateway-Model-Name"}


def test_no_autoscaling_no_hpa_and_fixed_replicas(dev_raw):
    dev_raw["tenants"][1]["payloadProcessing"] = {"replicas": 3}
    objects = _built(dev_raw, "redteam").objects
    assert not [o for o in objects if o.kind == "HorizontalPodAutoscaler"]
    assert _body(objects, "Deployment", "payload-processing-redteam")["spec"]["replicas"] == 3


def test_autoscaling_adds_an_hpa_that_owns_replicas(dev_raw):
    dev_raw["tenants"][1]["payloadProcessing"] = {"replicas": 2, "autoscaling": {"targetCPUUtilization": 50}}
    built = _built(dev_raw, "redteam")
    hpa = _body(built.objects, "HorizontalPodAutoscaler", "payload-processing-redteam")["spec"]
    assert hpa["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "payload-processing-redteam",
    }
    assert (hpa["minReplicas"], hpa["maxReplicas"]) == (2, 10)
    targets = {m["resource"]["name"]: m["resource"]["target"]["averageUtilization"] for m in hpa["metrics"]}
    assert targets == {"cpu": 50, "memory": 80}
    assert "replicas" not in _body(built.objects, "Deployment", "payload-processing-redteam")["spec"]
    assert built.degraded == []


def test_replicas_above_max_raise_max_with_a_warning_and_degrade_the_tenant(dev_raw):
    dev_raw["tenants"][1]["payloadProcessing"] = {"replicas": 12, "autoscaling": {"maxReplicas": 5}}
    rendering = render(dev_raw)
    hpa = objects_of(rendering, "HorizontalPodAutoscaler")["openshift-ingress/payload-processing-redteam"]
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (12, 12)
    expected = "replicas 12 is above autoscaling.maxReplicas 5; maxReplicas is raised to 12"
    assert any(expected in w for w in rendering.warnings)
    outputs = rendering.plan.outputs["tenants"]
    assert outputs["redteam"]["phase"] == "Degraded" and expected in outputs["redteam"]["warnings"][0]
    assert outputs["models-as-a-service"]["phase"] == "Active"


def test_namespace_labels_and_retained_on_delete(dev_rendering):
    registration = owned(dev_rendering, "Tenant", "redteam")[("Namespace", "ai-tenant-redteam")]
    assert registration.retain_on_delete is True
    assert registration.inputs["metadata"]["labels"] == {
        "app.kubernetes.io/managed-by": "pulumi",
        "app.kubernetes.io/part-of": "modelsasservice",
        "maas.opendatahub.io/managed-by-aitenant": "true",
        "ai-gateway.opendatahub.io/tenant": "redteam",
        "maas.opendatahub.io/tenant-name": "redteam",
        "maas.opendatahub.io/tenant-namespace": "ai-tenant-redteam",
        "maas.opendatahub.io/gateway-access": "true",
        "opendatahub.io/generated-namespace": "true",
    }


def test_tenant_config_carries_the_tenant_settings(dev_raw):
    dev_raw["tenants"][1]["payloadProcessing"] = {"replicas": 2, "autoscaling": {"maxReplicas": 4}}
    body = _body(_built(dev_raw, "redteam").objects, "MaasTenantConfig", "default-tenant")
    assert body["metadata"]["namespace"] == "ai-tenant-redteam"
    assert body["spec"] == {
        "apiKeys": {"maxExpirationDays": 90},
        "telemetry": {
            "enabled": True,
            "metrics": {
                "captureOrganization": True,
                "captureUser": True,
                "captureGroup": True,
                "captureModelUsage": True,
            },
        },
        "payloadProcessing": {
            "replicas": 2,
            "autoscaling": {"maxReplicas": 4, "targetCPUUtilization": 70, "targetMemoryUtilization": 80},
        },
    }
    assert body["metadata"]["annotations"] == {"maas.opendatahub.io/maas-api-replicas": "2"}


def test_tenant_admin_role_rules(dev_raw):
    role = _body(_built(dev_raw, "redteam").objects, "Role", "aitenant-redteam-tenant-admin")
    assert role["metadata"]["namespace"] == "ai-tenant-redteam"
    assert role["rules"] == [
        {
            "apiGroups": ["maas.opendatahub.io"],
            "resources": ["maasauthpolicies", "maassubscriptions"],
            "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"],
        },
        {
            "apiGroups": ["maas.opendatahub.io"],
            "resources": ["maastenantconfigs"],
            "verbs": ["get", "update", "patch"],
            "resourceNames": ["default-tenant"],
        },
        {"apiGroups": ["maas.opendatahub.io"], "resources": ["maasmodelrefs"], "verbs": ["get", "list", "watch"]},
    ]


def test_long_tenant_names_are_bounded_where_kubernetes_limits_them():
    name = "t" * 41
    rendering = render({"tenants": [{"name": name}]})
    cronjobs = [k for k in objects_of(rendering, "CronJob") if name[:20] in k]
    assert len(cronjobs) == 1 and len(cronjobs[0].split("/")[1]) == 52
    services = [k.split("/")[1] for k in objects_of(rendering, "Service") if "pre-processing-t" in k]
    assert len(services) == 1 and len(services[0]) == 63
    spec = objects_of(rendering, "EnvoyFilter")[f"openshift-ingress/payload-processing-{name}"]["spec"]
    assert (
        services[0]
        in spec["configPatches"][0]["patch"]["value"]["typed_config"]["grpc_service"]["envoy_grpc"]["cluster_name"]
    )
    assert crdschema.validate_all(rendering.objects()) == []


def test_tenant_outputs(dev_rendering):
    outputs = dev_rendering.plan.outputs["tenants"]
    assert outputs["redteam"]["namespace"] == "ai-tenant-redteam"
    assert outputs["redteam"]["gateway"] == "openshift-ingress/redteam"
    assert outputs["redteam"]["maasApiUrl"] == "https://maas-api-redteam.odh-ai-gateway-infra.svc.cluster.local:8443"
    assert outputs["redteam"]["managementState"] == "Managed"
    assert outputs["redteam"]["phase"] == "Active"
    assert outputs["models-as-a-service"]["telemetryLabels"] == [
        "cost_center",
        "model",
        "organization_id",
        "subscription",
    ]
    assert list(outputs) == sorted(outputs)


@pytest.mark.parametrize("flavor", ["openshift", "xks"])
def test_every_rendered_object_is_valid(dev_raw, flavor):
    dev_raw["platform"]["flavor"] = flavor
    dev_raw["tenants"][1]["payloadProcessing"] = {"replicas": 2, "autoscaling": {}}
    objects = render(dev_raw).objects()
    assert {o["kind"] for o in objects} >= {"Deployment", "CronJob", "EnvoyFilter", "HorizontalPodAutoscaler", "Role"}
    assert crdschema.validate_all(objects, unknown_ok=[CERTIFICATE]) == []


def test_tenant_config_and_role_wait_for_the_tenant_namespace(dev_rendering):
    objects = owned(dev_rendering, "Tenant", "redteam")
    namespace = objects[("Namespace", "ai-tenant-redteam")].urn
    assert namespace in objects[("MaasTenantConfig", "ai-tenant-redteam/default-tenant")].dependencies
    assert namespace in objects[("Role", "ai-tenant-redteam/aitenant-redteam-tenant-admin")].dependencies


def test_core_and_custom_kinds_get_pulumi_kubernetes_type_tokens(dev_raw):
    dev_raw["platform"]["flavor"] = "xks"
    dev_raw["tenants"][1]["payloadProcessing"] = {"autoscaling": {}}
    types = {r.type for r in render(dev_raw).registrations}
    assert types >= {
        "kubernetes:core/v1:Namespace",
        "kubernetes:core/v1:ServiceAccount",
        "kubernetes:core/v1:ConfigMap",
        "kubernetes:core/v1:Service",
        "kubernetes:apps/v1:Deployment",
        "kubernetes:batch/v1:CronJob",
        "kubernetes:autoscaling/v2:HorizontalPodAutoscaler",
        "kubernetes:networking.k8s.io/v1:NetworkPolicy",
        "kubernetes:rbac.authorization.k8s.io/v1:Role",
        "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole",
        "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding",
        "kubernetes:gateway.networking.k8s.io/v1:HTTPRoute",
        "kubernetes:networking.istio.io/v1:DestinationRule",
        "kubernetes:networking.istio.io/v1alpha3:EnvoyFilter",
        "kubernetes:extensions.kuadrant.io/v1alpha1:TelemetryPolicy",
        "kubernetes:telemetry.istio.io/v1:Telemetry",
        "kubernetes:maas.opendatahub.io/v1alpha1:MaasTenantConfig",
        "kubernetes:cert-manager.io/v1:Certificate",
    }


def test_praxis_migration_settings_without_praxis_are_a_warning(dev_raw):
    dev_raw["tenants"][0]["payloadProcessing"] = {"apiTranslation": {"enabled": True}}
    assert (
        "maas:tenants (models-as-a-service).payloadProcessing: apiTranslation and forceMigration only apply to the "
        "IPP-to-Praxis migration (type: praxis); with type ipp they have no effect"
    ) in render(dev_raw).warnings
