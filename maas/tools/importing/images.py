"""`platform.images` from what the cluster runs: a first `up` that swapped maas-api or payload processing for the
program's default images would restart them on another version."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from ...config import PlatformConfig
from ...observe import Observed
from ..render import Rendering
from .common import Report

WORKLOAD_KINDS = ("Deployment", "CronJob")


def live_images(rendering: Rendering, observed: Observed, platform: PlatformConfig, report: Report) -> dict[str, str]:
    """The `platform.images` keys whose live value differs from the rendered one: each rendered container that
    runs one of those images is compared with the same container of the live object, when it was observed."""
    settings = {image: key for key, image in platform.images.model_dump().items()}
    seen: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for body in rendering.objects():
        if body["kind"] not in WORKLOAD_KINDS:
            continue
        metadata = body["metadata"]
        live = observed.lookup(body["kind"], metadata.get("namespace"), metadata["name"]).object
        if live is None:
            continue
        running = {c.get("name"): c.get("image") for c in _containers(live)}
        for container in _containers(body):
            key = settings.get(container.get("image"))
            image = running.get(container.get("name"))
            if key is not None and image:
                seen[key][image].add(f"{body['kind']} {metadata.get('namespace')}/{metadata['name']}")
    return {
        key: _one_image(key, found, report) for key, found in sorted(seen.items()) if _differs(key, found, settings)
    }


def _differs(key: str, found: Mapping[str, set[str]], settings: Mapping[str, str]) -> bool:
    return set(found) != {image for image, setting in settings.items() if setting == key}


def _one_image(key: str, found: Mapping[str, set[str]], report: Report) -> str:
    """One image per key: when live workloads disagree, the most used one (then the first by name), reported."""
    ranked = sorted(found, key=lambda image: (-len(found[image]), image))
    if len(ranked) > 1:
        shown = "; ".join(f"{image}: {', '.join(sorted(found[image]))}" for image in ranked)
        report.add(
            f"the cluster runs several images where platform.images.{key} sets one ({shown}); {ranked[0]} is kept"
        )
    return ranked[0]


def _containers(body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The pod template's containers of a Deployment or a CronJob."""
    spec = body.get("spec") or {}
    if body.get("kind") == "CronJob":
        spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    return list(((spec.get("template") or {}).get("spec") or {}).get("containers") or ())
