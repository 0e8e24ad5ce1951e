"""What every importer shares: reading the controller's CRs out of a snapshot, and the report of what could not be
expressed (every such thing is one line of it; nothing is dropped silently)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ... import naming
from ...config.errors import escaped
from ...observe import Observed, Scope
from ...observe.snapshot import thawed

Object = Mapping[str, Any]

# Annotations that record who manages an object, never a user's intent: they are not copied into configuration.
RESERVED_ANNOTATION_PREFIXES = ("kubectl.kubernetes.io/", "pulumi.com/")
RESERVED_ANNOTATIONS = frozenset(
    {
        naming.CONTROLLER_MANAGED_ANNOTATION,
        naming.HANDED_OVER_ANNOTATION,
        naming.RATE_LIMIT_IDENTITY_ANNOTATION,
        naming.UNLIMITED_MODELS_ANNOTATION,
    }
)


@dataclass
class Report:
    """The lines `python -m maas import` prints about what it could not express, in the order found."""

    messages: list[str] = field(default_factory=list)

    def add(self, message: str) -> None:
        self.messages.append(escaped(message))


def listed(observed: Observed, kind: str, report: Report) -> list[Object]:
    """Every object of `kind` in every namespace that is not being deleted; a kind the snapshot did not list is
    reported (it is unknown, not absent)."""
    if not observed.covers(Scope(kind)):
        report.add(f"{kind}: not observed in every namespace (the snapshot does not list it), so none is imported")
        return []
    found = []
    for obj in observed.items(kind):
        if metadata(obj).get("deletionTimestamp"):
            report.add(f"{describe(obj)} is being deleted, so it is not imported")
        else:
            found.append(obj)
    return found


def metadata(obj: Object) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def spec_of(obj: Object) -> Mapping[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def key_of(obj: Object) -> str:
    """`namespace/name`, or `name` for a cluster-scoped object."""
    meta = metadata(obj)
    return naming.qualified(meta["namespace"], meta["name"]) if meta.get("namespace") else meta["name"]


def describe(obj: Object) -> str:
    return f"{obj['kind']} {key_of(obj)}"


def plain(value: Any) -> Any:
    """A deep plain copy (dicts and lists) of a snapshot value, for the configuration."""
    return thawed(value)


def report_unknown_keys(
    obj: Object, values: Mapping[str, Any], known: Iterable[str], where: str, report: Report
) -> None:
    """Fields this program has no key for: named one by one, and left out."""
    for key in sorted(set(values) - set(known)):
        report.add(f"{describe(obj)}: {where}.{key} has no key in this program's configuration, so it is left out")


def user_annotations(obj: Object) -> dict[str, str]:
    """An object's annotations without those that only say who manages it, sorted by key."""
    annotations = metadata(obj).get("annotations") or {}
    return {
        key: value
        for key, value in sorted(annotations.items())
        if key not in RESERVED_ANNOTATIONS and not key.startswith(RESERVED_ANNOTATION_PREFIXES)
    }


def handed_over(obj: Object) -> bool:
    """Annotated by this program in `controllerMode: coexist`, so its opt-outs are this program's own."""
    return (metadata(obj).get("annotations") or {}).get(naming.HANDED_OVER_ANNOTATION) == "true"


def subjects(value: Any) -> dict[str, Any]:
    """`{groups: [{name}], users: [...]}` with empty lists left out (the configuration's defaults)."""
    value = value if isinstance(value, Mapping) else {}
    result: dict[str, Any] = {}
    if value.get("groups"):
        result["groups"] = plain(value["groups"])
    if value.get("users"):
        result["users"] = plain(value["users"])
    return result


def model_keys(refs: Any) -> list[dict[str, Any]]:
    """`[{name, namespace}]` as the CR lists them."""
    return [
        {"name": ref.get("name"), "namespace": ref.get("namespace")} for ref in refs or () if isinstance(ref, Mapping)
    ]


def picked(obj: Object, value: Any, known: Iterable[str], where: str, report: Report) -> dict[str, Any]:
    """The `known` keys of a mapping found at `where` in `obj`, copied; every other key is reported."""
    value = value if isinstance(value, Mapping) else {}
    report_unknown_keys(obj, value, known, where, report)
    return {key: plain(value[key]) for key in known if key in value}
