"""A cluster that the upstream maas-controller built: installed as 3.5, upgraded to 3.6, with two tenants.

Everything is in the controller's own formats: the MaaS CRs with the status the controller writes, the 3.6
grouped TokenRateLimitPolicies of `reference/ratelimit.md` and seeds 000/002 (written out literally, with
upstream's `!request.path.endsWith("/v1/models")` exemption), the per-model AuthPolicies of seed 000 and the
gateway safety nets, all `app.kubernetes.io/managed-by: maas-controller`. Both identity generations are here:
subscriptions stamped `legacy` (status), `short` (status, and one by the annotation some builds write), and one
never stamped (pre-3.6); llama's 50000/1h rate set mixes them, so it is split into `tokens-…` and `tokens-…-id`.

The gateway AuthPolicies are the one thing not written out: this program's gateway policy deliberately differs
from upstream's (docs/operations.md, "What differs from the upstream controller"), so they are this program's rendering of
the two tenants, relabelled as the controller's (OIDC callers named as the controller names them). What the round
trip checks for them is that the importer gets back every input they depend on (Gateways, OIDC, the infra
namespace).

Every object carries what the API server and the controller add: `uid`, `resourceVersion`, `creationTimestamp`,
`generation` (kinds that count it), `managedFields` (the controller's server-side applies as `maas-controller`, its
Create/Update calls as `manager`, the name the API server derives from its binary), the built-in kinds' defaults
(a Service's `clusterIP`, `clusterIPs`, `ipFamilies`, `sessionAffinity`, ...; a Deployment's `strategy`,
`revisionHistoryLimit`, `progressDeadlineSeconds` and pod template defaults), the controller's finalizers on the
MaaS CRs and its `ownerReferences`: each TokenRateLimitPolicy is owned by its HTTPRoute, the tenant gateway's
AuthPolicy by its Gateway, the tenant platform's objects by the cluster `Config` (upstream
`maassubscription_controller.go` 649, `maasauthpolicy_controller.go` 1335-1361, `tenantreconcile/apply.go` 63,
opendatahub-io/models-as-a-service@c0639b1b). This is what `pulumi import` reads (`tests/provider_fidelity.py`).
"""

from __future__ import annotations

import zlib
from typing import Any

from maas.config import load_config
from maas.observe import ObjectRef, Observed
from maas.observe.scope import IMPORTED_KINDS, what_to_import
from maas.plan.policies.access import model_access_predicate
from maas.plan.policies.gateway_auth import gateway_auth_policy
from maas.tools.importing.tenants import UPSTREAM_OIDC_NAMES

MAAS = "maas.opendatahub.io/v1alpha1"
DEFAULT = "models-as-a-service"
REDTEAM_NS = "ai-tenant-redteam"
INFRA = "odh-ai-gateway-infra"
GATEWAYS = "openshift-ingress"
MAAS_API_IMAGE = "quay.io/opendatahub/maas-api:v3.6.0"
EXEMPT = ' && !request.path.endsWith("/v1/models")'
REDTEAM_OIDC = {"issuerUrl": "https://keycloak.example.com/realms/redteam", "clientId": "redteam-cli", "ttl": 300}
# short IDs (first 16 hex of the SHA-256 of `ns/name@modelNs/model`)
TEAM_X_LLAMA = "e56c02fc95a93a74"
TEAM_Y_LLAMA = "4b7dc5b67eedbf54"
REDTEAM_EVAL_QWEN = "3ca14384d8fb1b62"
REDTEAM_EVAL_VLLM = "f44f12baf0ea32d5"


CREATED = "2026-05-04T09:00:00Z"
UPDATED = "2026-08-01T10:00:00Z"
# Field managers: the controller's server-side applies name themselves (`client.FieldOwner("maas-controller")`,
# tenantreconcile/apply.go 19 and 81); its Create and Update calls name none, so the API server takes the binary's
# user agent, `manager` (maas-controller/Dockerfile 19: `go build ... -o manager`).
CONTROLLER_APPLY = ("maas-controller", "Apply", None)
CONTROLLER_UPDATE = ("manager", "Update", None)
CONTROLLER_STATUS = ("manager", "Update", "status")
# Finalizers the controller adds (maassubscription_controller.go 86, maasauthpolicy_controller.go 468,
# maasmodelref_controller.go 95, aitenant_controller.go 59).
FINALIZERS = {
    "MaaSSubscription": "maas.opendatahub.io/subscription-cleanup",
    "MaaSAuthPolicy": "maas.opendatahub.io/authpolicy-cleanup",
    "MaaSModelRef": "maas.opendatahub.io/model-cleanup",
    "AITenant": "maas.opendatahub.io/aitenant-cleanup",
}
USER_CREATED = frozenset({"AITenant", "Config", "MaaSModelRef", "ExternalModel", "MaaSAuthPolicy", "MaaSSubscription"})
NO_GENERATION = frozenset({"Service", "ConfigMap", "Namespace", "ServiceAccount", "ClusterRoleBinding", "RoleBinding"})
# The cluster Config owns the tenant platform's objects (tenantreconcile/apply.go 63: SetControllerReference).
CONFIG_OWNER = {
    "apiVersion": MAAS,
    "kind": "Config",
    "name": "default",
    "uid": "uid-config-default",
    "controller": True,
    "blockOwnerDeletion": True,
}


def obj(api_version: str, kind: str, name: str, namespace: str | None, **fields: Any) -> dict[str, Any]:
    """A live object with its server metadata; `labels`, `annotations`, `ownerReferences` and `finalizers` go into
    metadata, `managers` (`(manager, operation, subresource)`) replaces the kind's usual field managers."""
    metadata: dict[str, Any] = {"name": name, "uid": f"uid-{kind.lower()}-{name}"}
    if kind not in NO_GENERATION:
        metadata["generation"] = 1
    if namespace is not None:
        metadata["namespace"] = namespace
    for key in ("labels", "annotations", "ownerReferences", "finalizers"):
        if key in fields:
            metadata[key] = fields.pop(key)
    if kind in FINALIZERS and "finalizers" not in metadata:
        metadata["finalizers"] = [FINALIZERS[kind]]
    managers = fields.pop("managers", None)
    metadata["resourceVersion"] = str(100000 + zlib.crc32(f"{kind}/{namespace}/{name}".encode()) % 900000)
    metadata["creationTimestamp"] = CREATED
    body = {"apiVersion": api_version, "kind": kind, "metadata": metadata, **fields}
    metadata["managedFields"] = managed_fields(body, managers or usual_managers(body))
    return body


def usual_managers(body: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    """Who wrote what: an admin the MaaS CRs (kubectl), the controller their finalizers and statuses and everything
    it generates; Kubernetes a Deployment's revision annotation and status."""
    kind = body["kind"]
    if kind in USER_CREATED:
        managers = [("kubectl-client-side-apply", "Update", None)]
        managers += [CONTROLLER_UPDATE] if body["metadata"].get("finalizers") else []
    elif body["apiVersion"].startswith("kuadrant.io/") or kind == "MaasTenantConfig":
        managers = [CONTROLLER_UPDATE]
    else:
        managers = [CONTROLLER_APPLY]
    if kind == "Deployment":
        managers.append(("kube-controller-manager", "Update", None))  # deployment.kubernetes.io/revision
    if "status" in body:
        managers.append(("kube-controller-manager", "Update", "status") if kind == "Deployment" else CONTROLLER_STATUS)
    return managers


def managed_fields(body: dict[str, Any], managers: list[tuple[str, str, str | None]]) -> list[dict[str, Any]]:
    entries = []
    for manager, operation, subresource in managers:
        if subresource == "status":
            fields = {"f:status": _fields(body.get("status", {}))}
        else:
            metadata = {k: v for k, v in body["metadata"].items() if k in ("labels", "annotations", "finalizers")}
            content = {k: v for k, v in body.items() if k not in ("apiVersion", "kind", "metadata", "status")}
            fields = _fields({**({"metadata": metadata} if metadata else {}), **content})
        entry = {"apiVersion": body["apiVersion"], "fieldsType": "FieldsV1", "fieldsV1": fields, "manager": manager}
        entry |= {"operation": operation, "time": UPDATED}
        entries.append(entry | ({"subresource": subresource} if subresource else {}))
    return entries


def _fields(value: Any) -> dict[str, Any]:
    """A FieldsV1 set, simplified: every key of a mapping, lists as one field."""
    if isinstance(value, dict):
        return {f"f:{key}": _fields(item) for key, item in value.items()}
    return {}


def ready(reason: str = "Reconciled") -> list[dict[str, Any]]:
    return [
        {
            "type": "Ready",
            "status": "True",
            "reason": reason,
            "message": "",
            "lastTransitionTime": "2026-08-01T10:00:00Z",
        }
    ]


# ---------------------------------------------------------------------------------------------------- tenants


def tenant_crs() -> list[dict[str, Any]]:
    default_tenant = obj(
        MAAS,
        "AITenant",
        DEFAULT,
        "ai-tenants",
        spec={"gateway": {"name": "maas-default-gateway"}},
        status={
            "phase": "Active",
            "tenantNamespace": DEFAULT,
            "gatewayRef": {"namespace": GATEWAYS, "name": "maas-default-gateway"},
            "conditions": ready(),
        },
    )
    redteam = obj(
        MAAS,
        "AITenant",
        "redteam",
        "ai-tenants",
        spec={"gateway": {"name": "redteam-gateway"}, "oidc": REDTEAM_OIDC},
        status={
            "phase": "Active",
            "tenantNamespace": REDTEAM_NS,
            "gatewayRef": {"namespace": GATEWAYS, "name": "redteam-gateway"},
            "conditions": ready(),
        },
    )
    metrics = {"captureOrganization": True, "captureUser": False, "captureGroup": False, "captureModelUsage": True}
    default_config = tenant_config(
        DEFAULT, DEFAULT, {}, {"apiKeys": {"maxExpirationDays": 30}, "telemetry": {"enabled": True, "metrics": metrics}}
    )
    autoscaling = {"maxReplicas": 4, "targetCPUUtilization": 70, "targetMemoryUtilization": 80}
    redteam_config = tenant_config(
        REDTEAM_NS,
        "redteam",
        {"maas.opendatahub.io/maas-api-replicas": "2"},
        {"payloadProcessing": {"replicas": 2, "autoscaling": autoscaling}},  # no telemetry: upstream has none then
    )
    cluster_config = obj(
        MAAS,
        "Config",
        "default",
        None,
        annotations={"maas.opendatahub.io/default-aitenant-bootstrapped": "true"},
        spec={"limitadorScrapeInterval": "30s", "usageLogging": False, "usageMetricsDashboard": True},
        status={},
    )
    return [default_tenant, redteam, default_config, redteam_config, cluster_config]


def tenant_config(namespace: str, tenant: str, annotations: dict[str, str], spec: dict[str, Any]) -> dict[str, Any]:
    labels = {
        "maas.opendatahub.io/managed-by-aitenant": "true",
        "maas.opendatahub.io/tenant-name": tenant,
        "maas.opendatahub.io/tenant-namespace": namespace,
    }
    return obj(
        MAAS,
        "MaasTenantConfig",
        "default-tenant",
        namespace,
        labels=labels,
        annotations={
            "maas.opendatahub.io/aitenant-name": tenant,
            "maas.opendatahub.io/aitenant-namespace": "ai-tenants",
            **annotations,
        },
        spec=spec,
        status={"phase": "Active", "infraNamespace": INFRA, "conditions": ready()},
    )


# ----------------------------------------------------------------------------------------------------- models


def model_ref(namespace: str, name: str, kind: str, backend: str, route: str, **spec: Any) -> dict[str, Any]:
    annotations = spec.pop("annotations", None)
    status = {
        "phase": "Ready",
        "endpoint": f"https://maas.apps.example.com/{namespace}/{name}",
        "httpRouteName": route,
        "httpRouteNamespace": namespace,
        "httpRouteGatewayName": "maas-default-gateway",
        "httpRouteGatewayNamespace": GATEWAYS,
        "conditions": ready(),
    }
    fields: dict[str, Any] = {"spec": {"modelRef": {"kind": kind, "name": backend}, **spec}, "status": status}
    if annotations:
        fields["annotations"] = annotations
    return obj(MAAS, "MaaSModelRef", name, namespace, **fields)


def model_crs() -> list[dict[str, Any]]:
    granite_annotations = {
        "openshift.io/display-name": "Granite 7B Instruct",
        "opendatahub.io/model-capabilities": '["text-generation","chat"]',
        "kubectl.kubernetes.io/last-applied-configuration": '{"kind":"MaaSModelRef"}',
    }
    vllm = obj(
        MAAS,
        "ExternalModel",
        "local-vllm",
        "redteam-models",
        annotations={"maas.opendatahub.io/port": "8000", "maas.opendatahub.io/tls": "false"},
        spec={
            "provider": "openai",
            "targetModel": "qwen2.5-coder-32b",
            "endpoint": "vllm.gpu.example.com",
            "credentialRef": {"name": "vllm-token"},
        },
        status={"phase": "Ready"},
    )
    gpt = obj(
        MAAS,
        "ExternalModel",
        "gpt-4o",
        "external-models",
        spec={
            "provider": "openai",
            "targetModel": "gpt-4o",
            "endpoint": "api.openai.com",
            "credentialRef": {"name": "openai-api-key"},
        },
        status={"phase": "Ready"},
    )
    return [
        model_ref(
            "llm",
            "granite-7b",
            "LLMInferenceService",
            "granite-7b-instruct",
            "granite-7b-instruct-kserve-route",
            annotations=granite_annotations,
        ),
        model_ref(
            "llm", "llama-3-8b", "LLMInferenceService", "llama-3-8b-instruct", "llama-3-8b-instruct-kserve-route"
        ),
        model_ref("external-models", "gpt-4o", "ExternalModel", "gpt-4o", "maas-gpt-4o"),
        model_ref(
            "redteam-models",
            "qwen-coder",
            "LLMInferenceService",
            "qwen-coder",
            "qwen-coder-kserve-route",
            tenantRef="redteam",
        ),
        model_ref(
            "redteam-models", "local-vllm", "ExternalModel", "local-vllm", "maas-local-vllm", tenantRef="redteam"
        ),
        gpt,
        vllm,
    ]


# ------------------------------------------------------------------------------------ auth policies, subscriptions


def auth_policy_crs() -> list[dict[str, Any]]:
    def policy(namespace: str, name: str, models: list[tuple[str, str]], groups: list[str], users: list[str]) -> dict:
        spec = {
            "modelRefs": [{"name": m, "namespace": ns} for ns, m in models],
            "subjects": {"groups": [{"name": g} for g in groups], "users": users},
        }
        return obj(
            MAAS, "MaaSAuthPolicy", name, namespace, spec=spec, status={"phase": "Active", "conditions": ready()}
        )

    return [
        policy(
            DEFAULT,
            "premium-access",
            [("llm", "granite-7b"), ("llm", "llama-3-8b"), ("external-models", "gpt-4o")],
            ["premium-users"],
            ["alice"],
        ),
        policy(DEFAULT, "basic-access", [("llm", "granite-7b")], ["basic-users"], []),
        policy(DEFAULT, "team-access", [("llm", "llama-3-8b")], ["team-x", "team-y", "platform-admins"], ["bob"]),
        policy(
            REDTEAM_NS,
            "redteam-access",
            [("redteam-models", "qwen-coder"), ("redteam-models", "local-vllm")],
            ["redteam"],
            [],
        ),
    ]


def subscription(namespace: str, name: str, owner: dict, refs: list[dict], stamp: str | None, **extra: Any) -> dict:
    """`stamp`: `status:legacy`, `status:short`, `annotation:short`, or None (never stamped: pre-3.6)."""
    status: dict[str, Any] = {"phase": "Active", "conditions": ready()}
    annotations = dict(extra.pop("annotations", {}))
    if stamp is not None:
        where, identity = stamp.split(":")
        if where == "status":
            status["rateLimitIdentity"] = identity
        else:
            annotations["maas.opendatahub.io/rate-limit-identity"] = identity
    fields: dict[str, Any] = {"spec": {"owner": owner, "modelRefs": refs, "priority": 0, **extra}, "status": status}
    if annotations:
        fields["annotations"] = annotations
    return obj(MAAS, "MaaSSubscription", name, namespace, **fields)


def rates(*pairs: tuple[int, str]) -> list[dict[str, Any]]:
    return [{"limit": limit, "window": window} for limit, window in pairs]


def subscription_crs() -> list[dict[str, Any]]:
    unlimited = rates((1_000_000_000, "1s"))
    premium_refs = [
        {"name": "granite-7b", "namespace": "llm", "tokenRateLimits": rates((1000, "1h"), (99999, "1s"))},
        {"name": "llama-3-8b", "namespace": "llm", "tokenRateLimits": rates((50000, "1h"))},
        {
            "name": "gpt-4o",
            "namespace": "external-models",
            "tokenRateLimits": rates((20000, "24h")),
            "billingRate": {"perToken": "0.00001"},
        },
    ]
    return [
        subscription(
            DEFAULT,
            "premium",
            {"groups": [{"name": "premium-users"}], "users": []},
            premium_refs,
            "status:legacy",
            priority=10,
            tokenMetadata={"organizationId": "acme", "costCenter": "cc-100"},
        ),
        subscription(
            DEFAULT,
            "basic",
            {"groups": [{"name": "basic-users"}]},
            [{"name": "granite-7b", "namespace": "llm", "tokenRateLimits": rates((20000, "1h"), (1000, "1m"))}],
            None,
        ),
        subscription(
            DEFAULT,
            "team-x",
            {"groups": [{"name": "team-x"}]},
            [{"name": "llama-3-8b", "namespace": "llm", "tokenRateLimits": rates((50000, "1h"))}],
            "status:short",
        ),
        subscription(
            DEFAULT,
            "team-y",
            {"groups": [{"name": "team-y"}], "users": ["bob"]},
            [{"name": "llama-3-8b", "namespace": "llm", "tokenRateLimits": rates((50000, "1h"))}],
            "annotation:short",
        ),
        subscription(
            DEFAULT,
            "platform-team",
            {"groups": [{"name": "platform-admins"}]},
            [
                {"name": "granite-7b", "namespace": "llm", "tokenRateLimits": unlimited},
                {"name": "llama-3-8b", "namespace": "llm", "tokenRateLimits": unlimited},
            ],
            "status:legacy",
            annotations={"maas.opendatahub.io/unlimited-model-refs": "llm/granite-7b,llm/llama-3-8b"},
        ),
        subscription(
            REDTEAM_NS,
            "redteam-eval",
            {"groups": [{"name": "redteam"}]},
            [
                {"name": "qwen-coder", "namespace": "redteam-models", "tokenRateLimits": rates((100000, "1h"))},
                {"name": "local-vllm", "namespace": "redteam-models", "tokenRateLimits": rates((100000, "1h"))},
            ],
            "status:short",
        ),
    ]


# ------------------------------------------------------------------------------------------ generated policies


def model_labels(model: str, namespace: str, part_of: str, component: str) -> dict[str, str]:
    return {
        "maas.opendatahub.io/model": model,
        "maas.opendatahub.io/model-namespace": namespace,
        "app.kubernetes.io/managed-by": "maas-controller",
        "app.kubernetes.io/part-of": part_of,
        "app.kubernetes.io/component": component,
    }


def enforced() -> dict[str, Any]:
    return {
        "conditions": [
            {
                "type": "Accepted",
                "status": "True",
                "reason": "Accepted",
                "message": "TokenRateLimitPolicy has been accepted",
            },
            {
                "type": "Enforced",
                "status": "True",
                "reason": "Enforced",
                "message": "TokenRateLimitPolicy has been successfully enforced",
            },
        ],
        "observedGeneration": 1,
    }


def key_limit(pairs: list[tuple[int, str]], *keys: str) -> dict[str, Any]:
    """A limit whose members count on their model-scoped key (legacy)."""
    clauses = sorted(f'auth.identity.selected_subscription_key == "{key}"' for key in keys)
    return _limit(pairs, clauses, "auth.identity.selected_subscription_key")


def id_limit(pairs: list[tuple[int, str]], *ids: str) -> dict[str, Any]:
    """A limit whose members count on their short ID (3.6)."""
    clauses = sorted(f'auth.identity.selected_subscription_id == "{short}"' for short in ids)
    return _limit(pairs, clauses, "auth.identity.selected_subscription_id")


def _limit(pairs: list[tuple[int, str]], clauses: list[str], identity: str) -> dict[str, Any]:
    text = clauses[0] if len(clauses) == 1 else "(" + " || ".join(clauses) + ")"
    limit: dict[str, Any] = {"when": [{"predicate": text + EXEMPT}]}
    if pairs:
        limit["rates"] = rates(*pairs)
        limit["counters"] = [{"expression": identity}, {"expression": "auth.identity.userid"}]
    return limit


def trlp(namespace: str, model: str, route: str, subscriptions: list[str], limits: dict[str, Any]) -> dict[str, Any]:
    return obj(
        "kuadrant.io/v1alpha1",
        "TokenRateLimitPolicy",
        f"maas-trlp-{model}",
        namespace,
        labels=model_labels(model, namespace, "maas-subscription", "token-rate-limit-policy"),
        annotations={"maas.opendatahub.io/subscriptions": ",".join(subscriptions)},
        ownerReferences=[route_owner(route)],
        spec={
            "targetRef": {"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": route},
            "limits": limits,
        },
        status=enforced(),
    )


def route_owner(route: str) -> dict[str, Any]:
    """`controllerutil.SetControllerReference(route, policy)`: the route owns its TokenRateLimitPolicy."""
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "name": route,
        "uid": f"uid-httproute-{route}",
        "controller": True,
        "blockOwnerDeletion": True,
    }


def token_rate_limit_policies() -> list[dict[str, Any]]:
    ns = DEFAULT
    return [
        trlp(
            "llm",
            "granite-7b",
            "granite-7b-instruct-kserve-route",
            [f"{ns}/basic", f"{ns}/platform-team", f"{ns}/premium"],
            {
                "tokens-1000-per-1h-99999-per-1s": key_limit(
                    [(1000, "1h"), (99999, "1s")], f"{ns}/premium@llm/granite-7b"
                ),
                "tokens-1000-per-1m-20000-per-1h": key_limit(
                    [(1000, "1m"), (20000, "1h")], f"{ns}/basic@llm/granite-7b"
                ),
                "tokens-unlimited": key_limit([], f"{ns}/platform-team@llm/granite-7b"),
            },
        ),
        trlp(
            "llm",
            "llama-3-8b",
            "llama-3-8b-instruct-kserve-route",
            [f"{ns}/platform-team", f"{ns}/premium", f"{ns}/team-x", f"{ns}/team-y"],
            {
                "tokens-50000-per-1h": key_limit([(50000, "1h")], f"{ns}/premium@llm/llama-3-8b"),
                "tokens-50000-per-1h-id": id_limit([(50000, "1h")], TEAM_X_LLAMA, TEAM_Y_LLAMA),
                "tokens-unlimited": key_limit([], f"{ns}/platform-team@llm/llama-3-8b"),
            },
        ),
        trlp(
            "external-models",
            "gpt-4o",
            "maas-gpt-4o",
            [f"{ns}/premium"],
            {"tokens-20000-per-24h": key_limit([(20000, "24h")], f"{ns}/premium@external-models/gpt-4o")},
        ),
        trlp(
            "redteam-models",
            "qwen-coder",
            "qwen-coder-kserve-route",
            [f"{REDTEAM_NS}/redteam-eval"],
            {"tokens-100000-per-1h": id_limit([(100000, "1h")], REDTEAM_EVAL_QWEN)},
        ),
        trlp(
            "redteam-models",
            "local-vllm",
            "maas-local-vllm",
            [f"{REDTEAM_NS}/redteam-eval"],
            {"tokens-100000-per-1h": id_limit([(100000, "1h")], REDTEAM_EVAL_VLLM)},
        ),
        default_deny(DEFAULT, "gateway-default-deny", "maas-default-gateway"),
        default_deny("redteam", "gateway-default-deny-redteam", "redteam-gateway"),
    ]


def default_deny(tenant: str, name: str, gateway: str) -> dict[str, Any]:
    exempt = ("/maas-api", "/v1/models", "/v1/subscriptions", "/v1/api-keys")
    predicate = " && ".join(f'!request.path.startsWith("{prefix}")' for prefix in exempt)
    limit = {
        "rates": [{"limit": 0, "window": "1m"}],
        "when": [{"predicate": predicate}],
        "counters": [{"expression": "auth.identity.userid"}],
    }
    return obj(
        "kuadrant.io/v1alpha1",
        "TokenRateLimitPolicy",
        name,
        GATEWAYS,
        labels={
            **tenant_labels(tenant),
            "app.kubernetes.io/part-of": "maas-controller",
            "app.kubernetes.io/component": "default-policy",
        },
        spec={
            "targetRef": {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": gateway},
            "defaults": {"limits": {"deny-all-by-default": limit}},
        },
        status=enforced(),
    )


def tenant_labels(tenant: str) -> dict[str, str]:
    namespace = DEFAULT if tenant == DEFAULT else f"ai-tenant-{tenant}"
    return {
        "app.kubernetes.io/managed-by": "maas-controller",
        "maas.opendatahub.io/tenant-name": tenant,
        "maas.opendatahub.io/tenant-namespace": namespace,
    }


def model_auth_policy(
    namespace: str, model: str, route: str, policies: list[str], groups: list[str], users: list[str]
) -> dict:
    rule = {
        "patternMatching": {"patterns": [{"predicate": model_access_predicate(groups, users)}]},
        "metrics": False,
        "priority": 0,
    }
    return obj(
        "kuadrant.io/v1",
        "AuthPolicy",
        f"maas-auth-{model}",
        namespace,
        labels=model_labels(model, namespace, "maas-auth-policy", "auth-policy"),
        annotations={"maas.opendatahub.io/auth-policies": ",".join(policies)},
        spec={
            "targetRef": {"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": route},
            "rules": {"authorization": {"model-access": rule}},
        },
        status=enforced(),
    )


def auth_policies() -> list[dict[str, Any]]:
    ns = DEFAULT
    return [
        model_auth_policy(
            "llm",
            "granite-7b",
            "granite-7b-instruct-kserve-route",
            [f"{ns}/basic-access", f"{ns}/premium-access"],
            ["basic-users", "premium-users"],
            ["alice"],
        ),
        model_auth_policy(
            "llm",
            "llama-3-8b",
            "llama-3-8b-instruct-kserve-route",
            [f"{ns}/premium-access", f"{ns}/team-access"],
            ["platform-admins", "premium-users", "team-x", "team-y"],
            ["alice", "bob"],
        ),
        model_auth_policy(
            "external-models", "gpt-4o", "maas-gpt-4o", [f"{ns}/premium-access"], ["premium-users"], ["alice"]
        ),
        model_auth_policy(
            "redteam-models", "qwen-coder", "qwen-coder-kserve-route", [f"{REDTEAM_NS}/redteam-access"], ["redteam"], []
        ),
        model_auth_policy(
            "redteam-models", "local-vllm", "maas-local-vllm", [f"{REDTEAM_NS}/redteam-access"], ["redteam"], []
        ),
        *gateway_auth_policies(),
    ]


def gateway_auth_policies() -> list[dict[str, Any]]:
    """See the module docstring: this program's gateway policy for the fixture's tenants, as the controller's."""
    tenants = {
        "tenants": [
            {"name": DEFAULT},
            {
                "name": "redteam",
                "gateway": {"name": "redteam-gateway"},
                "oidc": {**REDTEAM_OIDC, **UPSTREAM_OIDC_NAMES},
            },
        ]
    }
    config = load_config(tenants)
    policies = []
    for tenant in config.tenants:
        body = gateway_auth_policy(config.platform, tenant, x_api_key=False)
        metadata = body["metadata"]
        metadata["labels"]["app.kubernetes.io/managed-by"] = "maas-controller"
        gateway = tenant.gateway_name(config.platform)
        # only a tenant gateway's policy is owned by its Gateway (maasauthpolicy_controller.go 1157, 1335-1361)
        owners = [gateway_owner(gateway)] if gateway != config.platform.gateway.name else []
        policies.append(
            obj(
                body["apiVersion"],
                body["kind"],
                metadata["name"],
                metadata["namespace"],
                labels=metadata["labels"],
                **({"annotations": metadata["annotations"]} if metadata.get("annotations") else {}),
                **({"ownerReferences": owners} if owners else {}),
                spec=body["spec"],
                status=enforced(),
            )
        )
    return policies


def gateway_owner(gateway: str) -> dict[str, Any]:
    """`setGatewayOwnerReference`: controller, without blockOwnerDeletion (the controller cannot set it)."""
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "name": gateway,
        "uid": f"uid-gateway-{gateway}",
        "controller": True,
    }


# ------------------------------------------------------------------------------------------- platform objects


API_LABELS = {
    "app.kubernetes.io/component": "api",
    "app.kubernetes.io/name": "maas-api",
    "app.kubernetes.io/part-of": "models-as-a-service",
}
PLATFORM_LABELS = {
    **API_LABELS,
    "app.kubernetes.io/managed-by": "maas-controller",
    "app.opendatahub.io/modelsasservice": "true",
    "maas.opendatahub.io/tenant-name": DEFAULT,
    "maas.opendatahub.io/tenant-namespace": DEFAULT,
}
MAAS_API_IP = "172.30.41.17"
PAYLOAD_PROCESSING_IP = "172.30.118.203"


def platform_objects() -> list[dict[str, Any]]:
    """A few of the tenant platform's objects, fetched by name, so that the import file adopts them; as the API
    server returns them (defaults, allocated IPs, status)."""
    namespaces = [
        obj(
            "v1",
            "Namespace",
            name,
            None,
            labels={"kubernetes.io/metadata.name": name, "maas.opendatahub.io/managed-by-aitenant": "true"},
            managers=[CONTROLLER_UPDATE],
            spec={"finalizers": ["kubernetes"]},
            status={"phase": "Active"},
        )
        for name in (DEFAULT, REDTEAM_NS)
    ]
    service_ca = obj(
        "v1",
        "ConfigMap",
        "openshift-service-ca.crt",
        INFRA,
        # OpenShift's kube-controller-manager publishes the service CA in every namespace (since 4.12)
        annotations={"service.beta.openshift.io/inject-cabundle": "true"},
        managers=[("kube-controller-manager", "Update", None)],
        data={
            "service-ca.crt": "-----BEGIN CERTIFICATE-----\nMIIDUTCCAjmgAwIBAgIIfixture\n-----END CERTIFICATE-----\n"
        },
    )
    binding = obj(
        "rbac.authorization.k8s.io/v1",
        "ClusterRoleBinding",
        "maas-api",
        None,
        labels={k: v for k, v in PLATFORM_LABELS.items() if not k.startswith("maas.opendatahub.io/")},
        ownerReferences=[CONFIG_OWNER],
        roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "maas-api"},
        subjects=[{"kind": "ServiceAccount", "name": "maas-api", "namespace": INFRA}],
    )
    return [*namespaces, maas_api_deployment(), *services(), service_ca, binding]


def maas_api_deployment() -> dict[str, Any]:
    container = {
        "name": "maas-api",
        "image": MAAS_API_IMAGE,
        "imagePullPolicy": "Always",
        "ports": [{"containerPort": 8443, "name": "https", "protocol": "TCP"}],
        "resources": {},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }
    pod = {
        "containers": [container],
        "dnsPolicy": "ClusterFirst",
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccount": "maas-api",
        "serviceAccountName": "maas-api",
        "terminationGracePeriodSeconds": 30,
    }
    spec = {
        "progressDeadlineSeconds": 600,
        "replicas": 1,
        "revisionHistoryLimit": 10,
        "selector": {"matchLabels": dict(API_LABELS)},
        "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}, "type": "RollingUpdate"},
        "template": {
            "metadata": {
                "creationTimestamp": None,
                "labels": {**API_LABELS, "maas.opendatahub.io/tenant-instance": "maas-api"},
            },
            "spec": pod,
        },
    }
    status = {
        "availableReplicas": 1,
        "observedGeneration": 1,
        "readyReplicas": 1,
        "replicas": 1,
        "updatedReplicas": 1,
    }
    return obj(
        "apps/v1",
        "Deployment",
        "maas-api",
        INFRA,
        labels=dict(PLATFORM_LABELS),
        annotations={"deployment.kubernetes.io/revision": "1"},
        ownerReferences=[CONFIG_OWNER],
        spec=spec,
        status=status,
    )


def services() -> list[dict[str, Any]]:
    """maas-api's and payload processing's Services, with the cluster IPs the API server allocated."""
    maas_api = service(
        "maas-api",
        INFRA,
        MAAS_API_IP,
        [{"name": "https", "port": 8443, "protocol": "TCP", "targetPort": "https"}],
        {**API_LABELS, "maas.opendatahub.io/tenant-instance": "maas-api"},
        annotations={"service.beta.openshift.io/serving-cert-secret-name": "maas-api-serving-cert"},
    )
    payload = service(
        "payload-processing",
        GATEWAYS,
        PAYLOAD_PROCESSING_IP,
        [{"appProtocol": "HTTP2", "name": "grpc", "port": 9004, "protocol": "TCP", "targetPort": 9004}],
        {"app": "payload-processing", "maas.opendatahub.io/tenant-instance": "payload-processing"},
    )
    return [maas_api, payload]


def service(
    name: str, namespace: str, ip: str, ports: list[dict], selector: dict[str, str], **metadata: Any
) -> dict[str, Any]:
    spec = {
        "clusterIP": ip,
        "clusterIPs": [ip],
        "internalTrafficPolicy": "Cluster",
        "ipFamilies": ["IPv4"],
        "ipFamilyPolicy": "SingleStack",
        "ports": ports,
        "selector": selector,
        "sessionAffinity": "None",
        "type": "ClusterIP",
    }
    labels = {**PLATFORM_LABELS, "app.kubernetes.io/name": name}
    return obj(
        "v1",
        "Service",
        name,
        namespace,
        labels=labels,
        ownerReferences=[CONFIG_OWNER],
        spec=spec,
        status={"loadBalancer": {}},
        **metadata,
    )


FETCHED = [
    ObjectRef("Namespace", None, DEFAULT),
    ObjectRef("Namespace", None, REDTEAM_NS),
    ObjectRef("Deployment", INFRA, "maas-api"),
    ObjectRef("Service", INFRA, "maas-api"),
    ObjectRef("Service", GATEWAYS, "payload-processing"),
    ObjectRef("ConfigMap", INFRA, "openshift-service-ca.crt"),
    ObjectRef("ClusterRoleBinding", None, "maas-api"),
    ObjectRef("Deployment", INFRA, "maas-api-redteam"),  # absent: the first up creates it
]


def controller_objects() -> list[dict[str, Any]]:
    return [
        *tenant_crs(),
        *model_crs(),
        *auth_policy_crs(),
        *subscription_crs(),
        *token_rate_limit_policies(),
        *auth_policies(),
        *platform_objects(),
    ]


def controller_cluster(*extra: dict[str, Any], leave_out: tuple[str, ...] = ()) -> Observed:
    """What `python -m maas import` reads from that cluster: the import scopes listed everywhere, the platform
    objects above fetched by name; `extra` objects are added, objects `Kind/namespace/name` in `leave_out` are not."""
    objects = [*(o for o in controller_objects() if _ref(o) not in leave_out), *extra]
    return Observed.of(
        objects, listed=what_to_import().lists, got=FETCHED, crds={kind: True for kind in IMPORTED_KINDS}
    )


def _ref(body: dict[str, Any]) -> str:
    metadata = body["metadata"]
    return f"{body['kind']}/{metadata.get('namespace', '')}/{metadata['name']}"


DB_SECRET = ObjectRef("Secret", INFRA, "maas-db-config")


def controller_cluster_without_db_secret(*extra: dict[str, Any]) -> Observed:
    """That cluster without the `maas-db-config` Secret maas-api needs, as `import --context` reads it: the second
    read asks for the Secret by name and finds none, so the imported configuration fails preflight (issue 20)."""
    return Observed.of(
        [*controller_objects(), *extra],
        listed=what_to_import().lists,
        got=[*FETCHED, DB_SECRET],
        crds={kind: True for kind in IMPORTED_KINDS},
    )
