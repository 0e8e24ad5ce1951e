"""YAML the program writes (snapshots, `import`'s stack document) that its own reader reads back identically.

PyYAML resolves plain scalars by YAML 1.1 and quotes a string only when YAML 1.1 would read it as something else,
so `1e3`, `1e+3` and `0o17` (valid DNS labels, hence names and namespaces) come out unquoted, and the program's
reader, which resolves them as yaml.v3 and the Pulumi CLI do (`maas/config/stackfile.py`, YAML 1.2), reads them
back as numbers. Here a string is written plain only when both readings keep it the same text.
"""

from __future__ import annotations

from typing import Any

import yaml

from ..config.stackfile import plain_scalar

_STR = "tag:yaml.org,2002:str"
_NOT_TEXT = "tag:yaml.org,2002:float"  # any tag but str: the emitter then quotes the string


class _Dumper(yaml.SafeDumper):
    """SafeDumper whose implicit resolution of a plain string also asks the YAML 1.2 reader of the program."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        tag = super().resolve(kind, value, implicit)
        if kind is yaml.ScalarNode and implicit[0] and tag == _STR:
            read = plain_scalar(value)
            if not (isinstance(read, str) and read == value):
                return _NOT_TEXT
        return tag


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    """YAML's own line breaks (NEL, LS, PS) in a string: PyYAML writes them raw inside single quotes, where a reader
    folds them, so such a string is double-quoted, where they are escaped (`\\N`, `\\L`, `\\P`)."""
    style = '"' if any(c in value for c in LINE_BREAKS) else None
    return dumper.represent_scalar(_STR, value, style=style)


LINE_BREAKS = "\x85\u2028\u2029"
_Dumper.add_representer(str, _text)


def yaml_text(document: Any, *, sort_keys: bool) -> str:
    """`document` (plain dicts, lists and scalars) as block YAML: one line per scalar (up to 4096 characters),
    Unicode written as itself, every string that a YAML 1.1 or 1.2 reader would take for another type quoted."""
    return yaml.dump(
        document,
        Dumper=_Dumper,
        sort_keys=sort_keys,
        default_flow_style=False,
        width=4096,
        allow_unicode=True,
    )
