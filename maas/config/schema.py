"""The stack configuration contract (`reference/config.md`) as strict pydantic models.

Field names are the CRD spellings so that an existing CR spec can be pasted in unchanged. Rules that involve a
single entry live here; rules across entries (references, uniqueness, tenant isolation) live in `references.py`.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    AliasChoices,
    Field,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)

from .. import naming
from .errors import quoted
from .types import (
    DNS_LABEL,
    DnsLabel,
    Endpoint,
    EndpointUrl,
    ExpirationDays,
    Fqdn,
    GatewayHostname,
    HttpsUrl,
    Int32,
    JwksTTLSeconds,
    KuadrantVersion,
    ModelNamespace,
    Name63,
    Name253,
    NonEmpty,
    ObjectName,
    Percent,
    Port,
    Replicas,
    StackScope,
    Strict,
    StrictBool,
    StrictStr,
    SubscriptionKey,
    TenantName,
    Text,
    TokenLimit,
    TTLSeconds,
    Unicode,
    Window,
    memoized,
    validated_once,
)

CAPABILITIES_ANNOTATION = "opendatahub.io/model-capabilities"


# ---------------------------------------------------------------------------------------------------- platform


class GatewayRef(Strict):
    name: DnsLabel = "maas-default-gateway"
    namespace: DnsLabel = "openshift-ingress"
    hostname: Fqdn | None = None  # the Gateway's listener hostname: model endpoints when a route has none


class CacheTTLs(Strict):
    metadataTTL: TTLSeconds = 60
    authzTTL: TTLSeconds = 60


class Images(Strict):
    maasApi: NonEmpty = "quay.io/opendatahub/maas-api:latest"
    payloadProcessing: NonEmpty = "quay.io/opendatahub/odh-ai-gateway-payload-processing:odh-stable"
    keyCleanup: NonEmpty = "registry.redhat.io/ubi9/ubi-minimal:9.7"


class KubernetesProvider(Strict):
    kubeconfig: StrictStr | None = None  # a path, or the kubeconfig itself (several lines)
    context: Text | None = None
    clusterIdentifier: Text | None = None
    renderYamlToDirectory: Text | None = None
    enableServerSideApply: StrictBool = True
    upsertExistingObjects: StrictBool = False


class PlatformConfig(Strict):
    flavor: Literal["openshift", "xks"] = "openshift"
    infraNamespace: DnsLabel = "odh-ai-gateway-infra"
    controllerNamespace: DnsLabel = "opendatahub"
    monitoringNamespace: Text = "opendatahub"
    gateway: GatewayRef = GatewayRef()
    clusterAudience: NonEmpty = "https://kubernetes.default.svc"
    cache: CacheTTLs = CacheTTLs()
    images: Images = Images()
    exemptModelDiscovery: StrictBool = True
    usageMetricsDashboard: StrictBool = False
    controllerMode: Literal["absent", "coexist"] = "absent"
    awaitCustomResources: StrictBool = False
    observe: StrictBool = True  # read the cluster at preview/up; false: intended statuses, no preflight
    quotaResets: Literal["warn", "error"] = "warn"  # error: a reset blocks the update unless accepted
    unmeteredTraffic: Literal["warn", "error"] = "warn"  # error: an unmetered finding blocks unless accepted
    kuadrantVersion: KuadrantVersion = "1.5"  # 1.4.x: WasmPlugin; 1.5+: EnvoyFilter (the gateway size model)
    gatewayBudget: Literal["warn", "error"] = "error"  # a gateway's wasm config over 1.5 MiB: stop, or only warn
    predicateFormat: Literal["default", "compact"] = "default"  # compact: one `in` list per limit
    subscriptionOutputs: Literal["full", "summary"] = "full"  # summary: the stack output `subscriptions` as counts
    subscriptionBatches: StrictBool = False  # a tenant's MaaSSubscriptions as a few batch resources (`batches.py`)
    scope: StackScope = "all"  # all | platform | tenant:<name>: what this stack registers
    kubernetes: KubernetesProvider = KubernetesProvider()

    @field_validator("monitoringNamespace")
    @classmethod
    def _label_or_empty(cls, value: str) -> str:
        if value and not (len(value) <= 63 and DNS_LABEL.fullmatch(value)):
            raise ValueError(
                f'{quoted(value)} is not a DNS label; give a namespace, or "" to disable dashboards and monitors'
            )
        return value


# ----------------------------------------------------------------------------------------------------- tenants


class TenantGateway(Strict):
    name: DnsLabel | None = None
    hostname: Fqdn | None = None  # listener hostname of this tenant's Gateway (model endpoints)


class Oidc(Strict):
    """A tenant's OIDC issuer. Its users get their own username namespace, as kube-apiserver's
    `--oidc-username-claim`/`--oidc-username-prefix` give them: maas-api matches one `username` against subscription
    owners and auth policy subjects, so without a prefix an IdP user `alice` would own Kubernetes user alice's
    grants. `usernamePrefix: ""` shares the namespace (upstream's behaviour; unsafe unless every name is the same
    person in both). The claim is `sub` by default, the one identifier OIDC Core says is unique and never
    reassigned; `preferred_username` is chosen by the user or reused in many IdPs (OIDC Core 5.7: "MUST NOT rely
    upon this value being unique"), so it is an explicit choice, and falls back to `sub` as upstream does."""

    issuerUrl: HttpsUrl
    clientId: NonEmpty
    ttl: JwksTTLSeconds = 300
    usernameClaim: Literal["sub", "preferred_username"] = "sub"
    usernamePrefix: StrictStr = "oidc:"

    @field_validator("usernamePrefix")
    @classmethod
    def _username_prefix(cls, value: str) -> str:
        """Written into CEL and compared with Kubernetes usernames: plain characters only, and never `system:`,
        which would let an IdP subject such as `serviceaccount:ns:sa` pose as a Kubernetes system identity."""
        if len(value) > 63 or not all(c.isascii() and (c.isalnum() or c in ":._/#@-") for c in value):
            raise ValueError(
                f"{quoted(value)} is not a username prefix; use at most 63 letters, digits and ':._/#@-', "
                'e.g. "oidc:" (or "" to share the Kubernetes username namespace)'
            )
        if value.startswith("system:"):
            raise ValueError(f"{quoted(value)} starts with 'system:', which Kubernetes reserves; use e.g. \"oidc:\"")
        return value


class ApiKeys(Strict):
    maxExpirationDays: ExpirationDays = 90


class TelemetryMetrics(Strict):
    captureOrganization: StrictBool = True
    captureUser: StrictBool = False
    captureGroup: StrictBool = False
    captureModelUsage: StrictBool = True


class Telemetry(Strict):
    enabled: StrictBool = True
    metrics: TelemetryMetrics = TelemetryMetrics()


class Autoscaling(Strict):
    maxReplicas: Replicas = 10
    targetCPUUtilization: Percent = 70
    targetMemoryUtilization: Percent = 80


class ApiTranslation(Strict):
    enabled: StrictBool


class PayloadProcessing(Strict):
    type: Literal["ipp", "praxis"] = "ipp"
    replicas: Replicas | None = None
    autoscaling: Autoscaling | None = None
    apiTranslation: ApiTranslation | None = None
    forceMigration: StrictBool = False


class TenantConfig(Strict):
    name: TenantName
    gateway: TenantGateway | None = None
    oidc: Oidc | None = None
    apiKeys: ApiKeys = ApiKeys()
    telemetry: Telemetry = Telemetry()
    payloadProcessing: PayloadProcessing = PayloadProcessing()
    maasApiReplicas: Replicas = 1
    managementState: Literal["Managed", "Removed", "Unmanaged"] = "Managed"

    @property
    def namespace(self) -> str:
        return naming.tenant_namespace(self.name)

    @property
    def is_default(self) -> bool:
        return self.name == naming.DEFAULT_TENANT

    def gateway_name(self, platform: PlatformConfig) -> str:
        """The default tenant serves on the platform Gateway; every other tenant on a Gateway named after it."""
        if self.gateway is not None and self.gateway.name is not None:
            return self.gateway.name
        return platform.gateway.name if self.is_default else self.name

    def gateway_hostname(self, platform: PlatformConfig) -> str | None:
        """The tenant's own `gateway.hostname`, else the platform's when the tenant serves on the platform Gateway."""
        if self.gateway is not None and self.gateway.hostname is not None:
            return self.gateway.hostname
        return platform.gateway.hostname if self.gateway_name(platform) == platform.gateway.name else None


# ------------------------------------------------------------------------------------------------------ models


class BackendRef(Strict):
    kind: Literal["LLMInferenceService", "ExternalModel"]
    name: ObjectName


class RouteRef(Strict):
    name: ObjectName | None = None
    namespace: ModelNamespace | None = None
    hostnames: tuple[GatewayHostname, ...] = ()


class CredentialRef(Strict):
    name: ObjectName


class External(Strict):
    provider: Name63
    targetModel: Name253
    endpoint: Endpoint
    credentialRef: CredentialRef
    port: Port = 443
    tls: StrictBool = True
    # true: an endpoint inside the cluster or its network is accepted (else refused, `endpoints.py`); every
    # preview warns about it, as about `tls: false`.
    allowInternalEndpoint: StrictBool = False
    # `messages`: clients use the Anthropic Messages API, so the tenant's gateway also accepts `x-api-key`.
    apiFormat: Literal["openai-chat", "messages"] = "openai-chat"


class ModelConfig(Strict):
    name: DnsLabel
    namespace: ModelNamespace
    # `tenantRef` is the MaaSModelRef CRD's spelling, so a spec pasted from `kubectl get -o yaml` works unchanged.
    tenant: TenantName = Field(naming.DEFAULT_TENANT, validation_alias=AliasChoices("tenant", "tenantRef"))
    modelRef: BackendRef
    route: RouteRef = RouteRef()
    endpointOverride: EndpointUrl | None = None
    modelAlias: NonEmpty | None = None
    annotations: dict[Text, Unicode] = Field(default_factory=dict)
    external: External | None = None

    @model_validator(mode="before")
    @classmethod
    def _tenant_ref_agrees_with_tenant(cls, data: object) -> object:
        """Both spellings at once are accepted when they agree (one value); two different tenants are an error."""
        if not (isinstance(data, dict) and "tenant" in data and "tenantRef" in data):
            return data
        if data["tenant"] != data["tenantRef"]:
            raise ValueError(
                f"tenant {quoted(data['tenant'])} and tenantRef {quoted(data['tenantRef'])} name different tenants; "
                "tenantRef is the CRD spelling of tenant: keep one of them"
            )
        return {key: value for key, value in data.items() if key != "tenantRef"}

    @field_validator("annotations")
    @classmethod
    def _capabilities_are_a_json_string_array(cls, value: dict[str, str]) -> dict[str, str]:
        raw = value.get(CAPABILITIES_ANNOTATION)
        if raw is None:
            return value
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = None
        if not isinstance(parsed, list) or not all(isinstance(item, str) for item in parsed):
            raise ValueError(
                f'{CAPABILITIES_ANNOTATION} must be a JSON array of strings, e.g. \'["text-generation","chat"]\''
            )
        return value

    @model_validator(mode="after")
    def _external_iff_external_model(self) -> ModelConfig:
        if self.modelRef.kind == "ExternalModel" and self.external is None:
            raise ValueError("modelRef.kind is ExternalModel, so 'external' is required; add the external provider")
        if self.modelRef.kind != "ExternalModel" and self.external is not None:
            raise ValueError(f"'external' is only for modelRef.kind ExternalModel (this model is {self.modelRef.kind})")
        if self.modelRef.kind == "ExternalModel" and self.modelAlias is not None:
            raise ValueError("'modelAlias' is only for LLMInferenceService; an ExternalModel's alias is modelRef.name")
        if self.modelRef.kind == "ExternalModel":
            self._check_external_names()
        elif self.route.name is None:
            self._check_kserve_route_name()
        return self

    def _check_kserve_route_name(self) -> None:
        """KServe names the route `{modelRef.name}-kserve-route`; the policies target it by that name."""
        route = naming.llmisvc_route_name(self.modelRef.name)
        if len(route) > 253:
            raise ValueError(
                f"modelRef.name is {len(self.modelRef.name)} characters long, so KServe's HTTPRoute "
                f"{quoted(route)} has {len(route)}, over the 253 Kubernetes allows; use a name of at most "
                f"{253 - len(route) + len(self.modelRef.name)} characters or set route.name"
            )

    def _check_external_names(self) -> None:
        """The program creates the ExternalModel's HTTPRoute and Service `maas-{modelRef.name}` itself."""
        if self.route.name is not None or self.route.namespace is not None:
            raise ValueError(
                "route.name and route.namespace are only for LLMInferenceService; an ExternalModel's HTTPRoute is "
                f"created as {naming.external_model_route_name(self.modelRef.name)} in the model namespace "
                "(route.hostnames is allowed)"
            )
        service = naming.external_model_route_name(self.modelRef.name)
        if len(service) > 63 or not DNS_LABEL.fullmatch(self.modelRef.name):
            raise ValueError(
                f"modelRef.name {quoted(self.modelRef.name)} would name the ExternalName Service {quoted(service)}, "
                "which must "
                "be a DNS label of at most 63 characters; use a lowercase name of at most 58 characters"
            )

    @memoized  # read hundreds of thousands of times at 10,000 subscriptions
    def key(self) -> str:
        return naming.qualified(self.namespace, self.name)

    @property
    def route_name(self) -> str:
        if self.route.name:
            return self.route.name
        if self.modelRef.kind == "LLMInferenceService":
            return naming.llmisvc_route_name(self.modelRef.name)
        return naming.external_model_route_name(self.modelRef.name)

    @property
    def route_namespace(self) -> str:
        return self.route.namespace or self.namespace

    @property
    def served_name(self) -> str:
        """The model name KServe serves it under (its route's `publishers/{ns}/models/{name}` header), as far as
        configuration knows: `modelAlias` (its last part, when written in KServe's publisher form), else the
        LLMInferenceService's name. The live `spec.model.name` decides when observed."""
        alias = self.modelAlias
        if alias is None:
            return self.modelRef.name
        return alias.rpartition("/models/")[2] if alias.startswith("publishers/") else alias


# --------------------------------------------------------------------------------- auth policies, subscriptions


class GroupRef(Strict):
    name: NonEmpty


class Subjects(Strict):
    groups: tuple[GroupRef, ...] = ()
    users: tuple[NonEmpty, ...] = ()

    @field_validator("users", mode="before")
    @classmethod
    def _users_are_plain_names(cls, value: object) -> object:
        """Groups are `{name: ...}` entries and users plain strings, as in the CRD: a common mix-up."""
        if isinstance(value, list) and any(isinstance(item, dict) and set(item) == {"name"} for item in value):
            names = ", ".join(str(i["name"]) if isinstance(i, dict) else str(i) for i in value)
            raise ValueError(f"users are plain names, not {{name: ...}} entries; write users: [{names}]")
        return value

    @field_validator("groups", mode="before")
    @classmethod
    def _groups_are_entries(cls, value: object) -> object:
        if isinstance(value, list) and any(isinstance(item, str) for item in value):
            entries = ", ".join(f"{{name: {i}}}" if isinstance(i, str) else str(i) for i in value)
            raise ValueError(f"groups are entries with a name; write groups: [{entries}]")
        return value

    @model_validator(mode="after")
    def _someone(self) -> Subjects:
        if not self.groups and not self.users:
            raise ValueError("name at least one group or user")
        return self


class ModelKey(Strict):
    name: DnsLabel
    namespace: DnsLabel

    @memoized  # read hundreds of thousands of times at 10,000 subscriptions
    def key(self) -> str:
        return naming.qualified(self.namespace, self.name)


class Metadata(Strict):
    organizationId: Text | None = None
    costCenter: Text | None = None
    labels: dict[Text, Text] = Field(default_factory=dict)


class AuthPolicyConfig(Strict):
    name: DnsLabel
    namespace: DnsLabel = naming.DEFAULT_TENANT
    modelRefs: tuple[ModelKey, ...] = Field(min_length=1)
    subjects: Subjects
    meteringMetadata: Metadata | None = None
    annotations: dict[Text, Unicode] = Field(default_factory=dict)

    @memoized  # read hundreds of thousands of times at 10,000 subscriptions
    def key(self) -> str:
        return naming.qualified(self.namespace, self.name)


class TokenRateLimit(Strict):
    limit: TokenLimit
    window: Window


class BillingRate(Strict):
    perToken: NonEmpty


class SubscriptionModelRef(Strict):
    name: DnsLabel
    namespace: DnsLabel
    tokenRateLimits: tuple[TokenRateLimit, ...] = ()
    billingRate: BillingRate | None = None
    unlimited: StrictBool = False

    @model_validator(mode="after")
    def _limits_xor_unlimited(self) -> SubscriptionModelRef:
        if self.unlimited and self.tokenRateLimits:
            raise ValueError("'unlimited: true' and 'tokenRateLimits' are mutually exclusive; keep one of them")
        if not self.unlimited and not self.tokenRateLimits:
            raise ValueError("give at least one entry in 'tokenRateLimits', or set 'unlimited: true'")
        return self

    @model_validator(mode="wrap")
    @classmethod
    def _once(cls, data: object, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> SubscriptionModelRef:
        """Defined last, so it wraps the other validators: a repeated reference is shared, not validated again."""
        return validated_once(cls, data, handler, info.context)

    @memoized  # read hundreds of thousands of times at 10,000 subscriptions
    def key(self) -> str:
        return naming.qualified(self.namespace, self.name)

    @memoized
    def rate_pairs(self) -> tuple[tuple[int, str], ...]:
        """(limit, window) of each `tokenRateLimits` entry, in order: read once per distinct reference (identical
        references are one object, `validated_once`), not once per subscription that lists it."""
        return tuple((rate.limit, rate.window) for rate in self.tokenRateLimits)

    @memoized
    def value_hash(self) -> int:
        return hash((self.name, self.namespace, self.tokenRateLimits, self.billingRate, self.unlimited))

    def __hash__(self) -> int:
        """Computed once: the plan keys tables on references, and pydantic's frozen-model hash walks every field
        (and each rate's) again at every look-up. The entry is frozen, so its hash cannot change."""
        return self.value_hash


class SubscriptionConfig(Strict):
    name: DnsLabel
    namespace: DnsLabel = naming.DEFAULT_TENANT
    owner: Subjects
    modelRefs: tuple[SubscriptionModelRef, ...] = Field(min_length=1)
    priority: Int32 = 0
    # llm-d scheduling priority of the subscription's requests (issue 22): None creates no InferenceObjective, an
    # explicit value (0 included) creates one per InferencePool; independent of `priority` (selection).
    inferencePriority: Int32 | None = None
    tokenMetadata: Metadata | None = None
    # None: what the cluster says (seed 002's sticky identity), `short` for a subscription the cluster lacks.
    rateLimitIdentity: Literal["short", "legacy"] | None = None
    annotations: dict[Text, Unicode] = Field(default_factory=dict)

    @memoized  # read hundreds of thousands of times at 10,000 subscriptions
    def key(self) -> str:
        return naming.qualified(self.namespace, self.name)


# `maas:acceptUnmeteredTraffic` entries name one finding of the unmetered-traffic report
# (`plan/checks/unmetered.py`): `{model namespace}/{model name}:{path family}:{reason}`, or `*:{family}:{reason}`
# for that case on every model (a platform-wide decision, such as "KServe's /v1/messages stays unmetered").
UNMETERED_FAMILIES = ("*", "chat/completions", "completions", "responses", "messages")
UNMETERED_REASONS = (
    "no-total-tokens",
    "stream-usage-not-enforced",
    "stream-usage-unread",
    "query-exemption",
    "untargeted-route",
    "limitador-shadow",
    "policy-conflict",
)
_UNMETERED_KEY = re.compile(
    rf"(\*|[a-z0-9]([a-z0-9-]*[a-z0-9])?/[a-z0-9]([a-z0-9-]*[a-z0-9])?)"
    rf":({'|'.join(map(re.escape, UNMETERED_FAMILIES))}):({'|'.join(UNMETERED_REASONS)})"
)


def _unmetered_key(value: str) -> str:
    if not _UNMETERED_KEY.fullmatch(value):
        raise ValueError(
            f"{quoted(value)} is not an unmetered-traffic finding; write namespace/model:family:reason, e.g. "
            "llm/granite:messages:no-total-tokens, or *:family:reason for every model "
            f"(families {', '.join(UNMETERED_FAMILIES)}; reasons "
            f"{', '.join(UNMETERED_REASONS)})"
        )
    return value


UnmeteredKey = Annotated[StrictStr, AfterValidator(_unmetered_key)]


class UnmanagedRef(Strict):
    kind: Literal["TokenRateLimitPolicy", "AuthPolicy"]
    namespace: DnsLabel
    name: ObjectName


class MaasConfig(Strict):
    """The whole validated stack configuration; entries are tuples in configuration order."""

    platform: PlatformConfig = PlatformConfig()
    tenants: tuple[TenantConfig, ...] = (TenantConfig(name=naming.DEFAULT_TENANT),)
    models: tuple[ModelConfig, ...] = ()
    authPolicies: tuple[AuthPolicyConfig, ...] = ()
    subscriptions: tuple[SubscriptionConfig, ...] = ()
    unmanaged: tuple[UnmanagedRef, ...] = ()
    acceptQuotaResets: tuple[SubscriptionKey, ...] = ()
    acceptUnmeteredTraffic: tuple[UnmeteredKey, ...] = ()

    @memoized
    def models_by_key(self) -> dict[str, ModelConfig]:
        """Models by `namespace/name`: every subscription and auth policy looks its models up here."""
        return {model.key: model for model in self.models}
