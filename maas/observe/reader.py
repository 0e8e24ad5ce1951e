"""Reading an `ObservationRequest` from a live cluster: read-only GET and LIST, bounded in time.

The `kubernetes` client resolves the kubeconfig exactly as the Kubernetes provider does (a path or the file's
contents, a context; unset: `$KUBECONFIG` or `~/.kube/config`, else the in-cluster service account) and handles
every credential form (exec plugins, client certificates, auth-provider, proxy-url, tls-server-name). Requests go
through `ApiClient.call_api` on paths built from KINDS rather than the DynamicClient: measured against a local
server, its discovery costs 16 requests for these kinds (/version, /apis, then one per group version) before the
first read, and writes a cache file.

Order: first whether the endpoint is a Kubernetes API server at all (`/version`, else the discovery document
`/api`), since everything after reads a 404 as "not installed" and a web server answering 404 to every path would
otherwise pass for a cluster with nothing installed; then the CRDs, so a kind that is not installed (or does not
serve the version the program reads) is recorded as such and its objects as certainly absent without asking; then
the LISTs (paged), then the GETs. A Secret is fetched as PartialObjectMetadata, so its data never leaves the API
server. A connection that does not verify the server's certificate (`insecure-skip-tls-verify`) is said once per
server and process, in place of urllib3's warning on every request.

The `kubernetes` client and urllib3 are imported when a connection is made, not with this package: the commands
that only read snapshot files (and every `--help`) do not pay for them.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
import urllib.parse
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..config.errors import escaped
from .errors import ObservationError
from .fields import dig
from .kubeconfig import context_problem, kubeconfig_source, loading_problem
from .scope import ObservationRequest
from .snapshot import CRD_KIND, KINDS, Cluster, Kind, ObjectRef, Observed, Scope, ref_of, serves, trimmed

if TYPE_CHECKING:
    from kubernetes.client import ApiClient, Configuration

DEFAULT_TIMEOUT = 30.0
PAGE_SIZE = 500
JSON = "application/json"
AUTH = "BearerToken"  # the client's one auth setting: the kubeconfig's token, exec or auth-provider credential
METADATA_ONLY = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
# kubernetes.config.incluster_config's paths: the service account's token and the cluster's CA.
SERVICE_TOKEN_FILENAME = "/var/run/secrets/kubernetes.io/serviceaccount/token"
SERVICE_CERT_FILENAME = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"
VERSION_PATH = "/version"
DISCOVERY_PATH = "/api"
NOT_AN_API_SERVER = (
    "the endpoint does not answer as a Kubernetes API server ({answers}), so nothing can be read from it: check "
    "that the kubeconfig's cluster server is the API server's URL (`kubectl cluster-info` prints it), not a "
    "console, an application route or a proxy"
)
INSECURE = (
    "the connection to {server} does not verify the API server's certificate (insecure-skip-tls-verify in the "
    "kubeconfig): anyone on the path could answer in its place; give the cluster's CA (certificate-authority-data) "
    "instead"
)
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
    import urllib3
    from kubernetes.client import ApiClient, Configuration

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
    # Connection failures are retried (a restarting API server); a slow answer is not: the deadline bounds the run.
    configuration.retries = urllib3.Retry(total=2, connect=2, read=0, status=0, redirect=0)
    if not configuration.verify_ssl and configuration.host.lower().startswith("https:"):
        _insecure(configuration.host)
    return Connection(ApiClient(configuration), Cluster(configuration.host, outcome["context"]))


_WARNED_INSECURE: set[str] = set()


def _insecure(server: str) -> None:
    """One warning per server and process (a run may connect several times), and none of urllib3's, which warns on
    every request it makes there."""
    import urllib3

    host = urllib.parse.urlsplit(server).hostname or ""
    message = rf"Unverified HTTPS request is being made to host '{re.escape(host)}'"
    warnings.filterwarnings("ignore", message=message, category=urllib3.exceptions.InsecureRequestWarning)
    if server not in _WARNED_INSECURE:
        _WARNED_INSECURE.add(server)
        print(f"warning: {escaped(INSECURE.format(server=server))}", file=sys.stderr)


def _load(configuration: Configuration, kubeconfig: str | None, context: str | None) -> str | None:
    """Fill `configuration`; the name of the context used (None in-cluster)."""
    from kubernetes.config.incluster_config import InClusterConfigLoader
    from kubernetes.config.kube_config import KubeConfigLoader

    source = kubeconfig_source(kubeconfig)
    if source is None:
        InClusterConfigLoader(SERVICE_TOKEN_FILENAME, SERVICE_CERT_FILENAME).load_and_set(configuration)
        return None
    context_problem(source, context)
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
        self._api_server()
        crds = [ref for ref in request.gets if ref.kind == CRD_KIND]
        for ref in crds:
            self._installed_per_crd(ref, self._get(ref))
        for scope in request.lists:
            self._list(scope)
        for ref in request.gets:
            if ref.kind != CRD_KIND:
                self._get(ref)
        return Observed.of(self.objects, request.lists, request.gets, self.crds, self.connection.cluster)

    def _api_server(self) -> None:
        """That the endpoint is a Kubernetes API server: `/version` names its version, or (where /version is not
        open to this identity) the discovery document `/api` lists the core versions. Rejected credentials are
        said as for any read."""
        answers = []
        for path, recognised, expected in (
            (VERSION_PATH, _version, "a version.Info"),
            (DISCOVERY_PATH, _discovery, "an APIVersions list"),
        ):
            status, reason, data = self._fetch(path, {}, JSON)
            if status == 401:
                raise self._error(_http_problem(None, status, reason, data, path))
            body = _json(data) if 200 <= status < 300 else None
            if recognised(body):
                return
            answers.append(f"GET {path}: {_answer(status, reason, body, data, expected)}")
        raise self._error(NOT_AN_API_SERVER.format(answers="; ".join(answers)))

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
        status, reason, data = self._fetch(path, query, METADATA_ONLY if kind.metadata_only else JSON)
        if status == 404:
            return None
        if not 200 <= status < 300:
            raise self._error(_http_problem(kind, status, reason, data, path))
        try:
            body = json.loads(data)
        except ValueError:
            raise self._error(f"the answer to {path} is not JSON") from None
        if not isinstance(body, dict):
            raise self._error(f"the answer to {path} is not a JSON object ({_shape(body)})")
        return body

    def _fetch(self, path: str, query: dict[str, str], accept: str) -> tuple[int, str, bytes]:
        """One GET within the deadline: status, reason and body; ObservationError when no answer came."""
        import urllib3
        from kubernetes.client.exceptions import ApiException

        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise self._error(f"no complete answer within {self.timeout:g} s (reading {path})")
        client = self.connection.client
        method, url, headers, _, _ = client.param_serialize(
            "GET", path, query_params=list(query.items()), header_params={"Accept": accept}, auth_settings=[AUTH]
        )
        try:
            response = client.call_api(method, url, headers, _request_timeout=remaining)
            data = response.read()
        except (ApiException, urllib3.exceptions.HTTPError, OSError) as error:
            raise self._error(self._failure(error, path)) from None
        return response.status, response.reason or "", data

    def _failure(self, error: Exception, path: str) -> str:
        import urllib3

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


def _http_problem(kind: Kind | None, status: int, reason: str, data: bytes, path: str) -> str:
    try:
        message = json.loads(data).get("message") or ""
    except (ValueError, AttributeError):
        message = data.decode(errors="replace").strip()
    resource = ".".join(part for part in (kind.plural, kind.group) if part) if kind else path
    hint = HTTP_HINTS.get(status, "").format(resource=resource)
    text = f"HTTP {status} {reason} reading {path}" + (f": {message}" if message else "")
    return f"{text}; {hint}" if hint else text


def _json(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return None


def _version(body: Any) -> bool:
    """An API server's `/version` (version.Info): gitVersion, major and minor."""
    return isinstance(body, dict) and isinstance(body.get("gitVersion"), str) and "major" in body


def _discovery(body: Any) -> bool:
    """An API server's `/api` (APIVersions): the core group's versions."""
    return isinstance(body, dict) and body.get("kind") == "APIVersions" and isinstance(body.get("versions"), list)


def _answer(status: int, reason: str, body: Any, data: bytes, expected: str) -> str:
    """What came back instead, for the message: the status, and what the body was when the status was a success."""
    text = f"HTTP {status} {escaped(reason)}".rstrip()
    if not 200 <= status < 300:
        return text
    if body is None:
        return f"{text} with {len(data)} bytes that are not JSON" if data else f"{text} with an empty body"
    return f"{text} with JSON that is not {expected} ({_shape(body)})"
