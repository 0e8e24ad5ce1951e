"""The gateway size model: the wasm configuration Kuadrant builds per Gateway from the policies this program
renders, and its size against the 1.5 MiB etcd stores (`reference/gateway-budget.md`).

- `routes.py`: which HTTPRoutes (rendered, live, or KServe's template) attach to which Gateway listener;
- `policies.py`: the effective AuthPolicy and TokenRateLimitPolicy of each route rule (Kuadrant's merge);
- `wasm.py`: the ActionSets, actions and limit identifiers, and what each route's weigh; `envelope.py`: the
  EnvoyFilter or WasmPlugin;
- `encoding.py`: the bytes as the API server stores them, written out or measured part by part;
- `budget.py`: each Gateway's size, ActionSets, limits and contributors (`Sizing`: what measurements share);
- `levers.py`: what would shrink a Gateway near its budget, each lever measured on the configuration;
- `report.py`: the per-Gateway report (notes, warnings with the levers, the `gateways` stack output).
"""

from .budget import BUDGET, GatewayBudget, gateway_budgets
from .report import add_gateway_budget

__all__ = ["BUDGET", "GatewayBudget", "add_gateway_budget", "gateway_budgets"]
