"""Which rate-limit identity each subscription uses: seed 002's sticky identity.

An existing subscription keeps the identity the cluster knows it by, so an upgrade or a takeover resets no live
Limitador counter: the observed MaaSSubscription's annotation `maas.opendatahub.io/rate-limit-identity` (which
this program writes, so the stamp survives a CRD that prunes the status field), else its
`status.rateLimitIdentity` (the controller's stamp), else `legacy` for a subscription that exists without a
stamp (pre-3.6). A subscription the cluster
does not have is new: `short`. An explicit `rateLimitIdentity` in configuration wins, and the preview says when
it changes the live identity (that resets the subscription's counters). Clearing the field keeps the live value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ... import naming
from ...config import MaasConfig, SubscriptionConfig
from ...listing import listed
from ...observe import Observed
from ...observe.views import LiveSubscription, view_of

Identity = Literal["short", "legacy"]
IDENTITIES = ("short", "legacy")


@dataclass(frozen=True)
class Identities:
    """The effective identity per subscription key, and what the preview should say about them."""

    of: Mapping[str, Identity]
    warnings: list[str] = field(default_factory=list)


def effective_identities(config: MaasConfig, observed: Observed) -> Identities:
    chosen: dict[str, Identity] = {}
    warnings: list[str] = []
    unobserved = []
    for subscription in sorted(config.subscriptions, key=lambda s: s.key):
        lookup = observed.lookup("MaaSSubscription", subscription.namespace, subscription.name)
        live = None if lookup.state != "present" else _live_identity(observed, subscription, warnings)
        if subscription.rateLimitIdentity is not None:
            chosen[subscription.key] = subscription.rateLimitIdentity
            if live is not None and live != subscription.rateLimitIdentity:
                warnings.append(_override_warning(subscription, live))
        elif lookup.state == "unknown":
            chosen[subscription.key] = "short"
            unobserved.append(subscription.key)
        else:
            chosen[subscription.key] = live or "short"
    if unobserved:
        warnings.append(_unobserved_warning(unobserved))
    return Identities(chosen, warnings)


def _live_identity(observed: Observed, subscription: SubscriptionConfig, warnings: list[str]) -> Identity | None:
    """Read only for a subscription the snapshot holds: every other one would build a view key for nothing."""
    found = observed.view(LiveSubscription, subscription.namespace, subscription.name)
    return None if found is None else identity_of(found, subscription.key, warnings)


def live_identity(obj: Mapping[str, Any], subscription: str, warnings: list[str]) -> Identity:
    """`identity_of` a live MaaSSubscription handed over as a mapping (the import and explain tools read so)."""
    return identity_of(view_of(LiveSubscription, obj), subscription, warnings)


def identity_of(live: LiveSubscription, subscription: str, warnings: list[str]) -> Identity:
    """The stamp of a live MaaSSubscription; a stamp this program does not know keeps the key-based counters."""
    # The annotation first: this program writes it with every apply, so it is current even where the status is
    # not (`coexist` leaves a controller's stale status; an older CRD prunes the field; a status write failed).
    stamp = live.meta.annotation(naming.RATE_LIMIT_IDENTITY_ANNOTATION) or live.status_identity
    if stamp is None:
        return "legacy"
    if stamp not in IDENTITIES:
        warnings.append(
            f"subscription {subscription}: the cluster stamps it rateLimitIdentity {stamp!r}, which is neither "
            "short nor legacy; it keeps legacy (key-based counters); set rateLimitIdentity to choose"
        )
        return "legacy"
    return stamp


def _override_warning(subscription: SubscriptionConfig, live: Identity) -> str:
    return (
        f"subscription {subscription.key}: rateLimitIdentity {subscription.rateLimitIdentity} replaces its live "
        f"identity {live}, which resets its in-window token counter on each of its models; remove the field to "
        "keep the live identity"
    )


def _unobserved_warning(keys: list[str]) -> str:
    shown = listed(keys, 5)
    return (
        f"rateLimitIdentity is not set for {len(keys)} subscription(s) ({shown}) and the cluster was not observed: "
        "they use short; any that exists live on legacy counters would start them afresh, so observe the cluster "
        "or set rateLimitIdentity"
    )
