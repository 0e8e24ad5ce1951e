"""Writing the status subresource of the MaaS resources: a Pulumi dynamic provider.

Status is a subresource: an apply of the object (what pulumi-kubernetes does) never writes it, and maas-api
ignores a MaaSModelRef whose `status.phase` is not `Ready`. This provider sends one JSON merge patch to
`.../{resource}/{name}/status` through the Kubernetes API, with the kubeconfig and context of the Kubernetes
provider (`platform.kubernetes`), using only PyYAML and the standard library.

Lifecycle:
- create: patch the status. update: patch again, setting to null the fields the previous write had and this one
  drops (a merge patch leaves absent keys alone). A condition keeps its `lastTransitionTime` while its status
  stays the same, as Kubernetes' `meta.SetStatusCondition` does.
- delete: nothing. The status is removed from the program either because its object is being deleted (the
  status goes with it; a patch would race the deletion) or because `controllerMode` became `coexist` (the
  controller now owns the status; clearing it would hide every model from maas-api until the controller runs).
- Every failure (HTTP 404, 409, 5xx, unreachable API server) raises `StatusWriteError` naming the object, the
  HTTP status, the API server's message and what to do: `pulumi up` never records a status it did not write.
"""

from __future__ import annotations

import base64
import json
import os
import ssl
import subprocess
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pulumi
import pulumi.dynamic
import yaml

MERGE_PATCH = "application/merge-patch+json"
FIELD_MANAGER = "maas-pulumi-status"
TIMEOUT_SECONDS = 30
IDENTITY_KEYS = ("apiVersion", "kind", "resource", "namespace", "name")
IN_CLUSTER_TOKEN = Path("/var/run/secrets/kubernetes.io/serviceaccount/token")
IN_CLUSTER_CA = Path("/var/run/secrets/kubernetes.io/serviceaccount/ca.crt")
HINTS = {
    403: "grant the identity of the kubeconfig `patch` on {resource}/status",
    404: "the object (or its CRD) does not exist; it is applied before its status, so check that it was created",
    409: "the object changed while its status was written; run `pulumi up` again",
}


class StatusWriteError(Exception):
    """A status that could not be written: `pulumi up` fails for this resource and keeps the previous state."""


# ------------------------------------------------------------------------------------------ cluster access


@dataclass(frozen=True)
class Cluster:
    """Where and how to reach the API server: base URL, auth headers, TLS settings."""

    server: str
    headers: dict[str, str] = field(default_factory=dict)
    ssl_context: ssl.SSLContext | None = None


def load_cluster(kubeconfig: str | None = None, context: str | None = None) -> Cluster:
    """Like the Kubernetes provider: `kubeconfig` is a path or the file's contents; unset means the files of
    `$KUBECONFIG` merged as client-go merges them, or `~/.kube/config`, else the in-cluster service account."""
    config = _kubeconfig(kubeconfig)
    if config is None:
        if IN_CLUSTER_TOKEN.is_file() and os.environ.get("KUBERNETES_SERVICE_HOST"):
            return _in_cluster()
        raise StatusWriteError("no kubeconfig found: set platform.kubernetes.kubeconfig or KUBECONFIG")
    name = context or config.get("current-context")
    ctx = _named(config, "contexts", name, "context")
    cluster = _named(config, "clusters", ctx.get("cluster"), "cluster")
    user = _named(config, "users", ctx.get("user"), "user") if ctx.get("user") else {}
    return Cluster(cluster["server"].rstrip("/"), _auth_headers(user), _ssl_context(cluster, user))


# File references inside a kubeconfig are relative to the file that holds them.
FILE_FIELDS = {"clusters": ("certificate-authority",), "users": ("client-certificate", "client-key", "tokenFile")}


def _kubeconfig(kubeconfig: str | None) -> dict | None:
    """One kubeconfig: for each cluster, user and context name the first file that defines it wins, and so does
    the first `current-context`, with relative file references made absolute (client-go's merge rules)."""
    documents = _kubeconfig_documents(kubeconfig)
    if not documents:
        return None
    sections: dict[str, list[dict]] = {"clusters": [], "users": [], "contexts": []}
    for document, base in documents:
        for section, entries in sections.items():
            known = {entry.get("name") for entry in entries}
            fresh = [entry for entry in document.get(section) or [] if entry.get("name") not in known]
            entries.extend(_absolute(entry, section, base) for entry in fresh)
    current = next((d["current-context"] for d, _ in documents if d.get("current-context")), None)
    return {**sections, "current-context": current}


def _kubeconfig_documents(kubeconfig: str | None) -> list[tuple[dict, Path]]:
    if kubeconfig is not None:
        path = Path(kubeconfig).expanduser()
        if "\n" not in kubeconfig and path.is_file():
            return [(yaml.safe_load(path.read_text()) or {}, path.parent)]
        return [(yaml.safe_load(kubeconfig) or {}, Path.cwd())]
    candidates = [p for p in os.environ.get("KUBECONFIG", "").split(os.pathsep) if p] or ["~/.kube/config"]
    paths = [Path(candidate).expanduser() for candidate in candidates]
    return [(yaml.safe_load(path.read_text()) or {}, path.parent) for path in paths if path.is_file()]


def _absolute(entry: dict, section: str, base: Path) -> dict:
    body_key = section[:-1]  # clusters -> cluster, users -> user
    body = dict(entry.get(body_key) or {})
    for field_name in FILE_FIELDS.get(section, ()):
        if body.get(field_name):
            body[field_name] = str(base / Path(body[field_name]).expanduser())
    return {**entry, body_key: body}


def _named(config: dict, section: str, name: str | None, key: str) -> dict:
    for entry in config.get(section) or []:
        if entry.get("name") == name:
            return entry.get(key) or {}
    raise StatusWriteError(f"kubeconfig has no {key} named {name!r} (check platform.kubernetes.context)")


def _in_cluster() -> Cluster:
    host, port = os.environ["KUBERNETES_SERVICE_HOST"], os.environ.get("KUBERNETES_SERVICE_PORT", "443")
    token = IN_CLUSTER_TOKEN.read_text().strip()
    context = ssl.create_default_context(cafile=str(IN_CLUSTER_CA))
    return Cluster(f"https://{host}:{port}", {"Authorization": f"Bearer {token}"}, context)


def _auth_headers(user: dict) -> dict[str, str]:
    token = user.get("token")
    if token is None and user.get("tokenFile"):
        token = Path(user["tokenFile"]).read_text().strip()
    if token is None and user.get("exec"):
        token = _exec_credential(user["exec"]).get("token")
    if token:
        return {"Authorization": f"Bearer {token}"}
    if user.get("username") is not None:
        basic = base64.b64encode(f"{user['username']}:{user.get('password', '')}".encode()).decode()
        return {"Authorization": f"Basic {basic}"}
    return {}


def _exec_credential(spec: dict) -> dict:
    """A client-go credential plugin (e.g. `oc`, `aws eks get-token`): run it and read `status`."""
    info = {"apiVersion": spec.get("apiVersion", ""), "kind": "ExecCredential", "spec": {"interactive": False}}
    env = {
        **os.environ,
        **{e["name"]: e["value"] for e in spec.get("env") or []},
        "KUBERNETES_EXEC_INFO": json.dumps(info),
    }
    command = [spec["command"], *(spec.get("args") or [])]
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=False, timeout=TIMEOUT_SECONDS)
    if result.returncode != 0:
        raise StatusWriteError(f"kubeconfig exec plugin {spec['command']} failed: {result.stderr.strip()}")
    return json.loads(result.stdout).get("status") or {}


def _ssl_context(cluster: dict, user: dict) -> ssl.SSLContext | None:
    if not cluster["server"].startswith("https://"):
        return None
    context = ssl.create_default_context(
        cafile=cluster.get("certificate-authority") or None,
        cadata=_decoded(cluster.get("certificate-authority-data")),
    )
    if cluster.get("insecure-skip-tls-verify"):
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    _load_client_certificate(context, user)
    return context


def _decoded(data: str | None) -> str | None:
    return base64.b64decode(data).decode() if data else None


def _load_client_certificate(context: ssl.SSLContext, user: dict) -> None:
    cert = _pem(user, "client-certificate")
    key = _pem(user, "client-key")
    if cert is None:
        return
    with tempfile.TemporaryDirectory() as directory:
        cert_file, key_file = Path(directory, "cert.pem"), Path(directory, "key.pem")
        cert_file.write_text(cert)
        key_file.write_text(key or "")
        context.load_cert_chain(cert_file, key_file if key else None)


def _pem(user: dict, name: str) -> str | None:
    if user.get(f"{name}-data"):
        return _decoded(user[f"{name}-data"])
    return Path(user[name]).read_text() if user.get(name) else None


# ----------------------------------------------------------------------------------------------- the patch


def status_url(cluster: Cluster, target: dict[str, Any]) -> str:
    """`/apis/{group}/{version}/namespaces/{ns}/{resource}/{name}/status?fieldManager=...`."""
    path = "/".join(
        urllib.parse.quote(part, safe="")
        for part in ("namespaces", target["namespace"], target["resource"], target["name"], "status")
    )
    return f"{cluster.server}/apis/{target['apiVersion']}/{path}?fieldManager={FIELD_MANAGER}"


def patch_status(cluster: Cluster, target: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    """One merge patch `{"status": ...}` to the status subresource; the API server's answer, or StatusWriteError."""
    url = status_url(cluster, target)
    request = urllib.request.Request(
        url,
        data=json.dumps({"status": status}).encode(),
        method="PATCH",
        headers={**cluster.headers, "Content-Type": MERGE_PATCH, "Accept": "application/json"},
    )
    what = f"status of {target['kind']} {target['namespace']}/{target['name']}"
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS, context=cluster.ssl_context) as response:
            return json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        raise StatusWriteError(_http_error_text(what, target, error)) from None
    except (urllib.error.URLError, OSError) as error:
        raise StatusWriteError(
            f"could not write the {what}: API server {cluster.server} unreachable: {error}"
        ) from None


def _http_error_text(what: str, target: dict[str, Any], error: urllib.error.HTTPError) -> str:
    body = error.read().decode(errors="replace")
    try:
        message = json.loads(body).get("message", body)
    except ValueError:
        message = body
    hint = HINTS.get(error.code, "the API server failed; run `pulumi up` again" if error.code >= 500 else "")
    text = f"could not write the {what}: HTTP {error.code} {error.reason}: {message}".rstrip(": ")
    return f"{text}; {hint.format(resource=target['resource'])}" if hint else text


def stamp_conditions(status: dict[str, Any], previous: dict[str, Any] | None, now: str) -> dict[str, Any]:
    """Conditions get `lastTransitionTime`: kept from `previous` while type and status are unchanged, else `now`."""
    before = {c["type"]: c for c in (previous or {}).get("conditions", [])}
    stamped = []
    for cond in status.get("conditions", []):
        old = before.get(cond["type"])
        same = old is not None and old["status"] == cond["status"] and "lastTransitionTime" in old
        stamped.append({**cond, "lastTransitionTime": old["lastTransitionTime"] if same else now})
    return {**status, "conditions": stamped} if "conditions" in status else dict(status)


def merge_patch(status: dict[str, Any], previous: dict[str, Any] | None) -> dict[str, Any]:
    """`status` plus null for every field `previous` set and `status` drops, so the merge patch removes it."""
    dropped = {key: None for key in (previous or {}) if key not in status}
    return {**dropped, **status}


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# ----------------------------------------------------------------------------------------------- provider


class StatusProvider(pulumi.dynamic.ResourceProvider):
    """create/update patch `/status`; delete does nothing (see the module docstring)."""

    def create(self, props: dict[str, Any]) -> pulumi.dynamic.CreateResult:
        applied = self._write(props, None)
        return pulumi.dynamic.CreateResult(status_id(props), _outputs(props, applied))

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> pulumi.dynamic.DiffResult:
        replaces = [key for key in IDENTITY_KEYS if olds.get(key) != news.get(key)]
        changed = replaces or olds.get("status") != news.get("status") or olds.get("targetUid") != news.get("targetUid")
        return pulumi.dynamic.DiffResult(changes=bool(changed), replaces=replaces, delete_before_replace=False)

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> pulumi.dynamic.UpdateResult:
        applied = self._write(news, olds.get("appliedStatus"))
        return pulumi.dynamic.UpdateResult(_outputs(news, applied))

    def delete(self, _id: str, _props: dict[str, Any]) -> None:
        return None

    @staticmethod
    def _write(props: dict[str, Any], previous: dict[str, Any] | None) -> dict[str, Any]:
        connection = props.get("connection") or {}
        cluster = load_cluster(connection.get("kubeconfig"), connection.get("context"))
        applied = stamp_conditions(props["status"], previous, _now())
        patch_status(cluster, props, merge_patch(applied, previous))
        return applied


def status_id(props: dict[str, Any]) -> str:
    return f"{props['kind']}/{props['namespace']}/{props['name']}/status"


def _outputs(props: dict[str, Any], applied: dict[str, Any]) -> dict[str, Any]:
    """State keeps the desired status (for diffs) and what was written; never the connection (credentials)."""
    return {**{k: v for k, v in props.items() if k != "connection"}, "appliedStatus": applied}


class StatusPatch(pulumi.dynamic.Resource):
    """The status of one MaaS object, written after the object and the policies the status describes."""

    def __init__(self, name: str, props: dict[str, Any], opts: pulumi.ResourceOptions) -> None:
        super().__init__(StatusProvider(), name, props, opts)


def status_inputs(body: dict[str, Any], resource: str, connection: dict[str, str], target_uid: Any) -> dict:
    """The dynamic resource's inputs for a status Desired body (identity plus `status`)."""
    inputs = {
        "apiVersion": body["apiVersion"],
        "kind": body["kind"],
        "resource": resource,
        "namespace": body["metadata"]["namespace"],
        "name": body["metadata"]["name"],
        "status": body["status"],
        "targetUid": target_uid,
    }
    if connection:
        inputs["connection"] = pulumi.Output.secret(connection)
    return inputs


def rendered_status(inputs: dict[str, Any]) -> dict[str, Any]:
    """How the offline render shows a status write: kind `{Kind}Status`, the object's identity and the status."""
    return {
        "apiVersion": inputs["apiVersion"],
        "kind": f"{inputs['kind']}Status",
        "metadata": {"name": inputs["name"], "namespace": inputs["namespace"]},
        "status": inputs["status"],
    }
