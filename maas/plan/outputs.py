"""What the stack exports: the plan's outputs, with `subscriptions` summarised under
`platform.subscriptionOutputs: summary`.

The stack's outputs are one resource in the Pulumi state, rewritten at every snapshot write of an update. Listed
per subscription and model (limit name, counter key, short ID, identity), `subscriptions` is about 900 bytes per
subscription, 8.8 MB at 10,000; the summary keeps the counts. Under `summary` the plan keeps only each
subscription's identity (what the counts and `platform.scope`'s narrowing read) and never builds the entries;
`maas explain` and `maas diff` still show each subscription's limits, counter keys and identity: they read the
entries from `with_subscription_entries`, which computes them from the same configuration and snapshot.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from typing import Any

from ..config import MaasConfig
from ..observe import Observed
from .policies.identity import effective_identities
from .policies.ratelimit import RateLimitPlan, plan_rate_limits

LIMIT_BYTES = 1024 * 1024  # past this, `full` is a warning: no resource of the state should exceed 1 MB
CHECKED_FROM = 1000  # subscriptions; fewer are far below the limit, so their size is not measured


def exported(config: MaasConfig, outputs: Mapping[str, Any]) -> dict[str, Any]:
    """The outputs `pulumi up` exports for this configuration."""
    if config.platform.subscriptionOutputs == "full" or "subscriptions" not in outputs:
        return dict(outputs)
    return {**outputs, "subscriptions": summary(outputs["subscriptions"])}


def subscription_outputs(config: MaasConfig, rate_limits: RateLimitPlan) -> dict[str, dict[str, Any]]:
    """The plan's `subscriptions` output: each subscription's entry under `full`, its identity alone under
    `summary`."""
    if config.platform.subscriptionOutputs == "full":
        return rate_limits.subscriptions
    identities = rate_limits.identities
    return {key: {"rateLimitIdentity": identities[key]} for key in sorted(rate_limits.members)}


def with_subscription_entries(config: MaasConfig, observed: Observed, outputs: Mapping[str, Any]) -> dict[str, Any]:
    """A plan's outputs (`build_plan(config, observed)`, narrowed to its scope) with each of its subscriptions'
    full entry, whatever `subscriptionOutputs` says: what the tools that explain limits read."""
    if config.platform.subscriptionOutputs == "full":
        return dict(outputs)
    entries = plan_rate_limits(config, effective_identities(config, observed).of).subscriptions
    return {**outputs, "subscriptions": {key: entries[key] for key in outputs["subscriptions"]}}


def summary(subscriptions: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    identities = Counter(str(entry.get("rateLimitIdentity")) for entry in subscriptions.values())
    return {"count": len(subscriptions), "rateLimitIdentity": dict(sorted(identities.items()))}


def output_warnings(config: MaasConfig, outputs: Mapping[str, Any]) -> list[str]:
    """A `full` subscriptions output over 1 MB, with the setting that keeps it small."""
    subscriptions = outputs.get("subscriptions") or {}
    if config.platform.subscriptionOutputs != "full" or len(subscriptions) < CHECKED_FROM:
        return []
    size = len(json.dumps(subscriptions, separators=(",", ":")))
    if size <= LIMIT_BYTES:
        return []
    return [
        f"the stack output subscriptions is {size / 1e6:.1f} MB ({len(subscriptions)} subscriptions): the stack's "
        "outputs are one resource of the Pulumi state, written at every snapshot of an update; set "
        "maas:platform.subscriptionOutputs: summary to export counts only (maas explain still shows each "
        "subscription)"
    ]
