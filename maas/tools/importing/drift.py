"""What the first `up` would change in the controller's live policies: said before anyone runs it.

The importer expresses the CRs; a policy someone edited by hand (an extra limit, another authorization rule) has
no configuration key, and the first `up` would silently overwrite it. Each difference is one line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...observe import Observed
from ...observe.snapshot import thawed
from ..render import Rendering

POLICY_KINDS = ("TokenRateLimitPolicy", "AuthPolicy")
SHOWN = 3  # differing paths named per policy
# Upstream writes the discovery exemption on `request.path`; this program on `request.url_path` (README).
UPSTREAM_EXEMPTION = '!request.path.endsWith("/v1/models")'
EXEMPTION = '!request.url_path.endsWith("/v1/models")'


def policy_drift(rendering: Rendering, observed: Observed) -> list[str]:
    lines = []
    for body in rendering.objects():
        if body["kind"] not in POLICY_KINDS:
            continue
        metadata = body["metadata"]
        live = observed.lookup(body["kind"], metadata["namespace"], metadata["name"]).object
        if live is None:
            continue
        where = f"{body['kind']} {metadata['namespace']}/{metadata['name']}"
        paths = differences(_normalised(thawed(live.get("spec"))), body.get("spec"), "spec")
        if paths:
            shown = ", ".join(paths[:SHOWN]) + (f" and {len(paths) - SHOWN} more" if len(paths) > SHOWN else "")
            lines.append(
                f"{where}: the live policy differs from what the imported configuration renders ({shown}); the first "
                "up overwrites it, so express the change in configuration or list the policy in maas:unmanaged"
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


def _normalised(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace(UPSTREAM_EXEMPTION, EXEMPTION)
    if isinstance(value, Mapping):
        return {key: _normalised(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_normalised(item) for item in value]
    return value
