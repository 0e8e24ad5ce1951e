"""Reading an `ObservationRequest` from a live cluster: read-only GET and LIST, bounded in time.

The `kubernetes` client resolves the kubeconfig exactly as the Kubernetes provider does (a path or the file's
contents, a context; unset: `$KUBECONFIG` or `~/.kube/config`, else the in-cluster service account) and handles
every credential form (exec plugins, client certificates, auth-provider, proxy-url, tls-server-name). Requests go
through `ApiClient.call_api` on paths built from KINDS rather than the DynamicClient: measured against a local
server, its discovery costs 16 requests for these kinds (/version, /apis, then one per group version) before the
first read, and writes a cache file.

Order: the CRDs first, so a kind that is not installed (or does not serve the version the program reads) is
recorded as such and its objects as certainly absent without asking; then the LISTs (paged), then the GETs. A
Secret is fetched as PartialObjectMetadata, so its data never leaves the API server.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import urllib3
from kubernetes.client import ApiClient, Configuration
from kubernetes.client.exceptions import ApiException
from kubernetes.config.incluster_config import (
    SERVICE_CERT_FILENAME,
    SERVICE_TOKEN_FILENAME,
    InClusterConfigLoader,
)
from kubernetes.config.kube_config import KubeConfigLoader

from ..config.errors import escaped
from .errors import ObservationError
from .fields import dig
from .kubeconfig import kubeconfig_source, loading_problem
from .scope import ObservationRequest
from .snapshot import CRD_KIND, KINDS, Cluster, Kind, ObjectRef, Observed, Scope, ref_of, serves, trimmed

DEFAULT_TIMEOUT = 30.0
PAGE_SIZE = 500
JSON = "application/json"
AUTH = "BearerToken"  # the client's one auth setting: the kubeconfig's token, exec or auth-provider credential
METADATA_ONLY = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
# Connection failures are retried (a restarting API server); a slow answer is not: the deadline bounds the run.
RETRIES = urllib3.Retry(total=2, connect=2, read=0, status=0, redirect=0)
HOW_TO_FIX = (
    "check platform.kubernetes.kubeconfig and platform.kubernetes.context (--kubeconfig/--context for "
    "`python -m maas observe`), or set platform.observe: false to plan from the configuration alone"
)
HTTP_HINTS = {
    401: "the API server rejected the credentials: log in again (refresh the token, certificate or exec plugin)",
    403: "the identity may not read this: grant it get and list on {resource}",
}


@dataclass(frozen=True)
class Connection:
    """An API client of its own (no global state) and the cluster it talks to."""

    client: ApiClient
    cluster: Cluster


def connect(kubeconfig: str | None = None, context: str | None = None, timeout: float = DEFAULT_TIMEOUT) -> Connection:
    """The cluster the Kubernetes provider would use for the same `kubeconfig` and `context`. Loading credentials
    may run a kubeconfig exec plugin, which the client waits for without a bound: it gets `timeout` seconds."""
    configuration = Configuration()
    outcome: dict[str, Any] = {}

    def load() -> None:
        try:
            outcome["context"] = _load(configuration, kubeconfig, context)
        except Exception as error:  # whatever the client meets in a malformed kubeconfig, said without a traceback
            outcome["error"] = loading_problem(error)

    loading = threading.Thread(target=load, name="kubeconfig", daemon=True)
    loading.start()
    loading.join(timeout)
    if loading.is_alive():
        raise ObservationError(
            f"cannot observe the cluster: loading the kubeconfig's credentials (an exec plugin?) took longer than "
            f"{timeout:g} s; check that the plugin runs without a prompt, or {HOW_TO_FIX}"
        )
    if "error" in outcome:
        raise ObservationError(f"cannot observe the cluster: invalid kubeconfig: {outcome['error']}; {HOW_TO_FIX}")
    configuration.retries = RETRIES
    return Connection(ApiClient(configuration), Cluster(configuration.host, outcome["context"]))


def _load(configuration: Configuration, kubeconfig: str | None, context: str | None) -> str | None:
    """Fill `configuration`; the name of the context used (None in-cluster)."""
    source = kubeconfig_source(kubeconfig)
    if source is None:
        InClusterConfigLoader(SERVICE_TOKEN_FILENAME, SERVICE_CERT_FILENAME).load_and_set(configuration)
        return None
    loader = KubeConfigLoader(config_dict=source, active_context=context, config_base_path=None)
    loader.load_and_set(configuration)
    return loader.current_context["name"]


def read_cluster(
    request: ObservationRequest,
    kubeconfig: str | None = None,
    context: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> Observed:
    """Everything `request` asks for, read once; ObservationError when the cluster cannot be read."""
    deadline = time.monotonic() + timeout
    connection = connect(kubeconfig, context, timeout)
    with connection.client:
        return _Reading(connection, deadline, timeout).run(request)


@dataclass
class _Reading:
    connection: Connection
    deadline: float
    timeout: float
    objects: list[dict[str, Any]] = field(default_factory=list)
    crds: dict[str, bool] = field(default_factory=dict)

    def run(self, request: ObservationRequest) -> Observed:
        crds = [ref for ref in request.gets if ref.kind == CRD_KIND]
        for ref in crds:
            self._installed_per_crd(ref, self._get(ref))
        for scope in request.lists:
            self._list(scope)
        for ref in request.gets:
            if ref.kind != CRD_KIND:
                self._get(ref)
        return Observed.of(self.objects, request.lists, request.gets, self.crds, self.connection.cluster)

    def _installed_per_crd(self, ref: ObjectRef, crd: dict[str, Any] | None) -> None:
        for kind in KINDS.values():
            if kind.crd_name == ref.name:
                self.crds[kind.kind] = serves(crd, kind)

    def _list(self, scope: Scope) -> None:
        kind = KINDS[scope.kind]
        if self.crds.get(kind.kind) is False:
            return
        path = _path(kind, scope.namespace)
        for page in self._pages(kind, path):
            if page is None:  # the API server does not serve the kind: nothing of it exists
                self.crds[kind.kind] = False
                return
            items = page.get("items")
            if not isinstance(items, (list, type(None))):
                raise self._error(f"the answer to {path} is not a list of objects (items: {_shape(items)})")
            self.objects += [self._object(kind, item, f"{path} items[{i}]") for i, item in enumerate(items or ())]
        if not kind.builtin:
            self.crds[kind.kind] = True

    def _pages(self, kind: Kind, path: str) -> Iterator[dict[str, Any] | None]:
        token = ""
        while True:
            query = {"limit": str(PAGE_SIZE), **({"continue": token} if token else {})}
            page = self._request(kind, path, query)
            yield page
            token = dig(page, "metadata", "continue") or ""
            if not isinstance(token, str):
                raise self._error(f"the answer to {path} has a metadata.continue that is not text ({_shape(token)})")
            if not token:
                return

    def _get(self, ref: ObjectRef) -> dict[str, Any] | None:
        kind = KINDS[ref.kind]
        if self.crds.get(kind.kind) is False:
            return None
        path = _path(kind, ref.namespace, ref.name)
        body = self._request(kind, path, {})
        if body is not None:
            body = self._object(kind, body, path)
            self.objects.append(body)
        return body

    def _object(self, kind: Kind, body: Any, where: str) -> dict[str, Any]:
        """One object of an answer with its apiVersion and kind; ObservationError naming `where` when it is not an
        object of its kind (what the snapshot keeps of it cannot be read)."""
        if not isinstance(body, dict):
            raise self._error(f"{where} is not a Kubernetes object ({_shape(body)})")
        typed = _typed(kind, body)
        try:
            ref_of(typed)
            trimmed(typed)
        except (AttributeError, KeyError, TypeError, ValueError) as error:
            raise self._error(f"{where} is not a Kubernetes object of its kind ({escaped(str(error))})") from None
        return typed

    def _request(self, kind: Kind, path: str, query: dict[str, str]) -> dict[str, Any] | None:
        """One GET: the JSON body, None for 404, ObservationError for anything else that is not a success."""
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise self._error(f"no complete answer within {self.timeout:g} s (reading {path})")
        client = self.connection.client
        accept = METADATA_ONLY if kind.metadata_only else JSON
        method, url, headers, _, _ = client.param_serialize(
            "GET", path, query_params=list(query.items()), header_params={"Accept": accept}, auth_settings=[AUTH]
        )
        try:
            response = client.call_api(method, url, headers, _request_timeout=remaining)
            data = response.read()
        except (ApiException, urllib3.exceptions.HTTPError, OSError) as error:
            raise self._error(self._failure(error, path)) from None
        if response.status == 404:
            return None
        if not 200 <= response.status < 300:
            raise self._error(_http_problem(kind, response.status, response.reason, data, path))
        try:
            body = json.loads(data)
        except ValueError:
            raise self._error(f"the answer to {path} is not JSON") from None
        if not isinstance(body, dict):
            raise self._error(f"the answer to {path} is not a JSON object ({_shape(body)})")
        return body

    def _failure(self, error: Exception, path: str) -> str:
        reason = getattr(error, "reason", None) or error
        timed_out = isinstance(reason, (urllib3.exceptions.TimeoutError, TimeoutError))
        # urllib3's NewConnectionError (refused, no route) subclasses its ConnectTimeoutError
        if timed_out and not isinstance(reason, urllib3.exceptions.NewConnectionError):
            return f"no complete answer within {self.timeout:g} s (reading {path})"
        return f"API server unreachable (reading {path}): {reason}"

    def _error(self, problem: str) -> ObservationError:
        cluster = self.connection.cluster
        where = f"{cluster.server} (context {cluster.context})" if cluster.context else f"{cluster.server} (in-cluster)"
        return ObservationError(f"cannot observe the cluster {where}: {problem}; {HOW_TO_FIX}")


def _path(kind: Kind, namespace: str | None, name: str | None = None) -> str:
    """/api/v1/... for the core group, /apis/{group}/{version}/... otherwise; names quoted."""
    parts = ["api", kind.version] if not kind.group else ["apis", kind.group, kind.version]
    if namespace is not None:
        parts += ["namespaces", namespace]
    parts += [kind.plural, *([name] if name is not None else [])]
    return "/" + "/".join(urllib.parse.quote(part, safe="") for part in parts)


def _shape(value: Any) -> str:
    """What a value of the wrong shape is, for a message: its type, and itself when short."""
    shown = json.dumps(value)
    return type(value).__name__ + (f" {escaped(shown)}" if len(shown) <= 40 else "")


def _typed(kind: Kind, body: dict[str, Any]) -> dict[str, Any]:
    """List items and PartialObjectMetadata answers lack (or misname) apiVersion and kind; set them from KINDS."""
    if kind.metadata_only:
        return {"apiVersion": kind.api_version, "kind": kind.kind, "metadata": body.get("metadata") or {}}
    return {**body, "apiVersion": kind.api_version, "kind": kind.kind}


def _http_problem(kind: Kind, status: int, reason: str, data: bytes, path: str) -> str:
    try:
        message = json.loads(data).get("message") or ""
    except (ValueError, AttributeError):
        message = data.decode(errors="replace").strip()
    resource = ".".join(part for part in (kind.plural, kind.group) if part)
    hint = HTTP_HINTS.get(status, "").format(resource=resource)
    text = f"HTTP {status} {reason} reading {path}" + (f": {message}" if message else "")
    return f"{text}; {hint}" if hint else text
