"""Facts: what configuration says about one status, as plain data that travels through Pulumi to the status
writer (lists there, tuples here, so facts stay hashable and immutable)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Self


@dataclass(frozen=True)
class Facts:
    def to_inputs(self) -> dict[str, Any]:
        """Lists for tuples, and no field left at its default of None (`from_inputs` restores it): the engine
        dropped the nulls of a nested input, so the records of states written before hold none, and the same facts
        compare equal. Read field by field, not with `asdict`, which copies every value deeply: facts hold plain
        values and tuples of them."""
        values = ((f.name, getattr(self, f.name)) for f in fields(self))
        return {key: list(value) if isinstance(value, tuple) else value for key, value in values if value is not None}

    @classmethod
    def from_inputs(cls, inputs: Mapping[str, Any]) -> Self:
        return cls(**{key: tuple(value) if isinstance(value, list) else value for key, value in inputs.items()})
