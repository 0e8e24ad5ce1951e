"""Stack files are read as the Pulumi CLI reads them (gopkg.in/yaml.v3), and every malformed one is one clear error.

Each class of bad input has a test with its exact message; a representative subset also goes through
`python -m maas render`, which must exit 2 with the message on stderr and nothing on stdout.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml

from maas import config as config_package
from maas.config import ConfigError, load, raw_from_stack_file, stackfile
from maas.config.stackfile import MAX_DEPTH, plain_scalar
from maas.tools.cli import main
from tests.conftest import DEV_STACK
from tests.test_cli import run

STACKS = [DEV_STACK, *sorted((Path(__file__).parent / "stacks").glob("Pulumi.*.yaml"))]


def stack(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "Pulumi.t.yaml"
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def read(tmp_path: Path, text: str | bytes) -> tuple[dict, list[str]]:
    return raw_from_stack_file(stack(tmp_path, text))


def problem(tmp_path: Path, text: str | bytes) -> str:
    """The one issue reading `text` gives, as `STACK:line:column: message`."""
    path = stack(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        raw_from_stack_file(path)
    [issue] = caught.value.issues
    return str(issue).replace(str(path), "STACK")


def cli_problem(tmp_path: Path, text: str | bytes) -> str:
    """Through the CLI: exit 2, nothing on stdout, and the one issue line on stderr."""
    path = stack(tmp_path, text)
    result = run("render", "--config-file", str(path))
    assert (result.returncode, result.stdout) == (2, "")
    lines = result.stderr.splitlines()
    assert len(lines) == 2 and lines[0].startswith("error: invalid MaaS configuration (1 problem(s))"), lines
    return lines[1].removeprefix("  - ").replace(str(path), "STACK")


@pytest.mark.parametrize("path", STACKS, ids=[s.name for s in STACKS])
def test_project_stacks_read_as_before(path):
    """Nothing in the project's own stacks depends on YAML 1.1 resolution, so the old reader agrees."""
    config = yaml.safe_load(path.read_text())["config"]
    expected = {key.removeprefix("maas:"): value for key, value in config.items() if key.startswith("maas:")}
    raw, warnings = raw_from_stack_file(path)
    assert raw == expected
    assert [w.split(": ", 1)[1][:40] for w in warnings] == (
        [] if expected else ["the stack file sets no 'maas:' key (its "]
    )


def test_raw_from_stack_file_is_exported_where_it_was():
    assert config_package.raw_from_stack_file is load.raw_from_stack_file is stackfile.raw_from_stack_file


def test_duplicate_top_level_key_is_refused_naming_both_lines(tmp_path):
    text = "config:\n  maas:platform: {}\n  maas:subscriptions: []\n  maas:platform: {flavor: xks}\n"
    assert cli_problem(tmp_path, text) == (
        "STACK:4:3: mapping key 'maas:platform' already defined at line 2; keep one of them"
    )


def test_duplicate_nested_key_is_refused(tmp_path):
    text = "config:\n  maas:platform:\n    cache:\n      metadataTTL: 1\n      authzTTL: 2\n      metadataTTL: 3\n"
    assert problem(tmp_path, text) == "STACK:6:7: mapping key 'metadataTTL' already defined at line 4; keep one of them"


def test_quoted_and_plain_spellings_of_one_key_are_duplicates(tmp_path):
    assert problem(tmp_path, "config:\n  a: 1\n  'a': 2\n") == (
        "STACK:3:3: mapping key 'a' already defined at line 2; keep one of them"
    )


def test_bare_and_prefixed_spellings_of_one_config_key_are_refused(tmp_path):
    """The CLI namespaces `platform` with the project name; with `maas:platform` too, one would win at random."""
    text = "config:\n  platform: {}\n  maas:platform: {flavor: xks}\n"
    assert problem(tmp_path, text) == (
        "STACK:3:3: 'maas:platform' and 'platform' (line 2) both set 'maas:platform'; keep one of them"
    )


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("true", True),
        ("True", True),
        ("TRUE", True),
        ("false", False),
        ("FALSE", False),
        ("yes", "yes"),
        ("no", "no"),
        ("on", "on"),
        ("off", "off"),
        ("y", "y"),
        ("tRUE", "tRUE"),
        ("null", None),
        ("Null", None),
        ("~", None),
        ("", None),
        ("42", 42),
        ("-7", -7),
        ("+7", 7),
        ("1_000", 1000),
        ("0x1F", 31),
        ("0o17", 15),
        ("0b101", 5),
        ("0777", 511),
        ("08", 8.0),
        ("18446744073709551615", 2**64 - 1),
        ("1.5", 1.5),
        ("-.5", -0.5),
        (".5", 0.5),
        ("1e3", 1000.0),
        ("1e999", "1e999"),
        ("0x", "0x"),
        ("2024-01-02", "2024-01-02"),
        ("2001-12-14t21:59:43.10-05:00", "2001-12-14t21:59:43.10-05:00"),
        ("12:30:00", "12:30:00"),
        ("1:20", "1:20"),
        ("NaN", "NaN"),
    ],
)
def test_plain_scalars_resolve_like_yaml_v3(text, value):
    resolved = plain_scalar(text)
    assert resolved == value and type(resolved) is type(value)


def test_scalars_in_a_stack_file_reach_the_program_as_the_cli_sends_them(tmp_path):
    """YAML 1.1's yes/no/on/off stay text; whole floats arrive as integers because the CLI passes JSON."""
    text = "config:\n  maas:x: [yes, No, on, OFF, True, 0x10, 0o10, 1.0, 1e3, 2.5, ~, 'true', \"1\"]\n"
    assert read(tmp_path, text) == ({"x": ["yes", "No", "on", "OFF", True, 16, 8, 1, 1000, 2.5, None, "true", "1"]}, [])


def test_unquoted_dates_stay_the_text_written(tmp_path):
    """yaml.v3 decodes a timestamp into `any` as its text (decode.go), so nothing later meets a datetime."""
    raw, _ = read(tmp_path, "config:\n  maas:x: {day: 2024-01-02, at: 2024-01-02 10:00:00}\n")
    assert raw == {"x": {"day": "2024-01-02", "at": "2024-01-02 10:00:00"}}


def test_alias_bomb_is_refused_fast(tmp_path):
    lines = ["a: &a [" + ", ".join(["lol"] * 9) + "]"]
    lines += [f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 9) + "]" for i in range(8)]
    started = time.monotonic()
    message = problem(tmp_path, "\n".join(lines) + "\n")
    assert time.monotonic() - started < 1
    assert message == "STACK:4:20: aliases expand to too much data (yaml.v3 refuses it too); write the values out"


def test_aliases_and_merge_keys_expand_like_yaml_v3(tmp_path):
    """Keys of the mapping itself win over merged ones, and earlier merge sources over later ones."""
    text = (
        "owners: &owners {groups: [{name: team}]}\n"
        "base: &base {priority: 1, owner: *owners}\n"
        "config:\n"
        "  maas:subscriptions:\n"
        "    - {<<: [*base, {priority: 2, name: late}], name: gold}\n"
    )
    raw, warnings = read(tmp_path, text)
    assert raw == {"subscriptions": [{"name": "gold", "priority": 1, "owner": {"groups": [{"name": "team"}]}}]}
    assert len(warnings) == 2  # `owners` and `base` are not stack-file settings


def test_merge_of_something_other_than_a_mapping_is_refused(tmp_path):
    assert problem(tmp_path, "config:\n  maas:x: {<<: [1]}\n") == (
        "STACK:2:16: a merge key '<<' takes a mapping or a list of mappings (usually aliases: <<: *base)"
    )


def test_alias_inside_its_own_anchor_is_refused(tmp_path):
    assert problem(tmp_path, "config:\n  maas:x: &loop [*loop]\n") == (
        "STACK:2:18: anchor 'loop' contains an alias to itself; a value cannot include itself"
    )


def test_undefined_alias_is_refused(tmp_path):
    assert problem(tmp_path, "config:\n  maas:x: *nope\n") == (
        "STACK:2:11: alias '*nope' names no anchor; define '&name' on a value before '*name'"
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            "!!binary aGk=",
            "'!!binary' is not supported in a stack file; write the decoded text as a plain string (configuration is text, not bytes)",
        ),
        ("!!set {a, b}", "'!!set' is not supported in a stack file; write a list instead"),
        ("!foo x", "'!foo' is not supported in a stack file; remove the tag, and quote the value if it must stay text"),
        (
            "!!str 12",
            "'!!str' is not supported in a stack file; remove the tag, and quote the value if it must stay text",
        ),
    ],
)
def test_explicit_tags_are_refused_with_what_to_write(tmp_path, value, message):
    assert problem(tmp_path, f"config:\n  maas:x: {value}\n") == f"STACK:2:11: explicit tag {message}"


@pytest.mark.parametrize("value", [".nan", ".inf", "-.Inf"])
def test_numbers_json_cannot_carry_are_refused(tmp_path, value):
    assert problem(tmp_path, f"config:\n  maas:x: [{value}]\n") == (
        f"STACK:2:12: '{value}' is not a number JSON can carry; quote it if it is meant as text"
    )


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("1", "mapping key '1' is read as a number, not text; quote it (\"1\")"),
        ("true", "mapping key 'true' is read as a boolean, not text; quote it (\"true\")"),
        ("~", "mapping key '~' is read as null (an empty value), not text; quote it (\"~\")"),
        ("[a, b]", "a mapping key must be text, not a list; write a plain key"),
        ("{a: b}", "a mapping key must be text, not a mapping; write a plain key"),
    ],
)
def test_mapping_keys_that_are_not_text_are_refused(tmp_path, key, message):
    assert problem(tmp_path, f"config:\n  maas:x: {{{key}: v}}\n") == f"STACK:2:12: {message}"


def test_config_key_that_is_not_text_is_refused(tmp_path):
    assert problem(tmp_path, "config:\n  8080: x\n") == (
        "STACK:2:3: mapping key '8080' is read as a number, not text; quote it (\"8080\")"
    )


@pytest.mark.parametrize(
    ("key", "head"), [("maas:subscriptions[0]", "maas:subscriptions"), ("maas:platform.flavor", "maas:platform")]
)
def test_pulumi_config_path_syntax_is_refused_as_a_key(tmp_path, key, head):
    assert problem(tmp_path, f"config:\n  {key}: x\n") == (
        f"STACK:2:3: '{key}' is 'pulumi config set --path' syntax, which a stack file does not use; "
        f"nest the value under '{head}:' instead"
    )


def test_path_syntax_key_exits_2_through_the_cli(tmp_path):
    assert cli_problem(tmp_path, "config:\n  'maas:subscriptions[0]': {name: s}\n") == (
        "STACK:2:3: 'maas:subscriptions[0]' is 'pulumi config set --path' syntax, which a stack file does not use; "
        "nest the value under 'maas:subscriptions:' instead"
    )


def test_key_with_several_colons_is_refused(tmp_path):
    assert problem(tmp_path, "config:\n  maas:a:b: x\n") == (
        "STACK:2:3: 'maas:a:b' is not a configuration key; write '<namespace>:<name>' with one ':'"
    )


def test_bare_and_legacy_keys_are_namespaced_like_the_cli(tmp_path):
    """`platform` takes the project's namespace (maas); `maas:config:models` is the CLI's legacy spelling."""
    text = "config:\n  platform: {flavor: xks}\n  maas:config:models: []\n  kubernetes:context: other\n"
    assert read(tmp_path, text) == ({"platform": {"flavor": "xks"}, "models": []}, [])


def test_second_document_is_refused(tmp_path):
    assert cli_problem(tmp_path, "config:\n  maas:models: []\n---\nconfig: {}\n") == (
        "STACK:3:1: a second YAML document starts here; a stack file is one document"
    )


@pytest.mark.parametrize(("text", "found"), [("- config\n", "a list"), ("config\n", "text"), ("42\n", "a number")])
def test_top_level_must_be_a_mapping(tmp_path, text, found):
    assert (
        problem(tmp_path, text) == f"STACK:1:1: the stack file must be a mapping with a 'config:' key (found {found})"
    )


@pytest.mark.parametrize(("value", "found"), [("[maas:models]", "a list"), ("maas:models", "text")])
def test_config_must_be_a_mapping(tmp_path, value, found):
    assert problem(tmp_path, f"config: {value}\n") == (
        f"STACK:1:9: 'config' must be a mapping of 'maas:<key>: value' (found {found})"
    )


NO_KEYS = (
    "STACK{where}: the stack file sets no 'maas:' key ({why}): every setting takes its default, so this renders (and "
    "`pulumi up` would deploy) the default tenant's platform alone, into the cluster of the current kubeconfig "
    "context. A `python -m maas import ... > FILE` that did not finish leaves such a file: run the import again "
    "(--out FILE). To mean the defaults, set a key: 'maas:platform: {{}}'"
)
EMPTY = "the file is empty, or only comments"


@pytest.mark.parametrize(
    ("text", "where", "why"),
    [
        ("", "", EMPTY),
        ("---\n", "", EMPTY),
        ("# nothing yet\n", "", EMPTY),
        ("config:\n", "", "its 'config:' is empty"),
        ("config: {}\n", ":1:9", "its 'config:' is empty"),
        ("secretsprovider: passphrase\n", "", "no 'config:'"),
        (
            "config:\n  kubernetes:context: prod\n  aws:region: x\n  b:c: 1\n  d:e: 2\n",
            ":2:3",
            "only keys of other namespaces: 'aws:region', 'b:c', 'd:e' and 1 more",
        ),
    ],
    ids=["empty", "document-marker", "comments", "config-null", "config-empty", "no-config", "other-namespaces"],
)
def test_a_stack_file_without_maas_keys_reads_as_empty_and_warns_naming_the_file(tmp_path, text, where, why):
    """Issue 20: `python -m maas import ... > Pulumi.prod.yaml` that failed left an empty file, which rendered 39
    objects with exit 0 and no warning."""
    path = stack(tmp_path, text)
    raw, warnings = raw_from_stack_file(path)
    assert raw == {}
    assert [warning.replace(str(path), "STACK") for warning in warnings] == [NO_KEYS.format(where=where, why=why)]


def test_one_maas_key_even_empty_is_configuration_and_esc_environments_may_hold_the_keys(tmp_path):
    assert read(tmp_path, "config:\n  maas:platform: {}\n") == ({"platform": {}}, [])
    _, warnings = read(tmp_path, "environment: [prod]\nconfig: {}\n")
    assert [w.split(": ", 1)[1][:41] for w in warnings] == ["the stack imports Pulumi ESC environments"]


@pytest.mark.parametrize("command", ["render", "validate"])
def test_render_and_validate_of_an_empty_stack_file_warn_naming_it(tmp_path, capsys, command):
    path = stack(tmp_path, "")
    assert main([command, "--config-file", str(path)]) == 0
    err = capsys.readouterr().err
    assert f"warning: {path}: the stack file sets no 'maas:' key (the file is empty, or only comments)" in err


@pytest.mark.parametrize("key", ["maas:importFailed", "importFailed", "maas:config:importFailed"])
def test_the_stack_file_of_a_failed_import_is_refused_as_pulumi_up_refuses_it(tmp_path, key):
    text = f"# IMPORT FAILED\nconfig:\n  maas:models: []\n  {key}: nothing was imported\n"
    assert problem(tmp_path, text) == (
        "STACK:4:3: this stack file is what a `python -m maas import` that failed printed ('nothing was imported'), "
        "not a configuration to render or deploy: the comments at its top say what failed and what to do; fix that "
        "and run the import again, which replaces the file (to look at the configuration it read meanwhile, delete "
        "this 'maas:importFailed' line: the import file is still missing)"
    )
    with pytest.raises(ConfigError, match=r"maas:importFailed: unknown configuration key"):
        load.load_config({"importFailed": "x"})  # what `pulumi up` says of it


def test_non_utf8_bytes_are_refused_at_their_position(tmp_path):
    assert cli_problem(tmp_path, b"config:\n  maas:x: caf\xe9\n") == (
        "STACK:2:14: byte 0xe9 is not UTF-8 text; save the file as UTF-8"
    )


def test_utf8_byte_order_mark_is_dropped_as_the_cli_does(tmp_path):
    assert read(tmp_path, b"\xef\xbb\xbfconfig:\n  maas:x: 1\n") == ({"x": 1}, [])


def test_lone_surrogate_escape_is_refused(tmp_path):
    assert problem(tmp_path, 'config:\n  maas:x: "\\ud800"\n') == (
        "STACK:2:14: invalid YAML: found invalid Unicode character escape code (while parsing a quoted scalar at "
        "line 2, column 11); a '\\u' escape must name a character, not a surrogate; write the character itself"
    )


def test_lone_surrogate_is_refused_without_libyaml_too(tmp_path, monkeypatch):
    """PyYAML's pure-Python parser decodes the escape instead of refusing it; the value check catches it."""
    monkeypatch.setattr(stackfile, "_LOADER", yaml.SafeLoader)
    assert problem(tmp_path, 'config:\n  maas:x: "a\\ud800"\n') == (
        "STACK:2:11: 'a\\ud800' holds a lone surrogate, which is not text; remove it"
    )


def test_tab_used_as_indentation_is_refused(tmp_path):
    assert cli_problem(tmp_path, "config:\n\tmaas:models: []\n") == (
        "STACK:2:1: a tab is used for indentation; YAML indents with spaces only, so replace the tab with spaces"
    )


def test_tab_inside_a_block_is_refused(tmp_path):
    assert problem(tmp_path, "config:\n  maas:a: 1\n\t  maas:b: 2\n") == (
        "STACK:3:1: a tab is used for indentation; YAML indents with spaces only, so replace the tab with spaces"
    )


def test_deep_nesting_is_refused(tmp_path):
    depth = MAX_DEPTH + 1
    message = problem(tmp_path, "config:\n  maas:x: " + "[" * depth + "]" * depth + "\n")
    assert message == "STACK:2:109: lists and mappings are nested more than 100 levels deep; flatten the configuration"


def test_deep_nesting_through_aliases_is_refused(tmp_path):
    half = MAX_DEPTH // 2 + 1
    text = f"a: &a {'[' * half}{']' * half}\nb: {'[' * half}*a{']' * half}\n"
    assert problem(tmp_path, text) == (
        "STACK:2:55: lists and mappings are nested more than 100 levels deep; flatten the configuration"
    )


def test_control_character_in_the_file_is_refused(tmp_path):
    assert problem(tmp_path, "config:\n  maas:x: a\x1bb\n") == (
        "STACK:2:12: the control character '\\x1b' is not allowed in YAML; remove it"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "config:\n  maas:x: [1, 2\n",
            "STACK:3:1: invalid YAML: did not find expected ',' or ']' (while parsing a flow sequence at line 2, "
            "column 11); close the list with ']' (or quote a value that contains ',' or ']')",
        ),
        (
            "config:\n  maas:x: a: b\n",
            "STACK:2:12: invalid YAML: mapping values are not allowed in this context; quote the value if it "
            "contains ': ', or fix the indentation",
        ),
        (
            "config:\n  maas:x: 'a'\n   maas:y: 1\n",
            "STACK:3:4: invalid YAML: did not find expected key (while parsing a block mapping at line 2, column 3); "
            "align this line with the other keys of its mapping",
        ),
        (
            "config:\n  maas:x: @team\n",
            "STACK:2:11: invalid YAML: found character that cannot start any token (while scanning for the next "
            "token at line 2, column 11); quote the value: '@' cannot start plain text",
        ),
        (
            'config:\n  maas:x: "open\n',
            "STACK:3:1: invalid YAML: found unexpected end of stream (while scanning a quoted scalar at line 2, "
            "column 11); close the quote or bracket that starts earlier",
        ),
    ],
)
def test_yaml_syntax_errors_name_the_place_and_the_fix(tmp_path, text, message):
    assert problem(tmp_path, text) == message


def test_syntax_error_exits_2_through_the_cli(tmp_path):
    assert cli_problem(tmp_path, "config:\n  maas:models: [1, 2\n") == (
        "STACK:3:1: invalid YAML: did not find expected ',' or ']' (while parsing a flow sequence at line 2, "
        "column 16); close the list with ']' (or quote a value that contains ',' or ']')"
    )


def test_file_text_cannot_forge_an_error_line(tmp_path):
    """Control characters from the file are escaped: the one issue stays one line."""
    text = 'config:\n  "maas:x\\nerror: forged": 1\n  "maas:x\\nerror: forged": 2\n'
    assert cli_problem(tmp_path, text) == (
        "STACK:3:3: mapping key 'maas:x\\nerror: forged' already defined at line 2; keep one of them"
    )


def test_unreadable_stack_file_is_an_error(tmp_path):
    with pytest.raises(ConfigError) as caught:
        raw_from_stack_file(tmp_path)
    assert [str(issue) for issue in caught.value.issues] == [
        f"{tmp_path}: cannot read the stack file (Is a directory); check the path"
    ]


def test_esc_environment_renders_with_one_warning(tmp_path, capsys):
    path = stack(tmp_path, "environment:\n  - maas/prod\nconfig:\n  maas:models: []\n")
    assert main(["render", "--config-file", str(path), "--format", "json"]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning:")]
    assert warnings == [
        f"warning: {path}:1:1: the stack imports Pulumi ESC environments, which offline rendering does not resolve; "
        "configuration they provide is missing from this rendering"
    ]


def test_top_level_key_the_cli_ignores_is_a_warning(tmp_path):
    raw, warnings = read(tmp_path, "Config:\n  maas:models: []\n")
    assert raw == {}
    assert warnings == [
        f"{tmp_path / 'Pulumi.t.yaml'}:1:1: top-level key 'Config' is not a stack-file setting and the Pulumi "
        "CLI ignores it; the settings are config, environment, secretsprovider, encryptedkey, encryptionsalt",
        NO_KEYS.format(where="", why="no 'config:'").replace("STACK", str(tmp_path / "Pulumi.t.yaml")),
    ]
