"""Taking over live objects others wrote, as pulumi-kubernetes really writes them (server-side apply).

Two rules, both about the request the provider sends rather than the body:

- **Forced applies** (`pulumi.com/patchForce: "true"`). An apply over fields another field manager owns (the
  maas-controller's, OpenShift's, an operator's) is refused with a conflict unless forced. pulumi-kubernetes
  forces only for that annotation, for `enablePatchForce` (the provider input, which the Python SDK fills from
  `PULUMI_K8S_ENABLE_PATCH_FORCE`), or, in a preview alone, for an object with no live state or one Pulumi created
  client-side (`provider/pkg/await/await.go`, `patchForce`); and a preview tolerates only Forbidden, so a
  conflicting dry run fails the preview (`provider.go`, `Update`). The annotation makes the preview and the update
  force alike, object by object: on every object that may exist before Pulumi writes it (`Desired.adopt`), and on
  every object while `controllerMode: coexist` (the migration: the controller wrote them all, and still runs).
- **ClusterRoles are written through the upserting provider** (`Desired.adopt`). Since pulumi-kubernetes 4.29 a
  create is a client-side POST to the collection, which carries no object name, so the API server's escalation
  check (`RoleEscalationAuthorized`: the `escalate` verb on the request's name) cannot match an `escalate` grant
  limited by `resourceNames`. Through an upserting provider with server-side apply, the create is a PATCH to
  `clusterroles/NAME`, which does: the Operator's role (`deploy/pulumi-operator/clusterrole.yaml`) then needs
  `escalate` only on the names this program writes. They may pre-exist anyway (the controller's install).
"""

from __future__ import annotations

from dataclasses import replace

from .desired import Desired, Plan

PATCH_FORCE_ANNOTATION = "pulumi.com/patchForce"
# Written through the upserting provider, so that creating them is a named request (see the module docstring).
NAMED_WRITE_KINDS = frozenset({"ClusterRole"})


def adopt_and_force(plan: Plan, controller_mode: str) -> None:
    """Both rules over the whole plan; objects Pulumi leaves alone (`Desired.is_unmanaged`) are not forced (their
    registered inputs are what the import read, so nothing is applied to them)."""
    coexist = controller_mode == "coexist"
    plan.replace_objects(lambda obj: _forced(_named(obj), coexist))


def _named(obj: Desired) -> Desired:
    if obj.subresource is None and obj.kind in NAMED_WRITE_KINDS and not obj.adopt:
        return replace(obj, adopt=True)
    return obj


def _forced(obj: Desired, coexist: bool) -> Desired:
    if obj.subresource is not None or obj.is_unmanaged or not (coexist or obj.adopt):
        return obj
    return obj.annotated(PATCH_FORCE_ANNOTATION, "true")
