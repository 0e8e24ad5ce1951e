"""Benchmark (not a test): each Gateway's wasm object size against `reference/gateway-budget.md`, and the cost of
the report next to `build_plan`.

Configurations come from `render_scale.configuration()` (200 models, 5 per subscription, 8 rate sets, one `https`
listener on one Gateway). Columns: KServe's current route (19 matches) with short IDs and with legacy keys, the
same with `platform.predicateFormat: compact`, and older KServe routes (one rule, one match: observed HTTPRoutes),
each as EnvoyFilter MiB next to the reference page's measured table and the ratio. Then the per-item weights of
the plain configuration (compact JSON) against the page's figures, and the report's seconds against
`build_plan`'s (CPU seconds of this process, steadier than the wall clock on a busy machine; a full garbage
collection first, so that neither pays for the other's garbage; the collector tuned as the program's entry points
tune it, `maas.gc_tuning`): `report` measures every Gateway, `levers` evaluates the levers of each one from 80 %
(`maas/plan/gateway/levers.py`; every case here is far over), and `build_plan` includes both. Last, the levers of
the short-ID and legacy-key columns with the size each leaves.

Usage:
    python bench/gateway_budget.py            # 0, 100, 1,000 and 10,000 subscriptions
    python bench/gateway_budget.py 1000       # up to 1,000
"""

from __future__ import annotations

import gc
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from render_scale import MODELS, configuration  # noqa: E402

from maas.config import load_config  # noqa: E402
from maas.gc_tuning import tune_gc  # noqa: E402
from maas.observe import Observed, Scope  # noqa: E402
from maas.plan.build import build_plan  # noqa: E402
from maas.plan.gateway.budget import Sizing, plan_policies  # noqa: E402
from maas.plan.gateway.encoding import compact  # noqa: E402
from maas.plan.gateway.levers import Levers  # noqa: E402
from maas.plan.gateway.policies import PolicyIndex  # noqa: E402
from maas.plan.gateway.routes import gateway_of, routes  # noqa: E402
from maas.plan.gateway.wasm import wasm_config  # noqa: E402
from maas.plan.policies.identity import effective_identities  # noqa: E402
from maas.plan.policies.ratelimit import plan_rate_limits  # noqa: E402

MIB = 1024 * 1024
GATEWAY = ("openshift-ingress", "maas-default-gateway")
# reference/gateway-budget.md, "What it weighs": EnvoyFilter MiB (short IDs, legacy keys, 1-match routes short)
REFERENCE = {
    0: (7.40, 7.40, None),
    100: (14.27, 15.10, 0.75),
    1000: (52.63, 60.71, 2.77),
    10000: (170.81, 250.66, 8.99),
}
COUNTS = (0, 100, 1000, 10000)
SHORT_CLAUSE = 'auth.identity.selected_subscription_id == "0123456789abcdef" || '
LEGACY_CLAUSE = 'auth.identity.selected_subscription_key == "team-00001/team-00001-subscription@llm-1/model-001" || '


def one_match_routes(raw: dict) -> Observed:
    """Older KServe: each model's HTTPRoute has one rule with one `PathPrefix /{ns}/{name}` match."""
    objects = [
        {
            "apiVersion": "gateway.networking.k8s.io/v1",
            "kind": "HTTPRoute",
            "metadata": {"name": f"{m['name']}-kserve-route", "namespace": m["namespace"]},
            "spec": {
                "parentRefs": [{"name": GATEWAY[1], "namespace": GATEWAY[0]}],
                "rules": [{"matches": [{"path": {"type": "PathPrefix", "value": f"/{m['namespace']}/{m['name']}"}}]}],
            },
        }
        for m in raw["models"]
    ]
    return Observed.of(
        objects, listed=[Scope("HTTPRoute", ns) for ns in sorted({m["namespace"] for m in raw["models"]})]
    )


def case(subscriptions: int, identity: str, platform: dict | None = None, one_match: bool = False) -> dict:
    raw = configuration(subscriptions, identity)
    raw["platform"] = {"gatewayBudget": "warn", **(platform or {})}
    observed = one_match_routes(raw) if one_match else Observed.nothing()
    config = load_config(raw)
    gc.collect()
    started = time.process_time()
    plan = build_plan(config, observed)  # includes the report
    plan_seconds = time.process_time() - started
    gc.collect()
    started = time.process_time()
    sizing = Sizing(config, plan, observed)
    (budget,) = sizing.budgets()
    report_seconds = time.process_time() - started
    rate_limits = plan_rate_limits(config, effective_identities(config, observed).of)  # the plan's, as it passes
    started = time.process_time()
    levers = Levers(sizing, rate_limits).of(budget)
    levers_seconds = time.process_time() - started
    return {
        "mib": budget.bytes / MIB,
        "plan_s": plan_seconds,
        "report_s": report_seconds,
        "levers_s": levers_seconds,
        "budget": budget,
        "levers": levers,
    }


def table(counts: list[int]) -> None:
    print(f"EnvoyFilter MiB, {MODELS} models on one gateway, one https listener (reference in brackets, ratio)")
    print("subscriptions  short IDs               legacy keys             1-match short          compact short")
    levers = []
    for count in counts:
        ref_short, ref_legacy, ref_one = REFERENCE[count]
        short, legacy = case(count, "short"), case(count, "legacy")
        one = case(count, "short", one_match=True)
        squeezed = case(count, "short", {"predicateFormat": "compact"})
        print(
            f"{count:13,d}  {_cell(short['mib'], ref_short)}  {_cell(legacy['mib'], ref_legacy)}  "
            f"{_cell(one['mib'], ref_one)}  {squeezed['mib']:6.2f} ({squeezed['mib'] / short['mib'] - 1:+.0%})"
        )
        for name, found in (("short", short), ("legacy", legacy)):
            print(
                f"{'':13s}  {name}: report {found['report_s']:.3f} + levers {found['levers_s']:.3f} CPU s of "
                f"build_plan {found['plan_s']:.2f} CPU s; {found['budget'].action_sets} action sets, "
                f"{found['budget'].limits} limits"
            )
            levers.append((count, name, found))
    print("\nLevers, best first: the size each leaves (MiB, and against today's)")
    for count, name, found in levers:
        print(f"  {count:,d} subscriptions, {name}:")
        for lever in found["levers"]:
            there = "" if lever.destination_bytes is None else f", {lever.destination_bytes / MIB:.2f} MiB there"
            change = lever.bytes / found["budget"].bytes - 1
            print(f"    {lever.bytes / MIB:7.2f} MiB ({change:+.0%}){there}: {lever.text}")


def _cell(mib: float, reference: float | None) -> str:
    if reference is None:
        return f"{mib:6.2f} (not measured)  "
    return f"{mib:6.2f} ({reference:6.2f}, {mib / reference:.3f})"


def weights() -> None:
    """The plain configuration's parts at 100 short subscriptions, as the reference page weighs them."""
    raw = configuration(100, "short")
    config = load_config(raw)
    plan = build_plan(config, Observed.nothing())
    none = Observed.nothing()
    built = wasm_config(
        gateway_of(config, none, *GATEWAY), routes(config, plan, none), PolicyIndex(plan_policies(plan, none))
    )
    heads, auths, pairs = [], [], []
    for action_set in built.action_sets:
        body = json.loads(compact(action_set.body))
        actions = body.pop("actions")
        heads.append(len(compact({**body, "actions": []})))
        auths.append(len(compact(actions[0])))
        for check, report in zip(actions[1::2], actions[2::2], strict=True):
            predicate = len(json.dumps(check["conditionalData"][0]["predicates"][0]))
            pairs.append(len(compact(check)) + len(compact(report)) + 1 - 2 * predicate)
    short, legacy = (len(json.dumps(clause)) - 2 for clause in (SHORT_CLAUSE, LEGACY_CLAUSE))  # quotes escaped
    print("\nPer item, compact JSON (reference in brackets)")
    print(f"  name and route conditions per ActionSet: {min(heads)}-{max(heads)} B (200-330 B)")
    print(f"  auth action: {min(auths)}-{max(auths)} B (~260 B)")
    print(f"  check+report pair less twice its predicate: {min(pairs)}-{max(pairs)} B (~1,090 B)")
    print(f"  short-ID clause: {short} B (~66 B); legacy key clause: {legacy} B (~110 B)")


def main() -> None:
    tune_gc()
    cap = int(sys.argv[1]) if len(sys.argv) > 1 else COUNTS[-1]
    table([count for count in COUNTS if count <= cap])
    weights()


if __name__ == "__main__":
    main()
