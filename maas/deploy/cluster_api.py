"""Requests of the dynamic providers to the Kubernetes API, and how a provider reports a batch of them.

The status writer (`status_writer.py`) and the object batches (`object_batch.py`) each act on many objects per
resource, through the `kubernetes` client connected once per resource (`Session`) with the kubeconfig and context of
the Kubernetes provider. They share the rules here:
- every request is bounded in time, and a failure names the object, the HTTP status, the API server's message and
  what to do (`HINTS`, plus each provider's own hints for what its requests mean);
- every object of a resource is attempted, and the resource fails with one error listing every failure (`each`),
  so one bad object neither hides nor blocks the others; only when the cluster cannot be used at all (unreachable,
  no answer, the credentials or the kubeconfig refused: `ClusterUnusableError`) are the rest not attempted, as
  they would fail the same way, each after its own timeout.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import urllib3
from kubernetes.client.exceptions import ApiException

from ..observe import ObservationError
from ..observe.reader import AUTH, HTTP_HINTS, Connection, connect

TIMEOUT_SECONDS = 30.0  # every request
JSON = "application/json"
HINTS = {  # the hints of every provider; `{verb}` and `{resource}` are the request's
    401: HTTP_HINTS[401],
    403: "grant the identity of the kubeconfig `{verb}` on {resource}",
}
SERVER_HINT = "the API server failed; run `pulumi up` again"
UNREACHABLE_HINT = "check platform.kubernetes.kubeconfig and platform.kubernetes.context, then run `pulumi up` again"

T = TypeVar("T")


class ClusterApiError(Exception):
    """What one object of a resource failed on; each provider's own error (what the engine shows) lists them."""


class ClusterUnusableError(ClusterApiError):
    """The cluster cannot be used at all (unreachable, no answer, credentials or kubeconfig refused): the other
    objects of the resource are not attempted, they would fail the same way, each after its own timeout."""


class HttpError(ClusterApiError):
    """The API server answered with an error status (`code`), which a caller may expect (409 to a delete whose
    uid precondition no longer holds)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def resource_path(api_version: str, namespace: str, resource: str, name: str | None = None) -> str:
    """`/apis/{group}/{version}/namespaces/{ns}/{resource}[/{name}]` of a namespaced custom resource, each segment
    quoted."""
    parts = ("namespaces", namespace, resource, *(() if name is None else (name,)))
    return f"/apis/{api_version}/" + "/".join(urllib.parse.quote(part, safe="") for part in parts)


@dataclass(frozen=True)
class Request:
    """One call: HTTP method, path and query, the RBAC verb and resource it needs, how a failure starts, and what
    to do about each HTTP status the caller knows a meaning for (`HINTS` and its own)."""

    method: str
    path: str
    verb: str
    resource: str
    failed: str  # "could not write the status of MaaSModelRef llm/granite-7b"
    hints: Mapping[int, str]
    query: tuple[tuple[str, str], ...] = ()
    content_type: str = JSON  # of the body, when there is one


class Session:
    """One connection for all the objects of a resource, opened on first use (a resource with nothing to send
    connects to nothing), closed on leaving the `with` block. `timeout` bounds every request; `opener` connects
    (`maas.observe.reader.connect`: a provider passes the name it imported, which is what its tests replace)."""

    def __init__(
        self,
        connection: Mapping[str, str],
        timeout: float = TIMEOUT_SECONDS,
        opener: Callable[[str | None, str | None], Connection] = connect,
    ) -> None:
        self.connection = connection
        self.timeout = timeout
        self._opener = opener
        self._api: Connection | None = None

    def connected(self, request: Request) -> Connection:
        if self._api is None:
            try:
                self._api = self._opener(self.connection.get("kubeconfig"), self.connection.get("context"))
            except ObservationError as error:
                raise ClusterUnusableError(f"{request.failed}: {error}") from None
        return self._api

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *_exc: object) -> None:
        if self._api is not None:
            self._api.client.close()


def call(api: Session, request: Request, body: Any = None) -> dict[str, Any] | None:
    """The JSON answer; None for a GET or DELETE of an object that does not exist; `HttpError` for any other error
    status (`ClusterUnusableError` for 401), `ClusterUnusableError` when the API server cannot be reached."""
    connection = api.connected(request)
    client = connection.client
    headers = {"Accept": JSON, **({"Content-Type": request.content_type} if body is not None else {})}
    method, url, headers, body, _ = client.param_serialize(
        request.method,
        request.path,
        query_params=list(request.query),
        header_params=headers,
        body=body,
        auth_settings=[AUTH],
    )
    failed = request.failed
    try:
        response = client.call_api(method, url, headers, body, _request_timeout=api.timeout)
        data = response.read()
    except (ApiException, urllib3.exceptions.HTTPError, OSError) as error:
        problem = _unreachable(connection, error, api.timeout)
        raise ClusterUnusableError(f"{failed}: {problem}; {UNREACHABLE_HINT}") from None
    if response.status == 404 and request.method in ("GET", "DELETE"):
        return None
    if not 200 <= response.status < 300:
        problem = f"{failed}: {_http_problem(request, response.status, response.reason, data)}"
        if response.status == 401:
            raise ClusterUnusableError(problem)
        raise HttpError(problem, response.status)
    try:
        return json.loads(data or b"{}")
    except ValueError:
        raise ClusterApiError(f"{failed}: the API server's answer is not JSON") from None


def _unreachable(api: Connection, error: Exception, timeout: float) -> str:
    reason = getattr(error, "reason", None) or error
    # urllib3's NewConnectionError (refused, no route) subclasses its ConnectTimeoutError
    if isinstance(reason, (urllib3.exceptions.TimeoutError, TimeoutError)) and not isinstance(
        reason, urllib3.exceptions.NewConnectionError
    ):
        return f"API server {api.cluster.server} gave no answer within {timeout:g} s"
    return f"API server {api.cluster.server} unreachable: {reason}"


def _http_problem(request: Request, code: int, reason: str, data: bytes) -> str:
    try:
        message = json.loads(data).get("message") or ""
    except (ValueError, AttributeError):
        message = data.decode(errors="replace").strip()
    hint = request.hints.get(code, SERVER_HINT if code >= 500 else "")
    text = f"HTTP {code} {reason}" + (f": {message}" if message else "")
    return f"{text}; {hint.format(verb=request.verb, resource=request.resource)}" if hint else text


# ------------------------------------------------------------------------------------------------ batches


def each(targets: Mapping[str, T], attempt: Callable[[T], Any], error: type[Exception], noun: str) -> dict[str, Any]:
    """`attempt` on every target, in key order, then one `error` listing every failure, if any ("2 of 5 {noun}
    failed: ..."): one failing object does not hide the others, nor keep them from being written. What `attempt`
    returned, by key."""
    failures: list[str] = []
    done, _ = attempt_each(targets, attempt, failures)
    raise_failures(failures, len(targets) - len(done), len(targets), error, noun)
    return done


def attempt_each(
    targets: Mapping[str, T], attempt: Callable[[T], Any], failures: list[str]
) -> tuple[dict[str, Any], bool]:
    """What `attempt` returned for each target it did not fail on, and whether the cluster became unusable (the
    remaining targets were then not attempted); each failure is appended to `failures`."""
    done: dict[str, Any] = {}
    keys = sorted(targets)
    for index, key in enumerate(keys):
        try:
            done[key] = attempt(targets[key])
        except ClusterUnusableError as error:
            failures.append(str(error))
            skipped = len(keys) - index - 1
            failures.extend([f"{skipped} more not attempted"] if skipped else [])
            return done, True
        except ClusterApiError as error:
            failures.append(str(error))
        except Exception as error:  # a bug of ours must not hide the failures already collected, nor stop the rest
            failures.append(f"{key}: unexpected {type(error).__name__}: {error}")
    return done, False


def raise_failures(failures: list[str], failed: int, total: int, error: type[Exception], noun: str) -> None:
    """One `error`: the failure itself when the resource has one target, else "{failed} of {total} {noun} failed:"
    and every failure, one a line."""
    if failures and total == 1:
        raise error(failures[0])
    if failures:
        raise error("\n  ".join([f"{failed} of {total} {noun} failed:", *failures]))
