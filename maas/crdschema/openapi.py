"""CRD structural schema -> plain JSON schema (Draft 4) that rejects unknown fields."""

from __future__ import annotations

from typing import Any

_DROPPED = {"description", "default", "example", "externalDocs", "nullable", "format"}
_JSON_FORMATS = {"date-time", "ipv4", "ipv6", "duration"}
# always allowed at the root and in x-kubernetes-embedded-resource objects
_OBJECT_HEADER = {"apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"}}


def crd_root_json_schema(root: dict) -> dict:
    """Root schema: apiVersion/kind/metadata always allowed (metadata is checked separately)."""
    schema = crd_json_schema(root)
    schema["properties"] = {**schema.get("properties", {}), **_OBJECT_HEADER}
    return schema


def crd_json_schema(node: dict, structural: bool = True) -> dict:
    """One schema node, strict about unknown fields.

    ``structural`` is False inside allOf/anyOf/oneOf/not, where Kubernetes only allows value checks,
    so no ``additionalProperties: false`` may be injected there.
    """
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED or key.startswith("x-kubernetes-"):
            continue
        if key == "properties":
            out[key] = {name: crd_json_schema(sub, structural) for name, sub in value.items()}
        elif key in ("items", "not") or (key == "additionalProperties" and isinstance(value, dict)):
            out[key] = crd_json_schema(value, structural and key != "not")
        elif key in ("allOf", "anyOf", "oneOf"):
            out[key] = [crd_json_schema(sub, structural=False) for sub in value]
        else:
            out[key] = value
    if node.get("format") in _JSON_FORMATS:
        out["format"] = node["format"]
    _apply_extensions(node, out, structural)
    return out


def _apply_extensions(node: dict, out: dict, structural: bool) -> None:
    if node.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        int_or_string = {"anyOf": [{"type": "integer"}, {"type": "string"}]}
        out.setdefault("allOf", []).append(int_or_string)
    if node.get("nullable") and "type" in out:
        out["type"] = [out["type"], "null"]
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
    if node.get("x-kubernetes-embedded-resource") and "properties" in out:
        out["properties"] = {**_OBJECT_HEADER, **out["properties"]}
    if structural and node.get("type") == "object" and _prunes_unknown(node):
        out["additionalProperties"] = False


def _prunes_unknown(node: dict) -> bool:
    return "additionalProperties" not in node and not node.get("x-kubernetes-preserve-unknown-fields")
