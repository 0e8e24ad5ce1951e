"""Bounded memo tables: tests validate the same rendered objects many times over."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Hashable
from typing import TypeVar

T = TypeVar("T")

RESULT_CACHE_SIZE = 200_000


def digest(text: str) -> bytes:
    """A short key for a (possibly large) JSON text; lone surrogates (kept by ``ensure_ascii=False``) included."""
    return hashlib.blake2b(text.encode(errors="surrogatepass"), digest_size=16).digest()


def compact_json(value: object) -> str | None:
    """The value's compact JSON encoding, what the API server receives and stores; None when it is not plain JSON
    data. One encoding serves as both cache key and size."""
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError):
        return None


def memoised(cache: dict, key: Hashable, compute: Callable[[], T]) -> T:
    """``cache[key]``, computed on a miss; a full cache is emptied rather than left to grow."""
    if key not in cache:
        if len(cache) >= RESULT_CACHE_SIZE:
            cache.clear()
        cache[key] = compute()
    return cache[key]
