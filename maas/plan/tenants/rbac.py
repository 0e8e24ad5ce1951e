"""RBAC of the platform (upstream-platform.md §8): shared ClusterRoles, their bindings, the tenant-admin Role.

The ClusterRoles are shared by every tenant (one set, however many tenants); the payload-processing reader
binding, the payload processor's credential RoleBindings and the tenant-admin Role are per tenant.
"""

from __future__ import annotations

from typing import Any

from ... import naming
from ...config import PlatformConfig, TenantConfig
from ..desired import Desired, k8s_object

RBAC_API_VERSION = "rbac.authorization.k8s.io/v1"
READ = ["get", "list", "watch"]
MAAS_GROUP = "maas.opendatahub.io"
SUPPLEMENTAL = "maas-api-supplemental"


def rule(group: str, resources: list[str], verbs: list[str], names: list[str] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"apiGroups": [group], "resources": resources, "verbs": verbs}
    if names:
        body["resourceNames"] = names
    return body


DB_SECRET = rule("", ["secrets"], ["get"], [naming.MAAS_DB_SECRET])
SUBJECT_ACCESS_REVIEWS = rule("authorization.k8s.io", ["subjectaccessreviews"], ["create"])
API_SERVERS = rule("config.openshift.io", ["apiservers"], READ)
GATEWAYS = rule(naming.GATEWAY_API_GROUP, ["gateways"], ["get"])
WRITE = ["get", "list", "watch", "create", "update", "delete"]
INFERENCE_GROUP = "inference.opendatahub.io"
INFERENCE_KINDS = ["externalproviders", "externalmodels"]

CLUSTER_ROLE_RULES: dict[str, list[dict[str, Any]]] = {
    naming.MAAS_API: [
        DB_SECRET,
        rule("", ["namespaces"], READ),
        rule("", ["serviceaccounts"], READ),
        rule("", ["services"], READ),
        rule("authentication.k8s.io", ["tokenreviews"], ["create"]),
        SUBJECT_ACCESS_REVIEWS,
        rule(MAAS_GROUP, ["maasauthpolicies", "maasmodelrefs", "maassubscriptions"], READ),
        GATEWAYS,
        API_SERVERS,
    ],
    # kept apart from maas-api because the ODH operator may strip rules from that one
    SUPPLEMENTAL: [
        DB_SECRET,
        SUBJECT_ACCESS_REVIEWS,
        rule(MAAS_GROUP, ["maasmodelrefs", "maassubscriptions"], READ),
        API_SERVERS,
        GATEWAYS,
    ],
    naming.PAYLOAD_PROCESSING_READER: [
        rule("", ["configmaps"], READ),
        # Kept although each tenant also gets namespaced credential RoleBindings (payload.py): the payload
        # processor's apikey-injection plugin lists and watches Secrets through a controller-runtime cache that
        # spans the cluster (its manager narrows to one namespace at most, with NAMESPACE), and the API server
        # authorises such a LIST only through a ClusterRoleBinding. Without this rule that cache never syncs and the
        # processor exits. Drop it once the processor caches Secrets per namespace: the RoleBindings already grant
        # what it then needs.
        rule("", ["secrets"], READ),
        rule(MAAS_GROUP, ["externalmodels"], READ),
        rule(MAAS_GROUP, ["externalmodels/finalizers"], ["update"]),
        rule(INFERENCE_GROUP, INFERENCE_KINDS, ["get", "list", "watch", "create", "update"]),
        rule(INFERENCE_GROUP, [f"{kind}/status" for kind in INFERENCE_KINDS], ["get", "update", "patch"]),
        rule(INFERENCE_GROUP, [f"{kind}/finalizers" for kind in INFERENCE_KINDS], ["update"]),
        rule("", ["services"], WRITE),
        rule(naming.GATEWAY_API_GROUP, ["httproutes"], WRITE),
        rule("networking.istio.io", ["serviceentries", "destinationrules"], WRITE),
    ],
    # Bound per namespace (RoleBindings, payload.py), never cluster-wide. One shared ClusterRole rather than a Role
    # per namespace: whoever runs this program then needs `escalate` and `bind` on one fixed name, not on a Role
    # name per tenant, nor read access to every Secret itself. No `resourceNames`: the processor reads through an
    # informer (list and watch, which `resourceNames` cannot narrow).
    naming.PAYLOAD_CREDENTIALS_READER: [rule("", ["secrets"], READ)],
}

TENANT_ADMIN_RULES = [
    rule(MAAS_GROUP, ["maasauthpolicies", "maassubscriptions"], [*READ, "create", "update", "patch", "delete"]),
    rule(MAAS_GROUP, ["maastenantconfigs"], ["get", "update", "patch"], [naming.TENANT_CONFIG_NAME]),
    rule(MAAS_GROUP, ["maasmodelrefs"], READ),
]


def shared_rbac(platform: PlatformConfig) -> list[Desired]:
    """The shared ClusterRoles and the two bindings of the (shared) maas-api ServiceAccount."""
    roles = [
        Desired(k8s_object(RBAC_API_VERSION, "ClusterRole", name, None, labels=naming.platform_labels(), rules=rules))
        for name, rules in CLUSTER_ROLE_RULES.items()
    ]
    maas_api = service_account_subject(naming.MAAS_API, platform.infraNamespace)
    bindings = [
        Desired(cluster_role_binding(name, name, maas_api, naming.platform_labels()))
        for name in (naming.MAAS_API, SUPPLEMENTAL)
    ]
    return roles + bindings


def service_account_subject(name: str, namespace: str) -> dict[str, str]:
    return {"kind": "ServiceAccount", "name": name, "namespace": namespace}


def cluster_role_binding(
    name: str, role: str, subject: dict[str, str], labels: dict[str, str], namespace: str | None = None
) -> dict[str, Any]:
    """Grants ClusterRole `role` to `subject`: everywhere, or only in `namespace` (a RoleBinding)."""
    return k8s_object(
        RBAC_API_VERSION,
        "ClusterRoleBinding" if namespace is None else "RoleBinding",
        name,
        namespace,
        labels=labels,
        roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        subjects=[subject],
    )


def tenant_admin_role(tenant: TenantConfig) -> Desired:
    """What a tenant's administrators are bound to (by hand, as upstream: no RoleBinding is created)."""
    return Desired(
        k8s_object(
            RBAC_API_VERSION,
            "Role",
            naming.tenant_admin_role_name(tenant.name),
            tenant.namespace,
            labels=naming.aitenant_labels(tenant.name),
            rules=TENANT_ADMIN_RULES,
        )
    )
