"""A server-side apply of the program's body over a live object, as the API server merges it.

The result is the live object with each field the body sets taken from the body, and every other field left as
it is: the fields another manager set (the controller's finalizers and ownerReferences, an OpenShift annotation),
the server's (uid, resourceVersion, status) and the defaults the API server filled in (a Service's clusterIP, a
Deployment's strategy) all stay, so comparing the result with the live object shows only fields the program sets.
Where the schema says how (`schemas.Node`):

- a map is merged key by key, unless it is `x-kubernetes-map-type: atomic` (then replaced whole);
- a list of `x-kubernetes-list-type: map` is merged item by item on its keys (an item another manager added stays;
  a key the API server defaults, a port's `protocol`, counts with its default); a `set` gains the body's values;
- any other list (atomic: the default of a custom resource's list) is replaced whole, then defaulted by the CRD;
- a quantity equal in value (`0.5` and `500m`) is the live spelling, as the API server canonicalizes it;
- a `null` in the body removes the field.

What the merge cannot know: the fields an earlier apply of the program set and this body no longer sets, which
the API server removes (they are in the object's managedFields, which the snapshot does not keep).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from .schemas import Node

# The list-map keys the API server defaults when an item leaves them out (SSA counts the default: a container
# port without `protocol` is the live `TCP` one).
KEY_DEFAULTS: Mapping[str, Any] = {"protocol": "TCP"}
_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)?)$")
_SUFFIXES: Mapping[str, Decimal] = {
    "": Decimal(1),
    "m": Decimal("0.001"),
    "k": Decimal(10) ** 3,
    "M": Decimal(10) ** 6,
    "G": Decimal(10) ** 9,
    "T": Decimal(10) ** 12,
    "P": Decimal(10) ** 15,
    "E": Decimal(10) ** 18,
    **{suffix: Decimal(2) ** (10 * power) for power, suffix in enumerate(("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"), 1)},
}


def applied(live: Any, body: Any, node: Node) -> Any:
    """`live` (plain JSON) with `body` applied; a new value, neither argument is changed."""
    if isinstance(body, Mapping) and isinstance(live, Mapping) and not node.atomic_map:
        merged = dict(live)
        for key, value in body.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = applied(live[key], value, node.child(key)) if key in live else value
        return merged
    if _is_list(body) and _is_list(live):
        if node.list_type == "map":
            keyed = _map_list(live, body, node)
            if keyed is not None:
                return keyed
        elif node.list_type == "set":
            return [*live, *(value for value in body if value not in live)]
        return list(body)
    if node.is_quantity and same_quantity(live, body):
        return live
    return body


def _map_list(live: Sequence[Any], body: Sequence[Any], node: Node) -> list[Any] | None:
    """Items matched on the list's keys: the live order, matched items merged, the body's new items after; None
    when an item has no key (the API server would refuse the body; it is compared whole instead)."""
    keys = node.map_keys
    live_keys = [_key(item, keys) for item in live]
    body_keys = [_key(item, keys) for item in body]
    if not keys or None in live_keys or None in body_keys:
        return None
    given = dict(zip(body_keys, body, strict=True))
    items = node.items()
    merged = [
        applied(item, given[key], items) if key in given else item for key, item in zip(live_keys, live, strict=True)
    ]
    return merged + [item for key, item in given.items() if key not in live_keys]


def _key(item: Any, keys: tuple[str, ...]) -> tuple[Any, ...] | None:
    if not isinstance(item, Mapping):
        return None
    values = tuple(item.get(key, KEY_DEFAULTS.get(key)) for key in keys)
    return None if all(value is None for value in values) else values


def _is_list(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str)


def same_quantity(a: Any, b: Any) -> bool:
    """Whether two quantities (`500m`, `0.5`, `1Gi`, `1024Mi`, `1e3`) have the same value."""
    first, second = quantity(a), quantity(b)
    return first is not None and first == second


def quantity(value: Any) -> Decimal | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return Decimal(str(value))
    match = _QUANTITY.match(value) if isinstance(value, str) else None
    if match is None:
        return None
    number, exponent, suffix = match.groups()
    try:
        scale = Decimal(f"1{exponent}") if exponent else _SUFFIXES[suffix or ""]
        return Decimal(number) * scale
    except InvalidOperation:
        return None
