"""What the first `up` would change in the controller's live policies: said before anyone runs it.

The importer expresses the CRs; a policy someone edited by hand (an extra limit, another authorization rule) has
no configuration key, and the first `up` would silently overwrite it. Each difference is one line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...listing import listed
from ...observe import Observed
from ...observe.snapshot import thawed
from ...plan.policies.access import SUBSCRIPTION_RULE
from ...plan.policies.upstream_text import as_written_here
from ..render import Rendering

POLICY_KINDS = ("TokenRateLimitPolicy", "AuthPolicy")
SHOWN = 3  # differing paths named per policy
# The rule every model's AuthPolicy gains (issue 17): added by the first up on purpose, said once, not as drift.
ADDED_RULE = f"spec.rules.authorization.{SUBSCRIPTION_RULE} (only planned)"


def policy_drift(rendering: Rendering, observed: Observed) -> list[str]:
    lines, gaining = [], []
    for body in rendering.objects():
        if body["kind"] not in POLICY_KINDS:
            continue
        metadata = body["metadata"]
        live = observed.lookup(body["kind"], metadata["namespace"], metadata["name"]).object
        if live is None:
            continue
        where = f"{body['kind']} {metadata['namespace']}/{metadata['name']}"
        paths = differences(as_written_here(thawed(live.get("spec"))), body.get("spec"), "spec")
        if ADDED_RULE in paths:
            paths.remove(ADDED_RULE)
            gaining.append(f"{metadata['namespace']}/{metadata['name']}")
        if paths:
            shown = listed(paths, SHOWN)
            lines.append(
                f"{where}: the live policy differs from what the imported configuration renders ({shown}); the first "
                "up overwrites it, so express the change in configuration or list the policy in maas:unmanaged"
            )
    if gaining:
        lines.append(
            f"the first up adds the {SUBSCRIPTION_RULE} rule to the live AuthPolicies {', '.join(gaining)}: they admit "
            "only a subscription selected for their own model (docs/reviewing-changes.md, the request simulator)"
        )
    return lines


def differences(live: Any, planned: Any, path: str) -> list[str]:
    """The paths where two JSON values differ: keys on one side only, or leaves that are not equal."""
    if isinstance(live, Mapping) and isinstance(planned, Mapping):
        found = []
        for key in sorted(set(live) | set(planned), key=str):
            here = f"{path}.{key}"
            if key not in planned:
                found.append(f"{here} (only live)")
            elif key not in live:
                found.append(f"{here} (only planned)")
            else:
                found += differences(live[key], planned[key], here)
        return found
    return [] if live == planned else [path]
