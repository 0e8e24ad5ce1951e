"""Fields the cluster fills in that pulumi-kubernetes replaces an object for: ignored, so adoption replaces nothing.

`pulumi import` of a built-in kind stores every live top-level field as the object's inputs (pulumi-kubernetes
`provider.go` Read with `readFromCluster`), a Service's allocated `spec.clusterIP` among them. The program's body
leaves those fields to the cluster, so the first `pulumi up` after the import would delete them, and a deleted
force-new path (`provider/diff.go`: Service `.spec.clusterIP`; ConfigMap `.data` and `.binaryData` while
`enableConfigMapMutable` is off, its default) replaces the object, delete before create: an outage of maas-api and
new cluster IPs. `ignore_changes` on those paths makes the engine copy the imported values into the new inputs
(`step_generator.go` `processIgnoreChanges`) and the provider drop them from its diff; on an object Pulumi created,
the state holds no such value and the option changes nothing. The rules and the first post-import diff are tested
against the provider's own rules in `tests/provider_fidelity.py`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from .desired import Desired, Plan

# (apiVersion, kind) -> Pulumi property paths the cluster or another writer fills in, where deleting the value
# would replace the object. Paths are spelled as `ignore_changes` takes them (`resource.ParsePropertyPath`).
SERVER_POPULATED: Mapping[tuple[str, str], tuple[str, ...]] = {
    # allocated by the API server; clusterIPs[0] is always clusterIP (immutable once allocated)
    ("v1", "Service"): ("spec.clusterIP", "spec.clusterIPs"),
    # a ConfigMap registered without content is filled by another writer (OpenShift's service CA injects
    # `service-ca.crt` into `openshift-service-ca.crt`)
    ("v1", "ConfigMap"): ("data", "binaryData"),
}


def ignore_server_populated_fields(plan: Plan) -> None:
    """On every registered object, the server-populated paths its body leaves to the cluster."""
    plan.replace_objects(with_server_fields_ignored)


def with_server_fields_ignored(obj: Desired) -> Desired:
    """`obj` itself when nothing is to add (a status write, an ExternalName Service, a ConfigMap with content,
    paths an option already covers), so that an unchanged object stays the same instance."""
    paths = server_populated_paths(obj.body) if obj.subresource is None else ()
    if not paths:  # nearly every object: said before anything else is built
        return obj
    added = tuple(path for path in paths if not _covered(path, obj.ignore_changes))
    if not added:
        return obj
    return replace(obj, ignore_changes=tuple(sorted({*obj.ignore_changes, *added})))


def server_populated_paths(body: Mapping[str, Any]) -> tuple[str, ...]:
    """The paths of `SERVER_POPULATED` that this body leaves unset, for the cluster to fill."""
    kind = (body.get("apiVersion"), body.get("kind"))
    if kind == ("v1", "Service"):
        spec = body.get("spec") or {}
        if spec.get("type") == "ExternalName":  # the API server allocates no cluster IP to an ExternalName Service
            return ()
        return tuple(path for path in SERVER_POPULATED[kind] if _leaf(path) not in spec)
    if kind == ("v1", "ConfigMap"):
        return () if "data" in body or "binaryData" in body else SERVER_POPULATED[kind]
    return ()


def _leaf(path: str) -> str:
    return path.rpartition(".")[2]


def _covered(path: str, ignored: tuple[str, ...]) -> bool:
    """Already ignored, by itself or by an enclosing path (an unmanaged object ignores each top-level key)."""
    return any(path == other or path.startswith(f"{other}.") for other in ignored)
