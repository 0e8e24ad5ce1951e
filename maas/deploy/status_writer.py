"""Writing the status subresource of the MaaS resources: a Pulumi dynamic provider.

Status is a subresource: an apply of the object (what pulumi-kubernetes does) never writes it, and maas-api
ignores a MaaSModelRef whose `status.phase` is not `Ready`. This provider sends one JSON merge patch to
`.../{resource}/{name}/status` (field manager `maas-pulumi-status`) through the `kubernetes` client, connected by
`maas.observe.reader.connect` with the kubeconfig and context of the Kubernetes provider (`platform.kubernetes`).

Lifecycle:
- create/update: a status that comes with `facts` is judged again just before the write, on a fresh read of the
  objects it depends on (`maas.status.needed`), so objects created by the same `pulumi up` count; while the
  judgement is settling (a route not yet accepted) it looks again every POLL_SECONDS, for at most SETTLE_SECONDS.
  Then one merge patch: conditions keep their `lastTransitionTime` while their status stays the same, and fields
  the previous write had and this one drops are set to null. The state keeps the status written (`status`, as the
  program computes it, so the next preview compares like with like) and as stamped (`appliedStatus`).
- read (`pulumi refresh`): the live status, so drift shows and the next `up` writes it again; an object that no
  longer exists ends the resource.
- delete: nothing. The status is removed from the program either because its object is being deleted (the
  status goes with it; a patch would race the deletion) or because `controllerMode` became `coexist` (the
  controller now owns the status; clearing it would hide every model from maas-api until the controller runs).
- Every failure (HTTP 401, 403, 404, 409, 5xx, unreachable, no answer in time, unreadable cluster) raises
  `StatusWriteError` naming the object, the HTTP status, the API server's message and what to do: `pulumi up`
  never records a status it did not write.

The kubeconfig and context are inputs (a Pulumi secret) and outputs (kept secret by the engine, as inputs of the
same name are), because `read` receives only the state. A changed connection is a change: the status is written
again through it, so that `pulumi refresh` reads where `pulumi up` last wrote.
"""

from __future__ import annotations

import json
import time
import urllib.parse
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pulumi
import pulumi.dynamic
import urllib3
from kubernetes.client.exceptions import ApiException

from ..observe import ObservationError, ObservationRequest, Observed, read_cluster
from ..observe.reader import AUTH, HTTP_HINTS, Connection, connect
from ..plan.status import judge, needed, settling
from ..plan.status.writes import merge_patch, stamp_conditions, unstamped

MERGE_PATCH = "application/merge-patch+json"
FIELD_MANAGER = "maas-pulumi-status"
TIMEOUT_SECONDS = 30.0  # every request, and every observation before a write
POLL_SECONDS = 2.0  # while a judgement is settling, look again this often ...
SETTLE_SECONDS = 30.0  # ... for at most this long, then write what was judged
IDENTITY_KEYS = ("apiVersion", "kind", "resource", "namespace", "name")
COMPARED_KEYS = ("status", "facts", "targetUid", "connection")
HINTS = {
    401: HTTP_HINTS[401],
    403: "grant the identity of the kubeconfig `{verb}` on {resource}",
    404: "the object (or its CRD) does not exist; it is applied before its status, so check that it was created",
    409: "the object changed while its status was written; run `pulumi up` again",
    422: "the installed CRD refuses this status: install the MaaS CRDs of the release this program writes for",
}
SERVER_HINT = "the API server failed; run `pulumi up` again"
UNREACHABLE_HINT = "check platform.kubernetes.kubeconfig and platform.kubernetes.context, then run `pulumi up` again"


class StatusWriteError(Exception):
    """A status that could not be written (or read): `pulumi up` fails for this resource and keeps the previous
    state."""


# ----------------------------------------------------------------------------------------------- the API


def object_path(target: Mapping[str, Any]) -> str:
    """`/apis/{group}/{version}/namespaces/{ns}/{resource}/{name}`, each segment quoted."""
    parts = ("namespaces", target["namespace"], target["resource"], target["name"])
    return f"/apis/{target['apiVersion']}/" + "/".join(urllib.parse.quote(part, safe="") for part in parts)


@dataclass(frozen=True)
class _Request:
    """One call: HTTP method and path, the RBAC verb and resource it needs, and how a failure starts."""

    method: str
    path: str
    verb: str
    resource: str
    failed: str  # "could not write the status of MaaSModelRef llm/granite-7b"


def patch_status(connection: Mapping[str, str], target: Mapping[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    """One merge patch `{"status": ...}` to the status subresource; the API server's answer, or StatusWriteError."""
    resource = f"{target['resource']}/status"
    request = _Request(
        "PATCH", object_path(target) + "/status", "patch", resource, f"could not write the {_what(target)}"
    )
    with _connected(connection, request) as api:
        return _call(api, request, {"status": status}) or {}


def live_status(connection: Mapping[str, str], target: Mapping[str, Any]) -> dict[str, Any] | None:
    """The object's status as stored ({} when it has none); None when the object does not exist."""
    request = _Request("GET", object_path(target), "get", target["resource"], f"could not read the {_what(target)}")
    with _connected(connection, request) as api:
        found = _call(api, request, None)
    return None if found is None else dict(found.get("status") or {})


@contextmanager
def _connected(connection: Mapping[str, str], request: _Request) -> Iterator[Connection]:
    try:
        api = connect(connection.get("kubeconfig"), connection.get("context"))
    except ObservationError as error:
        raise StatusWriteError(f"{request.failed}: {error}") from None
    with api.client:
        yield api


def _call(api: Connection, request: _Request, body: Any) -> dict[str, Any] | None:
    """The JSON answer; None for a GET of an object that does not exist; StatusWriteError for any other failure."""
    client = api.client
    query = [("fieldManager", FIELD_MANAGER)] if request.method == "PATCH" else []
    headers = {"Accept": "application/json", **({"Content-Type": MERGE_PATCH} if body is not None else {})}
    method, url, headers, body, _ = client.param_serialize(
        request.method, request.path, query_params=query, header_params=headers, body=body, auth_settings=[AUTH]
    )
    failed = request.failed
    try:
        response = client.call_api(method, url, headers, body, _request_timeout=TIMEOUT_SECONDS)
        data = response.read()
    except (ApiException, urllib3.exceptions.HTTPError, OSError) as error:
        raise StatusWriteError(f"{failed}: {_unreachable(api, error)}; {UNREACHABLE_HINT}") from None
    if response.status == 404 and request.method == "GET":
        return None
    if not 200 <= response.status < 300:
        raise StatusWriteError(f"{failed}: {_http_problem(request, response.status, response.reason, data)}")
    try:
        return json.loads(data or b"{}")
    except ValueError:
        raise StatusWriteError(f"{failed}: the API server's answer is not JSON") from None


def _unreachable(api: Connection, error: Exception) -> str:
    reason = getattr(error, "reason", None) or error
    # urllib3's NewConnectionError (refused, no route) subclasses its ConnectTimeoutError
    if isinstance(reason, (urllib3.exceptions.TimeoutError, TimeoutError)) and not isinstance(
        reason, urllib3.exceptions.NewConnectionError
    ):
        return f"API server {api.cluster.server} gave no answer within {TIMEOUT_SECONDS:g} s"
    return f"API server {api.cluster.server} unreachable: {reason}"


def _http_problem(request: _Request, code: int, reason: str, data: bytes) -> str:
    try:
        message = json.loads(data).get("message") or ""
    except (ValueError, AttributeError):
        message = data.decode(errors="replace").strip()
    hint = HINTS.get(code, SERVER_HINT if code >= 500 else "").format(verb=request.verb, resource=request.resource)
    text = f"HTTP {code} {reason}" + (f": {message}" if message else "")
    return f"{text}; {hint}" if hint else text


def _what(target: Mapping[str, Any]) -> str:
    return f"status of {target['kind']} {target['namespace']}/{target['name']}"


# ------------------------------------------------------------------------------------------ the judgement


def status_to_write(props: Mapping[str, Any]) -> dict[str, Any]:
    """The planned `status`, or, with `facts`, the status judged now on the live cluster (after settling)."""
    facts = props.get("facts")
    if not facts:
        return dict(props["status"])
    kind = props["kind"]
    request = ObservationRequest((), needed(kind, facts))
    deadline = time.monotonic() + SETTLE_SECONDS
    observed = _observe(request, props)
    while settling(kind, facts, observed) and time.monotonic() + POLL_SECONDS <= deadline:
        time.sleep(POLL_SECONDS)
        observed = _observe(request, props)
    return judge(kind, facts, observed)


def _observe(request: ObservationRequest, props: Mapping[str, Any]) -> Observed:
    connection = props.get("connection") or {}
    try:
        return read_cluster(request, connection.get("kubeconfig"), connection.get("context"), TIMEOUT_SECONDS)
    except ObservationError as error:
        raise StatusWriteError(f"could not judge the {_what(props)} before writing it: {error}") from None


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# ----------------------------------------------------------------------------------------------- provider


class StatusProvider(pulumi.dynamic.ResourceProvider):
    """create/update patch `/status`, read returns the live status, delete does nothing (see the module
    docstring)."""

    def create(self, props: dict[str, Any]) -> pulumi.dynamic.CreateResult:
        return pulumi.dynamic.CreateResult(status_id(props), _write(props, None))

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> pulumi.dynamic.DiffResult:
        replaces = [key for key in IDENTITY_KEYS if olds.get(key) != news.get(key)]
        changed = bool(replaces) or any(olds.get(key) != news.get(key) for key in COMPARED_KEYS)
        return pulumi.dynamic.DiffResult(changes=changed, replaces=replaces, delete_before_replace=False)

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> pulumi.dynamic.UpdateResult:
        return pulumi.dynamic.UpdateResult(_write(news, olds.get("appliedStatus")))

    def read(self, id_: str, props: dict[str, Any]) -> pulumi.dynamic.ReadResult:
        """State written before the connection was kept has no `connection`: it stays as it is (its next `up`
        rewrites the status, since the connection then differs)."""
        if "connection" not in props:
            return pulumi.dynamic.ReadResult(id_, props)
        live = live_status(props["connection"] or {}, props)
        if live is None:
            return pulumi.dynamic.ReadResult("", {})
        if unstamped(live) == props.get("storedStatus", props.get("status")):
            return pulumi.dynamic.ReadResult(id_, props)  # as written: fields the API server prunes are no drift
        drift = unstamped(live)
        return pulumi.dynamic.ReadResult(id_, {**props, "status": drift, "storedStatus": drift, "appliedStatus": live})

    def delete(self, _id: str, _props: dict[str, Any]) -> None:
        return None


def _write(props: dict[str, Any], previous: dict[str, Any] | None) -> dict[str, Any]:
    """Judge, stamp and patch; the outputs: the inputs with the status written (bare and stamped) and the status
    the API server stored, which is what `read` compares the live one with: a CRD that prunes a field (an older
    MaaSSubscription CRD has no `rateLimitIdentity`) must not look like drift at every refresh."""
    status = status_to_write(props)
    applied = stamp_conditions(status, previous, _now())
    answer = patch_status(props.get("connection") or {}, props, merge_patch(applied, previous))
    stored = answer.get("status") if isinstance(answer.get("status"), dict) else applied
    return {**props, "status": status, "appliedStatus": applied, "storedStatus": unstamped(stored)}


def status_id(props: Mapping[str, Any]) -> str:
    return f"{props['kind']}/{props['namespace']}/{props['name']}/status"


class StatusPatch(pulumi.dynamic.Resource):
    """The status of one MaaS object, written after the object and the policies the status describes."""

    def __init__(self, name: str, props: dict[str, Any], opts: pulumi.ResourceOptions) -> None:
        super().__init__(StatusProvider(), name, props, opts)


def status_inputs(
    body: dict[str, Any],
    resource: str,
    connection: Mapping[str, str],
    target_uid: Any,
    facts: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The dynamic resource's inputs for a status Desired body: identity, `status`, the target's uid, the
    connection (secret) and, when given, the `facts` to judge the status again at write time."""
    inputs = {
        "apiVersion": body["apiVersion"],
        "kind": body["kind"],
        "resource": resource,
        "namespace": body["metadata"]["namespace"],
        "name": body["metadata"]["name"],
        "status": body["status"],
        "targetUid": target_uid,
        "connection": pulumi.Output.secret(dict(connection)),
    }
    if facts is not None:
        inputs["facts"] = dict(facts)
    return inputs


def rendered_status(inputs: dict[str, Any]) -> dict[str, Any]:
    """How the offline render shows a status write: kind `{Kind}Status`, the object's identity and the status."""
    return {
        "apiVersion": inputs["apiVersion"],
        "kind": f"{inputs['kind']}Status",
        "metadata": {"name": inputs["name"], "namespace": inputs["namespace"]},
        "status": inputs["status"],
    }
