"""Read a `Pulumi.<stack>.yaml` as the Pulumi CLI reads it, so that offline rendering sees what `pulumi up` sees.

The CLI decodes stack files with gopkg.in/yaml.v3 into untyped values, re-encodes them and hands each config value
to the program as JSON (sdk/go/common/workspace/loaders.go, resource/config/object.go). This module reproduces the
result: YAML 1.2 scalars as yaml.v3 resolves them (`yes`/`on` stay text, `0x1F`/`0o17`/`0777` are numbers, dates
stay the text written), whole floats arriving as integers (JSON), duplicate keys refused, merge keys (`<<`), the
yaml.v3 bound on alias expansion, bare config keys namespaced with the project name, and the legacy
`maas:config:<key>` spelling. Where the CLI would accept something that cannot be what its author meant (explicit
tags, a second document, `.nan`, nesting beyond MAX_DEPTH, two spellings of one key) it is refused as well.

Every problem raises ConfigError with one issue at `file:line:column` whose message says what to write instead;
text from the file is quoted and escaped, so a crafted file cannot forge another line of output. A file that sets
no `maas:` key (empty, only comments, `config: {}`) reads as the defaults with a warning naming it, since it is
what an unfinished `python -m maas import ... > FILE` leaves; the file a failed import prints, which holds
`maas:importFailed`, is refused, as `pulumi up` refuses it (no configuration has that key).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import yaml

from ..listing import listed
from .errors import ConfigError, ConfigIssue, escaped, quoted

NAMESPACE = "maas"  # the Pulumi project name (Pulumi.yaml), hence the namespace of its configuration keys
SECRET_PLACEHOLDER = "<secret: not decrypted offline>"
MAX_DEPTH = 100  # nested lists and mappings; real configuration needs fewer than 10
STACK_SETTINGS = ("config", "environment", "secretsprovider", "encryptedkey", "encryptionsalt")
# The key a failed `python -m maas import` writes first into the stack file it prints (`tools/importing/failure.py`):
# no configuration has it, so `pulumi up` refuses the file (unknown key), and reading it here says why.
IMPORT_FAILED = "importFailed"
NO_KEYS = (
    "{where}: the stack file sets no '{namespace}:' key ({why}): every setting takes its default, so this renders "
    "(and `pulumi up` would deploy) the default tenant's platform alone, into the cluster of the current kubeconfig "
    "context. A `python -m maas import ... > FILE` that did not finish leaves such a file: run the import again "
    "(--out FILE). To mean the defaults, set a key: '{namespace}:platform: {{}}'"
)

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser, the C original of yaml.v3's
_UTF8_BOM = b"\xef\xbb\xbf"
# Characters YAML 1.1/1.2 forbid in a stream (libyaml and yaml.v3 refuse them too).
_FORBIDDEN = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_YAML_TAG = "tag:yaml.org,2002:"

# yaml.v3 resolve.go: the plain scalars it looks up, then how it reads numbers (after removing every `_`).
_CONSTANTS: dict[str, Any] = {
    **dict.fromkeys(("true", "True", "TRUE"), True),
    **dict.fromkeys(("false", "False", "FALSE"), False),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), None),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), math.nan),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), math.inf),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), -math.inf),
}
_GO_INT = re.compile(r"([-+]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)")  # strconv base 0
_YAML_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_DOT_FLOAT = re.compile(r"\.[0-9](_?[0-9])*([eE][-+]?[0-9](_?[0-9])*)?")  # strconv.ParseFloat of `.5`-like text
_INT64 = range(-(2**63), 2**63)
_UINT64 = range(2**64)
_UINT64_DIGITS = len(str(2**64))  # a decimal integer with more digits is out of range
_JSON_INTEGRAL = 1e21  # Go's encoding/json writes smaller whole floats without a fraction or exponent

# yaml.v3 decode.go: aliases may make up 99% of a small document, falling to 10% of a large one.
_ALIAS_LOW, _ALIAS_HIGH = 400_000, 4_000_000
_MERGE_CHAIN = (
    f"lists, mappings and the mappings that merge keys ('<<') take in are nested more than {MAX_DEPTH} levels "
    "deep (a merged mapping that merges another counts as one level more); merge fewer levels, or write the values out"
)
_EXCESSIVE_ALIASING = "aliases expand to too much data (yaml.v3 refuses it too); write the values out"

_TAB = "a tab is used for indentation; YAML indents with spaces only, so replace the tab with spaces"
_SYNTAX_HINTS = (
    ("mapping values are not allowed", "quote the value if it contains ': ', or fix the indentation"),
    ("could not find expected ':'", "write 'key: value', or quote a value that spans several lines"),
    ("did not find expected key", "align this line with the other keys of its mapping"),
    ("did not find expected '-'", "align this list item with the other items of its list"),
    ("expected ',' or ']'", "close the list with ']' (or quote a value that contains ',' or ']')"),
    ("expected ',' or '}'", "close the mapping with '}' (or quote a value that contains ',' or '}')"),
    ("end of stream", "close the quote or bracket that starts earlier"),
    ("unknown escape character", "in double quotes write '\\\\' for a backslash, or use single quotes"),
    ("Unicode character escape", "a '\\u' escape must name a character, not a surrogate; write the character itself"),
    ("maximum nesting depth", f"nest lists and mappings at most {MAX_DEPTH} levels deep"),
    ("tag handle", "remove the tag; a stack file holds plain YAML values"),
)
_TAG_HINTS = {
    f"{_YAML_TAG}binary": "write the decoded text as a plain string (configuration is text, not bytes)",
    f"{_YAML_TAG}set": "write a list instead",
    f"{_YAML_TAG}omap": "write a mapping instead",
    f"{_YAML_TAG}pairs": "write a mapping instead",
}
_TAG_HINT = "remove the tag, and quote the value if it must stay text"


@dataclass(eq=False)
class _Node:
    """One YAML node with its position (1-based); an alias keeps the node its anchor named at that point."""

    kind: str  # scalar | seq | map | alias
    line: int
    column: int
    tag: str | None = None
    value: str = ""  # the scalar's text, or the alias's anchor name
    plain: bool = False
    children: list[_Node] = field(default_factory=list)
    target: _Node | None = None

    @property
    def resolved(self) -> _Node:
        return self.target if self.target is not None else self


def raw_from_stack_file(path: Path) -> tuple[dict[str, Any], list[str]]:
    """The `maas:` keys of a stack file (without the prefix), encrypted values replaced by a visible placeholder,
    and the warnings reading it gave."""
    source = escaped(str(path))
    text = _read(path, source)
    root = _compose(text, source)
    document = _Decoder(source).value(root) if root is not None else None
    if document is None:
        return {}, [no_keys_warning(source, "the file is empty, or only comments")]
    if not isinstance(document, dict):
        _fail(source, root, f"the stack file must be a mapping with a 'config:' key (found {_kind(document)})")
    warnings = _document_warnings(document, root, source)
    config = document.get("config")
    if config is None:
        why = "its 'config:' is empty" if "config" in document else "no 'config:'"
        return {}, warnings if "environment" in document else [*warnings, no_keys_warning(source, why)]
    config_node = _value_node(root, "config")
    if not isinstance(config, dict):
        _fail(source, config_node, f"'config' must be a mapping of '{NAMESPACE}:<key>: value' (found {_kind(config)})")
    raw = _maas_keys(config, config_node.resolved, source)
    if IMPORT_FAILED in raw:
        _failed_import(source, _member(config_node, _spelling(config, IMPORT_FAILED)), raw[IMPORT_FAILED])
    if not raw and "environment" not in document:  # the ESC warning says the environments' keys are missing
        others = "its 'config:' is empty" if not config else f"only keys of other namespaces: {_listed(config)}"
        warnings.append(no_keys_warning(_where(source, config_node), others))
    return {name: _strip_secrets(value, f"{NAMESPACE}:{name}", warnings) for name, value in raw.items()}, warnings


def no_keys_warning(where: str, why: str) -> str:
    return NO_KEYS.format(where=where, namespace=NAMESPACE, why=why)


def _listed(config: dict[str, Any]) -> str:
    return listed([quoted(key) for key in sorted(config)], 3)


def _spelling(config: dict[str, Any], name: str) -> str:
    """How the file writes the `maas:` key `name` (`maas:name`, bare `name`, or `maas:config:name`)."""
    spellings = (f"{NAMESPACE}:{name}", name, f"{NAMESPACE}:config:{name}")
    return next(key for key in spellings if key in config)


def _failed_import(source: str, node: _Node, value: Any) -> NoReturn:
    """A stack file that a failed `python -m maas import` printed is refused, as `pulumi up` refuses it."""
    _fail(
        source,
        node,
        f"this stack file is what a `python -m maas import` that failed printed ({quoted(value)}), not a "
        "configuration to render or deploy: the comments at its top say what failed and what to do; fix that and "
        "run the import again, which replaces the file (to look at the configuration it read meanwhile, delete "
        f"this '{NAMESPACE}:{IMPORT_FAILED}' line: the import file is still missing)",
    )


def yaml_document(text: str, source: str) -> Any:
    """One YAML document decoded as the Pulumi CLI decodes a stack file (bounded nesting and alias expansion,
    duplicate keys and tags refused); ConfigError at `source:line:column` otherwise. Snapshot files use it too."""
    root = _compose(text, source)
    return _Decoder(source).value(root) if root is not None else None


def yaml_documents(text: str, source: str, scalar: Callable[[str], Any] | None = None) -> list[Any]:
    """Every document of a YAML stream (an empty one is None), decoded as `yaml_document` decodes one, with the same
    bounds (the alias bound counts the whole stream); `scalar` gives the value of an untagged plain scalar, for a
    reader whose scalars are not yaml.v3's (`kubectl`'s YAML 1.1)."""
    decoder = _Decoder(source, scalar or plain_scalar, "here")
    return [decoder.value(root) for root in _compose_all(text, source, single=False)]


def plain_scalar(text: str) -> Any:
    """The value yaml.v3 gives an untagged plain scalar decoded into `any` (resolve.go): the YAML 1.2 core schema,
    plus Go's integer prefixes (`0b`, `0o`, `0x`, and `0777` as octal) and `_` between digits; dates and numbers
    out of range stay the text written."""
    if text in _CONSTANTS:
        return _CONSTANTS[text]
    if text.startswith("."):
        return _finite(text, text) if _DOT_FLOAT.fullmatch(text) else text
    if not text or text[0] not in "+-0123456789":
        return text
    digits = text.replace("_", "")
    number = _go_int(digits)
    if number is not None:
        return number
    return _finite(digits, text) if _YAML_FLOAT.fullmatch(digits) else text


def _go_int(text: str) -> int | None:
    """strconv.ParseInt(text, 0, 64), else ParseUint (no sign): None when neither reads it."""
    match = _GO_INT.fullmatch(text)
    if match is None:
        return None
    sign, digits = match.groups()
    if len(digits) > _UINT64_DIGITS and digits[0] != "0":
        return None  # out of range; and Python refuses to convert more than 4300 decimal digits at all
    if digits[:2].lower() in ("0x", "0o", "0b"):
        number = int(digits, 0)
    else:
        number = int(digits, 8) if len(digits) > 1 and digits[0] == "0" else int(digits)
    number = -number if sign == "-" else number
    return number if number in _INT64 or (not sign and number in _UINT64) else None


def _finite(digits: str, text: str) -> float | str:
    value = float(digits)
    return text if math.isinf(value) else value  # Go's ParseFloat fails on overflow: yaml.v3 keeps the text


def _read(path: Path, source: str) -> str:
    """The file as text: UTF-8, a leading byte-order mark dropped (as the CLI does), only characters YAML allows."""
    try:
        data = path.read_bytes()
    except OSError as error:
        message = f"cannot read the stack file ({error.strerror}); check the path"
        raise ConfigError([ConfigIssue(source, message)]) from None
    data = data.removeprefix(_UTF8_BOM)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        before = data[: error.start].decode("utf-8")
        _fail_at(source, before, f"byte {data[error.start]:#04x} is not UTF-8 text; save the file as UTF-8")
    bad = _FORBIDDEN.search(text)
    if bad is not None:
        character = quoted(bad.group())
        _fail_at(source, text[: bad.start()], f"the control character {character} is not allowed in YAML; remove it")
    return text


def _compose(text: str, source: str) -> _Node | None:
    """The document's node tree; a second document is refused."""
    roots = _compose_all(text, source, single=True)
    return roots[0] if roots else None


def _compose_all(text: str, source: str, single: bool) -> list[_Node]:
    """Each document's node tree, built from parser events so that nesting is bounded while parsing; `single`
    refuses a second document."""
    roots: list[_Node] = []
    open_nodes: list[_Node] = []
    anchors: dict[str, _Node] = {}
    documents = 0
    try:
        for event in yaml.parse(text, Loader=_LOADER):
            if isinstance(event, yaml.DocumentStartEvent):
                documents += 1
                anchors = {}  # an anchor names a node of its own document only
                if single and documents > 1:
                    _fail(source, _mark(event), "a second YAML document starts here; a stack file is one document")
            elif isinstance(event, yaml.CollectionEndEvent):
                open_nodes.pop()
            elif isinstance(event, yaml.NodeEvent):
                node = _node(event, anchors, source)
                if open_nodes:
                    open_nodes[-1].children.append(node)
                else:
                    roots.append(node)
                if isinstance(event, yaml.CollectionStartEvent):
                    open_nodes.append(node)
                    if len(open_nodes) > MAX_DEPTH:
                        _too_deep(source, node)
    except yaml.MarkedYAMLError as error:
        raise _syntax_error(error, text, source) from None
    except yaml.YAMLError as error:  # a reader error that the character check in _read did not foresee
        raise ConfigError([ConfigIssue(source, f"invalid YAML: {str(error).splitlines()[0]}; fix the file")]) from None
    return roots


def _node(event: yaml.NodeEvent, anchors: dict[str, _Node], source: str) -> _Node:
    line, column = _mark(event)
    if isinstance(event, yaml.AliasEvent):
        target = anchors.get(event.anchor)
        if target is None:
            alias = quoted(f"*{event.anchor}")
            _fail(source, (line, column), f"alias {alias} names no anchor; define '&name' on a value before '*name'")
        return _Node("alias", line, column, value=event.anchor, target=target)
    tag = None if event.tag in (None, "!") else event.tag  # a lone `!` is no tag (yaml.v3, libyaml)
    if isinstance(event, yaml.ScalarEvent):
        node = _Node("scalar", line, column, tag, event.value, plain=event.style in (None, ""))
    else:
        node = _Node("seq" if isinstance(event, yaml.SequenceStartEvent) else "map", line, column, tag)
    if event.anchor is not None:
        anchors[event.anchor] = node  # before its children: `&a [*a]` is found as a cycle when decoding
    return node


class _Decoder:
    """yaml.v3's decoding of a node tree into untyped values, as JSON then carries them to the program."""

    def __init__(self, source: str, scalar: Callable[[str], Any] | None = None, where: str = "in a stack file") -> None:
        self.source = source
        self.plain_value = scalar or plain_scalar  # of an untagged plain scalar
        self.where = where  # where tags are not supported, for the message
        self.decodes = 0
        self.expanded = 0  # decodes inside an alias
        self.expanding: list[_Node] = []  # aliases being expanded, innermost last
        self.merging = 0  # merge keys being decoded: a chain of them recurses without nesting

    def value(self, node: _Node, depth: int = 0) -> Any:
        self._count(node)
        if node.kind == "alias":
            return self._alias(node, depth)
        if node.tag is not None:
            tag, hint = quoted(_short_tag(node.tag)), _TAG_HINTS.get(node.tag, _TAG_HINT)
            self._fail(node, f"explicit tag {tag} is not supported {self.where}; {hint}")
        if node.kind == "scalar":
            return self._scalar(node)
        if depth >= MAX_DEPTH:
            if self.merging:
                self._fail(self._place(node), _MERGE_CHAIN)
            _too_deep(self.source, self._place(node))
        if node.kind == "seq":
            return [self.value(child, depth + 1) for child in node.children]
        return self._mapping(node, depth)

    def _count(self, node: _Node) -> None:
        self.decodes += 1
        self.expanded += bool(self.expanding)
        if self.expanded > 100 and self.decodes > 1000 and self.expanded / self.decodes > _alias_ratio(self.decodes):
            self._fail(self._place(node), _EXCESSIVE_ALIASING)

    def _alias(self, node: _Node, depth: int) -> Any:
        if node in self.expanding:
            self._fail(node, f"anchor {quoted(node.value)} contains an alias to itself; a value cannot include itself")
        self.expanding.append(node)
        value = self.value(node.resolved, depth)
        self.expanding.pop()
        return value

    def _scalar(self, node: _Node) -> Any:
        if _SURROGATE.search(node.value):
            self._fail(node, f"{quoted(node.value)} holds a lone surrogate, which is not text; remove it")
        if not node.plain:
            return node.value
        value = self.plain_value(node.value)
        if not isinstance(value, float):
            return value
        if not math.isfinite(value):
            self._fail(node, f"{quoted(node.value)} is not a number JSON can carry; quote it if it is meant as text")
        return int(value) if value.is_integer() and abs(value) < _JSON_INTEGRAL else value

    def _mapping(self, node: _Node, depth: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        lines: dict[str, int] = {}
        merge: _Node | None = None
        for key_node, value_node in _pairs(node):
            if _is_merge(key_node):
                self._once("<<", key_node, lines)
                merge = value_node
                continue
            key = self._key(key_node, depth)
            self._once(key, key_node, lines)
            result[key] = self.value(value_node, depth + 1)
        for source in self._merge_sources(merge) if merge is not None else ():
            for key, value in self._merged(source, depth).items():
                result.setdefault(key, value)  # keys of the mapping itself win, then earlier sources
        return result

    def _merged(self, source: _Node, depth: int) -> dict[str, Any]:
        """A merge source's mapping, one level deeper: merging adds no nesting to the value, but a chain of merges
        (`m2: {<<: *m1}`, `m3: {<<: *m2}`, ...) recurses as deep as nesting does, so it counts toward MAX_DEPTH
        (yaml.v3 recurses without a bound; Python's stack has one)."""
        self.merging += 1
        value = self.value(source, depth + 1)
        self.merging -= 1
        return value

    def _once(self, key: str, node: _Node, lines: dict[str, int]) -> None:
        if key in lines:
            self._fail(node, f"mapping key {quoted(key)} already defined at line {lines[key]}; keep one of them")
        lines[key] = node.line

    def _key(self, node: _Node, depth: int) -> str:
        written = node.resolved
        if written.kind != "scalar":
            self._fail(node, f"a mapping key must be text, not a {_KINDS[written.kind]}; write a plain key")
        key = self.value(node, depth)
        if not isinstance(key, str):
            text = quoted(written.value)
            self._fail(node, f'mapping key {text} is read as {_kind(key)}, not text; quote it ("{written.value}")')
        return key

    def _merge_sources(self, merge: _Node) -> list[_Node]:
        sources = merge.children if merge.kind == "seq" and merge.tag is None else [merge]
        if any(source.resolved.kind != "map" for source in sources):
            self._fail(merge, "a merge key '<<' takes a mapping or a list of mappings (usually aliases: <<: *base)")
        return sources

    def _place(self, node: _Node) -> _Node:
        """Where a problem of expansion shows: at the alias written in the document, not inside its anchor."""
        return self.expanding[0] if self.expanding else node

    def _fail(self, node: _Node, message: str) -> NoReturn:
        _fail(self.source, node, message)


_KINDS = {"seq": "list", "map": "mapping"}


def _pairs(node: _Node) -> list[tuple[_Node, _Node]]:
    return list(zip(node.children[::2], node.children[1::2], strict=True))


def _is_merge(node: _Node) -> bool:
    return node.kind == "scalar" and node.plain and node.tag is None and node.value == "<<"


def _alias_ratio(decodes: int) -> float:
    if decodes <= _ALIAS_LOW:
        return 0.99
    if decodes >= _ALIAS_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decodes - _ALIAS_LOW) / (_ALIAS_HIGH - _ALIAS_LOW)


def _document_warnings(document: dict[str, Any], root: _Node, source: str) -> list[str]:
    warnings = []
    if "environment" in document:
        warnings.append(
            f"{_where(source, _member(root, 'environment'))}: the stack imports Pulumi ESC environments, which offline "
            "rendering does not resolve; configuration they provide is missing from this rendering"
        )
    for key in document:
        if key not in STACK_SETTINGS:
            warnings.append(
                f"{_where(source, _member(root, key))}: top-level key {quoted(key)} is not a stack-file setting and "
                f"the Pulumi CLI ignores it; the settings are {', '.join(STACK_SETTINGS)}"
            )
    return warnings


def _maas_keys(config: dict[str, Any], node: _Node, source: str) -> dict[str, Any]:
    """The `maas:` entries of `config`, by name, after the CLI's key rules (ParseKey, project namespacing)."""
    raw: dict[str, Any] = {}
    spelled: dict[str, tuple[str, int]] = {}
    for key, value in config.items():
        key_node = _member(node, key)
        namespace, name = _parse_key(key, key_node, source)
        full = f"{namespace}:{name}"
        if full in spelled:
            other, line = spelled[full]
            both = f"{quoted(key)} and {quoted(other)} (line {line})"
            _fail(source, key_node, f"{both} both set {quoted(full)}; keep one of them")
        spelled[full] = (key, key_node.line)
        if namespace == NAMESPACE:
            _check_name(key, name, key_node, source)
            raw[name] = value
    return raw


def _parse_key(key: str, node: _Node, source: str) -> tuple[str, str]:
    """`name` (namespaced with the project), `namespace:name`, or the legacy `namespace:config:name`."""
    parts = key.split(":")
    if len(parts) == 1:
        return NAMESPACE, key
    if len(parts) == 2:
        return parts[0], parts[1]
    if len(parts) == 3 and parts[1] == "config":
        return parts[0], parts[2]
    _fail(source, node, f"{quoted(key)} is not a configuration key; write '<namespace>:<name>' with one ':'")


def _check_name(key: str, name: str, node: _Node, source: str) -> None:
    """`maas:platform.flavor` and `maas:subscriptions[0]` are `pulumi config set --path` paths, not stack-file keys."""
    head = re.split(r"[.\[\]]", name, maxsplit=1)[0]
    if head != name:
        _fail(
            source,
            node,
            f"{quoted(key)} is 'pulumi config set --path' syntax, which a stack file does not use; "
            f"nest the value under '{NAMESPACE}:{escaped(head)}:' instead",
        )


def _member(node: _Node, key: str) -> _Node:
    """The key node of `key` in a mapping node, for its position (the mapping itself when a merge supplied it)."""
    return _entry(node, key)[0]


def _value_node(node: _Node, key: str) -> _Node:
    return _entry(node, key)[1]


def _entry(node: _Node, key: str) -> tuple[_Node, _Node]:
    for key_node, value_node in _pairs(node.resolved):
        written = key_node.resolved
        if written.kind == "scalar" and written.value == key:
            return key_node, value_node
    return node, node


def _strip_secrets(value: Any, path: str, warnings: list[str]) -> Any:
    if isinstance(value, dict):
        if set(value) == {"secure"}:
            warnings.append(
                f"{escaped(path)}: encrypted value cannot be decrypted offline; rendered as '{SECRET_PLACEHOLDER}'"
            )
            return SECRET_PLACEHOLDER
        return {k: _strip_secrets(v, f"{path}.{k}", warnings) for k, v in value.items()}
    if isinstance(value, list):
        return [_strip_secrets(v, f"{path}[{i}]", warnings) for i, v in enumerate(value)]
    return value


def _syntax_error(error: yaml.MarkedYAMLError, text: str, source: str) -> ConfigError:
    """libyaml's complaint (yaml.v3 is its Go port, so the CLI refuses the same files) with what to do about it."""
    mark = error.problem_mark or error.context_mark
    where = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    problem = error.problem or error.context or "invalid YAML"
    character = _character_at(text, *where)
    if "tab character" in problem or character == "\t":
        return ConfigError([ConfigIssue(_where(source, where), _TAB)])
    if "cannot start any token" in problem:
        hint = f"quote the value: {quoted(character)} cannot start plain text"
    else:
        hint = next((hint for needle, hint in _SYNTAX_HINTS if needle in problem), "fix the YAML syntax here")
    context = ""
    if error.problem and error.context and error.context_mark is not None:
        context = f" ({error.context} at line {error.context_mark.line + 1}, column {error.context_mark.column + 1})"
    return ConfigError([ConfigIssue(_where(source, where), f"invalid YAML: {problem}{context}; {hint}")])


def _character_at(text: str, line: int, column: int) -> str:
    lines = text.splitlines()
    return lines[line - 1][column - 1 : column] if line <= len(lines) else ""


def _short_tag(tag: str) -> str:
    return "!!" + tag.removeprefix(_YAML_TAG) if tag.startswith(_YAML_TAG) else tag


def _kind(value: Any) -> str:
    if value is None:
        return "null (an empty value)"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return {dict: "a mapping", list: "a list"}.get(type(value), "text")


def _mark(event: yaml.Event) -> tuple[int, int]:
    return event.start_mark.line + 1, event.start_mark.column + 1


def _where(source: str, at: _Node | tuple[int, int]) -> str:
    line, column = (at.line, at.column) if isinstance(at, _Node) else at
    return f"{source}:{line}:{column}"


def _fail(source: str, at: _Node | tuple[int, int], message: str) -> NoReturn:
    raise ConfigError([ConfigIssue(_where(source, at), message)])


def _fail_at(source: str, before: str, message: str) -> NoReturn:
    """Fail at the position that follows the text `before`."""
    line = before.count("\n") + 1
    _fail(source, (line, len(before) - before.rfind("\n")), message)


def _too_deep(source: str, node: _Node) -> NoReturn:
    _fail(source, node, f"lists and mappings are nested more than {MAX_DEPTH} levels deep; flatten the configuration")
