"""Who gains or loses a model: read back from each side's rendered per-model AuthPolicies (`maas-auth-{model}`).

The subjects live in the `model-access` rule's one CEL predicate, which `maas.plan.policies.access` writes from
the groups and users it admits. That predicate is parsed here and accepted only when writing the parsed subjects
again gives the very same text, so nothing is guessed: a predicate of another form (a live policy kept under an
opt-out) is named instead of compared.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ... import naming
from ...config.errors import escaped
from ...observe.fields import items_at, mapping_at, text_at
from ...plan.policies.access import GUARDED_CALLER_GROUPS, GUARDED_CALLER_USERNAME, RULE, model_access_predicate
from .sides import Key, Side

Subject = tuple[str, str]  # ("group" | "user", name)
_GROUPS = f"{GUARDED_CALLER_GROUPS}.exists(g, g in "
_IN = " in "  # the users clause: `{the tenant's username expression} in [...]`
_OR = " || "


@dataclass(frozen=True)
class AccessChange:
    subject: Subject
    gains: tuple[str, ...]  # model keys, sorted
    loses: tuple[str, ...]

    @property
    def who(self) -> str:
        return f"{self.subject[0]} {escaped(self.subject[1])}"


def access_changes(base: Side, head: Side) -> tuple[list[AccessChange], list[str]]:
    """Per subject, the models it gains and loses, by subject. A model whose policy cannot be read on either side
    is left out, with a note when that policy changes (an unchanged one changes nobody's access)."""
    before, after = admitted(base), admitted(head)
    gains: defaultdict[Subject, set[str]] = defaultdict(set)
    loses: defaultdict[Subject, set[str]] = defaultdict(set)
    notes = []
    for model in sorted({*before, *after}):
        old, new = before.get(model, _NOBODY), after.get(model, _NOBODY)
        unreadable = [(label, x.key) for label, x in (("BASE", old), ("HEAD", new)) if isinstance(x, Unreadable)]
        if unreadable:
            notes += [_note(label, key) for label, key in unreadable if base.objects.get(key) != head.objects.get(key)]
            continue
        for subject in new - old:
            gains[subject].add(model)
        for subject in old - new:
            loses[subject].add(model)
    changes = [
        AccessChange(subject, tuple(sorted(gains[subject])), tuple(sorted(loses[subject])))
        for subject in sorted({*gains, *loses})
    ]
    return changes, notes


@dataclass(frozen=True)
class Unreadable:
    """A per-model AuthPolicy whose predicate is not one this program writes."""

    key: Key


_NOBODY: frozenset[Subject] = frozenset()


def admitted(side: Side) -> dict[str, frozenset[Subject] | Unreadable]:
    """Model key -> the subjects its per-model AuthPolicy admits (a model without one admits nobody)."""
    found: dict[str, frozenset[Subject] | Unreadable] = {}
    for key in sorted(k for k in side.objects if k[0] == "AuthPolicy"):
        body = side.objects[key]
        labels = mapping_at(body, "metadata", "labels")
        model, model_namespace = text_at(labels, naming.MODEL_LABEL), text_at(labels, naming.MODEL_NAMESPACE_LABEL)
        if model and model_namespace:
            subjects = subjects_of(_predicate(body))
            entry = Unreadable(key) if subjects is None else frozenset(subjects)
            found[naming.qualified(model_namespace, model)] = entry
    return found


def _note(label: str, key: Key) -> str:
    _, namespace, name = key
    return (
        f"AuthPolicy {namespace}/{name} ({label}): its {RULE} predicate is not in the form this program writes, so "
        "whom it admits is not compared; read it in the rendered object"
    )


def _predicate(policy: Mapping[str, Any]) -> Any:
    patterns = items_at(policy, "spec", "rules", "authorization", RULE, "patternMatching", "patterns")
    return patterns[0].get("predicate") if len(patterns) == 1 else None


def subjects_of(predicate: Any) -> list[Subject] | None:
    """The groups and users a `model-access` predicate admits; None unless it is exactly what
    `model_access_predicate` writes for them."""
    if not isinstance(predicate, str):
        return None
    groups, position = _list_after(predicate, 0, _GROUPS, ")")
    if groups and predicate.startswith(_OR, position):
        position += len(_OR)
    for username in _username_candidates(predicate, position):
        users, _ = _list_after(predicate, position, f"{username}{_IN}", "")
        if model_access_predicate(groups, users, username) == predicate:
            return [("group", g) for g in groups] + [("user", u) for u in users]
    return None


def _username_candidates(predicate: str, position: int) -> list[str]:
    """Where the users clause's username expression may end (each ` in [` after `position`), or the default
    expression when there is no users clause: the one that renders the predicate back is the one."""
    ends = [i for i in range(position, len(predicate)) if predicate.startswith(f"{_IN}[", i)]
    return [predicate[position:end] for end in ends] or [GUARDED_CALLER_USERNAME]


def _list_after(text: str, position: int, prefix: str, closing: str) -> tuple[list[str], int]:
    """The JSON list of strings at `position` after `prefix` and before `closing`; empty when there is none."""
    if not text.startswith(prefix, position):
        return [], position
    try:
        values, end = json.JSONDecoder().raw_decode(text, position + len(prefix))
    except ValueError:
        return [], position
    if not (isinstance(values, list) and all(isinstance(v, str) for v in values)) or not text.startswith(closing, end):
        return [], position
    return values, end + len(closing)
