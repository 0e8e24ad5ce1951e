"""The configuration contract: defaults, and a bad-input corpus where every rule has a failing example."""

from __future__ import annotations

import copy

import pytest

from maas import naming
from maas.config import ConfigError, load_config

BASE = {
    "tenants": [{"name": "models-as-a-service"}, {"name": "redteam"}],
    "models": [
        {"name": "granite", "namespace": "llm", "modelRef": {"kind": "LLMInferenceService", "name": "granite"}},
        {
            "name": "qwen",
            "namespace": "rt",
            "tenant": "redteam",
            "modelRef": {"kind": "LLMInferenceService", "name": "qwen"},
        },
    ],
    "authPolicies": [
        {"name": "ap", "modelRefs": [{"name": "granite", "namespace": "llm"}], "subjects": {"users": ["a"]}}
    ],
    "subscriptions": [
        {
            "name": "gold",
            "owner": {"groups": [{"name": "g"}]},
            "modelRefs": [{"name": "granite", "namespace": "llm", "tokenRateLimits": [{"limit": 100, "window": "1h"}]}],
        }
    ],
}


def errors_of(raw) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_config(raw)
    return [str(issue) for issue in caught.value.issues]


EXTERNAL_GPT = {
    "name": "gpt",
    "namespace": "ext",
    "modelRef": {"kind": "ExternalModel", "name": "gpt"},
    "external": {
        "provider": "openai",
        "targetModel": "gpt-4o",
        "endpoint": "api.openai.com",
        "credentialRef": {"name": "k"},
    },
}
OIDC = {"issuerUrl": "https://sso.example.com/realms/r", "clientId": "c"}


def with_change(path: str, value):
    """BASE with one value replaced; `path` is dotted with list indexes, e.g. `subscriptions.0.priority`."""
    raw = copy.deepcopy(BASE)
    *parents, last = path.split(".")
    target = raw
    for part in parents:
        target = target[int(part)] if part.isdigit() else target.setdefault(part, {})
    if last.isdigit() and int(last) == len(target):
        target.append(value)
    elif last.isdigit():
        target[int(last)] = value
    else:
        target[last] = value
    return raw


def test_base_configuration_is_valid():
    config = load_config(BASE)
    assert [t.namespace for t in config.tenants] == ["models-as-a-service", "ai-tenant-redteam"]


def test_defaults_follow_the_contract():
    config = load_config({})
    assert [t.name for t in config.tenants] == [naming.DEFAULT_TENANT]
    platform = config.platform
    assert (platform.flavor, platform.infraNamespace, platform.controllerNamespace) == (
        "openshift",
        "odh-ai-gateway-infra",
        "opendatahub",
    )
    assert (platform.gateway.name, platform.gateway.namespace) == ("maas-default-gateway", "openshift-ingress")
    assert (platform.cache.metadataTTL, platform.cache.authzTTL) == (60, 60)
    assert platform.exemptModelDiscovery is True and platform.usageMetricsDashboard is False
    assert platform.controllerMode == "absent" and platform.kubernetes.enableServerSideApply is True
    tenant = config.tenants[0]
    assert tenant.apiKeys.maxExpirationDays == 90 and tenant.maasApiReplicas == 1
    metrics = tenant.telemetry.metrics
    assert tenant.telemetry.enabled and (metrics.captureOrganization, metrics.captureUser) == (True, False)
    assert (metrics.captureGroup, metrics.captureModelUsage) == (False, True)
    assert tenant.payloadProcessing.type == "ipp" and tenant.managementState == "Managed"


def test_gateways_default_to_platform_gateway_for_default_tenant_and_tenant_name_otherwise():
    config = load_config(BASE)
    assert [t.gateway_name(config.platform) for t in config.tenants] == ["maas-default-gateway", "redteam"]


def test_subscription_and_policy_namespaces_default_to_the_default_tenant():
    config = load_config(BASE)
    assert config.subscriptions[0].namespace == config.authPolicies[0].namespace == "models-as-a-service"
    assert config.subscriptions[0].rateLimitIdentity is None and config.subscriptions[0].priority == 0


SUB = "maas:subscriptions[0] (models-as-a-service/gold)"
RATE = f"{SUB}.modelRefs[0].tokenRateLimits[0]"

CORPUS = [
    # top level
    (
        "bogus",
        1,
        "maas:bogus: unknown configuration key; use one of: platform, tenants, models, authPolicies, subscriptions, unmanaged",
    ),
    ("tenants", {"name": "x"}, "maas:tenants: must be a list of entries (got dict)"),
    # platform
    ("platform.flavor", "aws", "maas:platform.flavor: 'aws' is not allowed; use 'openshift' or 'xks'"),
    ("platform.infraNamespace", "Infra", "maas:platform.infraNamespace: 'Infra' is not a DNS label"),
    (
        "platform.controllerNamespace",
        "a" * 64,
        "maas:platform.controllerNamespace: '" + "a" * 64 + "' is 64 characters long; use at most 63",
    ),
    (
        "platform.monitoringNamespace",
        "Mon",
        "maas:platform.monitoringNamespace: 'Mon' is not a DNS label; give a namespace, or \"\"",
    ),
    ("platform.gateway.name", "", "maas:platform.gateway.name: must not be empty"),
    ("platform.clusterAudience", "", "maas:platform.clusterAudience: must be 1 to 4096 characters long (is 0)"),
    (
        "platform.cache.metadataTTL",
        -1,
        "maas:platform.cache.metadataTTL: -1 is too small; use a whole number of at least 0 seconds",
    ),
    ("platform.images.maasApi", 7, "maas:platform.images.maasApi: must be a string (got int 7); quote it in YAML"),
    (
        "platform.exemptModelDiscovery",
        "yes",
        "maas:platform.exemptModelDiscovery: must be true or false (got str 'yes')",
    ),
    ("platform.controllerMode", "off", "maas:platform.controllerMode: 'off' is not allowed; use 'absent' or 'coexist'"),
    (
        "platform.kubernetes.kubeConfig",
        "x",
        "maas:platform.kubernetes.kubeConfig: unknown key 'kubeConfig'; check the spelling (allowed here: clusterIdentifier, context, enableServerSideApply, kubeconfig, renderYamlToDirectory, upsertExistingObjects)",
    ),
    # tenants
    (
        "tenants.1.name",
        "a" * 42,
        "maas:tenants[1] (" + "a" * 42 + ").name: '" + "a" * 42 + "' is 42 characters long; use at most 41",
    ),
    ("tenants.1.name", "Red_Team", "maas:tenants[1] (Red_Team).name: 'Red_Team' is not a DNS label"),
    (
        "tenants.1.oidc",
        {"issuerUrl": "http://kc", "clientId": "c"},
        "maas:tenants[1] (redteam).oidc.issuerUrl: 'http://kc' is not a valid URL (the scheme must be https://); use https://issuer.example.com/realms/maas",
    ),
    (
        "tenants.1.oidc",
        {"issuerUrl": "https://kc", "clientId": "c", "ttl": 10},
        "maas:tenants[1] (redteam).oidc.ttl: 10 is too small; use a whole number of at least 30 seconds",
    ),
    ("tenants.1.oidc", {"issuerUrl": "https://kc"}, "maas:tenants[1] (redteam).oidc.clientId: is required; add it"),
    (
        "tenants.1.apiKeys",
        {"maxExpirationDays": 0},
        "maas:tenants[1] (redteam).apiKeys.maxExpirationDays: 0 is too small; use a whole number of at least 1 day(s)",
    ),
    (
        "tenants.1.telemetry",
        {"metrics": {"captureUsers": True}},
        "maas:tenants[1] (redteam).telemetry.metrics.captureUsers: unknown key 'captureUsers'",
    ),
    (
        "tenants.1.payloadProcessing",
        {"type": "envoy"},
        "maas:tenants[1] (redteam).payloadProcessing.type: 'envoy' is not allowed; use 'ipp' or 'praxis'",
    ),
    (
        "tenants.1.payloadProcessing",
        {"replicas": 101},
        "maas:tenants[1] (redteam).payloadProcessing.replicas: 101 is out of range; use a whole number from 1 to 100",
    ),
    (
        "tenants.1.payloadProcessing",
        {"autoscaling": {"targetCPUUtilization": 0}},
        "maas:tenants[1] (redteam).payloadProcessing.autoscaling.targetCPUUtilization: 0 is out of range",
    ),
    (
        "tenants.1.maasApiReplicas",
        0,
        "maas:tenants[1] (redteam).maasApiReplicas: 0 is out of range; use a whole number from 1 to 100",
    ),
    (
        "tenants.1.managementState",
        "Deleted",
        "maas:tenants[1] (redteam).managementState: 'Deleted' is not allowed; use 'Managed', 'Removed' or 'Unmanaged'",
    ),
    (
        "tenants.1",
        {"name": "models-as-a-service"},
        "maas:tenants[1] (models-as-a-service): tenant 'models-as-a-service' is defined twice (first at maas:tenants[0] (models-as-a-service)); keep one of them",
    ),
    (
        "tenants.1.gateway",
        {"name": "maas-default-gateway"},
        "maas:tenants[1] (redteam).gateway: Gateway 'maas-default-gateway' already serves tenant 'models-as-a-service'; two tenants may not share a Gateway",
    ),
    # models
    (
        "models.0.name",
        "g" * 64,
        "maas:models[0] (llm/" + "g" * 64 + ").name: '" + "g" * 64 + "' is 64 characters long; use at most 63",
    ),
    ("models.0.namespace", None, "maas:models[0] (granite).namespace: must be a string (got NoneType None)"),
    (
        "models.0.tenant",
        "blue",
        "maas:models[0] (llm/granite).tenant: tenant 'blue' is not in maas:tenants; add the tenant or fix the name (known: models-as-a-service, redteam)",
    ),
    (
        "models.0.modelRef",
        {"kind": "InferenceService", "name": "g"},
        "maas:models[0] (llm/granite).modelRef.kind: 'InferenceService' is not allowed; use 'LLMInferenceService' or 'ExternalModel'",
    ),
    (
        "models.0.modelRef",
        {"kind": "LLMInferenceService", "name": "x" * 254},
        "maas:models[0] (llm/granite).modelRef.name: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... (254 characters)' is not a valid Kubernetes object name; use at most 253",
    ),
    (
        "models.0.route",
        {"name": "Route!"},
        "maas:models[0] (llm/granite).route.name: 'Route!' is not a valid Kubernetes object name",
    ),
    (
        "models.0.annotations",
        {"opendatahub.io/model-capabilities": "chat"},
        "maas:models[0] (llm/granite).annotations: opendatahub.io/model-capabilities must be a JSON array of strings",
    ),
    (
        "models.0.modelRef",
        {"kind": "ExternalModel", "name": "g"},
        "maas:models[0] (llm/granite): modelRef.kind is ExternalModel, so 'external' is required; add the external provider",
    ),
    (
        "models.0.external",
        {"provider": "openai", "targetModel": "gpt", "endpoint": "api.openai.com", "credentialRef": {"name": "k"}},
        "maas:models[0] (llm/granite): 'external' is only for modelRef.kind ExternalModel (this model is LLMInferenceService)",
    ),
    (
        "models.1",
        {
            "name": "q",
            "namespace": "rt",
            "tenant": "redteam",
            "modelRef": {"kind": "ExternalModel", "name": "q"},
            "external": {
                "provider": "openai",
                "targetModel": "gpt",
                "endpoint": "https://api.openai.com",
                "credentialRef": {"name": "k"},
            },
        },
        "maas:models[1] (rt/q).external.endpoint: 'https://api.openai.com' is not a host name (not a DNS host name); give the FQDN without scheme, port or path",
    ),
    (
        "models.1",
        {
            "name": "q",
            "namespace": "rt",
            "tenant": "redteam",
            "modelRef": {"kind": "ExternalModel", "name": "q"},
            "external": {
                "provider": "openai",
                "targetModel": "gpt",
                "endpoint": "api.openai.com",
                "credentialRef": {"name": "k"},
                "port": 0,
            },
        },
        "maas:models[1] (rt/q).external.port: 0 is out of range; use a whole number from 1 to 65535",
    ),
    (
        "models.1",
        {"name": "granite", "namespace": "llm", "modelRef": {"kind": "LLMInferenceService", "name": "other"}},
        "maas:models[1] (llm/granite): model 'llm/granite' is defined twice (first at maas:models[0] (llm/granite)); keep one of them",
    ),
    (
        "models.1",
        {"name": "other", "namespace": "llm", "modelRef": {"kind": "LLMInferenceService", "name": "granite"}},
        "maas:models[1] (llm/other): HTTPRoute llm/granite-kserve-route (one model per route, since Kuadrant allows one policy per route) is defined twice",
    ),
    (
        "models.1",
        {
            "name": "granite",
            "namespace": "other",
            "route": {"namespace": "llm", "name": "r2"},
            "modelRef": {"kind": "LLMInferenceService", "name": "g2"},
        },
        "maas:models[1] (other/granite): model name 'granite' in route namespace llm (its policies would both be maas-trlp-granite); rename a model or move its route is defined twice",
    ),
    # auth policies
    (
        "authPolicies.0.namespace",
        "llm",
        "maas:authPolicies[0] (llm/ap).namespace: 'llm' is not a tenant namespace; use one of: ai-tenant-redteam, models-as-a-service",
    ),
    (
        "authPolicies.0.modelRefs",
        [],
        "maas:authPolicies[0] (models-as-a-service/ap).modelRefs: must not be empty; give at least one entry",
    ),
    (
        "authPolicies.0.subjects",
        {"groups": [], "users": []},
        "maas:authPolicies[0] (models-as-a-service/ap).subjects: name at least one group or user",
    ),
    (
        "authPolicies.0.modelRefs",
        [{"name": "qwen", "namespace": "rt"}],
        "maas:authPolicies[0] (models-as-a-service/ap).modelRefs[0]: model rt/qwen is served by tenant 'redteam', not by 'models-as-a-service' (tenant isolation); move this entry to namespace ai-tenant-redteam or drop the reference",
    ),
    (
        "authPolicies.0.modelRefs",
        [{"name": "granite", "namespace": "llm"}] * 2,
        "maas:authPolicies[0] (models-as-a-service/ap).modelRefs[1]: model llm/granite is listed twice (also modelRefs[0]); merge the entries",
    ),
    (
        "authPolicies.1",
        {"name": "ap", "modelRefs": [{"name": "granite", "namespace": "llm"}], "subjects": {"users": ["b"]}},
        "maas:authPolicies[1] (models-as-a-service/ap): auth policy 'models-as-a-service/ap' is defined twice",
    ),
    # subscriptions
    ("subscriptions.0.owner", {}, f"{SUB}.owner: name at least one group or user"),
    (
        "subscriptions.0.modelRefs.0.tokenRateLimits.0",
        {"limit": 0, "window": "1h"},
        f"{RATE}.limit: 0 is out of range; use a whole number from 1 to 1000000000",
    ),
    (
        "subscriptions.0.modelRefs.0.tokenRateLimits.0",
        {"limit": 1_000_000_001, "window": "1h"},
        f"{RATE}.limit: 1000000001 is out of range",
    ),
    (
        "subscriptions.0.modelRefs.0.tokenRateLimits.0",
        {"limit": "100", "window": "1h"},
        f"{RATE}.limit: must be a whole number (got str '100')",
    ),
    (
        "subscriptions.0.modelRefs.0.tokenRateLimits.0",
        {"limit": 100.5, "window": "1h"},
        f"{RATE}.limit: must be a whole number (got float 100.5)",
    ),
    (
        "subscriptions.0.modelRefs.0.tokenRateLimits.0",
        {"limit": 100, "window": "1d"},
        f"{RATE}.window: '1d' is not a valid window; use s, m or h, e.g. 24h",
    ),
    (
        "subscriptions.0.modelRefs.0.tokenRateLimits.0",
        {"limit": 100, "window": "0m"},
        f"{RATE}.window: '0m' is not a valid window",
    ),
    (
        "subscriptions.0.modelRefs.0.tokenRateLimits.0",
        {"limit": 100, "window": "8785h"},
        f"{RATE}.window: '8785h' is longer than 366 days; use at most 8784h",
    ),
    (
        "subscriptions.0.modelRefs.0.unlimited",
        True,
        f"{SUB}.modelRefs[0]: 'unlimited: true' and 'tokenRateLimits' are mutually exclusive; keep one of them",
    ),
    (
        "subscriptions.0.modelRefs.0.tokenRateLimits",
        [],
        f"{SUB}.modelRefs[0]: give at least one entry in 'tokenRateLimits', or set 'unlimited: true'",
    ),
    (
        "subscriptions.0.modelRefs.1",
        {"name": "granite", "namespace": "llm", "unlimited": True},
        f"{SUB}.modelRefs[1]: model llm/granite is listed twice (also modelRefs[0]); merge the entries",
    ),
    (
        "subscriptions.0.modelRefs.1",
        {"name": "qwen", "namespace": "rt", "unlimited": True},
        f"{SUB}.modelRefs[1]: model rt/qwen is served by tenant 'redteam', not by 'models-as-a-service' (tenant isolation)",
    ),
    (
        "subscriptions.0.rateLimitIdentity",
        "long",
        f"{SUB}.rateLimitIdentity: 'long' is not allowed; use 'short' or 'legacy'",
    ),
    ("subscriptions.0.priority", 2**31, f"{SUB}.priority: 2147483648 is out of range"),
    (
        "subscriptions.0.priorty",
        1,
        f"{SUB}.priorty: unknown key 'priorty'; check the spelling (allowed here: annotations, inferencePriority, modelRefs, name, namespace, owner, priority, rateLimitIdentity, tokenMetadata)",
    ),
    (
        "subscriptions.0.modelRefs.0.billingRate",
        {"perToken": ""},
        f"{SUB}.modelRefs[0].billingRate.perToken: must be 1 to 4096 characters long (is 0)",
    ),
    (
        "subscriptions.0.namespace",
        "ai-tenant-blue",
        "maas:subscriptions[0] (ai-tenant-blue/gold).namespace: 'ai-tenant-blue' is not a tenant namespace; use one of: ai-tenant-redteam, models-as-a-service",
    ),
    (
        "subscriptions.1",
        {
            "name": "gold",
            "owner": {"users": ["u"]},
            "modelRefs": [{"name": "granite", "namespace": "llm", "unlimited": True}],
        },
        "maas:subscriptions[1] (models-as-a-service/gold): subscription 'models-as-a-service/gold' is defined twice",
    ),
    # unmanaged
    (
        "unmanaged",
        [{"kind": "Deployment", "namespace": "llm", "name": "x"}],
        "maas:unmanaged[0] (Deployment llm/x).kind: 'Deployment' is not allowed; use 'TokenRateLimitPolicy' or 'AuthPolicy'",
    ),
    (
        "unmanaged",
        [{"kind": "AuthPolicy", "namespace": "llm", "name": "x"}] * 2,
        "maas:unmanaged[1] (AuthPolicy llm/x): AuthPolicy llm/x is defined twice",
    ),
]


# Hostile and careless input (issue 8): every value is checked whole, echoed escaped, and the fix is the right one.
MODEL = "maas:models[0] (llm/granite)"
HOSTILE = [
    ("models.0.name", "granite\n", r"maas:models[0] (llm/granite\n).name: 'granite\n' is not a DNS label"),
    ("tenants.1.name", "redteam\n", r"maas:tenants[1] (redteam\n).name: 'redteam\n' is not a DNS label"),
    (
        "subscriptions.0.modelRefs.0.name",
        "granite\n",
        rf"{SUB}.modelRefs[0].name: 'granite\n' is not a DNS label",
    ),
    (
        "authPolicies.0.modelRefs.0.namespace",
        "llm\n",
        r"maas:authPolicies[0] (models-as-a-service/ap).modelRefs[0].namespace: 'llm\n' is not a DNS label",
    ),
    (
        "subscriptions.0.modelRefs.0.tokenRateLimits.0",
        {"limit": 100, "window": "\u0661h"},
        f"{SUB}.modelRefs[0].tokenRateLimits[0].window: '\u0661h' is not a valid window; use s, m or h, e.g. 24h",
    ),
    (
        "subscriptions.0.modelRefs.0.tokenRateLimits.0",
        {"limit": 100, "window": "1h\n"},
        rf"{SUB}.modelRefs[0].tokenRateLimits[0].window: '1h\n' is not a valid window",
    ),
    (
        "subscriptions.0.modelRefs.0.tokenRateLimits.0",
        {"limit": 100, "window": 60},
        f"{SUB}.modelRefs[0].tokenRateLimits[0].window: 60 has no unit; windows are strings such as 60s, 1m or 24h: use 60s or 1m",
    ),
    (
        "subscriptions.0.modelRefs.0.tokenRateLimits.0",
        {"limit": 100, "window": 7200},
        f"{SUB}.modelRefs[0].tokenRateLimits[0].window: 7200 has no unit; windows are strings such as 60s, 1m or 24h: use 7200s or 120m or 2h",
    ),
    (
        "subscriptions.0.owner",
        {"users": [{"name": "alice"}]},
        f"{SUB}.owner.users: users are plain names, not {{name: ...}} entries; write users: [alice]",
    ),
    (
        "subscriptions.0.owner",
        {"groups": ["premium-users"]},
        f"{SUB}.owner.groups: groups are entries with a name; write groups: [{{name: premium-users}}]",
    ),
    (
        "subscriptions.0.owner",
        {"groups": [{"name": "gold\u001b[2K\rmaas:tenants[0]: forged"}]},
        rf"{SUB}.owner.groups[0].name: 'gold\x1b[2K\rmaas:tenants[0]: forged' contains the control character '\x1b'; remove it",
    ),
    (
        "tenants.1.oidc",
        {"issuerUrl": "https://kc.example.com/realms/maas\nX-Forged: 1", "clientId": "c"},
        r"maas:tenants[1] (redteam).oidc.issuerUrl: 'https://kc.example.com/realms/maas\nX-Forged: 1' contains the control character '\n'",
    ),
    (
        "tenants.1.oidc",
        {"issuerUrl": "https://kc.example.com evil", "clientId": "c"},
        "maas:tenants[1] (redteam).oidc.issuerUrl: 'https://kc.example.com evil' is not a valid URL (a URL has no spaces",
    ),
    (
        "tenants.1.oidc",
        {"issuerUrl": "https://kc.example.com/realms/maas?x=1", "clientId": "c"},
        "maas:tenants[1] (redteam).oidc.issuerUrl: 'https://kc.example.com/realms/maas?x=1' is not a valid URL (an issuer has no query or fragment)",
    ),
    (
        "tenants.1.oidc",
        {"issuerUrl": "https://user:pw@kc.example.com", "clientId": "c"},
        "maas:tenants[1] (redteam).oidc.issuerUrl: 'https://user:pw@kc.example.com' is not a valid URL (credentials in a URL are not allowed)",
    ),
    (
        "models.0.endpointOverride",
        "https://https://models.example.com/llm/granite",
        f"{MODEL}.endpointOverride: 'https://https://models.example.com/llm/granite' is not a valid URL (the host must be a lowercase DNS name",
    ),
    (
        "models.0.endpointOverride",
        "models.example.com/llm/granite",
        f"{MODEL}.endpointOverride: 'models.example.com/llm/granite' is not a valid URL (the scheme must be https:// or http://)",
    ),
    (
        "models.0.endpointOverride",
        "https://Models.Example.com/llm",
        f"{MODEL}.endpointOverride: 'https://Models.Example.com/llm' is not a valid URL (the host must be a lowercase DNS name",
    ),
    (
        "models.0.modelRef",
        {"kind": "LLMInferenceService", "name": "Granite 7B"},
        f"{MODEL}.modelRef.name: 'Granite 7B' is not a valid Kubernetes object name",
    ),
    (
        "models.0.modelRef",
        {"kind": "LLMInferenceService", "name": "g" * 245},
        f"{MODEL}: modelRef.name is 245 characters long, so KServe's HTTPRoute 'gggggggggggggggggggggggggggggggggggggggggggggggggggggggggggg... (258 characters)' has 258, over the 253 Kubernetes allows; use a name of at most 240 characters or set route.name",
    ),
    (
        "models.0.route",
        {"hostnames": ["Models.Example.com"]},
        f"{MODEL}.route.hostnames[0]: 'Models.Example.com' is not a Gateway API hostname (host names are lowercase)",
    ),
    (
        "platform.gateway.hostname",
        "*.example.com",
        "maas:platform.gateway.hostname: '*.example.com' is not a host name",
    ),
    (
        "models.1",
        {
            "name": "q",
            "namespace": "rt",
            "tenant": "redteam",
            "modelRef": {"kind": "ExternalModel", "name": "q"},
            "external": {
                "provider": "openai",
                "targetModel": "gpt",
                "endpoint": "API.OpenAI.com",
                "credentialRef": {"name": "k"},
            },
        },
        "maas:models[1] (rt/q).external.endpoint: 'API.OpenAI.com' is not a host name (host names are lowercase)",
    ),
    (
        "platform.cache.metadataTTL",
        2**64,
        "maas:platform.cache.metadataTTL: 18446744073709551616 is too large; use at most 31622400 seconds",
    ),
    (
        "tenants.1.oidc",
        {"issuerUrl": "https://kc", "clientId": "c", "ttl": 2**63},
        "maas:tenants[1] (redteam).oidc.ttl: 9223372036854775808 is too large",
    ),
    (
        "tenants.1.apiKeys",
        {"maxExpirationDays": 2**53 + 1},
        "maas:tenants[1] (redteam).apiKeys.maxExpirationDays: 9007199254740993 is too large; use at most 2147483647 day(s)",
    ),
    ("subscriptions.0.priority", -(2**63), f"{SUB}.priority: -9223372036854775808 is out of range"),
    (
        "models.0.annotations",
        {"openshift.io/description": "ok\ud800"},
        f"{MODEL}.annotations.openshift.io/description: 'ok\\ud800' is not valid Unicode text (a lone surrogate)",
    ),
    # the platform's own namespaces and identities
    (
        "models.0.namespace",
        "odh-ai-gateway-infra",
        "maas:models[0] (odh-ai-gateway-infra/granite).namespace: 'odh-ai-gateway-infra' is platform.infraNamespace, where every tenant's maas-api runs; models may not live there",
    ),
    (
        "models.0.route",
        {"namespace": "openshift-ingress"},
        f"{MODEL}.route.namespace: 'openshift-ingress' is platform.gateway.namespace, where the Gateways and their policies live; models may not live there",
    ),
    (
        "platform.infraNamespace",
        "models-as-a-service",
        "maas:platform.infraNamespace: 'models-as-a-service' is the namespace of tenant 'models-as-a-service'; the platform's namespaces may not be tenant namespaces",
    ),
    (
        "platform.gateway",
        {"namespace": "ai-tenant-redteam"},
        "maas:platform.gateway.namespace: 'ai-tenant-redteam' is the namespace of tenant 'redteam'",
    ),
    ("platform.quotaResets", "block", "maas:platform.quotaResets: 'block' is not allowed; use 'warn' or 'error'"),
    ("platform.observe", "yes", "maas:platform.observe: must be true or false (got str 'yes')"),
    (
        "platform.kuadrantVersion",
        "1.3",
        "maas:platform.kuadrantVersion: '1.3' is not a Kuadrant version this program knows; use 1.4, 1.5 or later",
    ),
    (
        "platform.kuadrantVersion",
        1.5,
        "maas:platform.kuadrantVersion: must be a string (got float 1.5); quote it in YAML",
    ),
    ("platform.gatewayBudget", "off", "maas:platform.gatewayBudget: 'off' is not allowed; use 'warn' or 'error'"),
    (
        "platform.predicateFormat",
        "short",
        "maas:platform.predicateFormat: 'short' is not allowed; use 'default' or 'compact'",
    ),
    (
        "platform.scope",
        "tenants",
        "maas:platform.scope: 'tenants' is not a scope; use all, platform or tenant:<tenant name>",
    ),
    ("platform.scope", "tenant:Red", "maas:platform.scope: 'tenant:Red' is not a scope"),
    (
        "platform.scope",
        "tenant:blue",
        "maas:platform.scope: tenant 'blue' is not in maas:tenants; use tenant:<name> with one of: ",
    ),
    (
        "acceptQuotaResets",
        ["models-as-a-service/gold", "gold"],
        "maas:acceptQuotaResets[1]: 'gold' is not a subscription; write namespace/name, e.g. models-as-a-service/gold",
    ),
    (
        "platform.infraNamespace",
        "openshift-ingress",
        "maas:platform.infraNamespace: 'openshift-ingress' is also maas:platform.gateway.namespace; maas-api's NetworkPolicies would isolate the Gateway pods there",
    ),
    (
        "platform.infraNamespace",
        "kube-system",
        "maas:platform.infraNamespace: 'kube-system' is a namespace of the cluster itself",
    ),
    (
        "platform.infraNamespace",
        "openshift-monitoring",
        "maas:platform.infraNamespace: 'openshift-monitoring' is a namespace of the cluster itself",
    ),
    (
        "models.2",
        {**EXTERNAL_GPT, "external": {**EXTERNAL_GPT["external"], "allowInternalEndpoint": "yes"}},
        "maas:models[2] (ext/gpt).external.allowInternalEndpoint: must be true or false (got str 'yes')",
    ),
    (
        "models.2",
        {**EXTERNAL_GPT, "external": {**EXTERNAL_GPT["external"], "endpoint": "169.254.169.254"}},
        "maas:models[2] (ext/gpt).external.endpoint: '169.254.169.254' is a link-local address (the cloud metadata "
        "service lives there); use the provider's public endpoint, or set external.allowInternalEndpoint: true",
    ),
    (
        "tenants.1.oidc",
        {**OIDC, "usernameClaim": "email"},
        "maas:tenants[1] (redteam).oidc.usernameClaim: 'email' is not allowed; use 'sub' or 'preferred_username'",
    ),
    (
        "tenants.1.oidc",
        {**OIDC, "usernamePrefix": "system:x"},
        "maas:tenants[1] (redteam).oidc.usernamePrefix: 'system:x' starts with 'system:', which Kubernetes reserves",
    ),
    (
        "platform.monitoringNamespace",
        "mon\n",
        r"maas:platform.monitoringNamespace: 'mon\n' contains the control character '\n'; remove it",
    ),
    # platform.kubernetes: combinations pulumi-kubernetes refuses (CheckConfig) or turns against a deployed stack
    (
        "platform.kubernetes",
        {"renderYamlToDirectory": "out", "context": "prod"},
        "maas:platform.kubernetes.context: is not compatible with maas:platform.kubernetes.renderYamlToDirectory: "
        "pulumi-kubernetes refuses the combination",
    ),
    (
        "platform.kubernetes",
        {"renderYamlToDirectory": "out", "kubeconfig": "./kubeconfig"},
        "maas:platform.kubernetes.kubeconfig: is not compatible with maas:platform.kubernetes.renderYamlToDirectory: "
        "pulumi-kubernetes refuses the combination",
    ),
    (
        "platform.kubernetes",
        {"renderYamlToDirectory": "out", "clusterIdentifier": "prod"},
        "maas:platform.kubernetes.clusterIdentifier: is not compatible with "
        "maas:platform.kubernetes.renderYamlToDirectory: it names the cluster this stack deploys to",
    ),
    (
        "platform.kubernetes",
        {"renderYamlToDirectory": ""},
        "maas:platform.kubernetes.renderYamlToDirectory: must not be empty (the provider reads '' as off); give a "
        "directory, or remove the key",
    ),
    (
        "platform.kubernetes",
        {"enableServerSideApply": False, "upsertExistingObjects": True},
        "maas:platform.kubernetes.upsertExistingObjects: has no effect with enableServerSideApply: false: "
        "pulumi-kubernetes applies over an existing object only with server-side apply",
    ),
]


@pytest.mark.parametrize(
    ("path", "value", "expected"), CORPUS + HOSTILE, ids=[f"{c[0]}={c[1]!r}"[:60] for c in CORPUS + HOSTILE]
)
def test_bad_input_is_reported_with_path_and_fix(path, value, expected):
    errors = errors_of(with_change(path, value))
    assert any(error.startswith(expected) for error in errors), errors
    assert all("\n" not in error and "\x1b" not in error for error in errors), "an issue must stay one line"


def test_all_errors_are_reported_together_in_a_stable_order():
    raw = with_change("platform.flavor", "aws")
    raw["tenants"][1]["maasApiReplicas"] = 0
    raw["subscriptions"][0]["modelRefs"][0]["tokenRateLimits"] = [{"limit": 0, "window": "1d"}]
    errors = errors_of(raw)
    assert errors == [
        "maas:platform.flavor: 'aws' is not allowed; use 'openshift' or 'xks'",
        "maas:subscriptions[0] (models-as-a-service/gold).modelRefs[0].tokenRateLimits[0].limit: "
        "0 is out of range; use a whole number from 1 to 1000000000",
        "maas:subscriptions[0] (models-as-a-service/gold).modelRefs[0].tokenRateLimits[0].window: "
        "'1d' is not a valid window; use s, m or h, e.g. 24h",
        "maas:tenants[1] (redteam).maasApiReplicas: 0 is out of range; use a whole number from 1 to 100",
    ]


def test_a_broken_tenant_does_not_cascade_into_namespace_errors():
    raw = with_change("tenants.1.maasApiReplicas", 0)
    raw["subscriptions"][0]["namespace"] = "ai-tenant-redteam"
    raw["subscriptions"][0]["modelRefs"][0] = {"name": "qwen", "namespace": "rt", "unlimited": True}
    assert errors_of(raw) == [
        "maas:tenants[1] (redteam).maasApiReplicas: 0 is out of range; use a whole number from 1 to 100"
    ]


def test_error_message_says_nothing_was_registered():
    with pytest.raises(ConfigError, match=r"invalid MaaS configuration \(1 problem\(s\)\); nothing was registered"):
        load_config(with_change("platform.flavor", "aws"))


def test_validated_config_is_immutable():
    config = load_config(BASE)
    with pytest.raises(Exception, match="frozen"):
        config.subscriptions[0].priority = 3


# ------------------------------------------------------------------ reserved first path segments (issue 17)

RESERVED_TEXT = (
    "is a first path segment the gateway reserves (/v1/ and /maas-api/ are the platform's paths, /publishers/ "
    "KServe's), so the gateway would never route a request to a model there, or the model would capture other "
    "models' requests; use another namespace"
)


def kserve(name: str, namespace: str = "llm", backend: str | None = None) -> dict:
    return {"name": name, "namespace": namespace, "modelRef": {"kind": "LLMInferenceService", "name": backend or name}}


def external_model(name: str, target: str, namespace: str = "ext", **fields) -> dict:
    return {
        "name": name,
        "namespace": namespace,
        "modelRef": {"kind": "ExternalModel", "name": name},
        "external": {
            "provider": "openai",
            "targetModel": target,
            "endpoint": "api.openai.com",
            "credentialRef": {"name": "k"},
        },
        **fields,
    }


@pytest.mark.parametrize("namespace", ["v1", "maas-api", "publishers"])
def test_a_model_namespace_that_is_a_reserved_first_path_segment_is_refused(namespace):
    assert errors_of({"models": [kserve("granite", namespace)]}) == [
        f"maas:models[0] ({namespace}/granite).namespace: '{namespace}' {RESERVED_TEXT}"
    ]


@pytest.mark.parametrize("namespace", ["v1", "maas-api", "publishers"])
def test_a_route_namespace_that_is_a_reserved_first_path_segment_is_refused(namespace):
    model = {**kserve("granite"), "route": {"name": "granite-route", "namespace": namespace}}
    assert errors_of({"models": [model]}) == [
        f"maas:models[0] (llm/granite).route.namespace: '{namespace}' {RESERVED_TEXT}"
    ]


def test_an_external_model_in_a_reserved_namespace_is_refused():
    assert errors_of({"models": [external_model("gpt", "gpt-4o", namespace="v1")]}) == [
        f"maas:models[0] (v1/gpt).namespace: 'v1' {RESERVED_TEXT}"
    ]


def test_namespaces_that_only_resemble_a_reserved_segment_are_accepted():
    config = load_config({"models": [kserve("a", "v2"), kserve("b", "publisher"), kserve("c", "maas-api-models")]})
    assert [m.namespace for m in config.models] == ["v2", "publisher", "maas-api-models"]


# ---------------------------------------------------------------------- one routing header per model and Gateway

CLASH = (
    "Gateway API would send every body-routed request for it to only one of the two routes, so give one model "
    "another value or serve it on another tenant's Gateway"
)
PUBLISHER_FORM = (
    "has the publishers/<ns>/models/<name> form, which is KServe's routing header for LLMInferenceServices; use "
    "the provider's own model name"
)


def test_two_external_models_with_one_target_model_on_one_gateway_are_refused_naming_both():
    raw = {"models": [external_model("gpt-a", "gpt-4o"), external_model("gpt-b", "gpt-4o")]}
    assert errors_of(raw) == [
        "maas:models[1] (ext/gpt-b).external.targetModel: X-Gateway-Model-Name 'gpt-4o' is already the routing "
        f"header of maas:models[0] (ext/gpt-a) on Gateway openshift-ingress/maas-default-gateway; {CLASH}"
    ]


def test_one_target_model_on_two_tenants_gateways_is_accepted():
    raw = {
        "tenants": [{"name": "models-as-a-service"}, {"name": "redteam"}],
        "models": [external_model("gpt-a", "gpt-4o"), external_model("gpt-b", "gpt-4o", tenant="redteam")],
    }
    assert [m.external.targetModel for m in load_config(raw).models] == ["gpt-4o", "gpt-4o"]


def test_target_models_are_compared_exactly_as_gateway_api_matches_header_values():
    """Header match type Exact is case-sensitive on values: `GPT-4o` and `gpt-4o` are two headers."""
    raw = {"models": [external_model("gpt-a", "gpt-4o"), external_model("gpt-b", "GPT-4o")]}
    assert [m.external.targetModel for m in load_config(raw).models] == ["gpt-4o", "GPT-4o"]


def test_two_kserve_models_serving_one_name_in_one_namespace_are_refused():
    first = {**kserve("granite"), "modelAlias": "granite-7b"}
    second = {**kserve("granite-copy", backend="granite-v2"), "modelAlias": "granite-7b"}
    assert errors_of({"models": [first, second]}) == [
        "maas:models[1] (llm/granite-copy).modelAlias: X-Gateway-Model-Name 'publishers/llm/models/granite-7b' is "
        f"already the routing header of maas:models[0] (llm/granite) on Gateway "
        f"openshift-ingress/maas-default-gateway; {CLASH}"
    ]


def test_two_kserve_models_of_one_backend_with_their_own_routes_are_refused():
    first = {**kserve("granite"), "route": {"name": "granite-a"}}
    second = {**kserve("granite-b", backend="granite"), "route": {"name": "granite-b"}}
    assert errors_of({"models": [first, second]}) == [
        "maas:models[1] (llm/granite-b).modelRef.name: X-Gateway-Model-Name 'publishers/llm/models/granite' is "
        "already the routing header of maas:models[0] (llm/granite) on Gateway "
        f"openshift-ingress/maas-default-gateway; {CLASH}"
    ]


def test_one_served_name_in_two_namespaces_is_two_headers():
    raw = {
        "models": [{**kserve("a", "llm"), "modelAlias": "granite"}, {**kserve("b", "llm2"), "modelAlias": "granite"}]
    }
    assert len(load_config(raw).models) == 2


def test_an_external_model_taking_a_kserve_models_header_is_refused_at_the_external_model():
    """Reported at the ExternalModel even when it comes first: the KServe model's header is KServe's."""
    raw = {"models": [external_model("gpt", "publishers/llm/models/granite"), kserve("granite")]}
    assert errors_of(raw) == [
        "maas:models[0] (ext/gpt).external.targetModel: X-Gateway-Model-Name 'publishers/llm/models/granite' is "
        "already the routing header of maas:models[1] (llm/granite) on Gateway "
        f"openshift-ingress/maas-default-gateway; {CLASH}"
    ]


@pytest.mark.parametrize("target", ["publishers/llm/models/granite", "publishers/x/models/meta-llama/Llama-3"])
def test_an_external_model_in_kserves_publisher_form_is_refused_without_a_clash(target):
    """An LLMInferenceService added later would take the header; refused before that can happen."""
    assert errors_of({"models": [external_model("gpt", target)]}) == [
        f"maas:models[0] (ext/gpt).external.targetModel: '{target}' {PUBLISHER_FORM}"
    ]


@pytest.mark.parametrize(
    "target", ["publishers/gpt-4o", "Publishers/llm/models/granite", "openai/publishers/x/models/y"]
)
def test_a_target_model_that_is_not_exactly_kserves_form_is_accepted(target):
    assert load_config({"models": [external_model("gpt", target)]}).models[0].external.targetModel == target


def subscription_with_refs(name: str, *refs: dict) -> dict:
    return {"name": name, "owner": {"groups": [{"name": "g"}]}, "modelRefs": list(refs)}


GRANITE_REF = {"name": "granite", "namespace": "llm", "tokenRateLimits": [{"limit": 1, "window": "1h"}]}


def test_identical_model_references_share_one_validated_entry():
    raw = copy.deepcopy(BASE)
    raw["subscriptions"] = [subscription_with_refs(n, copy.deepcopy(GRANITE_REF)) for n in ("a", "b")]
    first, second = load_config(raw).subscriptions
    assert first.modelRefs[0] is second.modelRefs[0]


@pytest.mark.parametrize("limit", [True, 1.0])
def test_a_reference_equal_only_in_value_to_a_valid_one_is_still_refused(limit):
    """`True == 1.0 == 1` in Python; the shared entry is found by value and type, so these are validated."""
    bad = {**GRANITE_REF, "tokenRateLimits": [{"limit": limit, "window": "1h"}]}
    raw = copy.deepcopy(BASE)
    raw["subscriptions"] = [subscription_with_refs("a", GRANITE_REF), subscription_with_refs("b", bad)]
    assert errors_of(raw) == [
        "maas:subscriptions[1] (models-as-a-service/b).modelRefs[0].tokenRateLimits[0].limit: must be a whole "
        f"number (got {type(limit).__name__} {limit!r})"
    ]


def test_a_repeated_invalid_reference_is_reported_at_every_subscription():
    bad = {**GRANITE_REF, "tokenRateLimits": [{"limit": 1, "window": 60}]}
    raw = copy.deepcopy(BASE)
    raw["subscriptions"] = [subscription_with_refs(n, bad) for n in ("a", "b")]
    assert errors_of(raw) == [
        f"maas:subscriptions[{i}] (models-as-a-service/{n}).modelRefs[0].tokenRateLimits[0].window: 60 has no "
        "unit; windows are strings such as 60s, 1m or 24h: use 60s or 1m"
        for i, n in enumerate("ab")
    ]


def test_a_bytes_like_value_is_never_shared():
    """marshal spells every bytes-like value alike: an empty memoryview is a valid (empty) list, bytes are not."""
    refs = [{**GRANITE_REF, "tokenRateLimits": empty, "unlimited": True} for empty in (memoryview(b""), b"")]
    raw = copy.deepcopy(BASE)
    raw["subscriptions"] = [subscription_with_refs(n, r) for n, r in zip("ab", refs, strict=True)]
    assert errors_of(raw) == [
        "maas:subscriptions[1] (models-as-a-service/b).modelRefs[0].tokenRateLimits: must be a list (got bytes b'')"
    ]


def test_a_model_reference_hashes_by_value_and_keeps_its_rates_in_order():
    """The plan keys tables on references; the hash is computed once (the entry is frozen) and follows equality."""
    from maas.config import SubscriptionModelRef

    def ref(window: str) -> SubscriptionModelRef:
        rates = [{"limit": 100, "window": window}, {"limit": 5, "window": "1s"}]
        return SubscriptionModelRef.model_validate({"name": "m", "namespace": "llm", "tokenRateLimits": rates})

    a, b, other = ref("1m"), ref("1m"), ref("1h")
    assert a is not b and a == b and hash(a) == hash(b) and {a: 1}[b] == 1
    assert other != a and other not in {a}
    assert a.rate_pairs == ((100, "1m"), (5, "1s"))


def test_a_copy_with_changed_fields_computes_its_cached_properties_again():
    """pydantic's `model_copy` copies cached property values; the copy of an entry with other rates (the budget's
    respelling lever) must read its own rates, key and hash, not the original's."""
    from maas.config import SubscriptionModelRef, TokenRateLimit

    ref = SubscriptionModelRef.model_validate(
        {"name": "m", "namespace": "llm", "tokenRateLimits": [{"limit": 100, "window": "60s"}]}
    )
    assert (ref.rate_pairs, ref.key) == (((100, "60s"),), "llm/m")
    hash(ref)
    copy = ref.model_copy(update={"tokenRateLimits": (TokenRateLimit(limit=100, window="1m"),), "name": "n"})
    assert (copy.rate_pairs, copy.key) == (((100, "1m"),), "llm/n")
    assert copy != ref and hash(copy) != hash(ref)
    assert ref.model_copy() == ref and ref.model_copy().rate_pairs == ref.rate_pairs
