"""A Kubernetes API server on 127.0.0.1 for tests, answering GET and LIST the way a real one does.

It serves the built-in resources below plus every version a CRD it holds serves: anything else is 404 "the server
could not find the requested resource", like a kind whose CRD is not installed. It records every request, can
demand a bearer token (401 otherwise), refuse resources (403), page LISTs, stall, and honour (or, to test the
client, ignore) the PartialObjectMetadata Accept header. It takes the writes of the dynamic providers: a JSON
merge patch of an object's `/status` (the status writer), and a server-side apply (PATCH
`application/apply-patch+yaml`: creates the object, or merges the body into it; it keeps no managedFields, but
answers 409 Conflict for the names in `apply_conflicts` unless forced) and a delete (404 when absent, 409 Conflict
when `preconditions.uid` is not the object's) of an object (the object batches). A created object gets a uid, a
resourceVersion and a creationTimestamp. `patch_reply` answers every PATCH instead.
`on_request` lets a test change the cluster as requests arrive; `peak_in_flight` is the most requests it was ever
answering at once (how a test sees a client's concurrency). Also here: realistic objects of the dev stack's cluster.
It answers `/version` (`version`; None hides it, as a 404) and the discovery document `/api` as an API server
does, recorded apart in `discovery_requests` (not stalled, nor passed to `on_request`); `serve_tls` makes it HTTPS.
"""

from __future__ import annotations

import copy
import itertools
import json
import ssl
import threading
import urllib.parse
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import yaml

from maas.observe import KINDS

BUILTIN = {  # (group, version, plural) -> (kind, namespaced)
    ("", "v1", "configmaps"): ("ConfigMap", True),
    ("", "v1", "secrets"): ("Secret", True),
    ("apps", "v1", "deployments"): ("Deployment", True),
    ("apiextensions.k8s.io", "v1", "customresourcedefinitions"): ("CustomResourceDefinition", False),
}
METADATA_ACCEPT = "as=PartialObjectMetadata"
MERGE_PATCH = "application/merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
VERBS = {"PATCH": "patch", "DELETE": "delete"}  # and GET: get or list
VERSION_INFO = {  # what /version answers (k8s.io/apimachinery version.Info)
    "major": "1",
    "minor": "33",
    "gitVersion": "v1.33.2",
    "gitCommit": "a57b6f7709f6c2722b92f07b8b4c48210a51fc40",
    "gitTreeState": "clean",
    "buildDate": "2026-06-17T18:41:31Z",
    "goVersion": "go1.24.4",
    "compiler": "gc",
    "platform": "linux/amd64",
}


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    accept: str | None
    authorization: str | None
    content_type: str | None = None
    body: Any = None  # the decoded JSON body of a PATCH or DELETE


@dataclass
class FakeKube:
    objects: list[dict[str, Any]] = field(default_factory=list)
    token: str | None = "good-token"  # the bearer token it accepts; None: anyone
    forbidden: set[str] = field(default_factory=set)  # plurals answered with 403
    page_size: int | None = None
    stall: float = 0.0  # seconds before each answer
    honour_metadata_accept: bool = True
    patch_reply: tuple[int, dict[str, Any]] | None = None  # the answer to every PATCH; None: apply it
    pruned_status: frozenset[str] = frozenset()  # status fields its CRD lacks: the API server drops them
    apply_conflicts: set[str] = field(default_factory=set)  # names whose apply, unless forced, answers 409 Conflict
    on_request: Callable[[FakeKube, Request], None] | None = None  # called with each request before it is answered
    requests: list[Request] = field(default_factory=list)
    peak_in_flight: int = 0  # the most requests answered at the same time (stalls included)
    version: dict[str, Any] | None = field(default_factory=lambda: dict(VERSION_INFO))  # None: /version is a 404
    discovery_requests: list[Request] = field(default_factory=list)  # of /version and /api, kept out of `requests`

    def __post_init__(self) -> None:
        self._release = threading.Event()
        self._in_flight = 0
        self._counting = threading.Lock()
        self._versions = itertools.count(1)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def serve_tls(self, certfile: str, keyfile: str) -> FakeKube:
        """Answer over TLS with this certificate (before `with`): `url` becomes https://."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certfile, keyfile)
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.url = self.url.replace("http://", "https://", 1)
        return self

    def discover(self, request: Request) -> tuple[int, dict[str, Any]] | None:
        """The answer to `/version` or `/api` (401 with a wrong token, as authentication comes first); None for
        every other path."""
        if request.method != "GET" or request.path not in ("/version", "/api"):
            return None
        self.discovery_requests.append(request)
        if self.token is not None and request.authorization != f"Bearer {self.token}":
            return 401, _status(401, "Unauthorized", "Unauthorized")
        if request.path == "/api":
            address = [{"clientCIDR": "0.0.0.0/0", "serverAddress": self.url.split("://", 1)[1]}]
            return 200, {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": address}
        if self.version is None:
            return 404, _status(404, "NotFound", "the server could not find the requested resource")
        return 200, dict(self.version)

    def __enter__(self) -> FakeKube:
        threading.Thread(target=self.httpd.serve_forever, args=(0.01,), daemon=True).start()
        return self

    def __exit__(self, *_: object) -> None:
        self._release.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def kubeconfig(self, current: str = "elsewhere", token: str = "good-token") -> str:
        """Two contexts: `maas-dev` (this server) and `elsewhere` (nothing listens there), `current` current."""
        return yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": current,
                "clusters": [
                    {"name": "local", "cluster": {"server": self.url}},
                    {"name": "gone", "cluster": {"server": "http://127.0.0.1:9"}},
                ],
                "users": [{"name": "me", "user": {"token": token}}],
                "contexts": [
                    {"name": "maas-dev", "context": {"cluster": "local", "user": "me"}},
                    {"name": "elsewhere", "context": {"cluster": "gone", "user": "me"}},
                ],
            }
        )

    # ------------------------------------------------------------------------------------------- answering

    def answering(self, request: Request) -> tuple[int, dict[str, Any]]:
        """`answer`, counted in `peak_in_flight` while it runs."""
        with self._counting:
            self._in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self._in_flight)
        try:
            return self.answer(request)
        finally:
            with self._counting:
                self._in_flight -= 1

    def answer(self, request: Request) -> tuple[int, dict[str, Any]]:
        self.requests.append(request)
        if self.on_request is not None:
            self.on_request(self, request)
        if self.stall:
            self._release.wait(self.stall)
        if request.method not in ("GET", "PATCH", "DELETE"):
            return 405, _status(405, "MethodNotAllowed", f"this fake does not take {request.method}")
        if self.token is not None and request.authorization != f"Bearer {self.token}":
            return 401, _status(401, "Unauthorized", "Unauthorized")
        route = self._route(request.path)
        if route is None:
            return 404, _status(404, "NotFound", "the server could not find the requested resource")
        group, version, plural, namespace, name, subresource = route
        if plural in self.forbidden:
            verb = VERBS.get(request.method, "list" if name is None else "get")
            resource = f"{plural}/{subresource}" if subresource else plural
            message = f'{plural}.{group} is forbidden: User "me" cannot {verb} resource "{resource}"'
            return 403, _status(403, "Forbidden", message)
        kind, _ = self._served()[(group, version, plural)]
        if request.method == "PATCH" and name is not None and subresource is None:
            return self._apply(group, kind, namespace, name, request)
        if request.method == "DELETE" and name is not None and subresource is None:
            return self._delete(group, kind, namespace, name, request.body or {})
        if request.method == "PATCH":
            return self._patch(group, kind, namespace, name, subresource, request)
        if request.method != "GET":
            return 405, _status(405, "MethodNotAllowed", f"this fake does not take {request.method} there")
        if name is None:
            return 200, self._list(group, version, kind, namespace, request.query)
        return self._get(group, kind, namespace, name, request.accept or "")

    def _patch(
        self, group: str, kind: str, namespace: str | None, name: str | None, subresource: str | None, request: Request
    ) -> tuple[int, dict[str, Any]]:
        """A merge patch of `/status`: `patch_reply` if set, else applied (the rest of the body is ignored, as the
        status subresource does)."""
        if name is None or subresource != "status":
            return 405, _status(405, "MethodNotAllowed", "this fake only merge-patches /status")
        if request.content_type != MERGE_PATCH:
            return 415, _status(415, "UnsupportedMediaType", "the body of the request was in an unknown format")
        if self.patch_reply is not None:
            return self.patch_reply
        for obj in self._matching(group, kind, namespace):
            if obj["metadata"]["name"] == name:
                patched = merged(obj.get("status") or {}, (request.body or {}).get("status") or {})
                obj["status"] = {key: value for key, value in patched.items() if key not in self.pruned_status}
                return 200, copy.deepcopy(obj)
        return 404, _status(404, "NotFound", f'{kind.lower()}s "{name}" not found')

    def _apply(
        self, group: str, kind: str, namespace: str | None, name: str, request: Request
    ) -> tuple[int, dict[str, Any]]:
        """A server-side apply: `patch_reply` if set; 409 for a name of `apply_conflicts` without `force=true`; else
        the body merged into the object (created when absent)."""
        if request.content_type != APPLY_PATCH:
            return 415, _status(415, "UnsupportedMediaType", "this fake only applies objects server-side")
        if self.patch_reply is not None:
            return self.patch_reply
        if name in self.apply_conflicts and request.query.get("force") != "true":
            message = 'Apply failed with 1 conflict: conflict with "maas-controller": .spec.owner'
            return 409, _status(409, "Conflict", message)
        found = self._find(group, kind, namespace, name)
        if found is None:
            return 201, copy.deepcopy(self._store(request.body or {}, namespace))
        found.update(merged(found, request.body or {}))
        found["metadata"]["resourceVersion"] = str(next(self._versions))
        return 200, copy.deepcopy(found)

    def _delete(
        self, group: str, kind: str, namespace: str | None, name: str, options: dict[str, Any]
    ) -> tuple[int, dict[str, Any]]:
        """A delete, at once (no finalizers): 404 when absent, 409 when `preconditions.uid` is another object's."""
        found = self._find(group, kind, namespace, name)
        if found is None:
            return 404, _status(404, "NotFound", f'{kind.lower()}s.{group} "{name}" not found')
        uid, live = (options.get("preconditions") or {}).get("uid"), found["metadata"].get("uid")
        if uid is not None and uid != live:
            message = f"Precondition failed: UID in precondition: {uid}, UID in object meta: {live}"
            return 409, _status(409, "Conflict", message)
        self.objects.remove(found)
        return 200, copy.deepcopy(found)

    def _store(self, body: dict[str, Any], namespace: str | None) -> dict[str, Any]:
        """Keep a new object, with what the API server sets on a create."""
        stored = copy.deepcopy(body)
        metadata = stored.setdefault("metadata", {})
        metadata.update(namespace=namespace, uid=str(uuid.uuid4()), resourceVersion=str(next(self._versions)))
        metadata["creationTimestamp"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        self.objects.append(stored)
        return stored

    def _find(self, group: str, kind: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        return next((o for o in self._matching(group, kind, namespace) if o["metadata"]["name"] == name), None)

    def _route(self, path: str) -> tuple[str, str, str, str | None, str | None, str | None] | None:
        parts = [urllib.parse.unquote(p) for p in path.strip("/").split("/")]
        if parts[:1] == ["api"]:
            parts = ["apis", "", *parts[1:]]
        if len(parts) < 4 or parts[0] != "apis":
            return None
        group, version, rest = parts[1], parts[2], parts[3:]
        namespace = None
        if rest[0] == "namespaces" and len(rest) >= 3:
            namespace, rest = rest[1], rest[2:]
        if len(rest) > 3 or (len(rest) == 3 and rest[2] != "status") or (group, version, rest[0]) not in self._served():
            return None
        name = rest[1] if len(rest) >= 2 else None
        return group, version, rest[0], namespace, name, rest[2] if len(rest) == 3 else None

    def _served(self) -> dict[tuple[str, str, str], tuple[str, bool]]:
        served = dict(BUILTIN)
        for crd in (o for o in self.objects if o["kind"] == "CustomResourceDefinition"):
            spec = crd["spec"]
            for version in (v for v in spec["versions"] if v["served"]):
                namespaced = spec["scope"] == "Namespaced"
                served[(spec["group"], version["name"], spec["names"]["plural"])] = (spec["names"]["kind"], namespaced)
        return served

    def _matching(self, group: str, kind: str, namespace: str | None) -> list[dict[str, Any]]:
        return [
            o
            for o in self.objects
            if o["kind"] == kind
            and o["apiVersion"].rpartition("/")[0] == group
            and namespace in (None, o["metadata"].get("namespace"))
        ]

    def _list(self, group: str, version: str, kind: str, namespace: str | None, query: dict) -> dict[str, Any]:
        found = self._matching(group, kind, namespace)
        start = int(query.get("continue") or 0)
        size = min(int(query.get("limit") or len(found) or 1), self.page_size or len(found) or 1)
        page, more = found[start : start + size], start + size < len(found)
        items = [_as_list_item(group, o) for o in page]
        metadata = {"resourceVersion": "4242", **({"continue": str(start + size)} if more else {})}
        api_version = f"{group}/{version}" if group else version
        return {"apiVersion": api_version, "kind": f"{kind}List", "metadata": metadata, "items": items}

    def _get(self, group: str, kind: str, namespace: str | None, name: str, accept: str) -> tuple[int, dict]:
        for obj in self._matching(group, kind, namespace):
            if obj["metadata"]["name"] == name:
                if METADATA_ACCEPT in accept and self.honour_metadata_accept:
                    partial = {"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata"}
                    return 200, {**partial, "metadata": copy.deepcopy(obj["metadata"])}
                return 200, copy.deepcopy(obj)
        return 404, _status(404, "NotFound", f'{kind.lower()}s "{name}" not found')


def merged(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch: objects merge key by key, null removes a key, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merged(result.get(key), value)
    return result


def _as_list_item(group: str, obj: dict[str, Any]) -> dict[str, Any]:
    """Items of a built-in list come without apiVersion and kind, as the API server sends them."""
    item = copy.deepcopy(obj)
    if group in ("", "apps"):
        item.pop("apiVersion", None)
        item.pop("kind", None)
    return item


def _status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


def _handler(kube: FakeKube) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._serve()

        def do_PATCH(self) -> None:
            self._serve()

        def do_DELETE(self) -> None:
            self._serve()

        def _serve(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            query = dict(urllib.parse.parse_qsl(url.query))
            length = int(self.headers["Content-Length"] or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            request = Request(
                self.command,
                url.path,
                query,
                self.headers["Accept"],
                self.headers["Authorization"],
                self.headers["Content-Type"],
                body,
            )
            code, body = kube.discover(request) or kube.answering(request)
            payload = json.dumps(body).encode()
            try:
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except OSError:  # the client gave up (a timeout test)
                pass

        def log_message(self, *args: object) -> None:
            pass

    return Handler


# ------------------------------------------------------------------------------------ objects for the tests


def crd(api_version: str, kind: str, plural: str, namespaced: bool = True) -> dict[str, Any]:
    """A CRD as the API server returns it: serving `api_version`, with a schema and managedFields to trim."""
    group, version = api_version.split("/")
    schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}", "uid": f"uid-{plural}", "managedFields": [{"manager": "kubectl"}]},
        "spec": {
            "group": group,
            "names": {"kind": kind, "plural": plural, "listKind": f"{kind}List", "singular": kind.lower()},
            "scope": "Namespaced" if namespaced else "Cluster",
            "versions": [{"name": version, "served": True, "storage": True, "schema": schema}],
        },
        "status": {"storedVersions": [version]},
    }


def all_crds(*missing: str) -> list[dict[str, Any]]:
    """The CRDs of every custom kind the program knows (maas.observe.KINDS), less the kinds named `missing`."""
    return [crd(k.api_version, k.kind, k.plural) for k in KINDS.values() if k.crd_name and k.kind not in missing]


MANAGED_FIELDS = [{"manager": "kserve-controller", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1"}]
GATEWAY_REF = {
    "group": "gateway.networking.k8s.io",
    "kind": "Gateway",
    "name": "maas-default-gateway",
    "namespace": "openshift-ingress",
}
T0 = "2026-11-30T09:00:00Z"


def condition(type_: str, status: str, reason: str, message: str = "") -> dict[str, Any]:
    return {"type": type_, "status": status, "reason": reason, "message": message, "lastTransitionTime": T0}


def llm_inference_service(namespace: str, name: str, ready: bool) -> dict[str, Any]:
    """A KServe 0.20 LLMInferenceService; when ready, its status carries the URL, addresses and the served model."""
    url = f"https://maas.apps.example.com/{namespace}/{name}"
    status: dict[str, Any] = {"observedGeneration": 1}
    if ready:
        model = {"name": f"publishers/{namespace}/models/{name}"}
        status |= {
            "url": url,
            "addresses": [
                {"name": "gateway-external", "url": url, "models": [model]},
                {"name": "gateway-internal", "url": f"http://{name}-kserve-workload-svc.{namespace}.svc.cluster.local"},
            ],
            "conditions": [condition("Ready", "True", "Ready"), condition("HTTPRoutesReady", "True", "Ready")],
        }
    else:
        status["conditions"] = [
            condition("Ready", "False", "MinimumReplicasUnavailable", "Deployment does not have minimum availability.")
        ]
    return {
        "apiVersion": "serving.kserve.io/v1alpha2",
        "kind": "LLMInferenceService",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": f"uid-{name}",
            "generation": 1,
            "creationTimestamp": T0,
            "managedFields": MANAGED_FIELDS,
        },
        "spec": {
            "model": {"uri": f"hf://ibm-granite/{name}", "name": name},
            "replicas": 1,
            "router": {"gateway": {}, "route": {}},
        },
        "status": status,
    }


def kserve_route(namespace: str, service: str, accepted: bool = True) -> dict[str, Any]:
    """The HTTPRoute KServe creates for an LLMInferenceService, accepted (or not) by the platform Gateway."""
    accepted_condition = (
        condition("Accepted", "True", "Accepted", "Route was valid")
        if accepted
        else condition("Accepted", "False", "NotAllowedByListeners", "no listener allows this route")
    )
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {
            "name": f"{service}-kserve-route",
            "namespace": namespace,
            "labels": {
                "app.kubernetes.io/name": service,
                "app.kubernetes.io/component": "llminferenceservice-router",
                "app.kubernetes.io/part-of": "llminferenceservice",
            },
        },
        "spec": {
            "parentRefs": [GATEWAY_REF],
            "hostnames": ["maas.apps.example.com"],
            "rules": [
                {
                    "matches": [{"path": {"type": "PathPrefix", "value": f"/{namespace}/{service}"}}],
                    "backendRefs": [{"name": f"{service}-kserve-workload-svc", "port": 8000}],
                }
            ],
        },
        "status": {
            "parents": [
                {
                    "parentRef": GATEWAY_REF,
                    "controllerName": "openshift.io/gateway-controller/v1",
                    "conditions": [
                        {**accepted_condition, "observedGeneration": 1},
                        {**condition("ResolvedRefs", "True", "ResolvedRefs"), "observedGeneration": 1},
                    ],
                }
            ]
        },
    }


def platform_gateway() -> dict[str, Any]:
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "metadata": {"name": "maas-default-gateway", "namespace": "openshift-ingress"},
        "spec": {
            "gatewayClassName": "openshift-default",
            "listeners": [
                {
                    "name": "https",
                    "hostname": "maas.apps.example.com",
                    "port": 443,
                    "protocol": "HTTPS",
                    "tls": {"mode": "Terminate", "certificateRefs": [{"kind": "Secret", "name": "maas-gateway-tls"}]},
                    "allowedRoutes": {"namespaces": {"from": "All"}},
                }
            ],
        },
        "status": {
            "addresses": [{"type": "Hostname", "value": "a1b2c3.elb.us-east-1.amazonaws.com"}],
            "conditions": [
                {**condition("Accepted", "True", "Accepted"), "observedGeneration": 1},
                {**condition("Programmed", "True", "Programmed"), "observedGeneration": 1},
            ],
        },
    }


def db_secret() -> dict[str, Any]:
    """maas-api's database Secret, applied with kubectl: its data is also in the last-applied annotation."""
    data = {"DB_CONNECTION_URL": "cG9zdGdyZXM6Ly9tYWFzOnMzY3IzdEBkYi9tYWFz"}
    applied = json.dumps({"apiVersion": "v1", "kind": "Secret", "data": data, "metadata": {"name": "maas-db-config"}})
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": {
            "name": "maas-db-config",
            "namespace": "odh-ai-gateway-infra",
            "uid": "uid-db",
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": applied, "team": "dba"},
            "managedFields": MANAGED_FIELDS,
        },
        "data": data,
        "stringData": {"password": "s3cr3t"},
    }


def maas_api_deployment(name: str, available: bool) -> dict[str, Any]:
    labels = {"app.kubernetes.io/name": "maas-api", "app.kubernetes.io/component": "api"}
    ready = {"replicas": 1, "updatedReplicas": 1, "readyReplicas": 1, "availableReplicas": 1}
    replicas = {"observedGeneration": 1, **(ready if available else {"replicas": 1, "updatedReplicas": 1})}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "odh-ai-gateway-infra", "generation": 1},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "maas-api", "image": "quay.io/opendatahub/maas-api:latest"}]},
            },
        },
        "status": {
            **replicas,
            "conditions": [
                {"type": "Available", "status": "True" if available else "False", "reason": "MinimumReplicasAvailable"}
            ],
        },
    }


def plugins_config_map() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "payload-processing-plugins", "namespace": "openshift-ingress"},
        "data": {"plugins.yaml": "plugins:\n  - pluginRef: body-field-to-header\n"},
    }


def opted_out_trlp() -> dict[str, Any]:
    """A generated TokenRateLimitPolicy someone marked `opendatahub.io/managed: "false"` in the cluster."""
    return {
        "apiVersion": "kuadrant.io/v1alpha1",
        "kind": "TokenRateLimitPolicy",
        "metadata": {
            "name": "maas-trlp-granite-7b",
            "namespace": "llm",
            "annotations": {"opendatahub.io/managed": "false"},
        },
        "spec": {
            "targetRef": {
                "group": "gateway.networking.k8s.io",
                "kind": "HTTPRoute",
                "name": "granite-7b-instruct-kserve-route",
            },
            "limits": {
                "tokens-1000-per-1h": {
                    "rates": [{"limit": 1000, "window": "1h"}],
                    "counters": [{"expression": "auth.identity.userid"}],
                    "when": [{"predicate": 'auth.identity.selected_subscription_id == "d04ed4cd04d624d0"'}],
                }
            },
        },
    }


def dev_cluster_objects() -> list[dict[str, Any]]:
    """The dev stack's cluster: granite ready, llama deploying, qwen missing; one plugins ConfigMap, one maas-api."""
    return [
        llm_inference_service("llm", "granite-7b-instruct", ready=True),
        llm_inference_service("llm", "llama-3-8b-instruct", ready=False),
        kserve_route("llm", "granite-7b-instruct"),
        kserve_route("llm", "llama-3-8b-instruct"),
        platform_gateway(),
        db_secret(),
        maas_api_deployment("maas-api", available=True),
        plugins_config_map(),
        opted_out_trlp(),
    ]
