"""A yes/no answer to "does jsonschema find no error here?", compiled once per validator.

jsonschema spends some 25 µs on every schema node it descends into (it builds a validator per node), and the rendered
objects are nearly always valid: at 10,000 subscriptions the self-check spent most of its time confirming that. So
each validator's schema is compiled, once, into plain predicates that say whether an instance is valid. The answer is
conservative: a keyword whose implementation (the validator's function for it, not just its name) is not one of those
reproduced here, an unusual value, or any exception makes the answer "not known valid", and the caller then runs
jsonschema itself. The error messages therefore always come from jsonschema; only "no errors" is fast.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import jsonschema
import referencing.jsonschema

from .formats import compiled_re2, re2_pattern
from .item_memo import memoised_items

Check = Callable[[Any], bool]
_D4 = jsonschema.Draft4Validator.VALIDATORS
_D2020 = jsonschema.Draft202012Validator.VALIDATORS
_TYPES: dict[str, Check] = {
    "array": lambda v: isinstance(v, list),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "null": lambda v: v is None,
    "number": lambda v: isinstance(v, numbers.Number) and not isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "string": lambda v: isinstance(v, str),
}
# Values each type predicate is compared with the validator's own type checker on, before it is trusted.
_TYPE_PROBES = (None, True, 0, 1.0, 1.5, "", [], {}, ())
_PATTERN_MEMO_SIZE = 10_000
# validator id -> (the validator, kept alive so that its id stays unique; its compiled check)
_CHECKS: dict[int, tuple[Any, Check]] = {}


def quick_check(validator: Any) -> Check:
    """The compiled check of ``validator`` (a jsonschema validator instance): True only when it reports no error."""
    key = id(validator)
    if key not in _CHECKS:
        _CHECKS[key] = (validator, _compiled(validator))
    return _CHECKS[key][1]


def _compiled(validator: Any) -> Check:
    """A schema this module cannot compile (an RE2-invalid pattern, say) is never known valid: jsonschema decides,
    raising only for an instance that reaches that node, as without the quick check."""
    try:
        return _guarded(_Compiler(validator).root())
    except Exception:
        return _never


def _guarded(check: Check) -> Check:
    def guarded(instance: Any) -> bool:
        try:
            return check(instance)
        except Exception:  # whatever went wrong, jsonschema decides (and reports) it
            return False

    return guarded


def _never(_value: Any) -> bool:
    return False


def _always(_value: Any) -> bool:
    return True


class _Compiler:
    """Compiles the schema nodes of one validator; a node reached twice (by ``$ref``) is compiled once."""

    def __init__(self, validator: Any) -> None:
        self._validator = validator
        self._impls = type(validator).VALIDATORS
        self._spec = referencing.jsonschema.specification_with(validator.META_SCHEMA.get("$schema", ""))
        self._refs_ok = self._impls.get("$ref") is _D2020["$ref"]  # Draft 4 would ignore the siblings of a $ref
        self._types = {name: check for name, check in _TYPES.items() if self._agrees(name, check)}
        self._nodes: dict[int, Check] = {}

    def root(self) -> Check:
        return self.node(self._validator.schema, self._validator._resolver, root=True)

    def _agrees(self, name: str, check: Check) -> bool:
        try:
            return all(self._validator.is_type(probe, name) == check(probe) for probe in _TYPE_PROBES)
        except jsonschema.exceptions.UnknownType:
            return False

    def node(self, schema: Any, resolver: Any, root: bool = False) -> Check:
        if schema is True:
            return _always
        if not isinstance(schema, dict) or (not root and "$schema" in schema):
            return _never  # False, or not a schema; "$schema" would switch validator classes
        if id(schema) not in self._nodes:
            self._nodes[id(schema)] = _never  # placeholder while compiling: recursion only goes through $ref
            self._nodes[id(schema)] = self._compile(schema, resolver.in_subresource(self._spec.create_resource(schema)))
        return self._nodes[id(schema)]

    def _compile(self, schema: dict, resolver: Any) -> Check:
        if _is_plain_string_node(schema, self._impls) and "string" in self._types:
            return _string_node(schema, self._validator.format_checker)
        checks = []
        fused = self._fusable(schema)
        for keyword, value in schema.items():
            impl = self._impls.get(keyword)
            if impl is None or keyword in fused:
                continue  # not a keyword of this dialect (jsonschema ignores it too), or part of the fused check
            make = _MAKERS.get(impl)
            if make is None:
                return _never
            checks.append(make(self, value, schema, resolver))
        if fused:
            checks.insert(0, (self._array if fused is _ARRAY_KEYWORDS else self._object)(schema, resolver))
        return _all_of(checks)

    def _fusable(self, schema: dict) -> tuple[str, ...]:
        """The keywords one fused check (``_object`` or ``_array``) takes over from their separate checks."""
        if _fusable_array(schema, self._impls) and "array" in self._types:
            return _ARRAY_KEYWORDS
        nullable = _object_type(schema.get("type")) == "nullable"
        return _fusable_object(schema, self._impls) if not nullable or "null" in self._types else ()

    def _object(self, schema: dict, resolver: Any) -> Check:
        """``type: object`` (or ``[object, null]``) with its properties, additionalProperties and required in one
        pass over the keys."""
        nullable = _object_type(schema["type"]) == "nullable"
        subs = {name: self.node(sub, resolver) for name, sub in schema.get("properties", {}).items()}
        extra = schema.get("additionalProperties", True)
        other = None if extra is True else _never if extra is False else self.node(extra, resolver)
        required = frozenset(schema.get("required", []))

        def check(instance: Any) -> bool:
            if not isinstance(instance, dict):
                return nullable and instance is None
            for key, item in instance.items():
                sub = subs.get(key, other)
                if sub is not None and not sub(item):
                    return False
            return required <= instance.keys()

        return check

    def _array(self, schema: dict, resolver: Any) -> Check:
        """``type: array`` with its items, minItems and maxItems in one check."""
        sub = self.node(schema["items"], resolver) if "items" in schema else _always
        shortest, longest = schema.get("minItems", 0), schema.get("maxItems")

        def check(instance: Any) -> bool:
            if not isinstance(instance, list) or len(instance) < shortest:
                return False
            if longest is not None and len(instance) > longest:
                return False
            for item in instance:  # noqa: SIM110 - a plain loop: all() over a generator costs twice as much here
                if not sub(item):
                    return False
            return True

        return check

    def type_check(self, name: Any) -> Check:
        return self._types.get(name, _never) if isinstance(name, str) else _never

    def ref(self, ref: Any, resolver: Any) -> Check:
        if not self._refs_ok or not isinstance(ref, str):
            return _never
        target: list[Check] = []

        def check(value: Any) -> bool:
            if not target:  # resolved on first use: definitions refer to each other recursively
                resolved = resolver.lookup(ref)
                target.append(self.node(resolved.contents, resolved.resolver))
            return target[0](value)

        return check


def _any_of(checks: list[Check]) -> Check:
    def check(value: Any) -> bool:
        for each in checks:  # noqa: SIM110 - a plain loop: any() over a generator costs twice as much here
            if each(value):
                return True
        return False

    return check


def _all_of(checks: list[Check]) -> Check:
    checks = [check for check in checks if check is not _always]
    if not checks:
        return _always
    if len(checks) == 1:
        return checks[0]

    def check(value: Any) -> bool:
        for each in checks:  # noqa: SIM110 - a plain loop: all() over a generator costs twice as much here
            if not each(value):
                return False
        return True

    return check


_OBJECT_KEYWORDS = ("type", "properties", "additionalProperties", "required")
_ARRAY_KEYWORDS = ("type", "items", "minItems", "maxItems")
_NULLABLE_OBJECT = frozenset({"object", "null"})


def _object_type(value: Any) -> str | None:
    """ "object" for ``type: object``, "nullable" for ``type: [object, null]`` (core schemas), else None."""
    if value == "object":
        return "object"
    is_pair = isinstance(value, list) and len(value) == 2
    return (
        "nullable"
        if is_pair and all(isinstance(name, str) for name in value) and set(value) == _NULLABLE_OBJECT
        else None
    )


def _fusable_object(schema: dict, impls: dict) -> tuple[str, ...]:
    """The keywords ``_Compiler._object`` checks together, when the node has its plain form; else none."""
    if _object_type(schema.get("type")) is None or "patternProperties" in schema:
        return ()
    required = schema.get("required", [])
    if not isinstance(schema.get("properties", {}), dict) or not isinstance(required, list):
        return ()
    if not all(isinstance(name, str) for name in required):
        return ()
    if any(impls.get(keyword) is not _D4[keyword] for keyword in _OBJECT_KEYWORDS):
        return ()
    return _OBJECT_KEYWORDS


def _fusable_array(schema: dict, impls: dict) -> bool:
    """Whether ``_Compiler._array`` can check the node's type, items and lengths together: ``type: array``, items
    one schema (no ``prefixItems``) and integer lengths."""
    if schema.get("type") != "array" or "prefixItems" in schema or not isinstance(schema.get("items", {}), dict):
        return False
    if not all(type(schema.get(keyword, 0)) is int for keyword in ("minItems", "maxItems")):
        return False
    return impls.get("items") in _ITEMS_IMPLS and all(
        impls.get(keyword) is _D4[keyword] for keyword in ("type", "minItems", "maxItems")
    )


_STRING_KEYWORDS = {
    "type": _D4["type"],
    "minLength": _D4["minLength"],
    "maxLength": _D4["maxLength"],
    "enum": _D4["enum"],
    "pattern": re2_pattern,
    "format": _D4["format"],
}


def _is_plain_string_node(schema: dict, impls: dict) -> bool:
    """``type: string`` with only length, enum, pattern and format beside it (keywords of this dialect), in the
    forms ``_string_node`` checks: the commonest leaf, checked in one call instead of one per keyword."""
    if schema.get("type") != "string":
        return False
    for keyword in schema:
        impl = impls.get(keyword)
        if impl is not None and _STRING_KEYWORDS.get(keyword) is not impl:
            return False
    lengths = [schema.get(keyword, 0) for keyword in ("minLength", "maxLength")]
    return (
        all(type(length) is int for length in lengths)
        and isinstance(schema.get("pattern", ""), str)
        and isinstance(schema.get("enum", []), list)
    )


def _string_node(schema: dict, format_checker: Any) -> Check:
    """The checks ``_type``, ``_bound`` (lengths), ``_enum``, ``_pattern`` and ``_format`` make, in one."""
    shortest, longest = schema.get("minLength", 0), schema.get("maxLength")
    strings = frozenset(each for each in schema["enum"] if isinstance(each, str)) if "enum" in schema else None
    pattern = _pattern_check(schema["pattern"]) if "pattern" in schema else None
    form = schema.get("format")
    conforms = _conforms(format_checker, form) if form is not None else None
    if not shortest and longest is None and strings is None and pattern is None and conforms is None:
        return _is_str

    def check(instance: Any) -> bool:
        if not isinstance(instance, str) or len(instance) < shortest:
            return False
        if (longest is not None and len(instance) > longest) or (strings is not None and instance not in strings):
            return False
        return (pattern is None or pattern(instance)) and (conforms is None or conforms(instance))

    return check


def _type(c: _Compiler, value: Any, _schema: dict, _resolver: Any) -> Check:
    checks = [c.type_check(name) for name in (value if isinstance(value, list) else [value])]
    return checks[0] if len(checks) == 1 else _any_of(checks)


def _properties(c: _Compiler, value: Any, _schema: dict, resolver: Any) -> Check:
    if not isinstance(value, dict):
        return _never
    subs = {name: c.node(sub, resolver) for name, sub in value.items()}

    def check(instance: Any) -> bool:
        if not isinstance(instance, dict):
            return True
        for key, item in instance.items():
            sub = subs.get(key)
            if sub is not None and not sub(item):
                return False
        return True

    return check


def _additional_properties(c: _Compiler, value: Any, schema: dict, resolver: Any) -> Check:
    if "patternProperties" in schema or not isinstance(schema.get("properties", {}), dict):
        return _never
    declared = schema.get("properties", {})
    if value is True:
        return _always
    if value is False:
        return lambda instance: not isinstance(instance, dict) or all(key in declared for key in instance)
    sub = c.node(value, resolver)
    return lambda instance: (
        not isinstance(instance, dict) or all(key in declared or sub(item) for key, item in instance.items())
    )


def _required(_c: _Compiler, value: Any, _schema: dict, _resolver: Any) -> Check:
    if not isinstance(value, list):
        return _never
    return lambda instance: not isinstance(instance, dict) or all(name in instance for name in value)


def _items(c: _Compiler, value: Any, schema: dict, resolver: Any) -> Check:
    if not isinstance(value, dict) or "prefixItems" in schema:
        return _never
    sub = c.node(value, resolver)

    def check(instance: Any) -> bool:
        if isinstance(instance, list):
            for item in instance:  # a plain loop: all() over a generator costs twice as much here
                if not sub(item):
                    return False
        return True

    return check


def _all(c: _Compiler, value: Any, _schema: dict, resolver: Any) -> Check:
    return _all_of([c.node(sub, resolver) for sub in value]) if isinstance(value, list) else _never


def _any(c: _Compiler, value: Any, _schema: dict, resolver: Any) -> Check:
    if not isinstance(value, list):
        return _never
    return _any_of([c.node(sub, resolver) for sub in value])


def _undecided(_c: _Compiler, _value: Any, _schema: dict, _resolver: Any) -> Check:
    """Never known valid: a branch's False only means "not sure", so counting branches (exactly one) or negating
    one (`not`) would turn "not sure" into "valid". jsonschema decides these nodes."""
    return _never


def _pattern(_c: _Compiler, value: Any, _schema: dict, _resolver: Any) -> Check:
    return _pattern_check(value)


def _pattern_check(pattern: Any) -> Check:
    """RE2 ``search``, its answers memoised per pattern: the same names and values recur in every object."""
    search = compiled_re2(pattern).search
    answers: dict[str, bool] = {}

    def check(instance: Any) -> bool:
        if not isinstance(instance, str):
            return True
        if instance not in answers:
            if len(answers) >= _PATTERN_MEMO_SIZE:
                answers.clear()
            answers[instance] = search(instance) is not None
        return answers[instance]

    return check


def _enum(_c: _Compiler, value: Any, _schema: dict, _resolver: Any) -> Check:
    """Strings only (jsonschema compares a string with ``==``); other values are left to jsonschema."""
    strings = frozenset(each for each in value if isinstance(each, str)) if isinstance(value, list) else frozenset()
    return lambda instance: isinstance(instance, str) and instance in strings


def _format(c: _Compiler, value: Any, _schema: dict, _resolver: Any) -> Check:
    return _conforms(c._validator.format_checker, value) or _always


def _conforms(checker: Any, form: Any) -> Check | None:
    """The check of a format; None when it checks nothing: no format checker, or a format it does not know
    (jsonschema passes those, e.g. ``int64``)."""
    if checker is None or (isinstance(form, str) and form not in checker.checkers):
        return None
    return lambda instance: checker.conforms(instance, form)


def _bound(applies: Check, size: Callable[[Any], Any], ok: Callable[[Any, Any], bool]) -> Callable[..., Check]:
    def make(_c: _Compiler, value: Any, _schema: dict, _resolver: Any) -> Check:
        return lambda instance: not applies(instance) or ok(size(instance), value)

    return make


def _legacy_limit(exclusive_key: str, strict: Callable[[Any, Any], bool], loose: Callable[[Any, Any], bool]) -> Any:
    """Draft 4 ``minimum``/``maximum``, where ``exclusiveMinimum``/``exclusiveMaximum`` are booleans beside them."""

    def make(_c: _Compiler, value: Any, schema: dict, _resolver: Any) -> Check:
        ok = strict if schema.get(exclusive_key, False) else loose
        return lambda instance: not _TYPES["number"](instance) or ok(instance, value)

    return make


def _ref(c: _Compiler, value: Any, _schema: dict, resolver: Any) -> Check:
    return c.ref(value, resolver)


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _identity(value: Any) -> Any:
    return value


_ITEMS_IMPLS = (_D4["items"], memoised_items, _D2020["items"])
_MAKERS: dict[Callable[..., Any], Callable[[_Compiler, Any, dict, Any], Check]] = {
    _D4["type"]: _type,
    _D4["properties"]: _properties,
    _D4["additionalProperties"]: _additional_properties,
    _D4["required"]: _required,
    _D4["allOf"]: _all,
    _D4["anyOf"]: _any,
    _D4["oneOf"]: _undecided,
    _D4["not"]: _undecided,
    _D4["enum"]: _enum,
    _D4["format"]: _format,
    _D4["items"]: _items,
    memoised_items: _items,
    _D2020["items"]: _items,
    _D2020["$ref"]: _ref,
    re2_pattern: _pattern,
    _D4["minLength"]: _bound(_is_str, len, lambda size, limit: size >= limit),
    _D4["maxLength"]: _bound(_is_str, len, lambda size, limit: size <= limit),
    _D4["minItems"]: _bound(_TYPES["array"], len, lambda size, limit: size >= limit),
    _D4["maxItems"]: _bound(_TYPES["array"], len, lambda size, limit: size <= limit),
    _D4["minProperties"]: _bound(_TYPES["object"], len, lambda size, limit: size >= limit),
    _D4["maxProperties"]: _bound(_TYPES["object"], len, lambda size, limit: size <= limit),
    _D2020["minimum"]: _bound(_TYPES["number"], _identity, lambda number, limit: number >= limit),
    _D2020["maximum"]: _bound(_TYPES["number"], _identity, lambda number, limit: number <= limit),
    _D2020["exclusiveMinimum"]: _bound(_TYPES["number"], _identity, lambda number, limit: number > limit),
    _D2020["exclusiveMaximum"]: _bound(_TYPES["number"], _identity, lambda number, limit: number < limit),
    _D4["minimum"]: _legacy_limit("exclusiveMinimum", lambda n, limit: n > limit, lambda n, limit: n >= limit),
    _D4["maximum"]: _legacy_limit("exclusiveMaximum", lambda n, limit: n < limit, lambda n, limit: n <= limit),
}
