"""The upstream controller's spellings that this program deliberately writes otherwise, in one place.

A cluster a maas-controller built carries them; the importer reads them as this program's own (no drift to
report: the first `up` rewrites them on purpose), and the tests check the rest of the upstream vectors still hold.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .gateway_auth import DEFAULT_DENY_EXEMPT_PREFIXES, MODEL_IDENTITY, MODEL_IDENTITY_AVAILABLE, default_deny_predicate
from .ratelimit import DISCOVERY_EXEMPTION

_SEGMENTS = 'request.path.split("/").filter(x, x != "")'
_PATH_ROUTED = f'size({_SEGMENTS}) >= 2 && {_SEGMENTS}[0] != "v1" && {_SEGMENTS}[0] != "maas-api"'
# The model identity from the non-empty segments of `request.path` (issue 17: `//ns-a/a/...` named model A while
# routing reached model B), and whether there is one.
UPSTREAM_MODEL_IDENTITY = (
    f'({_PATH_ROUTED} ? {_SEGMENTS}[0] + "/" + {_SEGMENTS}[1] : ("x-gateway-model-name" in request.headers'
    '   ? request.headers["x-gateway-model-name"]   : ""))'
)
UPSTREAM_MODEL_IDENTITY_AVAILABLE = f'({_PATH_ROUTED} || "x-gateway-model-name" in request.headers)'
# The default deny's exemptions as string prefixes of the whole `:path` (`/v1/modelsX/...` escaped it).
UPSTREAM_DEFAULT_DENY = " && ".join(f'!request.path.startsWith("{prefix}")' for prefix in DEFAULT_DENY_EXEMPT_PREFIXES)
# The discovery exemption on `request.path`, which includes the query string (`?x=/v1/models` escaped every limit).
UPSTREAM_DISCOVERY_EXEMPTION = '!request.path.endsWith("/v1/models")'

REWRITES = (
    (UPSTREAM_MODEL_IDENTITY, MODEL_IDENTITY),
    (UPSTREAM_MODEL_IDENTITY_AVAILABLE, MODEL_IDENTITY_AVAILABLE),
    (UPSTREAM_DEFAULT_DENY, default_deny_predicate()),
    (UPSTREAM_DISCOVERY_EXEMPTION, DISCOVERY_EXEMPTION),
)


def as_written_here(value: Any) -> Any:
    """A JSON value (an expression, a policy's spec) with each upstream spelling this program changed on purpose
    written as it writes it."""
    if isinstance(value, str):
        for upstream, ours in REWRITES:
            value = value.replace(upstream, ours)
        return value
    if isinstance(value, Mapping):
        return {key: as_written_here(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [as_written_here(item) for item in value]
    return value
