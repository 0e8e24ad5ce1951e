"""Who gains or loses a model: effective access, read back from each side's rendered objects and status writes.

A subject (a group, or a user) has a model when the gateway and maas-api would let its requests through:

1. the model's AuthPolicy (`maas-auth-{model}`) admits it. The subjects live in the `model-access` rule's one CEL
   predicate, which `maas.plan.policies.access` writes from the groups and users it admits. That predicate is
   parsed here and accepted only when writing the parsed subjects again gives the very same text, so nothing is
   guessed: a predicate of another form (a live policy kept under an opt-out) is named instead of compared. A
   MaaSAuthPolicy of the model's tenant must grant it too (maas-api's `accessAllowed`);
2. it owns a subscription of the model's tenant that includes the model and may serve inference (phase Active, or
   Degraded with the model's rate limits ready): by the status the side writes, else the phase its plan gives
   (`controllerMode: coexist`, where the controller writes the status by the same rules);
3. maas-api selects it (`explaining.maasapi.select`, read-only): without `X-MaaS-Subscription` only when the
   subject owns exactly one subscription that includes the model; owning several, it calls the model only with
   the header (`multiple_subscriptions` without).

Group membership is not in the configuration, so each subject is judged alone. A subject that stands half-way on
either side (admitted without a usable subscription of its own, or subscribed without being admitted: its members
depend on another of their subjects) is compared on that half too, and the model is marked so.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ... import naming
from ...config.errors import escaped
from ...observe.fields import items_at, mapping_at, strings_at, text_at
from ...plan.policies.access import GUARDED_CALLER_GROUPS, GUARDED_CALLER_USERNAME, RULE, model_access_predicate
from ..explaining.maasapi import LiveSubscription, ModelIndex, select
from .sides import Key, Side

Subject = tuple[str, str]  # ("group" | "user", name)
_GROUPS = f"{GUARDED_CALLER_GROUPS}.exists(g, g in "
_IN = " in "  # the users clause: `{the tenant's username expression} in [...]`
_OR = " || "
NONE, HEADER, CALLS = 0, 1, 2  # how a subject's requests are selected a subscription: not, with the header, always

# What a model gained or lost is marked with, and what the mark means (printed once under the section).
ADMISSION_ONLY = "admission only"
SUBSCRIPTION_ONLY = "subscription only"
HEADER_ONLY = "with X-MaaS-Subscription only"
WITHOUT_HEADER = "calls without X-MaaS-Subscription"
MEANING = {
    ADMISSION_ONLY: "the model's AuthPolicy admits the subject, but it owns no usable subscription to the model "
    "itself: its callers need one through another of their groups or their user name",
    SUBSCRIPTION_ONLY: "the subject owns a usable subscription to the model, but no AuthPolicy admits it: its "
    "callers need admission through another of their groups or their user name",
    HEADER_ONLY: "the subject owns several subscriptions to the model: maas-api selects one only for a request "
    "that names it, and calls without the header fail with multiple_subscriptions",
    WITHOUT_HEADER: "the subject keeps the model with X-MaaS-Subscription; maas-api selects a subscription without "
    "the header only while the subject owns exactly one that includes the model",
}


@dataclass(frozen=True)
class Standing:
    """One subject on one model: admitted (AuthPolicy and MaaSAuthPolicy), and how its own subscriptions are
    selected (NONE, HEADER or CALLS)."""

    admitted: bool
    subscribed: int

    @property
    def level(self) -> int:
        return self.subscribed if self.admitted else NONE


_ABSENT = Standing(False, NONE)


@dataclass(frozen=True)
class AccessChange:
    subject: Subject
    gains: tuple[str, ...]  # model keys by key, each maybe followed by ` (mark)` (`MEANING`)
    loses: tuple[str, ...]

    @property
    def who(self) -> str:
        return f"{self.subject[0]} {escaped(self.subject[1])}"


def access_changes(base: Side, head: Side) -> tuple[list[AccessChange], list[str]]:
    """Per subject, the models it gains and loses, by subject, and the notes: the meaning of each mark used, then
    each policy that cannot be read. A model whose policy cannot be read on either side is left out, with a note
    when that policy changes (an unchanged one changes nobody's access)."""
    before, after = standings(base), standings(head)
    gains: defaultdict[Subject, list[str]] = defaultdict(list)
    loses: defaultdict[Subject, list[str]] = defaultdict(list)
    marks: set[str] = set()
    notes = []
    for model in sorted({*before, *after}):
        old, new = before.get(model, {}), after.get(model, {})
        unreadable = [(label, x.key) for label, x in (("BASE", old), ("HEAD", new)) if isinstance(x, Unreadable)]
        if unreadable:
            notes += [_note(label, key) for label, key in unreadable if base.objects.get(key) != head.objects.get(key)]
            continue
        assert not isinstance(old, Unreadable) and not isinstance(new, Unreadable)
        for subject in {*old, *new}:
            for gained, mark in _changes(old.get(subject, _ABSENT), new.get(subject, _ABSENT)):
                (gains if gained else loses)[subject].append(model if mark is None else f"{model} ({mark})")
                marks.update([mark] if mark else [])
    changes = [
        AccessChange(subject, tuple(gains[subject]), tuple(loses[subject])) for subject in sorted({*gains, *loses})
    ]
    legend = [f"({mark}) means {meaning}" for mark, meaning in MEANING.items() if mark in marks]
    return changes, legend + notes


def _changes(old: Standing, new: Standing) -> list[tuple[bool, str | None]]:
    """(gained, mark) for each change of one subject on one model."""
    if old.level != new.level:
        if old.level == NONE:
            return [(True, HEADER_ONLY if new.level == HEADER else None)]
        if new.level == NONE:
            return [(False, None)]
        return [(new.level == CALLS, WITHOUT_HEADER)]
    if old.level != NONE:
        return []
    halves = []  # neither side has the model: the half each side has
    if old.admitted != new.admitted:
        halves.append((new.admitted, ADMISSION_ONLY))
    if bool(old.subscribed) != bool(new.subscribed):
        halves.append((bool(new.subscribed), SUBSCRIPTION_ONLY))
    return halves


def standings(side: Side) -> dict[str, dict[Subject, Standing] | Unreadable]:
    """Model key -> the standing of each subject its AuthPolicy admits or that owns a subscription to it."""
    admitting, maas_api = admitted(side), _MaasApi(side)
    found: dict[str, dict[Subject, Standing] | Unreadable] = {}
    for model in sorted({*admitting, *maas_api.owned_models}):
        subjects = admitting.get(model, _NOBODY)
        if isinstance(subjects, Unreadable):
            found[model] = subjects
            continue
        found[model] = {
            subject: Standing(subject in subjects and maas_api.grants(model, subject), maas_api.selects(model, subject))
            for subject in sorted({*subjects, *maas_api.owners(model)})
        }
    return found


@dataclass
class _MaasApi:
    """What each tenant's maas-api reads on one side: the MaaSModelRefs (every namespace), and the MaaSSubscriptions
    and MaaSAuthPolicies of its namespace, indexed by model and subject."""

    side: Side
    tenant_of: dict[str, str] = field(default_factory=dict)  # model key -> its tenant's namespace
    owned: defaultdict[tuple[str, str, Subject], list[LiveSubscription]] = field(
        default_factory=lambda: defaultdict(list)
    )
    owners_of: defaultdict[tuple[str, str], set[Subject]] = field(default_factory=lambda: defaultdict(set))
    granted: defaultdict[tuple[str, str], set[Subject]] = field(default_factory=lambda: defaultdict(set))
    models: ModelIndex = field(init=False)  # what maas-api resolves a requested model against

    def __post_init__(self) -> None:
        objects = sorted(self.side.objects.items())
        refs = [(namespace, name, body) for (kind, namespace, name), body in objects if kind == "MaaSModelRef"]
        self.models = ModelIndex(frozenset(naming.qualified(namespace, name) for namespace, name, _ in refs))
        for namespace, name, body in refs:
            tenant = text_at(body, "metadata", "labels", naming.TENANT_NAMESPACE_LABEL)
            if tenant:
                self.tenant_of[naming.qualified(namespace, name)] = tenant
        for (kind, namespace, name), body in objects:
            if kind == "MaaSSubscription":
                self._add_subscription(namespace, name, body)
            elif kind == "MaaSAuthPolicy":
                self._add_auth_policy(namespace, body)

    def _add_auth_policy(self, namespace: str, body: Mapping[str, Any]) -> None:
        """The subjects it grants each of its models, read as `maasapi.granting_policies` reads them (users
        trimmed, groups by name): indexed once, since thousands of subjects ask about hundreds of models."""
        users = {("user", user.strip()) for user in strings_at(body, "spec", "subjects", "users")}
        groups = {("group", text_at(g, "name") or "") for g in items_at(body, "spec", "subjects", "groups")}
        for ref in items_at(body, "spec", "modelRefs"):
            model = naming.qualified(text_at(ref, "namespace") or "", text_at(ref, "name") or "")
            self.granted[(namespace, model)].update(users | groups)

    def _add_subscription(self, namespace: str, name: str, body: Mapping[str, Any]) -> None:
        metadata = mapping_at(body, "metadata")
        if (metadata.get("namespace"), metadata.get("name")) != (namespace, name):
            body = {**body, "metadata": {**metadata, "namespace": namespace, "name": name}}
        subscription = LiveSubscription(body, self._status(namespace, name, body))
        owners = {("group", group) for group in subscription.groups} | {("user", u) for u in subscription.users}
        models = {
            naming.qualified(text_at(r, "namespace") or "", text_at(r, "name") or "") for r in subscription.model_refs
        }
        for model in sorted(models):
            for owner in sorted(owners):
                self.owned[(namespace, model, owner)].append(subscription)
                self.owners_of[(namespace, model)].add(owner)

    def _status(self, namespace: str, name: str, body: Mapping[str, Any]) -> Mapping[str, Any]:
        """The status the side writes; else the phase its plan gives, with the token-limit status the controller
        reports ready for each model the side renders (as this program writes it where it writes statuses)."""
        written = self.side.objects.get(("MaaSSubscriptionStatus", namespace, name))
        if written is not None:
            return mapping_at(written, "status")
        phase = self.side.phases.get(naming.qualified(namespace, name))
        if phase is None:
            return {}
        limits = [
            {"model": ref.get("name"), "ready": True}
            for ref in items_at(body, "spec", "modelRefs")
            if f"{ref.get('namespace')}/{ref.get('name')}" in self.models.keys
        ]
        return {"phase": phase, "tokenRateLimitStatuses": limits}

    @property
    def owned_models(self) -> set[str]:
        return {model for namespace, model in self.owners_of if self.tenant_of.get(model) == namespace}

    def owners(self, model: str) -> set[Subject]:
        return self.owners_of.get((self.tenant_of.get(model, ""), model), set())

    def grants(self, model: str, subject: Subject) -> bool:
        """maas-api's `accessAllowed`: a MaaSAuthPolicy of the model's tenant grants the subject the model."""
        kind, name = subject
        return (kind, name.strip()) in self.granted.get((self.tenant_of.get(model, ""), model), ())

    def selects(self, model: str, subject: Subject) -> int:
        """CALLS when maas-api selects a usable subscription of the subject's for a request without the header,
        HEADER when it does so only for a request that names one, NONE otherwise."""
        subscriptions = self.owned.get((self.tenant_of.get(model, ""), model, subject), [])
        if not subscriptions:
            return NONE
        request = _request(subject, model)
        answer = select(request, subscriptions, (), self.models).answer
        if "error" not in answer:
            return CALLS
        if answer["error"] != "multiple_subscriptions":
            return NONE
        named = [{**request, "requestedSubscription": s.qualified} for s in subscriptions]
        return HEADER if any("error" not in select(r, subscriptions, (), self.models).answer for r in named) else NONE


def _request(subject: Subject, model: str) -> dict[str, Any]:
    """The select body of a caller who is the subject and nothing else: a member of the group under a name no real
    user has (as `explain subscription` calls), or the user without groups."""
    kind, name = subject
    if kind == "group":
        return {"username": f"<a member of {name}>", "groups": [name], "requestedModel": model}
    return {"username": name, "groups": [], "requestedModel": model}


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
