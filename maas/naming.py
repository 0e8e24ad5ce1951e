"""Every name, label and annotation the program writes, in one place.

Names follow the upstream maas-controller so that objects keep their identity when a cluster moves from the
controller to this program.
"""

from __future__ import annotations

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
AUTH_POLICIES_ANNOTATION = "maas.opendatahub.io/auth-policies"
CONTROLLER_MANAGED_ANNOTATION = "opendatahub.io/managed"


def tenant_namespace(tenant: str) -> str:
    """The default tenant keeps its historical namespace; every other tenant gets `ai-tenant-{name}`."""
    return tenant if tenant == DEFAULT_TENANT else f"{TENANT_NAMESPACE_PREFIX}{tenant}"


def qualified(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


def trlp_name(model: str) -> str:
    return f"maas-trlp-{model}"


def model_auth_policy_name(model: str) -> str:
    return f"maas-auth-{model}"


def llmisvc_route_name(backend: str) -> str:
    """KServe names the HTTPRoute of an LLMInferenceService after the service."""
    return f"{backend}-kserve-route"


def external_model_route_name(model: str) -> str:
    return f"maas-{model}"


def model_labels(model: str, model_namespace: str, part_of: str, component: str) -> dict[str, str]:
    """Labels of a per-model policy; the upstream set with this program as the manager."""
    return {
        MODEL_LABEL: model,
        MODEL_NAMESPACE_LABEL: model_namespace,
        MANAGED_BY: MANAGER,
        PART_OF: part_of,
        COMPONENT: component,
    }
