"""How a message names many things: the first few, then how many more, so a warning about thousands of objects
stays one line a reviewer reads."""

from collections.abc import Sequence


def listed(items: Sequence[str], shown: int) -> str:
    """`a, b, c and 7 more` for ten items and `shown=3`; all of them when there are no more than `shown`."""
    names = ", ".join(items[:shown])
    return names + (f" and {len(items) - shown} more" if len(items) > shown else "")
