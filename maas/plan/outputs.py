"""What the stack exports: the plan's outputs, with `subscriptions` summarised under
`platform.subscriptionOutputs: summary`.

The stack's outputs are one resource in the Pulumi state, rewritten at every snapshot write of an update. Listed
per subscription and model (limit name, counter key, short ID, identity), `subscriptions` is about 900 bytes per
subscription, 8.8 MB at 10,000; the summary keeps the counts, and `maas explain` still shows each subscription's
limits, counter keys and identity (it reads the plan, not the export).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from typing import Any

from ..config import MaasConfig

LIMIT_BYTES = 1024 * 1024  # past this, `full` is a warning: no resource of the state should exceed 1 MB
CHECKED_FROM = 1000  # subscriptions; fewer are far below the limit, so their size is not measured


def exported(config: MaasConfig, outputs: Mapping[str, Any]) -> dict[str, Any]:
    """The outputs `pulumi up` exports for this configuration."""
    if config.platform.subscriptionOutputs == "full" or "subscriptions" not in outputs:
        return dict(outputs)
    return {**outputs, "subscriptions": summary(outputs["subscriptions"])}


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
