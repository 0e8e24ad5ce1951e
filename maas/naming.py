"""Every name, label and annotation the program writes, in one place.

Names follow the upstream maas-controller so that objects keep their identity when a cluster moves from the
controller to this program.
"""

from __future__ import annotations

import hashlib

DEFAULT_TENANT = "models-as-a-service"
TENANT_NAMESPACE_PREFIX = "ai-tenant-"

GATEWAY_API_GROUP = "gateway.networking.k8s.io"
TRLP_API_VERSION = "kuadrant.io/v1alpha1"
AUTH_POLICY_API_VERSION = "kuadrant.io/v1"

MANAGED_BY = "app.kubernetes.io/managed-by"
PART_OF = "app.kubernetes.io/part-of"
COMPONENT = "app.kubernetes.io/component"
MANAGER = "pulumi"

MODEL_LABEL = "maas.opendatahub.io/model"
MODEL_NAMESPACE_LABEL = "maas.opendatahub.io/model-namespace"
TENANT_NAME_LABEL = "maas.opendatahub.io/tenant-name"
TENANT_NAMESPACE_LABEL = "maas.opendatahub.io/tenant-namespace"

SUBSCRIPTIONS_ANNOTATION = "maas.opendatahub.io/subscriptions"
# The effective rate-limit identity on each MaaSSubscription (seed 002's stamp, where a CRD prunes the status field).
RATE_LIMIT_IDENTITY_ANNOTATION = "maas.opendatahub.io/rate-limit-identity"
AUTH_POLICIES_ANNOTATION = "maas.opendatahub.io/auth-policies"
CONTROLLER_MANAGED_ANNOTATION = "opendatahub.io/managed"
# Written with `opendatahub.io/managed: "false"` in `coexist`, so that reading the object back tells this program's
# hand-over to a running controller from an operator's opt-out.
HANDED_OVER_ANNOTATION = "maas.opendatahub.io/handed-over-by-pulumi"
# The MaasTenantConfig reconciler ignores `opendatahub.io/managed`; this is its own opt-out.
MANAGEMENT_STATE_ANNOTATION = "component.opendatahub.io/management-state"
# Stamped by a subscription batch on every object it applies (`platform.subscriptionBatches`):
# `{project}/{stack}:{batch}`, how a batch tells an object it created from one anything else did.
BATCH_ANNOTATION = "maas.opendatahub.io/batch"

# ------------------------------------------------------------------ models and the MaaS resources maas-api reads

MAAS_API_VERSION = "maas.opendatahub.io/v1alpha1"
HTTPROUTE_API_VERSION = "gateway.networking.k8s.io/v1"
ISTIO_NETWORKING_API_VERSION = "networking.istio.io/v1"
EXTERNAL_MODEL_LABEL = "maas.opendatahub.io/external-model"
EXTERNAL_PORT_ANNOTATION = "maas.opendatahub.io/port"
EXTERNAL_TLS_ANNOTATION = "maas.opendatahub.io/tls"
UNLIMITED_MODELS_ANNOTATION = "maas.opendatahub.io/unlimited-model-refs"
MODEL_NAME_HEADER = "X-Gateway-Model-Name"
# First path segments that are not a model namespace: the gateway takes `/{ns}/{name}/...` as model `ns/name`
# except under these (maas-api's own paths, the OpenAI-style `/v1/...` of body-routed requests, KServe's
# `/publishers/{ns}/models/{name}/...`), so no model or route may live in a namespace of that name.
RESERVED_FIRST_SEGMENTS = ("maas-api", "publishers", "v1")
# Namespaces of the cluster itself (Kubernetes and OpenShift): maas-api may not run there, and a
# `{service}.{namespace}` endpoint names a Service there.
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
SYSTEM_PREFIXES = ("kube-", "openshift-")
# Kinds whose status this program writes, with their API resource (plural) for the `/status` subresource.
STATUS_RESOURCES = {
    "MaaSModelRef": "maasmodelrefs",
    "MaaSSubscription": "maassubscriptions",
    "MaaSAuthPolicy": "maasauthpolicies",
    "MaasTenantConfig": "maastenantconfigs",
}


# ------------------------------------------------------------------ flow control (issue 22, llm-d InferenceObjective)

INFERENCE_OBJECTIVE_API_VERSION = "llm-d.ai/v1alpha2"
INFERENCE_POOL_GROUP = "inference.networking.k8s.io"  # upstream's default when KServe reports no group
INFERENCE_POOL_KIND = "InferencePool"
# Upstream's ownership metadata on each generated InferenceObjective (the subscription UID label is left out: the
# plan does not know it, and a subscription created in the same `up` has none yet).
OBJECTIVE_PART_OF = "maas-subscription"
OBJECTIVE_COMPONENT = "inference-objective"
SUBSCRIPTION_NAMESPACE_LABEL = "maas.opendatahub.io/subscription-namespace"
SUBSCRIPTION_NAME_ANNOTATION = "maas.opendatahub.io/subscription-name"
OBJECTIVE_TENANT_ANNOTATION = "maas.opendatahub.io/tenant-name"
# The headers llm-d's router reads (`pkg/epp/metadata/consts.go`) and their legacy aliases, lowercase: the
# wasm-shim replaces a request header only under the exact same key, and Envoy hands it lowercase names.
FAIRNESS_HEADERS = ("x-llm-d-inference-fairness-id", "x-gateway-inference-fairness-id")
OBJECTIVE_HEADERS = ("x-llm-d-inference-objective", "x-gateway-inference-objective")


def inference_objective_name(tenant: str, subscription: tuple[str, str], pool: tuple[str, str]) -> str:
    """Upstream's `inferenceObjectiveName` (maas-controller `1cd64555`): `maas-{tenant}-{subscription}-{pool}` plus
    `-{10 hex}` of sha256 over tenant, subscription namespace and name, pool namespace and name (NUL-separated),
    through knative's `kmeta.ChildName`, which keeps the hash suffix and fits the name in 63 characters.
    `subscription` and `pool` are (namespace, name); the priority is not part of it, so it never changes with it."""
    identity = "\x00".join((tenant, *subscription, *pool))
    suffix = "-" + hashlib.sha256(identity.encode("utf-8")).hexdigest()[:10]
    return _child_name(f"maas-{tenant}-{subscription[1]}-{pool[1]}", suffix)


def _child_name(parent: str, suffix: str) -> str:
    """`kmeta.ChildName` for a suffix shorter than 31 characters: a parent too long for the suffix keeps its first
    `31 - len(suffix)` characters followed by the md5 hex of the whole parent."""
    if len(parent) > 63 - len(suffix):
        parent = parent[: 31 - len(suffix)] + hashlib.md5(parent.encode("utf-8")).hexdigest()
    return parent + suffix


def tenant_namespace(tenant: str) -> str:
    """The default tenant keeps its historical namespace; every other tenant gets `ai-tenant-{name}`."""
    return tenant if tenant == DEFAULT_TENANT else f"{TENANT_NAMESPACE_PREFIX}{tenant}"


def qualified(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


def trlp_name(model: str) -> str:
    return f"maas-trlp-{model}"


def model_auth_policy_name(model: str) -> str:
    return f"maas-auth-{model}"


def kserve_model_header(namespace: str, served_model: str) -> str:
    """The `X-Gateway-Model-Name` value KServe's route of an LLMInferenceService matches (its publisher path)."""
    return f"publishers/{namespace}/models/{served_model}"


def llmisvc_route_name(backend: str) -> str:
    """KServe names the HTTPRoute of an LLMInferenceService after the service."""
    return f"{backend}-kserve-route"


EXTERNAL_MODEL_PREFIX = "maas-"
KUBERNETES_NAME_MAX = 253


def external_model_route_name(external_model: str) -> str:
    """Upstream `modelnaming.ExternalModelResourceName`: every child of ExternalModel `{name}` is `maas-{name}`.

    Over 253 characters the name is trimmed and suffixed with the first 8 hex characters of its SHA-256.
    """
    name = EXTERNAL_MODEL_PREFIX + external_model
    if len(name) <= KUBERNETES_NAME_MAX:
        return name
    digest = hashlib.sha256(external_model.encode("utf-8")).hexdigest()[:8]
    budget = KUBERNETES_NAME_MAX - len(EXTERNAL_MODEL_PREFIX) - len(digest) - 1
    trimmed = external_model[:budget].strip("-.") or digest
    return f"{EXTERNAL_MODEL_PREFIX}{trimmed}-{digest}"


def model_labels(model: str, model_namespace: str, part_of: str, component: str) -> dict[str, str]:
    """Labels of a per-model policy; the upstream set with this program as the manager."""
    return {
        MODEL_LABEL: model,
        MODEL_NAMESPACE_LABEL: model_namespace,
        MANAGED_BY: MANAGER,
        PART_OF: part_of,
        COMPONENT: component,
    }


def gateway_auth_policy_name(gateway: str, default_gateway: str) -> str:
    """The platform's default Gateway keeps the upstream name; every other Gateway gets its own."""
    return "maas-gateway-auth" if gateway == default_gateway else f"{gateway}-maas-auth"


def gateway_default_deny_name(tenant: str) -> str:
    return for_tenant("gateway-default-deny", tenant)


# ------------------------------------------------------------------------------- tenant platform (upstream §4.4)

MODELSASSERVICE_LABEL = "app.opendatahub.io/modelsasservice"
APP_NAME = "app.kubernetes.io/name"
TENANT_INSTANCE_LABEL = "maas.opendatahub.io/tenant-instance"
AITENANT_LABEL = "ai-gateway.opendatahub.io/tenant"
MANAGED_BY_AITENANT_LABEL = "maas.opendatahub.io/managed-by-aitenant"
GATEWAY_ACCESS_LABEL = "maas.opendatahub.io/gateway-access"
GENERATED_NAMESPACE_LABEL = "opendatahub.io/generated-namespace"
GATEWAY_NAME_LABEL = "gateway.networking.k8s.io/gateway-name"
PLATFORM_PART_OF = "models-as-a-service"
OBSERVABILITY_PART_OF = "maas-observability"

TENANT_CONFIG_NAME = "default-tenant"
MAAS_API = "maas-api"
MAAS_API_CLEANUP = "maas-api-cleanup"
MAAS_API_PORT = 8443
# The paths the maas-api HTTPRoute serves, one rule each in this order (the payload-processing EnvoyFilter
# addresses the rules by index; the gateway default-deny policy exempts the same paths).
MAAS_API_PATHS = ("/v1/models", "/v1/subscriptions", "/v1/api-keys", "/maas-api")
PAYLOAD_PROCESSING = "payload-processing"
PAYLOAD_PRE_PROCESSING = "payload-pre-processing"
PAYLOAD_PROCESSING_READER = "payload-processing-reader"
# The ClusterRole reading Secrets, and (`[-{tenant}]`) the RoleBindings to it in each namespace holding a tenant's
# ExternalModels: the tenant's payload processor reads the credential Secrets there, and only there.
PAYLOAD_CREDENTIALS_READER = "payload-processing-credentials"
PAYLOAD_PLUGINS = "payload-processing-plugins"
SERVICE_CA_CONFIGMAP = "openshift-service-ca.crt"
# Where OpenShift mounts that ConfigMap's `service-ca.crt` in every pod that mounts its ServiceAccount token (the
# projected `kube-api-access-*` volume), Istio's gateway pods included.
SERVICE_CA_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/service-ca.crt"
MAAS_DB_SECRET = "maas-db-config"  # maas-api's database connection, provided by operators in the infra namespace

PAYLOAD_PROCESSING_TYPE_ANNOTATION = "maas.opendatahub.io/payload-processing-type"
# On the MaasTenantConfig: the apiTranslation permission (the vendored 3.6 CRD has no spec field for it), and the
# stamp of a done IPP cleanup, so a later run does not bring IPP back once its ConfigMap is gone.
API_TRANSLATION_ANNOTATION = "maas.opendatahub.io/api-translation-enabled"
MIGRATED_ANNOTATION = "maas.opendatahub.io/payload-processing-migrated"
FORCE_MIGRATION_ANNOTATION = "maas.opendatahub.io/force-payload-processing-migration"
PAYLOAD_MIGRATION_ANNOTATION = "maas.opendatahub.io/payload-processing-migration"  # `blocked` while IPP is kept
SKIP_AWAIT_ANNOTATION = "pulumi.com/skipAwait"


def for_tenant(base: str, tenant: str) -> str:
    """Upstream `resourceNameForTenant`: the default tenant keeps the base name, others get `-{tenant}`."""
    return base if tenant == DEFAULT_TENANT else f"{base}-{tenant}"


def payload_plugins_name(tenant: str) -> str:
    """The tenant's plugins ConfigMap in the gateway namespace (the Praxis migration reads it live)."""
    return for_tenant(PAYLOAD_PLUGINS, tenant)


def payload_credentials_reader_name(tenant: str) -> str:
    """One per tenant in each model namespace: two tenants' ExternalModels may share a namespace."""
    return for_tenant(PAYLOAD_CREDENTIALS_READER, tenant)


def maas_api_name(tenant: str) -> str:
    return for_tenant(MAAS_API, tenant)


def maas_api_url(tenant: str, infra_namespace: str) -> str:
    """The tenant's maas-api inside the cluster (what the gateway AuthPolicy and the cleanup job call)."""
    return f"https://{maas_api_name(tenant)}.{infra_namespace}.svc.cluster.local:{MAAS_API_PORT}"


def maas_api_route_name(tenant: str) -> str:
    return for_tenant("maas-api-route", tenant)


def tenant_admin_role_name(tenant: str) -> str:
    """`aitenant-{name}-tenant-admin`, at most 63 characters (tenant names are at most 41, so it always fits)."""
    return f"aitenant-{tenant}-tenant-admin"


def bounded(name: str, limit: int) -> str:
    """`name` if it fits, else truncated with `-{8 hex of its sha256}` (the upstream bounding) so it stays unique.

    Only long tenant names reach this: a CronJob name may have 52 characters, a Service name or label value 63.
    """
    if len(name) <= limit:
        return name
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
    return f"{name[: limit - 9].rstrip('-')}-{digest}"


def aitenant_labels(tenant: str) -> dict[str, str]:
    """What the upstream AITenant reconciler stamps on the tenant namespace, its config and its Role (§3.2)."""
    return {
        MANAGED_BY: MANAGER,
        PART_OF: "modelsasservice",
        MANAGED_BY_AITENANT_LABEL: "true",
        AITENANT_LABEL: tenant,
        TENANT_NAME_LABEL: tenant,
        TENANT_NAMESPACE_LABEL: tenant_namespace(tenant),
        GATEWAY_ACCESS_LABEL: "true",
    }


def tenant_labels(tenant: str) -> dict[str, str]:
    """Tracking labels every object of a tenant carries (upstream §5), with this program as the manager."""
    return {
        MANAGED_BY: MANAGER,
        TENANT_NAME_LABEL: tenant,
        TENANT_NAMESPACE_LABEL: tenant_namespace(tenant),
    }


def maas_api_selector() -> dict[str, str]:
    """The labels every tenant's maas-api pods share (upstream selector; NetworkPolicies match on it too)."""
    return {APP_NAME: MAAS_API, COMPONENT: "api", PART_OF: PLATFORM_PART_OF}


def platform_labels() -> dict[str, str]:
    """Labels of the platform objects (the upstream kustomize labels), with this program as the manager."""
    return {**maas_api_selector(), MANAGED_BY: MANAGER, MODELSASSERVICE_LABEL: "true"}


# ---------------------------------------------------------------- usage dashboard (seed 002, upstream §10.3)

# The storage version of both Perses CRDs the Cluster Observability Operator installs (crds/SOURCES.md).
PERSES_API_VERSION = "perses.dev/v1alpha2"
# Upstream's name: this program's dashboard takes the place of the copy the controller applied.
USAGE_DASHBOARD = "dashboard-3-maas-usage-admin"
USAGE_DATASOURCE = "maas-usage-thanos-querier"

DEFAULT_STACK = "dev"  # the stack a command reads without --stack or --config-file
