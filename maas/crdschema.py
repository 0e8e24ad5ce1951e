"""Validate rendered Kubernetes objects offline, the way the API server would.

Custom resources are checked against the real CRDs in ``shared/crds`` (OpenAPI v3 schema, Kubernetes
structural-schema extensions and every ``x-kubernetes-validations`` CEL rule); core kinds against the
JSON schemas shipped by ``kubernetes-validate`` for a pinned Kubernetes version. Unknown fields are
errors: the API server silently prunes them, which for a renderer always means a bug.

Every error is one human-readable string ``"<Kind> <ns>/<name>: <json.path>: <message>"``.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.resources
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import celpy
import jsonschema
import re2
import yaml
from celpy import celtypes
from celpy.evaluation import CELEvalError, base_functions
from referencing import Registry, Resource

__all__ = [
    "CRDS_DIR_ENV",
    "KUBERNETES_VERSION",
    "CrdRegistry",
    "CrdVersion",
    "UnsupportedRuleError",
    "crds_available",
    "crds_dir",
    "default_registry",
    "format_path",
    "validate",
    "validate_all",
]

CRDS_DIR_ENV = "MAAS_CRDS_DIR"
KUBERNETES_VERSION = "1.37.0"  # newest schema set shipped by kubernetes-validate 1.37.0

JsonPath = tuple[str | int, ...]
Problem = tuple[JsonPath, str]

_REPO_ROOT = Path(__file__).resolve().parent.parent  # parent of the maas package
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MAX_MESSAGE = 300


# --------------------------------------------------------------------------------------------------
# Locating the CRD folder


def crds_dir() -> Path:
    """The CRD folder: ``$MAAS_CRDS_DIR``, else ``<repo root>/../shared/crds`` (the CI layout)."""
    override = os.environ.get(CRDS_DIR_ENV)
    if override:
        return Path(override)
    return _REPO_ROOT.parent / "shared" / "crds"


def crds_available() -> bool:
    """Whether the CRD folder exists and holds CRD files, so callers can skip instead of failing."""
    directory = crds_dir()
    return directory.is_dir() and any(directory.glob("*.yaml"))


# --------------------------------------------------------------------------------------------------
# Error formatting

_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def format_path(parts: Iterable[str | int]) -> str:
    """Render a JSON path like ``spec.limits.x-y.rates[0].window``; odd keys as ``labels["a.b/c"]``."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _PLAIN_KEY.match(part):
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part)}]"
    return out or "<root>"


def object_label(obj: dict) -> str:
    """``Kind ns/name`` (``Kind name`` without namespace), for naming an object in error messages."""
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    name = meta.get("name") or meta.get("generateName") or "<unnamed>"
    namespace = meta.get("namespace")
    kind = obj.get("kind") or "<no kind>"
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def _shorten(message: str) -> str:
    return message if len(message) <= _MAX_MESSAGE else message[: _MAX_MESSAGE - 1] + "…"


def _render(obj: dict, problems: Iterable[Problem]) -> list[str]:
    label = object_label(obj)
    ordered = sorted(problems, key=lambda p: (format_path(p[0]), p[1]))
    return [f"{label}: {format_path(path)}: {_shorten(message)}" for path, message in ordered]


# --------------------------------------------------------------------------------------------------
# JSON schema checking (shared by CRDs and core kinds)


def _re2_pattern(validator: Any, pattern: str, instance: Any, schema: dict) -> Iterator[Any]:
    """``pattern`` with RE2 semantics like the Go API server (e.g. ``$`` does not match before ``\\n``)."""
    if isinstance(instance, str) and not _compiled_re2(pattern).search(instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


@functools.cache
def _compiled_re2(pattern: str) -> Any:
    return re2.compile(pattern)


_GO_DURATION = re.compile(r"^[-+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$")
_STRFMT_DURATION = re.compile(r"(\d+)\s*([A-Za-zµ]+)")
# go-openapi accepts these units exactly, and the last spelling of each unit as a prefix ("seconds", "days")
_STRFMT_UNIT = re.compile(r"^(ns|us|µs|ms|s|m|h|hr|d|w|wk)$|^(nano|micro|milli|sec|min|hour|day|week)")
_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def _is_strfmt_duration(value: str) -> bool:
    """go-openapi ``strfmt`` duration, the check the API server applies to ``format: duration``."""
    if _GO_DURATION.match(value):
        return True
    return any(_STRFMT_UNIT.match(unit.lower()) for _, unit in _STRFMT_DURATION.findall(value))


def _format_checker() -> jsonschema.FormatChecker:
    """Only the formats the API server checks and the CRDs use; all others (int32, double...) pass."""
    checker = jsonschema.FormatChecker(formats=["ipv4", "ipv6"])
    checker.checks("date-time")(lambda v: not isinstance(v, str) or bool(_DATE_TIME.match(v)))
    checker.checks("duration")(lambda v: not isinstance(v, str) or _is_strfmt_duration(v))
    return checker


_CrdJsonValidator = jsonschema.validators.extend(jsonschema.Draft4Validator, {"pattern": _re2_pattern})
# Draft 2020-12 counts 8080.0 as an integer; typed Go clients cannot decode it into an int, so it must be an error.
_STRICT_INTEGERS = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
    "integer", lambda _checker, value: isinstance(value, int) and not isinstance(value, bool)
)
_CoreJsonValidator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator, {"pattern": _re2_pattern}, type_checker=_STRICT_INTEGERS
)


def _json_problems(validator: Any, instance: Any, prefix: JsonPath = ()) -> list[Problem]:
    problems: list[Problem] = []
    for error in validator.iter_errors(instance):
        path = prefix + tuple(error.absolute_path)
        if error.validator == "additionalProperties" and error.validator_value is False:
            problems.extend(_unknown_fields(error, path))
        else:
            problems.append((path, error.message))
    return problems


def _unknown_fields(error: jsonschema.ValidationError, path: JsonPath) -> list[Problem]:
    """One error per unknown field, at the field's own path, instead of jsonschema's summary."""
    declared = error.schema.get("properties", {})
    patterns = error.schema.get("patternProperties", {})
    unknown = [key for key in error.instance if key not in declared and not any(re.search(p, key) for p in patterns)]
    return [((*path, key), "unknown field (the API server would silently prune it)") for key in unknown]


# --------------------------------------------------------------------------------------------------
# Structural schema -> JSON schema


_DROPPED = {"description", "default", "example", "externalDocs", "nullable", "format"}
_JSON_FORMATS = {"date-time", "ipv4", "ipv6", "duration"}
# always allowed at the root and in x-kubernetes-embedded-resource objects
_OBJECT_HEADER = {"apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"}}


def crd_json_schema(node: dict, structural: bool = True) -> dict:
    """Turn a CRD structural schema node into plain JSON schema (Draft 4) with strict unknown fields.

    ``structural`` is False inside allOf/anyOf/oneOf/not, where Kubernetes only allows value checks,
    so no ``additionalProperties: false`` may be injected there.
    """
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED or key.startswith("x-kubernetes-"):
            continue
        if key == "properties":
            out[key] = {name: crd_json_schema(sub, structural) for name, sub in value.items()}
        elif key in ("items", "not") or (key == "additionalProperties" and isinstance(value, dict)):
            out[key] = crd_json_schema(value, structural and key != "not")
        elif key in ("allOf", "anyOf", "oneOf"):
            out[key] = [crd_json_schema(sub, structural=False) for sub in value]
        else:
            out[key] = value
    if node.get("format") in _JSON_FORMATS:
        out["format"] = node["format"]
    _apply_extensions(node, out, structural)
    return out


def _apply_extensions(node: dict, out: dict, structural: bool) -> None:
    if node.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        int_or_string = {"anyOf": [{"type": "integer"}, {"type": "string"}]}
        out.setdefault("allOf", []).append(int_or_string)
    if node.get("nullable") and "type" in out:
        out["type"] = [out["type"], "null"]
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
    if node.get("x-kubernetes-embedded-resource") and "properties" in out:
        out["properties"] = {**_OBJECT_HEADER, **out["properties"]}
    if structural and node.get("type") == "object" and _prunes_unknown(node):
        out["additionalProperties"] = False


def _prunes_unknown(node: dict) -> bool:
    return "additionalProperties" not in node and not node.get("x-kubernetes-preserve-unknown-fields")


def _crd_root_json_schema(root: dict) -> dict:
    """Root schema: apiVersion/kind/metadata always allowed (metadata is checked separately)."""
    schema = crd_json_schema(root)
    schema["properties"] = {**schema.get("properties", {}), **_OBJECT_HEADER}
    return schema


# --------------------------------------------------------------------------------------------------
# Defaulting (as the API server does before validating)


def _copy_json(value: Any) -> Any:
    """Deep copy of JSON-like data; tuples become lists (they serialize as arrays)."""
    if isinstance(value, dict):
        return {key: _copy_json(sub) for key, sub in value.items()}
    if isinstance(value, (list, tuple)):
        return [_copy_json(sub) for sub in value]
    return value


def apply_defaults(value: Any, schema: dict) -> None:
    """Fill in schema ``default`` values in place, recursively (CEL rules read defaulted fields)."""
    if isinstance(value, dict):
        _default_properties(value, schema)
        properties = schema.get("properties", {})
        additional = schema.get("additionalProperties")
        for key, sub in value.items():
            sub_schema = _property_schema(key, properties, additional)
            if sub_schema is not None:
                apply_defaults(sub, sub_schema)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            apply_defaults(item, schema["items"])


def _property_schema(key: str, properties: dict, additional: Any) -> dict | None:
    if key in properties:
        return properties[key]
    return additional if isinstance(additional, dict) else None


def _default_properties(value: dict, schema: dict) -> None:
    for key, sub_schema in schema.get("properties", {}).items():
        if "default" not in sub_schema:
            continue
        if key not in value or (value[key] is None and not sub_schema.get("nullable")):
            value[key] = _copy_json(sub_schema["default"])


# --------------------------------------------------------------------------------------------------
# CEL (x-kubernetes-validations)


_MISSING = object()
_RESULT_CACHE_SIZE = 200_000


class UnsupportedRuleError(Exception):
    """A CEL rule that cel-python cannot compile or evaluate; reported, never treated as passing."""


_CEL_MACROS = {"has", "all", "exists", "exists_one", "map", "filter", "dyn"}


def _k8s_split(
    text: celtypes.StringType, separator: celtypes.StringType, limit: celtypes.IntType | None = None
) -> celtypes.ListType:
    """Kubernetes strings extension ``split(sep[, n])`` (Go ``strings.SplitN``)."""
    if limit is None or limit < 0:
        parts = text.split(separator) if separator else list(text)
    elif limit == 0:
        parts = []
    elif separator:
        parts = text.split(separator, int(limit) - 1)
    else:
        parts = [*list(text[: int(limit) - 1]), text[int(limit) - 1 :]] if len(text) >= limit else list(text)
    return celtypes.ListType([celtypes.StringType(part) for part in parts])


def _k8s_substring(
    text: celtypes.StringType, start: celtypes.IntType, end: celtypes.IntType | None = None
) -> celtypes.StringType:
    """Kubernetes strings extension ``substring(start[, end])``; out of range is an error, like Go."""
    stop = len(text) if end is None else int(end)
    if not 0 <= int(start) <= stop <= len(text):
        raise ValueError(f"substring({start}, {stop}) out of range for a string of length {len(text)}")
    return celtypes.StringType(text[int(start) : stop])


_GO_DURATION_PART = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)")
_GO_UNIT_NANOS = {"ns": 1, "us": 1e3, "µs": 1e3, "μs": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9, "h": 3600e9}


def _go_duration(text: celtypes.StringType) -> celtypes.DurationType:
    """``duration()`` with Go ``time.ParseDuration`` syntax (no ``d`` unit, unlike cel-python's)."""
    if isinstance(text, celtypes.DurationType):
        return text
    if not _GO_DURATION.match(text):
        raise ValueError(f"invalid duration {str(text)!r}")
    sign = -1 if text.startswith("-") else 1
    nanos = sum(Decimal(number) * int(_GO_UNIT_NANOS[unit]) for number, unit in _GO_DURATION_PART.findall(text))
    seconds, rest = divmod(int(nanos) * sign, 10**9)
    return celtypes.DurationType(seconds, rest)


K8S_CEL_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "split": _k8s_split,
    "substring": _k8s_substring,
    "duration": _go_duration,
}
_KNOWN_FUNCTIONS = set(base_functions) | _CEL_MACROS | set(K8S_CEL_FUNCTIONS)


def _called_functions(tree: Any) -> set[str]:
    """Names of all functions and methods a compiled CEL expression calls."""
    names = set()
    for node in tree.iter_subtrees():
        if node.data == "member_dot_arg":
            names.add(str(node.children[1]))
        elif node.data == "ident_arg":
            names.add(str(node.children[0]))
    return names


@dataclass(frozen=True)
class SelfUse:
    """The parts of ``self`` a rule reads (``self.x`` values, ``has(self.y)`` presence), to key its cache.

    Found by a conservative parse-tree scan: any other use of ``self`` means the whole value (None).
    """

    fields: frozenset[str]
    presence_only: frozenset[str]


_SINGLE_CHILD_WRAPPERS = {"expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication"}
_SINGLE_CHILD_WRAPPERS |= {"unary", "member", "primary"}


def _self_use(tree: Any) -> SelfUse | None:
    parents = {id(child): node for node in tree.iter_subtrees() for child in node.children if hasattr(child, "data")}
    fields: set[str] = set()
    presence: set[str] = set()
    for node in tree.iter_subtrees():
        if node.data != "ident" or str(node.children[0]) != "self":
            continue
        member = parents.get(id(parents.get(id(node))))  # ident <- primary <- member
        access = parents.get(id(member))
        if access is None or access.data != "member_dot" or access.children[0] is not member:
            return None
        name = str(access.children[1])
        (presence if _is_has_argument(access, parents) else fields).add(name)
    return SelfUse(frozenset(fields), frozenset(presence - fields))


def _is_has_argument(node: Any, parents: dict[int, Any]) -> bool:
    """Whether a ``self.x`` node is, through single-child wrappers, the whole argument of ``has()``."""
    while (parent := parents.get(id(node))) is not None:
        if parent.data == "exprlist":
            call = parents.get(id(parent))
            return call is not None and call.data == "ident_arg" and str(call.children[0]) == "has"
        if parent.data not in _SINGLE_CHILD_WRAPPERS or len(parent.children) != 1:
            return False
        node = parent
    return False


@dataclass(frozen=True)
class _CompiledRule:
    program: Any
    self_use: SelfUse | None


class CelEngine:
    """Compiles each rule text once (cached) and evaluates it with ``self`` bound to a value."""

    def __init__(self) -> None:
        self._env = celpy.Environment()
        self._compiled: dict[str, _CompiledRule | UnsupportedRuleError] = {}
        self._results: dict[tuple[int, str, bytes], Any] = {}

    def compiled(self, rule: str) -> _CompiledRule:
        """The compiled rule; raises UnsupportedRuleError (also on later calls) if it cannot run here."""
        if rule not in self._compiled:
            self._compiled[rule] = self._compile(rule)
        compiled = self._compiled[rule]
        if isinstance(compiled, UnsupportedRuleError):
            raise compiled
        return compiled

    def _compile(self, rule: str) -> _CompiledRule | UnsupportedRuleError:
        try:
            tree = self._env.compile(rule)
        except Exception as exc:  # any parser failure means "cannot evaluate"
            return UnsupportedRuleError(f"does not compile: {_first_line(exc)}")
        unknown = _called_functions(tree) - _KNOWN_FUNCTIONS
        if unknown:
            return UnsupportedRuleError(f"uses unsupported function(s) {', '.join(sorted(unknown))}")
        return _CompiledRule(self._env.program(tree, functions=K8S_CEL_FUNCTIONS), _self_use(tree))

    def evaluate(self, rule: str, subject: RuleSubject) -> Any:
        """Result of the rule, or a CELEvalError for a failed evaluation (which counts as a failure).

        cel-python needs 0.1-1 ms per evaluation, so results are cached per (schema node, rule, the part
        of the value the rule reads): rendered objects repeat the same shapes, and tests re-validate them.
        """
        compiled = self.compiled(rule)
        key = (id(subject.schema), rule, subject.fingerprint(compiled.self_use))
        result = self._results.get(key, _MISSING)
        if result is _MISSING:
            result = self._run(compiled.program, subject)
            if len(self._results) >= _RESULT_CACHE_SIZE:
                self._results.clear()
            self._results[key] = result
        return result

    @staticmethod
    def _run(program: Any, subject: RuleSubject) -> Any:
        try:
            return program.evaluate({"self": subject.cel})
        except CELEvalError as exc:
            return exc
        except (TypeError, ValueError) as exc:  # a value that is not plain JSON data
            return CELEvalError(f"cannot convert the value to CEL: {exc}")


class RuleSubject:
    """The value a schema node's rules see; converted to CEL and fingerprinted only when needed."""

    def __init__(self, raw: Any, schema: dict, values: _CelValues) -> None:
        self.raw = raw
        self.schema = schema
        self._values = values
        self._fingerprints: dict[SelfUse | None, bytes] = {}

    @functools.cached_property
    def cel(self) -> Any:
        return self._values.convert(self.raw, self.schema)

    def fingerprint(self, use: SelfUse | None) -> bytes:
        """Digest of the part of the value a rule reads (all of it when ``use`` is None)."""
        if use not in self._fingerprints:
            text = json.dumps(_projection(self.raw, use), sort_keys=True, default=repr)
            self._fingerprints[use] = hashlib.blake2b(text.encode(), digest_size=16).digest()
        return self._fingerprints[use]


def _projection(raw: Any, use: SelfUse | None) -> Any:
    if use is None or not isinstance(raw, dict):
        return raw
    wanted = use.fields | use.presence_only
    present = {key: value for key, value in raw.items() if key in wanted or cel_field_name(key) in wanted}
    values = {key: value for key, value in present.items() if key in use.fields or cel_field_name(key) in use.fields}
    return [sorted(present), values]


def _flatten(values: Any) -> Iterator[Any]:
    for value in values if isinstance(values, tuple) else (values,):
        yield from _flatten(value) if isinstance(value, tuple) else (value,)


def _eval_error_text(error: CELEvalError) -> str:
    """A readable reason from cel-python's nested error arguments (e.g. "no such key: groups")."""
    text = " ".join(str(arg) for arg in _flatten(error.args))
    missing = re.findall(r"no such member in mapping: '([^']*)'", text)
    if missing:
        return "no such key: " + ", ".join(dict.fromkeys(missing))
    args = error.args
    if len(args) >= 3 and args[1] is ValueError and args[2]:
        return str(args[2][0])
    return re.sub(r"<class '[\w.]*?(\w+)'>", r"\1", str(args[0]) if args else repr(error))


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


# fmt: off
_CEL_RESERVED = frozenset({
    "true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function", "if", "import",
    "let", "loop", "package", "namespace", "return", "var", "void", "while",
})
# fmt: on
_CEL_ESCAPES = {"__": "__underscores__", ".": "__dot__", "-": "__dash__", "/": "__slash__"}
_CEL_ESCAPE_MATCH = re.compile(r"__|[-./]")
_CEL_NAME = re.compile(r"^[A-Za-z_./-][A-Za-z0-9_./-]*$")


def cel_field_name(name: str) -> str | None:
    """Kubernetes' escaping of property names for CEL (``namespace`` -> ``__namespace__``), or None."""
    if name in _CEL_RESERVED:
        return f"__{name}__"
    if not _CEL_NAME.match(name):
        return None
    return _CEL_ESCAPE_MATCH.sub(lambda m: _CEL_ESCAPES[m.group(0)], name)


class _CelValues:
    """Schema-aware Python -> CEL conversion for one object, memoised per container."""

    def __init__(self) -> None:
        self._memo: dict[int, Any] = {}

    def convert(self, value: Any, schema: dict) -> Any:
        if isinstance(value, (dict, list)):
            key = id(value)
            if key not in self._memo:
                self._memo[key] = self._container(value, schema)
            return self._memo[key]
        if schema.get("type") == "number" and isinstance(value, int) and not isinstance(value, bool):
            return celtypes.DoubleType(value)
        return celpy.json_to_cel(value)

    def _container(self, value: dict | list, schema: dict) -> Any:
        if isinstance(value, list):
            items = schema.get("items") or {}
            return celtypes.ListType([self.convert(item, items) for item in value])
        properties = schema.get("properties")
        if properties is not None:
            return celtypes.MapType(self._fields(value, properties))
        additional = schema.get("additionalProperties")
        sub = additional if isinstance(additional, dict) else {}
        return celtypes.MapType({celtypes.StringType(k): self.convert(v, sub) for k, v in value.items()})

    def _fields(self, value: dict, properties: dict) -> dict:
        fields = {}
        for key, sub in value.items():
            name = cel_field_name(key) if key in properties else None
            if name is not None:
                fields[celtypes.StringType(name)] = self.convert(sub, properties[key])
        return fields


@dataclass(frozen=True)
class _Rule:
    rule: str
    message: str
    message_expression: str | None

    @classmethod
    def parse(cls, raw: dict) -> _Rule:
        rule = raw["rule"]
        return cls(rule, raw.get("message") or f"failed rule: {rule}", raw.get("messageExpression"))

    @property
    def is_transition(self) -> bool:
        """Transition rules compare with the stored object; on create there is none, so they are skipped."""
        return bool(re.search(r"\boldSelf\b", self.rule))


def _rules_of(schema: dict) -> list[_Rule]:
    return [_Rule.parse(raw) for raw in schema.get("x-kubernetes-validations", [])]


# --------------------------------------------------------------------------------------------------
# Structural walk: CEL rules and list-type uniqueness

_TYPE_CHECKS: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}


def _has_schema_type(value: Any, schema: dict) -> bool:
    """Whether a value has its schema's type; CEL rules only run on well-typed values."""
    if schema.get("x-kubernetes-int-or-string"):
        return isinstance(value, (int, str)) and not isinstance(value, bool)
    check = _TYPE_CHECKS.get(schema.get("type", ""))
    return check is None or check(value)


def _children(value: Any, schema: dict) -> Iterator[tuple[str | int, Any, dict]]:
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        additional = schema.get("additionalProperties")
        for key, sub in value.items():
            sub_schema = _property_schema(key, properties, additional)
            if sub_schema is not None:
                yield key, sub, sub_schema
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            yield index, item, schema["items"]


def _freeze(value: Any) -> Any:
    return json.dumps(value, sort_keys=True, default=str)


def _list_type_problems(value: list, schema: dict, path: JsonPath) -> list[Problem]:
    """``x-kubernetes-list-type: set|map`` entries must be unique (the API server enforces it)."""
    list_type = schema.get("x-kubernetes-list-type")
    if list_type == "set":
        keys = [_freeze(item) for item in value]
    elif list_type == "map":
        names = schema.get("x-kubernetes-list-map-keys", [])
        keys = [_freeze([item.get(n) for n in names]) if isinstance(item, dict) else None for item in value]
    else:
        return []
    seen: set[str] = set()
    problems = []
    for index, key in enumerate(keys):
        if key is not None and key in seen:
            problems.append(((*path, index), f"duplicate entry in list-type={list_type} list: {key}"))
        seen.add(key)
    return problems


class _RuleWalker:
    """Walks one (defaulted) object along its schema, evaluating CEL rules and list-type checks."""

    def __init__(self, engine: CelEngine, crd: CrdVersion) -> None:
        self._engine = engine
        self._crd = crd
        self._values = _CelValues()
        self.problems: list[Problem] = []

    def walk(self, value: Any, schema: dict, path: JsonPath, subject: RuleSubject | None = None) -> None:
        if value is None or not self._crd.needs_walk(schema) or not _has_schema_type(value, schema):
            return
        rules = self._crd.rules_at(schema)
        if rules:
            subject = subject or RuleSubject(value, schema, self._values)
            for rule in rules:
                self._check_rule(rule, subject, path)
        if isinstance(value, list):
            self.problems.extend(_list_type_problems(value, schema, path))
        for key, sub, sub_schema in _children(value, schema):
            self.walk(sub, sub_schema, (*path, key))

    def walk_root(self, obj: dict, schema: dict) -> None:
        """Like ``walk``; root rules see only metadata.name and generateName, as on the API server."""
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        visible = {k: meta[k] for k in ("name", "generateName") if k in meta}
        self.walk(obj, schema, (), RuleSubject({**obj, "metadata": visible}, schema, self._values))

    def _check_rule(self, rule: _Rule, subject: RuleSubject, path: JsonPath) -> None:
        try:
            result = self._engine.evaluate(rule.rule, subject)
        except UnsupportedRuleError as exc:
            self.problems.append((path, f"cannot evaluate rule {rule.rule!r}: {exc} ({rule.message})"))
            return
        if isinstance(result, CELEvalError):
            detail = _eval_error_text(result)
            self.problems.append((path, f"{rule.message} (rule {rule.rule!r} failed to evaluate: {detail})"))
        elif not isinstance(result, (celtypes.BoolType, bool)):
            self.problems.append((path, f"rule {rule.rule!r} returned {result!r}, not a bool"))
        elif not result:
            self.problems.append((path, f"{self._message(rule, subject)} (rule: {rule.rule})"))

    def _message(self, rule: _Rule, subject: RuleSubject) -> str:
        if rule.message_expression:
            try:
                result = self._engine.evaluate(rule.message_expression, subject)
            except UnsupportedRuleError:
                return rule.message
            if isinstance(result, str) and result:  # cel-python may return a plain str here
                return str(result)
        return rule.message


# --------------------------------------------------------------------------------------------------
# CRDs


@dataclass
class CrdVersion:
    """One served version of one CRD, with its schema validator built on first use."""

    group: str
    version: str
    kind: str
    scope: str
    schema: dict
    _validator: Any = field(default=None, repr=False)
    _walk_cache: dict[int, bool] = field(default_factory=dict, repr=False)
    _rules_cache: dict[int, tuple[_Rule, ...]] = field(default_factory=dict, repr=False)

    @property
    def validator(self) -> Any:
        """JSON-schema validator of the whole object, built lazily (the big CRDs take a while to convert)."""
        if self._validator is None:
            schema = _crd_root_json_schema(self.schema)
            self._validator = _CrdJsonValidator(schema, format_checker=_format_checker())
        return self._validator

    def needs_walk(self, schema: dict) -> bool:
        """Whether a schema node or any descendant has CEL rules or list-type checks (prunes the walk)."""
        key = id(schema)
        if key not in self._walk_cache:
            self._walk_cache[key] = _has_own_checks(schema) or any(self.needs_walk(sub) for sub in _sub_schemas(schema))
        return self._walk_cache[key]

    def rules_at(self, schema: dict) -> tuple[_Rule, ...]:
        """The rules of one schema node that can be checked on create (transition rules left out)."""
        key = id(schema)
        if key not in self._rules_cache:
            self._rules_cache[key] = tuple(rule for rule in _rules_of(schema) if not rule.is_transition)
        return self._rules_cache[key]

    def rules(self) -> Iterator[tuple[str, _Rule]]:
        """Every CEL rule reachable in the structural schema, with its schema path (``spec.rules[*]``)."""
        yield from _rules_below(self.schema, "")


def _has_own_checks(schema: dict) -> bool:
    return bool(schema.get("x-kubernetes-validations")) or schema.get("x-kubernetes-list-type") in ("set", "map")


def _sub_schemas(schema: dict) -> Iterator[dict]:
    yield from schema.get("properties", {}).values()
    for key in ("additionalProperties", "items"):
        if isinstance(schema.get(key), dict):
            yield schema[key]


def _rules_below(schema: dict, path: str) -> Iterator[tuple[str, _Rule]]:
    for rule in _rules_of(schema):
        yield path or "<root>", rule
    for name, sub in schema.get("properties", {}).items():
        yield from _rules_below(sub, f"{path}.{name}" if path else name)
    if isinstance(schema.get("additionalProperties"), dict):
        yield from _rules_below(schema["additionalProperties"], f"{path}.*")
    if isinstance(schema.get("items"), dict):
        yield from _rules_below(schema["items"], f"{path}[*]")


class CrdRegistry:
    """CRDs of a folder, indexed by (group, version, kind) for every served version.

    Files are parsed lazily per API group (from the ``<group>_<plural>.yaml`` naming convention), so
    validating gateway objects never pays for the 2.2 MB LLMInferenceService CRD.
    """

    def __init__(self, directory: Path) -> None:
        if not directory.is_dir():
            raise FileNotFoundError(f"CRD folder {directory} not found (set {CRDS_DIR_ENV})")
        self.directory = directory
        self.engine = CelEngine()
        self.problem_cache: dict[bytes, list[Problem] | None] = {}
        self._versions: dict[tuple[str, str, str], CrdVersion] = {}
        self._served: dict[tuple[str, str], list[str]] = {}
        self._unloaded: dict[str, list[Path]] = {}
        for path in sorted(directory.glob("*.yaml")):
            group = path.name.split("_", 1)[0] if "_" in path.name else ""
            self._unloaded.setdefault(group, []).append(path)
        for path in self._unloaded.pop("", []):
            self._load_file(path)

    def lookup(self, group: str, version: str, kind: str) -> CrdVersion | None:
        """The served CRD version for (group, version, kind), or None."""
        self._load_group(group)
        return self._versions.get((group, version, kind))

    def served_versions(self, group: str, kind: str) -> list[str]:
        """Versions the CRD of (group, kind) serves; empty when there is no such CRD."""
        self._load_group(group)
        return list(self._served.get((group, kind), []))

    def all_versions(self) -> list[CrdVersion]:
        """Every served CRD version in the folder (parses all files)."""
        for group in list(self._unloaded):
            self._load_group(group)
        return list(self._versions.values())

    def unsupported_rules(self, kinds: Iterable[tuple[str, str]] | None = None) -> list[str]:
        """Rules (of the given (apiVersion, kind)s, default all) that cel-python cannot run here."""
        wanted = set(kinds) if kinds is not None else None
        problems = []
        for crd in self.all_versions():
            if wanted is not None and (f"{crd.group}/{crd.version}", crd.kind) not in wanted:
                continue
            for path, rule in crd.rules():
                problems.extend(self._rule_problem(crd, path, rule))
        return problems

    def _rule_problem(self, crd: CrdVersion, path: str, rule: _Rule) -> list[str]:
        if rule.is_transition:
            return []
        try:
            self.engine.compiled(rule.rule)
        except UnsupportedRuleError as exc:
            where = f"{crd.kind} {crd.group}/{crd.version} {path}"
            return [f"{where}: cannot evaluate rule {rule.rule!r}: {exc}"]
        return []

    def _load_group(self, group: str) -> None:
        for path in self._unloaded.pop(group, []):
            self._load_file(path)

    def _load_file(self, path: Path) -> None:
        with path.open(encoding="utf-8") as stream:
            for doc in yaml.load_all(stream, Loader=_YAML_LOADER):
                if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                    self._add_crd(doc)

    def _add_crd(self, crd: dict) -> None:
        spec = crd["spec"]
        group, kind = spec["group"], spec["names"]["kind"]
        for version in spec["versions"]:
            if not version.get("served", True):
                continue
            schema = version.get("schema", {}).get("openAPIV3Schema", {})
            self._versions[(group, version["name"], kind)] = CrdVersion(
                group, version["name"], kind, spec.get("scope", "Namespaced"), schema
            )
            self._served.setdefault((group, kind), []).append(version["name"])


@functools.cache
def _registry_for(directory: str) -> CrdRegistry:
    return CrdRegistry(Path(directory))


def default_registry() -> CrdRegistry:
    """The registry of ``crds_dir()``, loaded once per process and shared."""
    return _registry_for(str(crds_dir()))


# --------------------------------------------------------------------------------------------------
# Core Kubernetes kinds (kubernetes-validate's JSON schemas, strict)


class CoreSchemas:
    """Validators for core Kubernetes kinds, from kubernetes-validate's strict schemas (one per kind).

    The package's ``validate()`` stops at the first error and re-reads the 1.8 MB definitions file on
    every call, so its schema files are used directly with one cached validator per kind.
    """

    def __init__(self, version: str = KUBERNETES_VERSION) -> None:
        root = importlib.resources.files("kubernetes_validate") / "kubernetes-json-schema"
        self._dir = root / f"v{version}-local-strict"
        if not self._dir.is_dir():
            raise FileNotFoundError(f"kubernetes-validate has no schemas for Kubernetes {version}")
        self.version = version
        definitions = json.loads((self._dir / "_definitions.json").read_text(encoding="utf-8"))
        self._registry = Resource.from_contents(definitions) @ Registry()
        self._validators: dict[tuple[str, str], Any] = {}

    def validator(self, api_version: str, kind: str) -> Any | None:
        """Validator for a core (apiVersion, kind), or None when it is not a core kind."""
        key = (api_version, kind)
        if key not in self._validators:
            self._validators[key] = self._build(api_version, kind)
        return self._validators[key]

    def metadata_validator(self) -> Any:
        """ObjectMeta (strict), to check custom resources' metadata like the API server does."""
        return self.validator("meta/v1", "ObjectMeta")

    def _build(self, api_version: str, kind: str) -> Any | None:
        if (api_version, kind) == ("meta/v1", "ObjectMeta"):
            schema = {
                "$id": "https://kubernetes.io/api/objectmeta",
                "$ref": "/api/_definitions.json#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
            }
            return _CoreJsonValidator(schema, registry=self._registry)
        group, version = _split_api_version(api_version)
        if not _is_core_group(group):
            return None
        short = re.sub(r"\..*$", "", group)
        path = self._dir / f"{kind.lower()}-{short + '-' if short else ''}{version}.json"
        if not path.is_file():
            return None
        schema = json.loads(path.read_text(encoding="utf-8"))
        gvks = schema.get("x-kubernetes-group-version-kind", [])
        if {"group": group, "version": version, "kind": kind} not in gvks:
            return None  # a sub-type file (e.g. Affinity) or another group with the same short name
        return _CoreJsonValidator(schema, registry=self._registry)


def _split_api_version(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


def _is_core_group(group: str) -> bool:
    return group == "" or "." not in group or group.endswith(".k8s.io")


@functools.cache
def core_schemas() -> CoreSchemas:
    """The shared CoreSchemas for the pinned Kubernetes version."""
    return CoreSchemas()


# --------------------------------------------------------------------------------------------------
# metadata (names, labels, annotations)

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_RBAC_KINDS = {"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"}


def _dns_label(name: str) -> str | None:
    return None if len(name) <= 63 and _DNS_LABEL.match(name) else "must be a DNS-1123 label"


def _dns_1035_label(name: str) -> str | None:
    return None if len(name) <= 63 and _DNS_1035_LABEL.match(name) else "must be a DNS-1035 label"


def _dns_subdomain(name: str) -> str | None:
    return None if len(name) <= 253 and _DNS_SUBDOMAIN.match(name) else "must be a DNS-1123 subdomain"


def _path_segment(name: str) -> str | None:
    bad = name in (".", "..") or "/" in name or "%" in name
    return "must not be '.' or '..' nor contain '/' or '%'" if bad else None


def _name_rule(api_version: str, kind: str) -> Callable[[str], str | None]:
    """The API server's name format per kind (most kinds: DNS-1123 subdomain)."""
    group, _ = _split_api_version(api_version)
    if kind in _RBAC_KINDS and group == "rbac.authorization.k8s.io":
        return _path_segment
    if group == "" and kind == "Namespace":
        return _dns_label
    if group == "" and kind == "Service":
        return _dns_1035_label
    return _dns_subdomain


def _qualified_key_problem(key: str) -> str | None:
    prefix, _, name = key.rpartition("/")
    if prefix and _dns_subdomain(prefix):
        return f"key {key!r}: prefix must be a DNS-1123 subdomain"
    if len(name) > 63 or not _QUALIFIED_NAME.match(name):
        return f"key {key!r}: name part must be 1-63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric"
    return None


def _label_value_problem(value: Any) -> str | None:
    if not isinstance(value, str):
        return f"value {value!r} must be a string"
    if value and (len(value) > 63 or not _QUALIFIED_NAME.match(value)):
        return f"value {value!r} must be at most 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric"
    return None


def _map_problems(meta: dict, field_name: str, value_check: Callable[[Any], str | None]) -> list[Problem]:
    entries = meta.get(field_name)
    if not isinstance(entries, dict):
        return []
    problems = []
    for key, value in entries.items():
        path = ("metadata", field_name, key)
        for problem in (_qualified_key_problem(str(key)), value_check(value)):
            if problem:
                problems.append((path, problem))
    return problems


def _annotation_value_problem(value: Any) -> str | None:
    return None if isinstance(value, str) else f"value {value!r} must be a string"


def metadata_problems(obj: dict, cluster_scoped: bool | None = None) -> list[Problem]:
    """Name/namespace format, label and annotation syntax: what the API server rejects in metadata."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return [(("metadata",), "metadata must be an object with a name")]
    problems = _name_problems(meta, obj.get("apiVersion", ""), obj.get("kind", ""))
    namespace = meta.get("namespace")
    if namespace is not None:
        if not isinstance(namespace, str) or _dns_label(namespace):
            problems.append((("metadata", "namespace"), f"{namespace!r} must be a DNS-1123 label"))
        elif cluster_scoped:
            problems.append((("metadata", "namespace"), "not allowed on a cluster-scoped kind"))
    problems += _map_problems(meta, "labels", _label_value_problem)
    problems += _map_problems(meta, "annotations", _annotation_value_problem)
    return problems


def _name_problems(meta: dict, api_version: str, kind: str) -> list[Problem]:
    name = meta.get("name")
    if name is None and isinstance(meta.get("generateName"), str):
        return []
    if not isinstance(name, str) or not name:
        return [(("metadata", "name"), "name is required and must be a non-empty string")]
    problem = _name_rule(api_version, kind)(name)
    return [(("metadata", "name"), f"{name!r} {problem}")] if problem else []


# --------------------------------------------------------------------------------------------------
# Public entry points


def validate(obj: dict, unknown_ok: Iterable[tuple[str, str]] = (), registry: CrdRegistry | None = None) -> list[str]:
    """Everything the API server would reject (or silently prune) in one object; [] when valid.

    ``unknown_ok`` lists (apiVersion, kind) pairs without any schema here (e.g. cert-manager
    Certificate) that are accepted unchecked instead of reported as "no schema".
    """
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return _render(obj, [((), "apiVersion and kind must be strings")])
    registry = registry or default_registry()
    problems = _cached_problems(obj, registry)
    if problems is None:
        if (api_version, kind) in set(unknown_ok):
            return []
        problems = [((), _no_schema_message(registry, api_version, kind))]
    return _render(obj, problems)


def validate_all(
    objs: Iterable[dict], unknown_ok: Iterable[tuple[str, str]] = (), registry: CrdRegistry | None = None
) -> list[str]:
    """All errors of all objects, in order (see ``validate``)."""
    allowed = set(unknown_ok)
    return [error for obj in objs for error in validate(obj, allowed, registry)]


def _cached_problems(obj: dict, registry: CrdRegistry) -> list[Problem] | None:
    """``_problems`` memoised by object content: tests validate the same rendered objects many times."""
    try:
        text = json.dumps(obj, sort_keys=True)
    except (TypeError, ValueError):  # not plain JSON data: validate (and report) without caching
        return _problems(obj, registry)
    key = hashlib.blake2b(text.encode(), digest_size=16).digest()
    cache = registry.problem_cache
    if key not in cache:
        if len(cache) >= _RESULT_CACHE_SIZE:
            cache.clear()
        cache[key] = _problems(obj, registry)
    return cache[key]


def _problems(obj: dict, registry: CrdRegistry) -> list[Problem] | None:
    """Problems found with the object's CRD or core schema; None when there is neither."""
    obj = _copy_json(obj)  # never modified by validation, and tuples checked as the arrays they serialize to
    group, version = _split_api_version(obj["apiVersion"])
    crd = registry.lookup(group, version, obj["kind"])
    if crd is not None:
        return _crd_problems(obj, crd, registry.engine)
    core = core_schemas().validator(obj["apiVersion"], obj["kind"])
    if core is not None:
        return _json_problems(core, obj) + metadata_problems(obj)
    return None


def _no_schema_message(registry: CrdRegistry, api_version: str, kind: str) -> str:
    served = registry.served_versions(_split_api_version(api_version)[0], kind)
    if served:
        return f"no schema for {api_version}/{kind}: the CRD serves only {', '.join(served)}"
    return f"no schema for {api_version}/{kind} (neither a CRD in {registry.directory} nor a core kind)"


def _crd_problems(obj: dict, crd: CrdVersion, engine: CelEngine) -> list[Problem]:
    """Schema, metadata, CEL and list-type problems; ``obj`` is a private copy and gets defaulted in place."""
    apply_defaults(obj, {**crd.schema, "properties": _without_metadata(crd.schema)})
    problems = _json_problems(crd.validator, obj)
    problems += _json_problems(core_schemas().metadata_validator(), obj.get("metadata"), ("metadata",))
    problems += metadata_problems(obj, cluster_scoped=crd.scope == "Cluster")
    walker = _RuleWalker(engine, crd)
    walker.walk_root(obj, crd.schema)
    return problems + walker.problems


def _without_metadata(schema: dict) -> dict:
    return {k: v for k, v in schema.get("properties", {}).items() if k != "metadata"}
