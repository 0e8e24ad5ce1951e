"""The pure core: (validated configuration, observed snapshot) -> everything the program registers, grouped by
owner. No Pulumi import anywhere below this package.

- `build.py` assembles the plan; `desired.py` is its data (`Desired`, `Owner`, `Plan`).
- `policies/`: the Kuadrant policies (token rate limits, per-model and gateway AuthPolicies).
- `models/`: routes and ExternalModel children, and the MaaS resources maas-api reads.
- `tenants/`: each tenant's platform (maas-api, payload processing, telemetry, RBAC) and management states.
- `status/`: the statuses published for maas-api, judged from facts and the snapshot.
- `checks/`: what stops an update before anything is registered (identities, the API server's rules, preflight).
"""

from .build import build_plan
from .desired import Desired, Owner, Plan

__all__ = ["Desired", "Owner", "Plan", "build_plan"]
