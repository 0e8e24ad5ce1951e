"""The enforcement invariant: a request that reaches model M's backend is denied, or counted by exactly one limit,
a limit of M's own TokenRateLimitPolicy with the rates the selected subscription has on M, or that subscription is
unlimited on M; and a caller never reaches a model that no MaaSAuthPolicy grants them (under the name the
configuration knows them by). Model discovery
(`.../v1/models` with `platform.exemptModelDiscovery`) is never counted, by design.

On a stack whose statuses nobody wrote or observed (`controllerMode: coexist`, rendered without a snapshot), maas-api
reads the phases the program's status rules give (`explaining/world.py`, assumed): requests are then admitted as on
the cluster, and checked here like any other; were such a phase read as "unreconciled", every request would be
denied and the invariant would hold vacuously.
"""

from __future__ import annotations

from ..explaining.world import World
from .chain import Outcome


def violations(world: World, outcome: Outcome) -> list[str]:
    """What is wrong with a request's fate; empty when the chain held."""
    model = outcome.model
    if outcome.status != 200 or model is None:
        return []
    found = []
    caller = outcome.request.caller
    name = known_as(world, model, outcome)
    if not granted(world, model, name, caller.groups):
        found.append(f"reached {model}, which no MaaSAuthPolicy grants {name} {list(caller.groups)}")
    if world.config.platform.exemptModelDiscovery and outcome.path.partition("?")[0].endswith("/v1/models"):
        return found  # model discovery is never counted (platform.exemptModelDiscovery)
    found.extend(_counting(world, outcome, model))
    return found


def _counting(world: World, outcome: Outcome, model: str) -> list[str]:
    selected = outcome.selected
    if selected is None:
        return [f"reached {model} with no subscription selected"]
    subscription = next(s for s in world.config.subscriptions if s.key == selected)
    ref = next((r for r in subscription.modelRefs if r.key == model), None)
    if ref is None:
        return [f"reached {model} with subscription {selected}, which does not include it"]
    if ref.unlimited:
        return []
    own = world.outputs["models"][model]["tokenRateLimitPolicy"]
    rates = sorted({(rate.limit, rate.window) for rate in ref.tokenRateLimits})
    counting = [c for c in outcome.matched if c.policy == own and sorted(c.rate_pairs) == rates]
    if len(counting) != 1 or len(outcome.matched) != 1:
        shown = [f"{c.policy} {c.name}" for c in outcome.matched]
        return [f"reached {model} with {selected}: limits that count it {shown}, expected one of {own} at {rates}"]
    return []


def known_as(world: World, model: str, outcome: Outcome) -> str:
    """The name configuration knows the caller by: an OIDC user of a tenant that prefixes OIDC names is
    `{usernamePrefix}{user}`, never the Kubernetes user of the same name (docs/what-it-renders.md, OIDC identities)."""
    caller = outcome.request.caller
    tenant = world.tenant_of(world.config.models_by_key[model])
    if caller.token == "oidc" and tenant.oidc is not None:
        return f"{tenant.oidc.usernamePrefix}{caller.user}"
    return caller.user


def granted(world: World, model: str, user: str, groups: tuple[str, ...]) -> bool:
    """A MaaSAuthPolicy of the configuration names the model and the caller (as a user or by a group)."""
    return any(
        model in {ref.key for ref in policy.modelRefs}
        and (user in policy.subjects.users or bool(set(groups) & {g.name for g in policy.subjects.groups}))
        for policy in world.config.authPolicies
    )
