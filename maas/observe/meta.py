"""`Meta`: the metadata of a live object as every view reads it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .node import Node


@dataclass(frozen=True)
class Meta:
    """The metadata every view carries; label and annotation values stay as found (a note may quote them)."""

    namespace: str | None
    name: str | None
    uid: str | None
    created: str | None
    labels: Mapping[str, Any]
    annotations: Mapping[str, Any]
    finalizers: tuple[str, ...] = ()

    @classmethod
    def parse(cls, node: Node) -> Meta:
        meta = node.at("metadata")
        return cls(
            meta.text("namespace"),
            meta.text("name"),
            meta.text("uid"),
            meta.text("creationTimestamp"),
            meta.mapping("labels"),
            meta.mapping("annotations"),
            tuple(text for _, text in meta.strings("finalizers")),
        )

    @classmethod
    def planned(cls, metadata: Mapping[str, Any]) -> Meta:
        """The metadata of a body this program renders, read directly: it is well-formed, so it reads as `parse`
        reads it."""
        return cls(
            metadata.get("namespace"),
            metadata.get("name"),
            metadata.get("uid"),
            metadata.get("creationTimestamp"),
            metadata.get("labels", {}),
            metadata.get("annotations", {}),
            tuple(metadata.get("finalizers", ())),
        )

    def label(self, key: str) -> str | None:
        return _text(self.labels.get(key))

    def annotation(self, key: str) -> str | None:
        return _text(self.annotations.get(key))


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
