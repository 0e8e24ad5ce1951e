"""One `X-Gateway-Model-Name` value per model on each Gateway, on the routes as the gateway will carry them.

Configuration already refuses the clashes it can see (`config/references.py`); a KServe route's header names the
live LLMInferenceService's `spec.model.name`, which only the snapshot shows. Two models whose routes claim one
value on one Gateway would send every body-routed request to the older route, whatever maas-api resolved.
"""

from __future__ import annotations

from collections import defaultdict

from ... import naming
from ...config import ConfigIssue, MaasConfig
from ...config.errors import entry_path
from ...observe import Observed
from ..gateway.routes import Route, attached, gateway_of

HEADER = naming.MODEL_NAME_HEADER.lower()


def routing_header_issues(
    config: MaasConfig, observed: Observed, carried: list[Route], gateways: list[tuple[str, str]]
) -> list[ConfigIssue]:
    """A clash per (Gateway, header value) that the routes of two or more models claim, at each later model."""
    order = {model.key: i for i, model in enumerate(config.models)}
    issues = []
    for namespace, name in gateways:
        claims: dict[str, set[str]] = defaultdict(set)
        for _, route in attached(carried, gateway_of(config, observed, namespace, name)):
            if route.model is not None:
                for value in _header_values(route):
                    claims[value].add(route.model)
        for value, models in sorted(claims.items()):
            first, *later = sorted(models, key=order.__getitem__)
            issues += [_clash(config, order[model], first, f"{namespace}/{name}", value) for model in later]
    return issues


def _clash(config: MaasConfig, index: int, first: str, gateway: str, value: str) -> ConfigIssue:
    model = config.models[index]
    return ConfigIssue(
        entry_path("models", index, {"name": model.name, "namespace": model.namespace}),
        f"its route on Gateway {gateway} matches {naming.MODEL_NAME_HEADER}: {value}, as model {first}'s does (the "
        "live LLMInferenceService's spec.model.name decides KServe's header); Gateway API sends every body-routed "
        "request to the older route, so serve another model name or move one model to another tenant's Gateway",
    )


def _header_values(route: Route) -> set[str]:
    return {
        value for rule in route.rules for match in rule.matches for key, value in match.headers if key.lower() == HEADER
    }
