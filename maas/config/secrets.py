"""Which configuration values are secrets, so that they reach the provider and the objects as Pulumi secrets.

What the program is told (pulumi/pulumi at 1b594989): the language host passes the decrypted configuration and
the list of secret keys (`sdk/python/cmd/pulumi-language-python-exec` 109-110, `set_all_config(config,
secret_keys)`); a key is listed when its value is secure or holds a secure value anywhere inside
(`sdk/go/common/resource/config/map.go` 105-113 `SecureKeys`; object.go 50-72 "a composite value that contains a
secure string"; value.go 238-244 sets that flag when the stack file is read), so the list
says `maas:platform`, never `maas:platform.kubernetes.kubeconfig`. The SDK does not mark the values it returns
(`pulumi/config.py` 61, the secret warning disabled), and the Kubernetes provider's `kubeconfig` input is a plain
string, not marked secret, in its schema (pulumi-kubernetes 94977969 `provider/pkg/gen/schema.go` 235-242): nothing
is secret unless the program says so.

Which values of a secret key are the secure ones is read from the stack file the engine decrypted them from
(`Pulumi.<stack>.yaml` in the project directory, where each one is written `{secure: ...}`). Where that file shows
none (values from an ESC environment, a missing file), every text value of the key is treated as secret. A text in
an object or an output is secret when it is one of those values or contains one of at least MIN_EMBEDDED
characters (a value written into a CEL predicate or a URL); a mapping with a key that is one is secret as a whole.
Object identities (apiVersion, kind, metadata name and namespace) are part of the URN and stay plain: a name that is
a secret value is warned about. Status writes are not covered (their status travels as one JSON text).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..listing import listed
from .errors import ConfigError, escaped
from .stackfile import NAMESPACE, SECRET_PLACEHOLDER, raw_from_stack_file

MIN_EMBEDDED = 4  # a shorter secret is only recognised as a whole value
IDENTITY = ("apiVersion", "kind")
IDENTITY_METADATA = ("name", "namespace")


@dataclass(frozen=True)
class Secrets:
    """The secret texts of the configuration, and the warnings finding them gave."""

    values: frozenset[str] = frozenset()
    warnings: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.values)

    def covers(self, text: str) -> bool:
        """Whether `text` is, or embeds, a secret value."""
        if text in self.values:
            return True
        pattern = self._embedded
        return pattern is not None and pattern.search(text) is not None

    @property
    def _embedded(self) -> re.Pattern[str] | None:
        cached = self.__dict__.get("_pattern", False)
        if cached is False:
            long = sorted((v for v in self.values if len(v) >= MIN_EMBEDDED), key=len, reverse=True)
            cached = re.compile("|".join(map(re.escape, long))) if long else None
            object.__setattr__(self, "_pattern", cached)
        return cached

    def protect(self, value: Any, wrap: Callable[[Any], Any]) -> Any:
        """`value` with each text that `covers` replaced by `wrap(text)`, and each mapping with a secret key
        replaced by `wrap(mapping)` (a key cannot be a secret of its own); copied where changed, else itself."""
        if not self.values:
            return value
        return self._protect(value, wrap)

    def _protect(self, value: Any, wrap: Callable[[Any], Any]) -> Any:
        if isinstance(value, str):
            return wrap(value) if self.covers(value) else value
        if isinstance(value, dict):
            if any(key in self.values for key in value):  # a key written from a secret value: exactly that
                return wrap(value)
            changed = {key: self._protect(item, wrap) for key, item in value.items()}
            return changed if any(changed[key] is not value[key] for key in value) else value
        if isinstance(value, list | tuple):
            items = [self._protect(item, wrap) for item in value]
            return type(value)(items) if any(a is not b for a, b in zip(items, value, strict=True)) else value
        return value

    def protect_body(self, body: dict[str, Any], wrap: Callable[[Any], Any]) -> tuple[dict[str, Any], bool]:
        """A Kubernetes object with its secret texts wrapped, its identity (part of the URN) left as it is; and
        whether a secret value is that identity (the object's name or namespace is one)."""
        if not self.values:
            return body, False
        metadata = body.get("metadata", {})
        named = any(metadata.get(key) in self.values for key in IDENTITY_METADATA)
        protected: dict[str, Any] = {}
        for key, item in body.items():
            if key in IDENTITY:
                protected[key] = item
            elif key == "metadata" and isinstance(item, dict):
                protected[key] = {k: v if k in IDENTITY_METADATA else self._protect(v, wrap) for k, v in item.items()}
            else:
                protected[key] = self._protect(item, wrap)
        return protected, named


def identity_warning(names: list[str]) -> str:
    """One warning for the objects whose name or namespace is a secret value."""
    shown = listed([escaped(name) for name in names], 5)
    return (
        f"a secret configuration value names {len(names)} object(s) ({shown}): names are part of Pulumi URNs and of "
        "Kubernetes object keys, so they are never secret; keep secrets out of names"
    )


NONE = Secrets()


def secret_values(
    values: Mapping[str, Any], stack_file: Path | None, stack_raw: Mapping[str, Any] | None = None
) -> Secrets:
    """The secrets among `values` (the decrypted values of the secret `maas:` keys, by name without the prefix),
    located with the stack file (`stack_raw`: its `maas:` keys as `raw_from_stack_file` reads them)."""
    if stack_raw is None and stack_file is not None:
        stack_raw = _stack_raw(stack_file)
    found: set[str] = set()
    warnings: list[str] = []
    for name, value in sorted(values.items()):
        located = _located(stack_raw.get(name), value) if stack_raw is not None else None
        if located is None:
            where = escaped(str(stack_file)) if stack_file is not None else "the stack file"
            warnings.append(
                f"{NAMESPACE}:{name} is a secret, but {where} shows no `secure:` value in it (an ESC environment?): "
                f"every text of {NAMESPACE}:{name} is kept secret in the provider, the objects and the outputs"
            )
            located = list(_texts(value))
        found.update(text for text in located if text)
    return Secrets(frozenset(found), tuple(warnings))


def _stack_raw(path: Path) -> Mapping[str, Any] | None:
    if not path.is_file():
        return None
    try:
        raw, _ = raw_from_stack_file(path)
    except ConfigError:
        return None
    return raw


def _located(written: Any, value: Any) -> list[str] | None:
    """The texts of `value` at the places the stack file wrote `{secure: ...}`; None when it wrote none."""
    texts: list[str] = []
    found = False

    def walk(written: Any, value: Any) -> None:
        nonlocal found
        if written == SECRET_PLACEHOLDER:
            found = True
            texts.extend(_texts(value))
        elif isinstance(written, dict) and isinstance(value, dict):
            for key, item in written.items():
                if key in value:
                    walk(item, value[key])
        elif isinstance(written, list) and isinstance(value, list) and len(written) == len(value):
            for a, b in zip(written, value, strict=True):
                walk(a, b)

    walk(written, value)
    return texts if found else None


def _texts(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)
