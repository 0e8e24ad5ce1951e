"""The stacks and requests the enforcement invariant (`maas/tools/simulator/invariant.py`) is checked on."""

from __future__ import annotations

import random
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from maas.config import raw_from_stack_file
from maas.observe import Observed
from maas.plan.gateway.routes import ENDPOINTS
from maas.tools.explaining.world import World, world_of
from maas.tools.simulator import Caller, Network, Request

ROOT = Path(__file__).resolve().parent.parent
STACK_FILES = sorted([ROOT / "Pulumi.dev.yaml", *(ROOT / "tests" / "stacks").glob("Pulumi.*.yaml")])
GENERATED = 4  # generated stacks, besides every stack file


# The enforcement stack's Gateway as observed: one listener for every host under apps.example.com, so that a
# model's own route hostname attaches beside routes that take the listener's (wildcard) host.
WILDCARD_GATEWAY = {
    "apiVersion": "gateway.networking.k8s.io/v1",
    "kind": "Gateway",
    "metadata": {"name": "maas-default-gateway", "namespace": "openshift-ingress", "uid": "gw-uid"},
    "spec": {
        "gatewayClassName": "openshift-default",
        "listeners": [{"name": "https", "hostname": "*.apps.example.com", "port": 443, "protocol": "HTTPS"}],
    },
}
OBSERVED = {"Pulumi.enforcement.yaml": [WILDCARD_GATEWAY]}


@cache
def network(name: str) -> Network:
    """A stack file by name, or `generated-N`, rendered once (against what `OBSERVED` says of it)."""
    if name.startswith("generated-"):
        raw: dict[str, Any] = generated_stack(int(name.rpartition("-")[2]))
    else:
        raw, _ = raw_from_stack_file(next(path for path in STACK_FILES if path.name == name))
    return Network(world_of(raw, "test", Observed.of(OBSERVED.get(name, []))))


def stack_names() -> list[str]:
    return [path.name for path in STACK_FILES] + [f"generated-{seed}" for seed in range(GENERATED)]


# ----------------------------------------------------------------------------------------- generated stacks


def generated_stack(seed: int) -> dict[str, Any]:
    """Two tenants (one with OIDC and its own hostname), ExternalModels and KServe models, some on their own
    route hostnames, subscriptions and auth policies over random groups and users."""
    rng = random.Random(seed)
    tenants = [
        {"name": "models-as-a-service"},
        {
            "name": "blue",
            "oidc": {"issuerUrl": "https://sso.example.com/realms/blue", "clientId": "blue-client"},
            "gateway": {"hostname": "blue.apps.example.com"},
        },
    ]
    models, subscriptions, policies = [], [], []
    groups = ["g1", "g2", "g3"]
    for t, tenant in enumerate(("models-as-a-service", "blue")):
        namespace = "models-as-a-service" if t == 0 else "ai-tenant-blue"
        keys = []
        for m in range(rng.randint(2, 4)):
            name, ns = f"m{m}", f"{tenant[:4]}-ns{rng.randint(0, 1)}"
            model: dict[str, Any] = {"name": name, "namespace": ns, "tenant": tenant}
            if rng.random() < 0.6:
                model["modelRef"] = {"kind": "ExternalModel", "name": name}
                model["external"] = {
                    "provider": "openai",
                    "targetModel": f"{tenant}-{ns}-{name}",
                    "endpoint": "api.openai.com",
                    "credentialRef": {"name": "key"},
                }
            else:
                model["modelRef"] = {"kind": "LLMInferenceService", "name": f"{name}-svc"}
            if rng.random() < 0.3:
                model["route"] = {"hostnames": [f"{name}.{ns}.apps.example.com"]}
            models.append(model)
            keys.append({"name": name, "namespace": ns})
        for s in range(rng.randint(1, 3)):
            refs = []
            for ref in rng.sample(keys, rng.randint(1, len(keys))):
                if rng.random() < 0.2:
                    refs.append({**ref, "unlimited": True})
                else:
                    rates = [{"limit": rng.choice([10, 100, 1000]), "window": rng.choice(["1m", "1h"])}]
                    refs.append({**ref, "tokenRateLimits": rates})
            owner = {"groups": [{"name": g} for g in rng.sample(groups, rng.randint(1, 2))]}
            subscriptions.append({"name": f"s{s}", "namespace": namespace, "owner": owner, "modelRefs": refs})
        granted = rng.sample(keys, rng.randint(1, len(keys)))
        subjects = {"groups": [{"name": g} for g in rng.sample(groups, 2)], "users": ["u1"]}
        policies.append({"name": "access", "namespace": namespace, "modelRefs": granted, "subjects": subjects})
    return {"tenants": tenants, "models": models, "subscriptions": subscriptions, "authPolicies": policies}


# ------------------------------------------------------------------------------------------------ requests


def _world_names(world: World) -> dict[str, list[str]]:
    config = world.config
    groups = {g.name for s in config.subscriptions for g in s.owner.groups}
    groups |= {g.name for p in config.authPolicies for g in p.subjects.groups}
    users = {u for s in config.subscriptions for u in s.owner.users} | {
        u for p in config.authPolicies for u in p.subjects.users
    }
    prefixes, headers, hosts = [], [], []
    for model in config.models:
        prefixes += [f"/{model.namespace}/{model.modelRef.name}", f"/{model.namespace}/{model.name}"]
        served = model.served_name
        prefixes.append(f"/publishers/{model.namespace}/models/{served}")
        headers += [model.external.targetModel] if model.external else [f"publishers/{model.namespace}/models/{served}"]
        hosts += list(model.route.hostnames)
    hosts += [h for t in config.tenants if (h := t.gateway_hostname(config.platform))]
    return {
        "groups": sorted(groups) or ["nobody"],
        "users": sorted(users) or ["nobody"],
        "prefixes": sorted(set(prefixes)),
        "headers": sorted(set(headers)),
        "hosts": sorted(set(hosts)) or ["gateway.example"],
        "subscriptions": sorted({s.key for s in config.subscriptions} | {s.name for s in config.subscriptions}),
    }


def _mutated(draw: st.DrawFn, path: str) -> str:
    """The shapes an attacker tries: doubled, trailing and encoded slashes, dot segments, a longer segment."""
    mutation = draw(st.sampled_from(["none", "double", "trailing", "encoded", "dots", "suffix", "reserved"]))
    if mutation == "double":
        return "/" + path
    if mutation == "trailing":
        return path + "/"
    if mutation == "encoded":
        return path.replace("/", "%2F", draw(st.integers(1, 2))).replace("%2F", "/", 1)
    if mutation == "dots":
        return "/x/.." + path
    if mutation == "suffix":
        return path + "x"
    if mutation == "reserved":
        return "/" + draw(st.sampled_from(["v1", "maas-api", "publishers"])) + path
    return path


@st.composite
def requests(draw: st.DrawFn, world: World) -> tuple[Request, str | None]:
    """A request, and the stack's Gateway it is sent to."""
    names = _world_names(world)
    prefix = draw(st.sampled_from([*names["prefixes"], "", "/maas-api", "/v1/models"]))
    tail = draw(st.sampled_from([*(f"/v1/{e}" for e in ENDPOINTS), "/v1/models", "", "/anything"]))
    path = _mutated(draw, prefix + tail or "/")
    if draw(st.booleans()):
        path += draw(st.sampled_from(["?x=/v1/models", "?stream=true"]))
    groups = tuple(draw(st.lists(st.sampled_from([*names["groups"], "outsider"]), max_size=2, unique=True)))
    token = draw(st.sampled_from(["kubernetes", "kubernetes", "oidc", "api-key"]))
    subscriptions = names["subscriptions"]
    caller = Caller(
        user=draw(st.sampled_from([*names["users"], "mallory"])),
        groups=groups,
        token=token,
        audience=tuple(draw(st.lists(st.sampled_from(["blue-client", "maas-client", "other"]), max_size=2))),
        authorized_party=draw(st.sampled_from([None, "blue-client", "maas-client", "other"])),
        key_subscription=draw(st.sampled_from(["", *subscriptions])) if token == "api-key" else "",
    )
    headers = []
    if subscriptions and draw(st.booleans()):
        headers.append(("X-MaaS-Subscription", draw(st.sampled_from(subscriptions))))
    if draw(st.integers(0, 4)) == 0:
        headers.append(("X-Gateway-Model-Name", draw(st.sampled_from(names["headers"] or ["x"]))))
    request = Request(
        path=path,
        caller=caller,
        method=draw(st.sampled_from(["POST", "POST", "GET"])),
        host=draw(st.sampled_from([None, *names["hosts"], "elsewhere.example.com"])),
        headers=tuple(headers),
        model=draw(st.sampled_from([None, None, *names["headers"], "unknown-model"])),
        merge_slashes=draw(st.booleans()),
    )
    return request, draw(st.sampled_from(sorted(Network(world).gateways)))
