"""Where a token limit cannot count (issue 22): every (model, path family) whose successful responses a rendered
TokenRateLimitPolicy counts as zero, with the reason and the fix, from what the program renders and observes.

Kuadrant's wasm-shim counts `usage.total_tokens` of the response body (`responseBodyJSON('/usage/total_tokens')`);
an SSE body (`text/event-stream`) is read from its second-to-last event, the one before OpenAI's `data: [DONE]`
(wasm-shim `src/kuadrant/pipeline/tasks/token_usage.rs`, since v0.12, so in every Kuadrant this program supports:
1.4.x ships wasm-shim v0.12.x, 1.5.x v0.14.1). A response without that field counts nothing. So:

- `no-total-tokens`: the format's response has no `usage.total_tokens` after the tenant's payload-processing chain:
  Anthropic (`usage.input_tokens`/`output_tokens`) unless IPP's response chain runs `api-translation`, whose
  Anthropic translator writes `total_tokens`; a KServe model's `/v1/messages` (no chain translates an internal
  model's responses: api-translation acts only on a resolved provider).
- `stream-usage-not-enforced`: OpenAI streams carry usage only with `stream_options.include_usage`, which IPP's
  `stream-usage-enforcer` sets; absent from the chain (or no payload processing: tenant Removed), a client that
  omits it streams uncounted.
- `stream-usage-unread`: `/v1/responses` streams: the enforcer skips the `openai-responses` format, and their usage
  sits under `response.usage` of the last event (`response.completed`), not where the shim reads.
- `query-exemption`: a policy Kuadrant will enforce exempts model discovery on `request.path`, which includes the
  query string: `?x=/v1/models` lifts every limit of the route.
- `untargeted-route`: KServe's own route of a model served through `route.name` carries the model's traffic
  outside the policy's target.
- `limitador-shadow`: Limitador takes two limits as one when namespace, seconds, conditions and variables agree
  (`limitador/src/limit.rs` `PartialEq`/`Hash`, neither name nor max_value); Kuadrant gives every rate of one
  TRLP limit the same namespace, condition and variables, so two rates of one window length keep only one.
- `policy-conflict`: another TokenRateLimitPolicy targets the model's route; only one policy's limits are effective.

A caller picks the path, the format and `stream`, so each finding is a way around the limit, never a curiosity.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ... import naming
from ...config import ConfigError, ConfigIssue, MaasConfig, ModelConfig, TenantConfig
from ...config.stackfile import yaml_document
from ...listing import listed
from ...observe import Observed
from ...observe.policy_views import Limit, LiveTokenRateLimitPolicy
from ...observe.views import view_of
from ..desired import Desired, Plan
from ..gateway.routes import seen_and_planned
from ..policies.ratelimit import ModelLimits
from ..tenants.payload import IPP_CONFIG, PLUGINS_DEFAULT

KIND = "TokenRateLimitPolicy"
ACCEPT_KEY = "maas:acceptUnmeteredTraffic"
SHOWN = 5
ENFORCER = "stream-usage-enforcer"
TRANSLATION = "api-translation"
ANTHROPIC = "anthropic"
OPENAI_COMPATIBLE = ("openai", "azure-openai", "vertex-openai", "bedrock-openai")  # IPP translators' providers
_PATH_EXEMPTION = re.compile(r'request\.path\.endsWith\(\s*"/v1/models"\s*\)')
_WINDOW_PART = re.compile(r"([0-9]+)(ms|h|m|s)")
_UNIT = {"h": 3600_000, "m": 60_000, "s": 1000, "ms": 1}
UNMETERED_LINE = "unmetered traffic: "  # each finding's warning starts so (the diff shows them as a section)
UNMETERED_SUMMARY = re.compile(r"[0-9]+ unmetered path famil(?:y|ies): ")


def is_report_line(warning: str) -> bool:
    """A warning of this report (its summary or a finding): the diff shows them as their own section."""
    return warning.startswith(UNMETERED_LINE) or UNMETERED_SUMMARY.match(warning) is not None


@dataclass(frozen=True)
class Finding:
    """One (model, path family) a token limit cannot count; `key` is how `maas:acceptUnmeteredTraffic` names it."""

    model: str  # ns/name
    family: str  # chat/completions, completions, responses, messages, or * (every path of the route)
    reason: str
    why: str
    fix: str

    @property
    def key(self) -> str:
        return f"{self.model}:{self.family}:{self.reason}"

    @property
    def wildcard(self) -> str:
        return f"*:{self.family}:{self.reason}"


@dataclass(frozen=True)
class UnmeteredReport:
    findings: tuple[Finding, ...]
    warnings: list[str]  # the summary, one line per finding, stale acceptances
    outputs: dict[str, dict[str, Any]]  # the `unmeteredTraffic` stack output, by key


@dataclass(frozen=True)
class Chain:
    """A tenant's payload processing as the gateway runs it: the plugin types of the default profile's request and
    response chains; `where` says what they were read from."""

    where: str
    deployment: str = ""  # namespace/name of the processor that reads the ConfigMap at start
    request: tuple[str, ...] = ()
    response: tuple[str, ...] = ()
    runs: bool = True  # False: no payload processing at all (tenant Removed)
    known: bool = True  # False: Praxis, whose chain this program does not render


def unmetered_report(
    config: MaasConfig, observed: Observed, plan: Plan, grouped: Mapping[str, ModelLimits]
) -> UnmeteredReport:
    """Findings of every model with a rated token limit, sorted by key; accepted ones are still listed.

    `grouped`: the members `plan_rate_limits` grouped by model (`RateLimitPlan.grouped`), what the policies were
    written from."""
    findings: list[Finding] = []
    chains = {tenant.name: tenant_chain(config, observed, plan, tenant) for tenant in config.tenants}
    policies = _planned_policies(plan)
    others = _observed_policies(config, observed)
    clashing = _subscriptions_with_clash(grouped)
    for model in sorted(config.models, key=lambda m: m.key):
        obj = policies.get((model.route_namespace, naming.trlp_name(model.name)))
        policy = None if obj is None else _as_seen(obj, observed)
        if policy is None or not any(limit.rates for _, limit in policy.limits):
            continue  # no limit counts here anyway (no subscription, or only unlimited ones)
        foreign = others.get(model.key, [])
        findings += format_findings(model, chains[model.tenant])
        findings += _exemption_findings(model, [policy, *foreign])
        findings += _route_findings(model, observed)
        findings += _shadow_findings(clashing.get(model.key, []), model, policy)
        findings += _conflict_findings(model, foreign)
    findings = sorted({f.key: f for f in findings}.values(), key=lambda f: f.key)
    accepted = set(config.acceptUnmeteredTraffic)
    outputs = {f.key: _output(f, is_accepted(f, accepted)) for f in findings}
    lines = finding_lines(findings, accepted) + _stale(accepted, findings)
    return UnmeteredReport(tuple(findings), lines, outputs)


def is_accepted(finding: Finding, accepted: set[str]) -> bool:
    """Accepted by its own key, or by `*:{family}:{reason}` (that case on every model)."""
    return finding.key in accepted or finding.wildcard in accepted


# ----------------------------------------------------------------------------------------------- the chain


def tenant_chain(config: MaasConfig, observed: Observed, plan: Plan, tenant: TenantConfig) -> Chain:
    """The live plugins ConfigMap when observed (operators edit it; Pulumi writes it once), else the product
    default this program creates; none for a Removed tenant; unknown once a Praxis migration removed IPP."""
    namespace, name = config.platform.gateway.namespace, naming.payload_plugins_name(tenant.name)
    where = f"ConfigMap {namespace}/{name}"
    if tenant.managementState == "Removed":
        return Chain(f"maas:tenants ({tenant.name}) managementState Removed", runs=False)
    migration = plan.owner("Tenant", tenant.name).outputs.get("payloadProcessingMigration") or {}
    if migration.get("outcome") == "cleanup":
        return Chain(f"{where} (Praxis)", known=False)
    live = observed.lookup("ConfigMap", namespace, name).object
    data = live.get("data") if live is not None else PLUGINS_DEFAULT
    request, response = _chains(data)
    deployment = f"{namespace}/{naming.for_tenant(naming.PAYLOAD_PROCESSING, tenant.name)}"
    return Chain(f"{where}{'' if live is not None else ' (the product default)'}", deployment, request, response)


def _chains(data: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Plugin types of `custom-ipp-config.yaml`'s first profile; nothing when unreadable (nothing runs that the
    program can vouch for)."""
    text = data.get(IPP_CONFIG) if isinstance(data, Mapping) else None
    if not isinstance(text, str):
        return (), ()
    try:
        parsed = yaml_document(text, f"ConfigMap data {IPP_CONFIG}")
    except ConfigError:
        return (), ()
    plugins = parsed.get("plugins") if isinstance(parsed, Mapping) else None
    profiles = parsed.get("profiles") if isinstance(parsed, Mapping) else None
    if not isinstance(plugins, list) or not isinstance(profiles, list) or not profiles:
        return (), ()
    types = {}
    for plugin in plugins:
        if isinstance(plugin, Mapping) and isinstance(plugin.get("type"), str):
            types[str(plugin.get("name") or plugin["type"])] = plugin["type"]
    chains = profiles[0].get("plugins") if isinstance(profiles[0], Mapping) else None
    return _refs(chains, "request", types), _refs(chains, "response", types)


def _refs(chains: Any, side: str, types: Mapping[str, str]) -> tuple[str, ...]:
    entries = chains.get(side) if isinstance(chains, Mapping) else None
    refs = [e.get("pluginRef") for e in entries if isinstance(e, Mapping)] if isinstance(entries, list) else []
    return tuple(types[ref] for ref in refs if isinstance(ref, str) and ref in types)


# --------------------------------------------------------------------------------------- formats, streams


def format_findings(model: ModelConfig, chain: Chain) -> list[Finding]:
    """What each API format's successful responses carry to the shim after the tenant's chain."""
    if not chain.known:
        return []
    if model.external is not None:
        return _external_findings(model, chain)
    return _kserve_findings(model) + _stream_findings(model, chain, ("chat/completions", "completions"))


def _external_findings(model: ModelConfig, chain: Chain) -> list[Finding]:
    external = model.external
    family = "messages" if external.apiFormat == "messages" else "chat/completions"
    if external.provider == ANTHROPIC:
        if chain.runs and TRANSLATION in chain.response:
            return []
        return [
            Finding(
                model.key,
                family,
                "no-total-tokens",
                f"provider anthropic answers with usage.input_tokens/output_tokens and no usage.total_tokens, and "
                f"{chain.where} {_no_response_translation(chain)}",
                f"add '- pluginRef: {TRANSLATION}' under profiles[0].plugins.response of {chain.where.split(' (')[0]}"
                f" and restart Deployment {chain.deployment}"
                if chain.runs
                else "set the tenant back to Managed and add response api-translation to its plugins ConfigMap",
            )
        ]
    if external.provider in OPENAI_COMPATIBLE:
        return _stream_findings(model, chain, (family,))
    return []  # IPP's api-translation refuses an unknown provider: no successful response to count


def _no_response_translation(chain: Chain) -> str:
    if not chain.runs:
        return "runs no payload processing to translate it"
    return "runs no api-translation on responses (the product default since models-as-a-service #1284)"


def _kserve_findings(model: ModelConfig) -> list[Finding]:
    """KServe's route serves `/v1/messages` and `/v1/responses` too (models-as-a-service #1221)."""
    return [
        Finding(
            model.key,
            "messages",
            "no-total-tokens",
            "KServe's route serves /v1/messages, whose responses carry usage.input_tokens/output_tokens and no "
            "usage.total_tokens; no payload-processing plugin translates an internal model's responses",
            "keep clients to /v1/chat/completions (no setting of this program translates it)",
        ),
        Finding(
            model.key,
            "responses",
            "stream-usage-unread",
            "KServe's route serves /v1/responses; a streamed response keeps its usage under response.usage of its "
            "last event (response.completed), where the wasm-shim does not read, and stream-usage-enforcer skips "
            "the openai-responses format",
            "keep streaming clients to /v1/chat/completions (no setting of this program makes the shim read it)",
        ),
    ]


def _stream_findings(model: ModelConfig, chain: Chain, families: Sequence[str]) -> list[Finding]:
    """OpenAI-format streams carry usage only when asked (`stream_options.include_usage`)."""
    if chain.runs and ENFORCER in chain.request:
        return []
    if chain.runs:
        why = f"{chain.where} has no {ENFORCER} in its request chain"
        fix = (
            f"add '- pluginRef: {ENFORCER}' to profiles[0].plugins.request of {chain.where.split(' (')[0]} and "
            f"restart Deployment {chain.deployment}"
        )
    else:
        why = f"{chain.where}: no payload processing runs, so nothing sets stream_options.include_usage"
        fix = "set the tenant back to Managed (its payload processing enforces include_usage)"
    why = f"a stream whose client omits stream_options.include_usage ends without usage: {why}"
    if model.external is None:
        fix = f"{fix}, or make the model server include usage (vLLM --enable-force-include-usage)"
    return [Finding(model.key, family, "stream-usage-not-enforced", why, fix) for family in families]


# ----------------------------------------------------------------------------------- predicates and routes


def _as_seen(obj: Desired, observed: Observed) -> LiveTokenRateLimitPolicy:
    """The model's policy as Kuadrant will see it (`seen_and_planned`): a planned body is read directly."""
    seen, planned = seen_and_planned(obj, observed)
    return LiveTokenRateLimitPolicy.planned(seen) if planned else view_of(LiveTokenRateLimitPolicy, seen)


def _planned_policies(plan: Plan) -> dict[tuple[str, str], Any]:
    """The plan's TokenRateLimitPolicies by (namespace, name), read once: one pass, whatever the number of models."""
    return {(o.namespace, o.name): o for o in plan.objects_of(KIND)}


def _observed_policies(config: MaasConfig, observed: Observed) -> dict[str, list[LiveTokenRateLimitPolicy]]:
    """Live TokenRateLimitPolicies other than the program's, by the model whose route they target."""
    by_route = {(m.route_namespace, m.route_name): m for m in config.models}
    found: dict[str, list[LiveTokenRateLimitPolicy]] = {}
    for ref in sorted(observed.objects, key=lambda ref: ref.sort_key):
        if ref.kind != KIND:
            continue
        policy = observed.view(LiveTokenRateLimitPolicy, ref.namespace, ref.name)
        model = by_route.get((ref.namespace, policy.target.name)) if policy else None
        if model is None or policy.target.kind != "HTTPRoute" or ref.name == naming.trlp_name(model.name):
            continue
        found.setdefault(model.key, []).append(policy)
    return found


def _exemption_findings(model: ModelConfig, policies: Iterable[LiveTokenRateLimitPolicy]) -> list[Finding]:
    exempting = sorted(
        f"{p.meta.namespace}/{p.meta.name}"
        for p in policies
        if any(_PATH_EXEMPTION.search(text) for _, limit in p.limits for text in limit.predicates)
    )
    if not exempting:
        return []
    return [
        Finding(
            model.key,
            "*",
            "query-exemption",
            f"{KIND} {', '.join(exempting)} exempts model discovery on request.path, which includes the query "
            "string, so any request ending in ?x=/v1/models escapes its limits",
            'write the exemption as !request.url_path.endsWith("/v1/models") (this program\'s form)',
        )
    ]


def _route_findings(model: ModelConfig, observed: Observed) -> list[Finding]:
    """With `route.name`, the policy targets that route; KServe's own route still serves the model."""
    if model.route.name is None or model.modelRef.kind != "LLMInferenceService":
        return []
    kserve = naming.llmisvc_route_name(model.modelRef.name)
    if (model.namespace, kserve) == (model.route_namespace, model.route_name):
        return []
    if observed.lookup("HTTPRoute", model.namespace, kserve).state != "present":
        return []
    return [
        Finding(
            model.key,
            "*",
            "untargeted-route",
            f"KServe's HTTPRoute {model.namespace}/{kserve} serves the model too, but its token limit targets "
            f"route {model.route_namespace}/{model.route_name} only",
            f"detach {model.namespace}/{kserve} from the Gateway (or remove route.name so the limit targets it)",
        )
    ]


# -------------------------------------------------------------------------------------- limits and policies


def window_ms(window: str | None) -> int | None:
    """Kuadrant's window (`1h30m`, `500ms`) in milliseconds; None when unreadable."""
    if not window or _WINDOW_PART.sub("", window):
        return None
    return sum(int(n) * _UNIT[unit] for n, unit in _WINDOW_PART.findall(window))


def shadowed_rates(limit: Limit) -> list[tuple[tuple[int, str], ...]]:
    """Groups of a limit's rates Limitador takes for one limit: the same window length, different limits."""
    return list(_shadowed(limit.rates))


@lru_cache(maxsize=1024)
def _shadowed(rates: tuple[tuple[int, str | None], ...]) -> tuple[tuple[tuple[int, str], ...], ...]:
    """`shadowed_rates` by the rates' value: tens of thousands of references share a few rate sets."""
    groups: dict[int, set[tuple[int, str]]] = {}
    for count, window in rates:
        ms = window_ms(window)
        if ms is not None and count >= 0:
            groups.setdefault(ms // 1000, set()).add((count, window))
    return tuple(tuple(sorted(g)) for _, g in sorted(groups.items()) if len({count for count, _ in g}) > 1)


def _shadow_findings(owners: Sequence[str], model: ModelConfig, policy: LiveTokenRateLimitPolicy) -> list[Finding]:
    clashes = [(name, group) for name, limit in policy.limits for group in shadowed_rates(limit)]
    if not clashes:
        return []
    said = "; ".join(f"limit {name}: {' and '.join(f'{n}/{w}' for n, w in group)}" for name, group in clashes)
    stricter = "; ".join(f"{min(n for n, _ in group)}/{group[0][1]}" for _, group in clashes)
    return [
        Finding(
            model.key,
            "*",
            "limitador-shadow",
            f"rates of one window length in one limit ({said}): Limitador keeps one of them (limitador#513; limits "
            "are equal when namespace, seconds, conditions and variables are), which may be the looser",
            f"give {', '.join(owners) or 'its subscriptions'} one rate per window length (keep {stricter})",
        )
    ]


def _subscriptions_with_clash(grouped: Mapping[str, ModelLimits]) -> dict[str, list[str]]:
    """By model key, the subscriptions whose rates for it Limitador would take for one limit: judged once per
    limit, whose members share one rate set (`limit_groups`)."""
    found: dict[str, list[str]] = {}
    for key, limits in grouped.items():
        owners = {
            m.subscription
            for group in limits.groups.values()
            if group[0].rates is not None and _shadowed(group[0].rates)
            for m in group
        }
        if owners:
            found[key] = sorted(owners)
    return found


def _conflict_findings(model: ModelConfig, others: Sequence[LiveTokenRateLimitPolicy]) -> list[Finding]:
    if not others:
        return []
    names = ", ".join(f"{p.meta.namespace}/{p.meta.name}" for p in others)
    return [
        Finding(
            model.key,
            "*",
            "policy-conflict",
            f"{KIND} {names} also targets route {model.route_namespace}/{model.route_name}: Kuadrant enforces "
            "one policy's limits per route (models-as-a-service #727), so the other's count nothing",
            f"move its limits into maas:subscriptions and delete it, or list {model.route_namespace}/"
            f"{naming.trlp_name(model.name)} in maas:unmanaged",
        )
    ]


# ------------------------------------------------------------------------------------------------- report


def finding_lines(findings: Sequence[Finding], accepted: Iterable[str]) -> list[str]:
    """One summary warning, then one line per case (what, why, fix, the key to accept it): the findings that differ
    only by model share a line naming their models, so KServe's cases of 200 models are two lines, not 400."""
    if not findings:
        return []
    accepted = set(accepted)
    shown = listed([f.key for f in findings], SHOWN)
    summary = (
        f"{len(findings)} unmetered path famil{'y' if len(findings) == 1 else 'ies'}: {shown}; a token limit counts "
        f"their successful responses as zero. Accept one by adding its key to {ACCEPT_KEY}, or '*:family:reason' "
        "for that case on every model (with maas:platform.unmeteredTraffic: error an unaccepted one stops the "
        "update)"
    )
    groups: dict[tuple[str, str, str, str, bool], list[Finding]] = {}
    for f in findings:
        groups.setdefault((f.family, f.reason, f.why, f.fix, is_accepted(f, accepted)), []).append(f)
    lines = [line(group, is_accepted(group[0], accepted)) for group in groups.values()]
    return [summary, *sorted(lines)]


def line(group: Sequence[Finding], accepted: bool) -> str:
    """One case, on one model or on several that share it."""
    first = group[0]
    models = listed([f.model for f in group], SHOWN)
    what = f"model {first.model}" if len(group) == 1 else f"models {models}"
    text = f"{UNMETERED_LINE}{what} {_family(first.family)}: {first.why}; fix: {first.fix}"
    if accepted:
        return f"{text}; accepted in {ACCEPT_KEY}"
    if len(group) == 1:
        return f"{text}; or accept '{first.key}' in {ACCEPT_KEY}"
    return f"{text}; or accept each '{{model}}:{first.family}:{first.reason}', or '{first.wildcard}', in {ACCEPT_KEY}"


def _family(family: str) -> str:
    return "(every path)" if family == "*" else f"/v1/{family}"


def _stale(accepted: set[str], findings: Sequence[Finding]) -> list[str]:
    """An acceptance left in place would silently accept the next finding of that key."""
    current = {f.key for f in findings} | {f.wildcard for f in findings}
    return [
        f"{ACCEPT_KEY} lists '{key}', but the report finds no such case; remove it so that a later one is not "
        "accepted unseen"
        for key in sorted(accepted - current)
    ]


def _output(finding: Finding, accepted: bool) -> dict[str, Any]:
    return {
        "key": finding.key,
        "model": finding.model,
        "family": finding.family,
        "reason": finding.reason,
        "why": finding.why,
        "fix": finding.fix,
        "accepted": accepted,
    }


def unmetered_issues(config: MaasConfig, findings: Iterable[Mapping[str, Any]]) -> list[ConfigIssue]:
    """With `platform.unmeteredTraffic: error`, each finding (an `unmeteredTraffic` record) not accepted stops the
    update, so accepting one is a visible change in review."""
    if config.platform.unmeteredTraffic != "error":
        return []
    return sorted(
        ConfigIssue(
            f"maas:models ({f['model']})",
            f"{_family(f['family'])} is unmetered ({f['why']}) and maas:platform.unmeteredTraffic is error; "
            f"{f['fix']}, or add '{f['key']}' to {ACCEPT_KEY}",
        )
        for f in findings
        if not f["accepted"]
    )
