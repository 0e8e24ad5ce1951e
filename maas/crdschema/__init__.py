"""Validate rendered Kubernetes objects offline, the way the API server would.

Custom resources are checked against the real CRDs vendored in ``crds/`` (or those of ``$MAAS_CRDS_DIR``): OpenAPI v3
schema, Kubernetes structural-schema extensions and every ``x-kubernetes-validations`` CEL rule. Core kinds are
checked against the JSON schemas shipped by ``kubernetes-validate`` for a pinned Kubernetes version. Unknown fields are
errors: the API server silently prunes them, which for a renderer always means a bug.

Every error is one human-readable string ``"<Kind> <ns>/<name>: <json.path>: <message>"``.
"""

from .cel_engine import UnsupportedRuleError
from .core import KUBERNETES_VERSION
from .crd_version import CrdVersion
from .errors import format_path, object_label
from .object_problems import validate, validate_all, validate_measured
from .registry import CRDS_DIR_ENV, CrdRegistry, crds_dir, default_registry
from .self_use import SelfUse
from .status_write import added_status_problems, added_status_problems_measured

__all__ = [
    "CRDS_DIR_ENV",
    "KUBERNETES_VERSION",
    "CrdRegistry",
    "CrdVersion",
    "SelfUse",
    "UnsupportedRuleError",
    "added_status_problems",
    "added_status_problems_measured",
    "crds_dir",
    "default_registry",
    "format_path",
    "object_label",
    "validate",
    "validate_all",
    "validate_measured",
]
