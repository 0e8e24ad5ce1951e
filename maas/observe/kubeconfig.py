"""Which kubeconfig a value names, and errors about it that never repeat a credential.

`platform.kubernetes.kubeconfig` (and `--kubeconfig`) is a path or a kubeconfig's contents, as for the Kubernetes
provider. A value that is neither is often a secret in the wrong form: a bare token, a base64-encoded kubeconfig.
So an error names the value only when it looks like a path (a path is not a secret); otherwise it says what kind of
value it saw and how long it is. Errors the `kubernetes` client raises while loading are shown only when they are
its own messages (which name keys and files); any other exception is shown by its type alone. A context the
kubeconfig does not have is said with the contexts it has (their names are no secret).

The `kubernetes` client is imported when a kubeconfig is read, not with this module.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from pathlib import Path
from typing import Any

import yaml

from ..config.errors import escaped, quoted
from ..config.stackfile import SECRET_PLACEHOLDER

MAX_PATH = 4096  # Linux PATH_MAX: a longer value, or one with a line break, is contents and never looked up
BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
NOT_SHOWN = "not shown, it may hold credentials"
FIX = "give the path of a kubeconfig file (./NAME for one in the working directory) or the kubeconfig's YAML"
SERVICE_HOST_ENV_NAME = "KUBERNETES_SERVICE_HOST"  # kubernetes.config.incluster_config's: set inside a pod


class KubeconfigError(Exception):
    """A kubeconfig that cannot give what was asked of it, said in words that quote none of its values."""


def kubeconfig_source(kubeconfig: str | None) -> Any:
    """A kubeconfig (merged files, or parsed contents), or None for the in-cluster service account."""
    from kubernetes.config.kube_config import KubeConfigMerger

    if kubeconfig is not None and not _is_file(kubeconfig):
        return _contents(kubeconfig)
    paths = kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config"
    if any(_is_file(p) for p in paths.split(os.pathsep) if p):
        return KubeConfigMerger(paths).config
    if os.environ.get(SERVICE_HOST_ENV_NAME):
        return None
    raise KubeconfigError(f"no kubeconfig at {paths} and not running in a cluster")


def context_problem(source: Any, context: str | None) -> None:
    """KubeconfigError when `context` (None: the kubeconfig's current-context) is none of the kubeconfig's
    contexts, naming those it has; the client would only say that it expected an object of that name."""
    document = getattr(source, "value", source)  # merged files come as the client's ConfigNode
    if not isinstance(document, dict):
        return
    contexts = document.get("contexts")
    entries = [getattr(entry, "value", entry) for entry in contexts] if isinstance(contexts, list) else []
    names = [entry["name"] for entry in entries if isinstance(entry, dict) and isinstance(entry.get("name"), str)]
    current = document.get("current-context")
    wanted = context if context is not None else current
    if isinstance(wanted, str) and wanted in names:
        return
    has = f"its contexts are {', '.join(map(quoted, names))}" if names else "it has no context at all"
    if context is not None:
        marked = f" (current-context {quoted(current)})" if isinstance(current, str) and current in names else ""
        raise KubeconfigError(f"the kubeconfig has no context {quoted(context)}; {has}{marked}")
    if not isinstance(current, str) or not current:
        raise KubeconfigError(f"the kubeconfig sets no current-context and no context was given; {has}")
    raise KubeconfigError(f"the kubeconfig's current-context {quoted(current)} is none of its contexts; {has}")


def loading_problem(error: Exception) -> str:
    """What went wrong while loading a kubeconfig, quoting no value of it. The client's ConfigException and
    OSError name keys and files; a YAML error is located; anything else (binascii.Error for a bad
    `certificate-authority-data`, AttributeError for a list written as text) may quote a value: its type only."""
    from kubernetes.config import ConfigException

    if isinstance(error, KubeconfigError | ConfigException | OSError):
        return str(error)
    if isinstance(error, yaml.YAMLError):
        mark = getattr(error, "problem_mark", None)
        name = f" {_path(mark.name)}" if mark is not None and not mark.name.startswith("<") else ""
        return f"the kubeconfig file{name} is not YAML{_where(error)}"
    kind = type(error)
    name = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    return (
        f"the kubernetes client cannot use it ({name}; the details are {NOT_SHOWN}); compare its fields with "
        "`kubectl config view`"
    )


def _path(path: str) -> str:
    """A path as an error shows it: quoted and escaped, and whole (unlike a value, which is cut): the end of a
    path is the part that is usually wrong."""
    return f"'{escaped(path)}'"


def _could_be_path(value: str) -> bool:
    return len(value) <= MAX_PATH and "\n" not in value and "\r" not in value


def _is_file(value: str) -> bool:
    """Whether `value` names a file. A value no path could be is never looked up, and a lookup the OS refuses
    (a name too long, a NUL byte, an unknown `~user`) means no file: the OS error would quote the value."""
    if not _could_be_path(value):
        return False
    try:
        return Path(value).expanduser().is_file()
    except (OSError, ValueError, RuntimeError):
        return False


def _contents(value: str) -> Any:
    """The kubeconfig YAML in `value`; a KubeconfigError that says what `value` looked like otherwise."""
    try:
        contents = yaml.safe_load(value)
    except yaml.YAMLError as error:
        if _could_be_path(value):  # one line: a mistyped path or a token, rather than broken YAML
            raise KubeconfigError(_neither(value, None)) from None
        raise KubeconfigError(f"the kubeconfig contents are not YAML{_where(error)}") from None
    if isinstance(contents, dict) and "clusters" in contents:
        return contents
    raise KubeconfigError(_neither(value, contents))


def _where(error: yaml.YAMLError) -> str:
    """Where YAML broke, never the text there."""
    mark = getattr(error, "problem_mark", None)
    return "" if mark is None else f" at line {mark.line + 1}, column {mark.column + 1}"


def _neither(value: str, contents: Any) -> str:
    if value == SECRET_PLACEHOLDER:
        return "it is an encrypted stack value, which an offline run cannot decrypt; pass --kubeconfig PATH"
    if _names_a_path(value):
        return f"no kubeconfig file at {_path(value)}; {FIX}"
    if _encoded_kubeconfig(value):
        return (
            f"the value looks like a base64-encoded kubeconfig ({len(value)} characters; {NOT_SHOWN}); decode it "
            "(base64 -d) and give the YAML, or a file path"
        )
    return (
        f"the value is neither a readable file path nor kubeconfig YAML ({_kind(value, contents)}, {len(value)} "
        f"characters; {NOT_SHOWN}); {FIX}"
    )


def _names_a_path(value: str) -> bool:
    """A path is shown in the error, a secret never: a value is taken for a path when it has a directory
    separator (or `~`), no control character, and is not base64 (tokens and encoded kubeconfigs are)."""
    separated = "/" in value or os.sep in value or value.startswith("~")
    return _could_be_path(value) and value.isprintable() and separated and not _base64(value)


def _base64(value: str) -> bool:
    """Base64 of text (an encoded kubeconfig or token), or base64 with a `+` or `=` padding, which paths rarely
    have. A path such as `/root/kubeconfig` is also in the alphabet, but decodes to bytes that are no text."""
    packed = "".join(value.split())
    if not packed or len(packed) % 4 or not BASE64.fullmatch(packed):
        return False
    return "+" in packed or packed.endswith("=") or _decoded(packed) is not None


def _decoded(packed: str) -> str | None:
    try:
        text = base64.b64decode(packed, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None
    return text if all(ch.isprintable() or ch in "\t\r\n" for ch in text) else None


def _encoded_kubeconfig(value: str) -> bool:
    text = _decoded("".join(value.split())) if _base64(value) else None
    try:
        contents = yaml.safe_load(text) if text else None
    except yaml.YAMLError:
        return False
    return isinstance(contents, dict) and "clusters" in contents


def _kind(value: str, contents: Any) -> str:
    """What the value looked like, in words that reveal nothing of it."""
    if _base64(value):
        return "base64 text"
    if isinstance(contents, dict):
        return "YAML without clusters"
    if not _could_be_path(value):
        return "several lines" if "\n" in value or "\r" in value else "a line longer than any path"
    return "one line that is not a path"
