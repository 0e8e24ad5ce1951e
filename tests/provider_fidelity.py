"""What pulumi-kubernetes and the Pulumi engine do on the first `pulumi up` after `pulumi import`, as tested data.

The mock engine runs no provider, so the program's tests never see a `Diff`. This module holds the provider's and
the engine's rules the migration relies on, each with the file and line it was read from, and a small pure model
of the first post-import diff built from them: the inputs `pulumi import` stores (`imported_inputs`) against the
body the program registers with its `ignore_changes` (`first_diff`), giving per object the paths that replace it,
the paths shown deleted and those added.

Sources. `PK`: pulumi/pulumi-kubernetes at 94977969d (v4.32.0 + 27 commits, 2026-07-01): the newest commit of the
stored mirror, which has no v4.33-v4.34.2 tag, so the pinned 4.34.2 (`requirements.txt`) is newer than what was
read; 4.34.2's Python SDK (`pulumi_kubernetes/*/v1/*Args`) agrees on the input properties of each kind. `PP`:
pulumi/pulumi at 1b5949891 (v3.259.0 + 14), the engine; the CLI that CI pins (3.272.0) is newer. Re-read the cited
lines on every upgrade of either: a rule that changed there changes nothing here until this file does.

The model's simplifications: `clients.Normalize` (a typed round trip that only canonicalizes spellings, e.g. of
quantities) is the identity; computed values do not occur (no preview unknowns); force-new paths are matched on the
patch as the provider's JSONPath does, for the path shapes of `FORCE_NEW` (keys, `[*]`).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

PK = "pulumi/pulumi-kubernetes@94977969d64112b04e19945818a7d5d5f38f631d"
PP = "pulumi/pulumi@1b5949891b3cefcb9974752b24a5ecef0acc86c8"


def read_at(where: str, repo: str = PK) -> str:
    """`file:line@repo@commit`: where a rule was read."""
    return f"{where}@{repo}"


@dataclass(frozen=True)
class Rule:
    """One behaviour of the provider or the engine that the migration relies on."""

    what: str
    where: str


RULES = (
    Rule(
        "force-new paths: .metadata.name and .metadata.namespace of every kind, plus the kind's own (FORCE_NEW); a "
        "Secret's .type/.stringData/.data and a ConfigMap's .data/.binaryData unless mutable is enabled",
        read_at("provider/pkg/provider/diff.go:23-38"),
    ),
    Rule(
        "enableConfigMapMutable and enableSecretMutable default to false (provider flag, else the environment)",
        read_at("provider/pkg/provider/provider.go:696-725"),
    ),
    Rule(
        "import: Read without previous inputs reads from the cluster (readFromCluster)",
        read_at("provider/pkg/provider/provider.go:1981-1990"),
    ),
    Rule(
        "import: the imported inputs are every live top-level field the kind's schema lists as an input (not "
        "status), without metadata creationTimestamp, generation, managedFields, resourceVersion, uid and the "
        "deployment revision and last-applied annotations; a custom resource's type is not in the schema, so only "
        "its identity (apiVersion, kind, name, namespace) is imported",
        read_at("provider/pkg/provider/provider.go:2083-2113"),
    ),
    Rule(
        "import: the engine reads without inputs, and supplied `inputs` only fill keys the read lacks",
        read_at("pkg/resource/deploy/step.go:1939-1952,2037-2079", PP),
    ),
    Rule(
        "up: for a resource in state, each ignore_changes path of the new inputs is reset to the old inputs' value "
        "(deleted when the old inputs lack it)",
        read_at("pkg/resource/deploy/step_generator.go:1264-1269,3074-3096", PP),
    ),
    Rule(
        "diff: the live state is pruned to the old inputs' shape and compared with the new inputs by a JSON merge "
        "patch; namespaces are canonical, resourceVersion cleared under server-side apply",
        read_at("provider/pkg/provider/provider.go:1494-1540,2851-2864,2965-2972"),
    ),
    Rule(
        "diff: a live field the new inputs lack is DELETE; on a force-new path it becomes DELETE_REPLACE (ADD and "
        "UPDATE likewise), and any *_REPLACE, or deleting all of metadata, replaces the object",
        read_at("provider/pkg/provider/provider.go:3281-3378,1600-1619"),
    ),
    Rule(
        "diff: paths under an ignore_changes path are removed from the detailed diff",
        read_at("provider/pkg/provider/provider.go:1577-1600"),
    ),
    Rule(
        "normalization removes the read-only metadata fields from old and new inputs",
        read_at("provider/pkg/provider/provider.go:2983-3002"),
    ),
    Rule(
        "a replaced named object is deleted before it is created again",
        read_at("provider/pkg/provider/provider.go:1645-1657"),
    ),
    Rule(
        "deleting a custom resource is awaited (skipAwait counts on delete only for Namespace, Pod, "
        "ReplicationController, DaemonSet, Deployment, StatefulSet, Job), 10 minutes by default",
        read_at("provider/pkg/metadata/overrides.go:176-209") + "; " + read_at("provider/pkg/await/await.go:976"),
    ),
)

# ------------------------------------------------------------------------------------------------- force-new


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_SELECTOR = (  # diff.go:243-251 labelSelectorForceNewProperties, after .spec.selector itself
    ".spec.selector",
    ".spec.selector.matchExpressions",
    ".spec.selector.matchExpressions.key",
    ".spec.selector.matchExpressions.operator",
    ".spec.selector.matchExpressions.values",
    ".spec.selector.matchLabels",
)
_CONTAINER_FIELDS = _words(
    "args command env env.value image imagePullPolicy lifecycle livenessProbe ports readinessProbe resources "
    "securityContext stdin stdinOnce terminationMessagePath terminationMessagePolicy tty volumeDevices volumeMounts "
    "workingDir"
)  # diff.go:214-241
_POD_FIELDS = _words(
    "affinity automountServiceAccountToken dnsConfig dnsPolicy enableServiceLinks hostAliases hostIPC hostNetwork "
    "hostPID hostname imagePullSecrets nodeName nodeSelector overhead preemptionPolicy priority priorityClassName "
    "readinessGates restartPolicy runtimeClassName schedulerName securityContext serviceAccount serviceAccountName "
    "shareProcessNamespace subdomain terminationGracePeriodSeconds volumes"
)  # diff.go:119-151
_POD = (
    *(f".spec.{leaf}" for leaf in _POD_FIELDS),
    *(
        f"{prefix}.{leaf}"
        for prefix in (".spec.containers[*]", ".spec.initContainers[*]")
        for leaf in _CONTAINER_FIELDS
    ),
)
_STATEFUL_SET = (
    ".spec.podManagementPolicy",
    ".spec.revisionHistoryLimit",
    ".spec.serviceName",
    ".spec.volumeClaimTemplates",
    *_SELECTOR,
)  # diff.go:196-205
_JOB = (".spec.completions", ".spec.parallelism", ".spec.template", *_SELECTOR)  # diff.go:178-186
_ROLE_BINDING = (".roleRef",)  # diff.go:192-194

# (group, version, kind) -> the kind's own force-new paths (diff.go:45-162); `core` is also listed as "" (diff.go:60).
FORCE_NEW: Mapping[tuple[str, str, str], tuple[str, ...]] = {
    ("", "v1", "Service"): (".spec.clusterIP",),  # diff.go:158-160
    ("", "v1", "Secret"): (".type",),  # diff.go:155-157
    ("", "v1", "ResourceQuota"): (".spec.scopes",),
    ("", "v1", "PersistentVolumeClaim"): (
        ".spec.accessModes",
        ".spec.selector",
        ".spec.storageClassName",
        ".spec.volumeName",
        *_SELECTOR[1:],
    ),
    ("", "v1", "Pod"): _POD,
    **{("apps", version, kind): _SELECTOR for version in ("v1", "v1beta2") for kind in ("Deployment", "DaemonSet")},
    **{("apps", version, "StatefulSet"): _STATEFUL_SET for version in ("v1", "v1beta1", "v1beta2")},
    **{
        ("rbac.authorization.k8s.io", version, kind): _ROLE_BINDING
        for version in ("v1", "v1beta1", "v1alpha1")
        for kind in ("RoleBinding", "ClusterRoleBinding")
    },
    **{("batch", version, "Job"): _JOB for version in ("v1", "v1beta1", "v2alpha1")},
    ("policy", "v1beta1", "PodDisruptionBudget"): (".spec",),
    ("storage.k8s.io", "v1", "StorageClass"): (".parameters", ".provisioner"),
}
IDENTITY_FORCE_NEW = (".metadata.name", ".metadata.namespace")  # diff.go:207-212, provider.go:1560


def group_version(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return ("" if group == "core" else group), version


def force_new_paths(
    body: Mapping[str, Any], config_map_mutable: bool = False, secret_mutable: bool = False
) -> tuple[str, ...]:
    """`forceNewProperties` (diff.go:23-38): identity, then the kind's own paths; an immutable or (by default)
    not-mutable Secret or ConfigMap replaces on its content. Only groups of the table have any beyond identity."""
    group, version = group_version(body["apiVersion"])
    kind = body["kind"]
    paths = list(IDENTITY_FORCE_NEW)
    if not any(g == group and v == version for g, v, _ in FORCE_NEW):
        return tuple(paths)
    immutable = body.get("immutable") is True
    if group == "" and kind == "Secret" and (not secret_mutable or immutable):
        return (*paths, ".type", ".stringData", ".data")
    if (group, version, kind) in FORCE_NEW:
        return (*paths, *FORCE_NEW[(group, version, kind)])
    if group == "" and kind == "ConfigMap" and (not config_map_mutable or immutable):
        return (*paths, ".binaryData", ".data")
    return tuple(paths)


# ------------------------------------------------------------------------------------------------- import

# provider/pkg/kinds/kinds.go:335-401 KnownGroupVersions: the built-in apiVersions, whose kinds are in the
# provider's schema (so Read imports their live fields) and are normalized (provider.go:2975-2977).
BUILT_IN_API_VERSIONS = frozenset(
    _words(
        "admissionregistration.k8s.io/v1 admissionregistration.k8s.io/v1alpha1 admissionregistration.k8s.io/v1beta1 "
        "apiextensions.k8s.io/v1 apiextensions.k8s.io/v1beta1 apiregistration.k8s.io/v1 apiregistration.k8s.io/v1beta1 "
        "apps/v1 apps/v1beta1 apps/v1beta2 auditregistration.k8s.io/v1alpha1 autoscaling/v1 autoscaling/v2 "
        "autoscaling/v2beta1 autoscaling/v2beta2 batch/v1 batch/v1beta1 batch/v2alpha1 certificates.k8s.io/v1 "
        "certificates.k8s.io/v1alpha1 certificates.k8s.io/v1beta1 coordination.k8s.io/v1 coordination.k8s.io/v1alpha1 "
        "coordination.k8s.io/v1alpha2 coordination.k8s.io/v1beta1 core/v1 discovery.k8s.io/v1 discovery.k8s.io/v1beta1 "
        "events.k8s.io/v1 events.k8s.io/v1beta1 extensions/v1beta1 flowcontrol.apiserver.k8s.io/v1 "
        "flowcontrol.apiserver.k8s.io/v1alpha1 flowcontrol.apiserver.k8s.io/v1beta1 flowcontrol.apiserver.k8s.io/v1beta2 "
        "flowcontrol.apiserver.k8s.io/v1beta3 meta/v1 networking.k8s.io/v1 networking.k8s.io/v1alpha1 "
        "networking.k8s.io/v1beta1 node.k8s.io/v1 node.k8s.io/v1alpha1 node.k8s.io/v1beta1 policy/v1 policy/v1beta1 "
        "rbac.authorization.k8s.io/v1 rbac.authorization.k8s.io/v1alpha1 rbac.authorization.k8s.io/v1beta1 "
        "resource.k8s.io/v1 resource.k8s.io/v1alpha1 resource.k8s.io/v1alpha2 resource.k8s.io/v1alpha3 "
        "resource.k8s.io/v1beta1 resource.k8s.io/v1beta2 scheduling.k8s.io/v1 scheduling.k8s.io/v1alpha1 "
        "scheduling.k8s.io/v1alpha2 scheduling.k8s.io/v1beta1 settings.k8s.io/v1alpha1 storage.k8s.io/v1 "
        "storage.k8s.io/v1alpha1 storage.k8s.io/v1beta1 storagemigration.k8s.io/v1alpha1 "
        "storagemigration.k8s.io/v1beta1 v1"
    )
)
NOT_INPUTS = ("status",)  # the schema's input properties are a kind's top-level fields but status
READ_DROPS_METADATA = ("creationTimestamp", "generation", "managedFields", "resourceVersion", "uid")
READ_DROPS_ANNOTATIONS = ("deployment.kubernetes.io/revision", "kubectl.kubernetes.io/last-applied-configuration")
READ_ONLY_METADATA = (  # normalizeInputs, provider.go:2994-3000
    "creationTimestamp",
    "deletionGracePeriodSeconds",
    "deletionTimestamp",
    "generation",
    "managedFields",
    "resourceVersion",
    "uid",
)


def is_built_in(body: Mapping[str, Any]) -> bool:
    return body["apiVersion"] in BUILT_IN_API_VERSIONS


def imported_inputs(live: Mapping[str, Any]) -> dict[str, Any]:
    """The inputs `pulumi import` stores for a live object (provider.go:2083-2113)."""
    if not is_built_in(live):
        return _identity(live)
    inputs = {key: copy.deepcopy(value) for key, value in live.items() if key not in NOT_INPUTS}
    metadata = inputs["metadata"]
    for key in READ_DROPS_METADATA:
        metadata.pop(key, None)
    for key in READ_DROPS_ANNOTATIONS:
        metadata.get("annotations", {}).pop(key, None)
    return inputs


def _identity(live: Mapping[str, Any]) -> dict[str, Any]:
    """Live pruned to apiVersion, kind, name and namespace (what Read knows before it reads)."""
    metadata = {key: live["metadata"][key] for key in ("name", "namespace") if live["metadata"].get(key)}
    return {"apiVersion": live["apiVersion"], "kind": live["kind"], "metadata": metadata}


# ------------------------------------------------------------------------------------------------- the first diff

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING"})()
ADD, UPDATE, DELETE = "ADD", "UPDATE", "DELETE"


@dataclass(frozen=True)
class FirstDiff:
    """One object's first post-import diff, by provider property path (`spec.clusterIP`, `data["a.b"]`)."""

    replaces: tuple[str, ...]
    deleted: tuple[str, ...]
    added: tuple[str, ...]
    updated: tuple[str, ...]

    @property
    def replaced(self) -> bool:
        return bool(self.replaces)


def first_diff(
    live: Mapping[str, Any], imported: Mapping[str, Any], body: Mapping[str, Any], ignore_changes: Iterable[str] = ()
) -> FirstDiff:
    """The provider's Diff on the first `up` after the import: the old state is the live object read at import
    (its inputs `imported`), the new inputs the program's `body` after the engine's ignore_changes reset."""
    ignore = tuple(ignore_changes)
    olds = _normalized(imported)
    news = _normalized(reset_ignored(body, imported, ignore))
    pruned = _canonical_identity(prune(copy.deepcopy(dict(live)), olds), news, live)
    patch = merge_patch(pruned, news)
    detailed = _PatchConverter(force_new_paths(news)).convert(patch, pruned, news) if patch else {}
    parsed = [property_path(path) for path in ignore]
    kept = {p: kind for p, kind in detailed.items() if not any(_contains(i, property_path(p)) for i in parsed)}
    replaces = sorted(
        p for p, kind in kept.items() if kind.endswith("_REPLACE") or (p == "metadata" and kind == DELETE)
    )
    return FirstDiff(
        replaces=tuple(replaces),
        deleted=tuple(sorted(p for p, kind in kept.items() if kind.startswith(DELETE))),
        added=tuple(sorted(p for p, kind in kept.items() if kind.startswith(ADD))),
        updated=tuple(sorted(p for p, kind in kept.items() if kind.startswith(UPDATE))),
    )


def reset_ignored(body: Mapping[str, Any], old: Mapping[str, Any], ignore: Iterable[str]) -> dict[str, Any]:
    """`processIgnoreChanges`: each path of the new inputs set to the old inputs' value, or removed when the old
    inputs lack it; no intermediate object is created (properties_path.go:354-567 `reset`, key paths)."""
    new = copy.deepcopy(dict(body))
    for path in ignore:
        _reset(property_path(path), old, new)
    return new


def _reset(keys: list, old: Any, new: Any) -> None:
    key = keys[0]
    if len(keys) == 1:
        if isinstance(old, Mapping) and key in old:
            if isinstance(new, dict):
                new[key] = copy.deepcopy(old[key])
        elif isinstance(new, dict):
            new.pop(key, None)
        return
    if not (isinstance(old, Mapping) and isinstance(new, dict)) or key not in new:
        return  # nothing to reset, or a path error the engine reports and skips
    _reset(keys[1:], old.get(key), new[key])


def _normalized(obj: Mapping[str, Any]) -> dict[str, Any]:
    result = copy.deepcopy(dict(obj))
    metadata = result.get("metadata")
    if isinstance(metadata, dict):
        for key in READ_ONLY_METADATA:
            metadata.pop(key, None)
    return result


def _canonical_identity(pruned: dict[str, Any], news: dict[str, Any], live: Mapping[str, Any]) -> dict[str, Any]:
    """provider.go:1509-1534: the default namespace made explicit (namespaced kinds) or cleared, resourceVersion
    cleared (server-side apply), the live name kept."""
    metadata = pruned.setdefault("metadata", {})
    if live["metadata"].get("namespace"):
        metadata["namespace"] = metadata.get("namespace") or "default"
        news["metadata"]["namespace"] = news["metadata"].get("namespace") or "default"
    else:
        metadata.pop("namespace", None)
        news["metadata"].pop("namespace", None)
    metadata.pop("resourceVersion", None)
    if news["metadata"].get("name"):
        metadata["name"] = live["metadata"]["name"]
    return pruned


def prune(source: Any, target: Any) -> Any:
    """`pruneMap`/`pruneSlice` (util.go:234-300): `source` cut to the keys and list length of `target`."""
    if isinstance(source, dict) and isinstance(target, Mapping):
        result = {}
        for key, value in source.items():
            if key not in target:
                continue
            other = target[key]
            same_type = value is not None and other is not None and type(value) is type(other)
            result[key] = prune(value, other) if same_type and isinstance(value, (dict, list)) else value
        return result
    if isinstance(source, list) and isinstance(target, list):
        if not source or not target:
            return []
        if type(source[0]) is not type(target[0]):
            return copy.deepcopy(source)
        return [
            prune(value, other) if value is not None and other is not None else value
            for value, other in zip(source, target, strict=False)
        ]
    return source


def merge_patch(original: Mapping[str, Any], modified: Mapping[str, Any]) -> dict[str, Any]:
    """RFC 7386 `CreateMergePatch` (provider.go:2863): changed keys, nested maps recursed, lists whole, None for a
    removed key."""
    patch: dict[str, Any] = {}
    for key, value in modified.items():
        if key not in original:
            patch[key] = copy.deepcopy(value)
        elif isinstance(value, Mapping) and isinstance(original[key], Mapping):
            nested = merge_patch(original[key], value)
            if nested:
                patch[key] = nested
        elif not _equal(original[key], value):
            patch[key] = copy.deepcopy(value)
    for key in original:
        if key not in modified:
            patch[key] = None
    return patch


def _equal(a: Any, b: Any) -> bool:
    """JSON equality: a boolean is never a number (Go's reflect.DeepEqual), numbers compare by value."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    return a == b


class _PatchConverter:
    """`convertPatchToDiff` (provider.go:3191-3465): the merge patch as a detailed diff, force-new paths marked."""

    def __init__(self, force_new: tuple[str, ...]) -> None:
        self.force_new = [_rule_path(path) for path in force_new]
        self.diff: dict[str, str] = {}

    def convert(self, patch: dict, live: dict, news: dict) -> dict[str, str]:
        self._map([], patch, live, news, live, in_array=False)
        return self.diff

    def _value(self, path: list, v: Any, old: Any, new_input: Any, old_input: Any, in_array: bool) -> None:
        if new_input is MISSING and (v is not None or old_input is MISSING):
            return  # provider.go:3291: no new input, only a delete can be a diff
        if v is None:
            kind = DELETE
        elif old is MISSING:
            kind = ADD
        elif isinstance(v, dict) and isinstance(old, dict):
            return self._map(path, v, old, _as(new_input, dict), _as(old_input, dict), in_array)
        elif isinstance(v, list) and isinstance(old, list):
            return self._array(path, v, old, _as(new_input, list), _as(old_input, list))
        elif isinstance(v, (dict, list)) or not _equal(v, old):
            kind = UPDATE
        else:
            return
        if any(_found(rule, _patch_slice(path, v)) for rule in self.force_new):
            kind += "_REPLACE"
        self.diff[path_string(path)] = kind

    def _map(self, path: list, m: dict, old: dict, new_input: dict, old_input: dict, in_array: bool) -> None:
        for key, value in m.items():
            self._value([*path, key], value, old.get(key, MISSING), new_input.get(key, MISSING),
                        old_input.get(key, MISSING), in_array)  # fmt: skip
        if in_array:  # a map inside a list: keys the patch lacks are deletes (provider.go:3405-3414)
            for key, value in old.items():
                if key not in m:
                    self._value([*path, key], None, value, new_input.get(key, MISSING),
                                old_input.get(key, MISSING), in_array)  # fmt: skip

    def _array(self, path: list, a: list, old: list, new_input: list, old_input: list) -> None:
        def at(items: list, i: int) -> Any:
            return items[i] if i < len(items) else None

        for i in range(max(len(a), len(old))):
            if i < len(a) and i < len(old):
                self._value([*path, i], a[i], old[i], at(new_input, i), at(old_input, i), True)
            elif i < len(a):
                self._value([*path, i], a[i], MISSING, at(new_input, i), at(old_input, i), True)
            else:
                self._value([*path, i], None, old[i], at(new_input, i), at(old_input, i), True)


def _as(value: Any, kind: type) -> Any:
    return value if isinstance(value, kind) else kind()


def _patch_slice(path: list, v: Any) -> Any:
    """`makePatchSlice`: the value at `path` in an otherwise empty patch (a list index becomes a one-item list)."""
    if not path:
        return v
    head, rest = path[0], path[1:]
    return [_patch_slice(rest, v)] if isinstance(head, int) else {head: _patch_slice(rest, v)}


def _rule_path(rule: str) -> list[str]:
    """`.spec.containers[*].image` -> ["spec", "containers", "*", "image"]."""
    return [part for part in re.split(r"\.|\[|\]", rule) if part]


def _found(rule: list[str], value: Any) -> bool:
    """Whether the provider's JSONPath `{rule}` finds something in `value` (`openapi.PatchPropertiesChanged`: a
    key present with a null value counts)."""
    if not rule:
        return True
    head, rest = rule[0], rule[1:]
    if isinstance(value, list):
        return head == "*" and any(_found(rest, item) for item in value)
    return isinstance(value, dict) and head in value and _found(rest, value[head])


def path_string(path: list) -> str:
    """The provider's spelling of a diff path (provider.go:3360-3375)."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif any(c in part for c in '."[]'):
            text += '["' + part.replace('"', '\\"') + '"]'
        else:
            text = f"{text}.{part}" if text else part
    return text


_PATH_PART = re.compile(r'\.?([^.\[\]"]+)|\["((?:[^"\\]|\\.)*)"\]|\[(\d+|\*)\]')


def property_path(text: str) -> list:
    """`resource.ParsePropertyPath` for the spellings used here: `a.b`, `a["b.c"]`, `a[0]`, `a[*]`."""
    parts: list = []
    for key, quoted, index in _PATH_PART.findall(text):
        if key:
            parts.append(key)
        elif index:
            parts.append(int(index) if index.isdigit() else "*")
        else:
            parts.append(quoted.replace('\\"', '"'))
    return parts


def _contains(ignore: list, path: list) -> bool:
    """`PropertyPath.Contains`: `ignore` is a prefix of `path` (`*` matches any key or index)."""
    return len(path) >= len(ignore) and all(a == "*" or a == b for a, b in zip(ignore, path, strict=False))


# ------------------------------------------------------------------------------------------------- the round trip


@dataclass(frozen=True)
class Adopted:
    """An object of the import file: its handle (`{type}::{logical name}`), parent handle, live object and the
    program's registration of it on the first `up` (None: the first up does not register it, so it deletes it)."""

    handle: str
    parent: str | None
    live: Mapping[str, Any]
    body: Mapping[str, Any] | None
    ignore_changes: tuple[str, ...]


def first_up(adopted: Iterable[Adopted]) -> dict[str, FirstDiff | None]:
    """Per imported object, its first diff; None for an object the first up deletes."""
    return {
        a.handle: None if a.body is None else first_diff(a.live, imported_inputs(a.live), a.body, a.ignore_changes)
        for a in adopted
    }
