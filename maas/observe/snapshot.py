"""`Observed`: an immutable snapshot of exactly the live objects the plan reads.

Any object is in one of three states: present (here it is), absent (its scope was listed, a GET found nothing, or
its kind is not installed, so it certainly does not exist) and unknown (nobody looked). Unknown is never absent:
`get` raises `NotObservedError` for it and `lookup` says "unknown", so no caller can mistake one for the other.

Objects are stored trimmed (no `metadata.managedFields`; of a Secret only its metadata, and never the
`last-applied-configuration` annotation that would carry its data; of a CRD only what it serves) and deep-frozen.
The plan reads them through `view` (typed, see `views.py`), each object parsed once; `unreadable` says which had
a field of the wrong shape.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from .. import naming
from .fields import items_at, mapping_at
from .meta import Meta
from .views import Parsed, V, View, parse

# KServe 0.20 serves LLMInferenceService as v1alpha1 and v1alpha2 (the storage version); the program reads this one.
LLMISVC_API_VERSION = "serving.kserve.io/v1alpha2"
CRD_KIND = "CustomResourceDefinition"
BUILTIN_GROUPS = frozenset(
    {"", "apps", "batch", "autoscaling", "rbac.authorization.k8s.io", "networking.k8s.io", "apiextensions.k8s.io"}
)
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


@dataclass(frozen=True)
class Kind:
    """One API resource the snapshot knows: what the reader asks the API server for and how the file names it."""

    api_version: str
    kind: str
    plural: str
    namespaced: bool = True
    metadata_only: bool = False  # read and kept as metadata alone (a Secret's data never leaves the API server)

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    @property
    def version(self) -> str:
        return self.api_version.rpartition("/")[2]

    @property
    def builtin(self) -> bool:
        """Served by every API server; anything else needs its CRD."""
        return self.group in BUILTIN_GROUPS

    @property
    def resource(self) -> str:
        """The name kubectl takes for it without ambiguity: `plural.group` (`plural` in the core group)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def crd_name(self) -> str | None:
        """`{plural}.{group}` for a custom resource, None for a built-in kind."""
        return None if self.builtin else f"{self.plural}.{self.group}"


_KINDS = (
    # read by the plan
    Kind(LLMISVC_API_VERSION, "LLMInferenceService", "llminferenceservices"),
    Kind(naming.HTTPROUTE_API_VERSION, "HTTPRoute", "httproutes"),
    Kind(f"{naming.GATEWAY_API_GROUP}/v1", "Gateway", "gateways"),
    Kind(naming.MAAS_API_VERSION, "MaaSSubscription", "maassubscriptions"),
    Kind(naming.MAAS_API_VERSION, "MaaSModelRef", "maasmodelrefs"),
    Kind(naming.MAAS_API_VERSION, "MaaSAuthPolicy", "maasauthpolicies"),
    Kind(naming.MAAS_API_VERSION, "ExternalModel", "externalmodels"),
    Kind(naming.MAAS_API_VERSION, "MaasTenantConfig", "maastenantconfigs"),
    Kind(naming.TRLP_API_VERSION, "TokenRateLimitPolicy", "tokenratelimitpolicies"),
    Kind(naming.AUTH_POLICY_API_VERSION, "AuthPolicy", "authpolicies"),
    Kind("v1", "ConfigMap", "configmaps"),
    Kind("v1", "Secret", "secrets", metadata_only=True),
    Kind("apps/v1", "Deployment", "deployments"),
    Kind(naming.PERSES_API_VERSION, "PersesDashboard", "persesdashboards"),  # also written (the usage dashboard)
    Kind("apiextensions.k8s.io/v1", CRD_KIND, "customresourcedefinitions", namespaced=False),
    # written by the program: observed for whether their CRD is installed, and by `import` for whether they exist
    Kind("extensions.kuadrant.io/v1alpha1", "TelemetryPolicy", "telemetrypolicies"),
    Kind("telemetry.istio.io/v1", "Telemetry", "telemetries"),
    Kind(naming.ISTIO_NETWORKING_API_VERSION, "DestinationRule", "destinationrules"),
    Kind(naming.ISTIO_NETWORKING_API_VERSION, "ServiceEntry", "serviceentries"),
    Kind("networking.istio.io/v1alpha3", "EnvoyFilter", "envoyfilters"),
    Kind("monitoring.coreos.com/v1", "PodMonitor", "podmonitors"),
    Kind(naming.INFERENCE_OBJECTIVE_API_VERSION, "InferenceObjective", "inferenceobjectives"),  # issue 22
    Kind("cert-manager.io/v1", "Certificate", "certificates"),
    Kind("v1", "Service", "services"),
    Kind("v1", "ServiceAccount", "serviceaccounts"),
    Kind("v1", "Namespace", "namespaces", namespaced=False),
    Kind("batch/v1", "CronJob", "cronjobs"),
    Kind("autoscaling/v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers"),
    Kind("networking.k8s.io/v1", "NetworkPolicy", "networkpolicies"),
    Kind("rbac.authorization.k8s.io/v1", "Role", "roles"),
    Kind("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings"),
    Kind("rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", namespaced=False),
    Kind("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterrolebindings", namespaced=False),
)
# Read only by `python -m maas import`: the upstream controller's configuration CRs, which the plan never reads.
_IMPORT_ONLY_KINDS = (
    Kind(naming.MAAS_API_VERSION, "AITenant", "aitenants"),
    Kind(naming.MAAS_API_VERSION, "Tenant", "tenants"),
    Kind(naming.MAAS_API_VERSION, "Config", "configs", namespaced=False),
)
KINDS: Mapping[str, Kind] = MappingProxyType({k.kind: k for k in (*_KINDS, *_IMPORT_ONLY_KINDS)})
IMPORT_ONLY_KINDS = frozenset(k.kind for k in _IMPORT_ONLY_KINDS)


def kind_of(name: str) -> Kind:
    if name not in KINDS:
        planned = ", ".join(sorted(set(KINDS) - IMPORT_ONLY_KINDS))
        raise ValueError(
            f"{name!r} is not a kind the snapshot knows; use one of: {planned} "
            f"(or, read by python -m maas import: {', '.join(sorted(IMPORT_ONLY_KINDS))})"
        )
    return KINDS[name]


@dataclass(frozen=True)
class Scope:
    """A LIST: every object of `kind` in `namespace` (None: all namespaces, or the cluster for cluster kinds)."""

    kind: str
    namespace: str | None = None

    def __post_init__(self) -> None:
        if not kind_of(self.kind).namespaced and self.namespace is not None:
            raise ValueError(f"{self.kind} is cluster-scoped; a scope of it has no namespace")

    @property
    def sort_key(self) -> tuple[str, str, str]:
        return (KINDS[self.kind].api_version, self.kind, self.namespace or "")


@dataclass(frozen=True)
class ObjectRef:
    """One object: kind, namespace (None for cluster-scoped kinds) and name."""

    kind: str
    namespace: str | None
    name: str

    def __post_init__(self) -> None:
        namespaced = kind_of(self.kind).namespaced
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"{self.kind} without a name: metadata.name must be a non-empty string")
        if namespaced and not (isinstance(self.namespace, str) and self.namespace):
            raise ValueError(f"{self.kind} {self.name}: {self.kind} is namespaced; give metadata.namespace")
        if not namespaced and self.namespace is not None:
            raise ValueError(f"{self.kind} {self.name}: {self.kind} is cluster-scoped; drop metadata.namespace")

    @property
    def sort_key(self) -> tuple[str, str, str, str]:
        return (KINDS[self.kind].api_version, self.kind, self.namespace or "", self.name)


@dataclass(frozen=True)
class Cluster:
    """Where a snapshot was read: the API server URL and the kubeconfig context (None in-cluster)."""

    server: str
    context: str | None = None


State = Literal["present", "absent", "unknown"]


@dataclass(frozen=True)
class Lookup:
    """The answer about one object: `state`, and `object` when present."""

    state: State
    object: Mapping[str, Any] | None = None


ABSENT, UNKNOWN = Lookup("absent"), Lookup("unknown")  # immutable: one answer each serves every look-up


class NotObservedError(LookupError):
    """A question about something the snapshot did not look at: unknown, which is not absent."""


@dataclass(frozen=True)
class Observed:
    """The snapshot. Build it with `Observed.of` (trims and freezes) or `Observed.nothing()`."""

    cluster: Cluster | None = None
    objects: Mapping[ObjectRef, Mapping[str, Any]] = field(default_factory=lambda: MappingProxyType({}))
    listed: frozenset[Scope] = frozenset()
    got: frozenset[ObjectRef] = frozenset()
    crds: Mapping[str, bool] = field(default_factory=lambda: MappingProxyType({}))  # kind -> installed
    _parsed: dict[ObjectRef, Parsed] = field(default_factory=dict, init=False, repr=False, compare=False)

    @classmethod
    def nothing(cls) -> Observed:
        """Nothing observed: every question is unknown."""
        return cls()

    @classmethod
    def of(
        cls,
        objects: Iterable[Mapping[str, Any]],
        listed: Iterable[Scope] = (),
        got: Iterable[ObjectRef] = (),
        crds: Mapping[str, bool] | None = None,
        cluster: Cluster | None = None,
    ) -> Observed:
        """A snapshot of plain objects (each of a kind in KINDS, at its apiVersion), trimmed and frozen here."""
        kept = {ref_of(obj): frozen(trimmed(obj)) for obj in objects}
        installed = {kind_of(kind).kind: bool(value) for kind, value in (crds or {}).items()}
        return cls(cluster, MappingProxyType(kept), frozenset(listed), frozenset(got), MappingProxyType(installed))

    def lookup(self, kind: str, namespace: str | None, name: str) -> Lookup:
        ref = ObjectRef(kind, namespace, name)
        found = self.objects.get(ref)
        if found is not None:
            return Lookup("present", found)
        if ref in self.got or self._covers(kind, namespace):
            return ABSENT
        return UNKNOWN

    def get(self, kind: str, namespace: str | None, name: str) -> Mapping[str, Any] | None:
        """The object, or None when it is certainly absent; NotObservedError when nobody looked."""
        answer = self.lookup(kind, namespace, name)
        if answer.state == "unknown":
            raise NotObservedError(f"{kind} {namespace or ''}/{name} was not observed")
        return answer.object

    def view(self, view: type[V], namespace: str | None, name: str) -> V | None:
        """The typed view (`LiveGateway`, ...) of a present object, parsed once and cached; None when the object
        is absent or unknown (`lookup` tells which)."""
        found = self._view(ObjectRef(view.KIND, namespace, name))
        return found if isinstance(found, view) else None

    def meta(self, kind: str, namespace: str | None, name: str) -> Meta | None:
        """The metadata of a present object of any kind, as its view read it; None when absent or unknown."""
        found = self._view(ObjectRef(kind, namespace, name))
        return None if found is None else found.meta

    def _view(self, ref: ObjectRef) -> View | None:
        return self._parse(ref).view if ref in self.objects else None

    def unreadable(self) -> list[str]:
        """One warning per observed object with a field of the wrong shape, naming it and the fields."""
        found = ((ref, self._parse(ref).problems) for ref in sorted(self.objects, key=lambda ref: ref.sort_key))
        return [
            f"unreadable live object: {ref.kind} {ref.namespace or ''}/{ref.name}: {'; '.join(problems)}; "
            "those fields are read as absent"
            for ref, problems in found
            if problems
        ]

    def _parse(self, ref: ObjectRef) -> Parsed:
        if ref not in self._parsed:
            self._parsed[ref] = parse(ref.kind, self.objects[ref])
        return self._parsed[ref]

    def items(self, kind: str, namespace: str | None = None) -> tuple[Mapping[str, Any], ...]:
        """Every object of a listed scope (namespace None: all namespaces), by namespace and name."""
        if not self.covers(Scope(kind, namespace)):
            where = f"namespace {namespace}" if namespace else "all namespaces"
            raise NotObservedError(f"{kind} in {where} was not listed")
        refs = [ref for ref in self.objects if ref.kind == kind and namespace in (None, ref.namespace)]
        return tuple(self.objects[ref] for ref in sorted(refs, key=lambda ref: ref.sort_key))

    def covers(self, scope: Scope) -> bool:
        """Whether every object of `scope` is known: it was listed (or all namespaces were), or the kind is absent."""
        return self._covers(scope.kind, scope.namespace)

    def _covers(self, kind: str, namespace: str | None) -> bool:
        """`covers`, building no scope when nothing was listed: every look-up of an object not held asks this."""
        if self.crds.get(kind) is False:
            return True
        return bool(self.listed) and (Scope(kind, namespace) in self.listed or Scope(kind) in self.listed)

    def installed(self, kind: str) -> bool | None:
        """Whether the kind is served at its apiVersion; built-in kinds always are; None when nobody looked."""
        if kind_of(kind).builtin:
            return self.crds.get(kind, True)
        return self.crds.get(kind)


def kind_at(name: Any, api_version: Any) -> Kind:
    """The known kind `name`, if `api_version` is the one the program reads; else ValueError saying how to fix."""
    kind = kind_of(str(name))
    if api_version != kind.api_version:
        raise ValueError(
            f"{kind.kind} has apiVersion {api_version!r}; the program reads {kind.api_version} "
            f"(e.g. kubectl get {kind.plural}.{kind.version}.{kind.group or 'core'} -o yaml)"
        )
    return kind


def ref_of(obj: Mapping[str, Any]) -> ObjectRef:
    """The key of an object of a known kind at the apiVersion the program reads; ValueError saying what is wrong."""
    kind = kind_at(obj.get("kind"), obj.get("apiVersion"))
    metadata = obj.get("metadata")
    if not isinstance(metadata, Mapping):
        raise ValueError(f"{kind.kind} has no metadata")
    return ObjectRef(kind.kind, metadata.get("namespace"), metadata.get("name"))


def trimmed(obj: Mapping[str, Any]) -> dict[str, Any]:
    """What the snapshot keeps of an object (see the module docstring); a new plain dict."""
    kind = KINDS[obj["kind"]]
    metadata = {k: v for k, v in obj["metadata"].items() if k != "managedFields"}
    if kind.metadata_only:
        annotations = {k: v for k, v in (metadata.pop("annotations", None) or {}).items() if k != LAST_APPLIED}
        if annotations:
            metadata["annotations"] = annotations
        return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "metadata": thawed(metadata)}
    if kind.kind == CRD_KIND:
        return _crd_summary(obj)
    return thawed({**obj, "metadata": metadata})


def _crd_summary(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A CRD is observed for whether it is installed and which versions it serves; its schemas stay out."""
    spec = mapping_at(obj, "spec")
    versions = [{key: v[key] for key in ("name", "served", "storage") if key in v} for v in items_at(spec, "versions")]
    summary = {key: spec[key] for key in ("group", "names", "scope") if key in spec}
    return thawed(
        {
            "apiVersion": obj["apiVersion"],
            "kind": obj["kind"],
            "metadata": {"name": obj["metadata"]["name"]},
            "spec": {**summary, "versions": versions},
        }
    )


def serves(crd: Mapping[str, Any] | None, kind: Kind) -> bool:
    """Whether a CRD (None: absent) serves `kind` at the version the program reads."""
    return any(v.get("name") == kind.version and v.get("served") for v in items_at(crd, "spec", "versions"))


def frozen(value: Any) -> Any:
    """A deep read-only copy: mappings become MappingProxyType, lists tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({key: frozen(item) for key, item in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(frozen(item) for item in value)
    return value


def thawed(value: Any) -> Any:
    """A deep plain copy (dicts and lists) of a frozen or plain value, for writing out or editing."""
    if isinstance(value, Mapping):
        return {key: thawed(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [thawed(item) for item in value]
    return value
