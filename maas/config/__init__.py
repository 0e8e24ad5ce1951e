"""Stack configuration: the contract of `reference/config.md`, validated before any resource exists."""

from .endpoints import internal_endpoint_warnings, plaintext_endpoint_warnings
from .errors import ConfigError, ConfigIssue
from .load import KEYS, NAMESPACE, load_config, raw_from_stack_file
from .schema import (
    AuthPolicyConfig,
    MaasConfig,
    ModelConfig,
    PlatformConfig,
    SubscriptionConfig,
    SubscriptionModelRef,
    TenantConfig,
    TokenRateLimit,
    UnmanagedRef,
)

__all__ = [
    "KEYS",
    "NAMESPACE",
    "AuthPolicyConfig",
    "ConfigError",
    "ConfigIssue",
    "MaasConfig",
    "ModelConfig",
    "PlatformConfig",
    "SubscriptionConfig",
    "SubscriptionModelRef",
    "TenantConfig",
    "TokenRateLimit",
    "UnmanagedRef",
    "internal_endpoint_warnings",
    "load_config",
    "plaintext_endpoint_warnings",
    "raw_from_stack_file",
]
