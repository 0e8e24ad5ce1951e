"""Subscriptions maas-api cannot choose between: a subject (group or user) that owns two or more subscriptions of
one tenant that include one model.

For an inference request without an `X-MaaS-Subscription` header, maas-api's `subscriptions/select` takes the one
subscription the caller owns that includes the model; with several it answers `multiple_subscriptions`, and the
gateway returns 403 (`reference/upstream-platform.md` section 9, `maas/tools/explaining/maasapi.py`, the mirror's
`internal/subscription/selector.go`). `spec.priority` orders the candidates but does not choose among them there:
it decides only which subscription an API key minted without `subscription` binds to. Each tenant's maas-api reads
the subscriptions of its own namespace, so only subscriptions of one namespace compete.

A caller in two groups that each own one of the subscriptions meets the same error, but group membership is not in
the configuration: only a subject that owns several subscriptions itself is warned about, so the warning is never
a guess.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

from ...config import MaasConfig, SubscriptionConfig
from ...listing import listed

SHOWN = 5  # subjects or models named in one warning; the rest are counted

Subject = tuple[str, str]  # ("group" | "user", name)


def ambiguous_selection_warnings(config: MaasConfig) -> list[str]:
    """One warning per set of subscriptions that the same subjects own and that share the same models, in a
    stable order; none for a model that is not in `maas:models` (maas-api finds no such model to select for)."""
    owned: defaultdict[tuple[str, str, Subject], set[str]] = defaultdict(set)  # (namespace, model, subject) -> keys
    for subscription, owners in _owning_several(config):
        for ref in subscription.modelRefs:
            if ref.key in config.models_by_key:
                for subject in owners:
                    owned[(subscription.namespace, ref.key, subject)].add(subscription.key)
    models: defaultdict[tuple[tuple[str, ...], Subject], set[str]] = defaultdict(set)
    for (_, model, subject), keys in owned.items():
        if len(keys) > 1:
            models[(tuple(sorted(keys)), subject)].add(model)
    subjects: defaultdict[tuple[tuple[str, ...], tuple[str, ...]], list[Subject]] = defaultdict(list)
    for (keys, subject), shared in models.items():
        subjects[(keys, tuple(sorted(shared)))].append(subject)
    return [_warning(keys, shared, sorted(who)) for (keys, shared), who in sorted(subjects.items())]


def _owning_several(config: MaasConfig) -> list[tuple[SubscriptionConfig, list[Subject]]]:
    """Each subscription with those of its subjects that own another subscription of its namespace: a subject
    that owns one cannot meet `multiple_subscriptions`, so its references need not be looked at."""
    subjects = [(s, _subjects(s)) for s in config.subscriptions]
    owners = Counter((s.namespace, subject) for s, found in subjects for subject in set(found))
    shared = {owner for owner, count in owners.items() if count > 1}
    if not shared:  # no subject owns two subscriptions of a namespace (the usual case): nothing else to look at
        return []
    several = [(s, [subject for subject in found if (s.namespace, subject) in shared]) for s, found in subjects]
    return [(s, found) for s, found in several if found]


def _subjects(subscription: SubscriptionConfig) -> list[Subject]:
    owner = subscription.owner
    return [("group", g.name) for g in owner.groups] + [("user", user) for user in owner.users]


def _warning(subscriptions: Sequence[str], models: Sequence[str], subjects: Sequence[Subject]) -> str:
    who = _listed([f"{kind} {name}" for kind, name in subjects])
    owns = "owns" if len(subjects) == 1 else "each own"
    what = f"model {models[0]}" if len(models) == 1 else f"models {_listed(models)}"
    example = subscriptions[0].partition("/")[2]
    return (
        f"{who} {owns} {len(subscriptions)} subscriptions that include {what}: {', '.join(subscriptions)}; "
        "maas-api selects none of them for a call without an X-MaaS-Subscription header (403 "
        "multiple_subscriptions), and spec.priority does not choose between them (it only decides which one an API "
        f"key minted without a subscription binds to): have those callers send X-MaaS-Subscription (e.g. {example}), "
        "or keep each model in one subscription per owner"
    )


def _listed(names: Sequence[str]) -> str:
    return listed(names, SHOWN)
