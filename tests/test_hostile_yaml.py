"""Issue 18, hostile inputs: YAML that crashed or slipped through the program's readers, and YAML its own writers
emitted that its reader did not read back. Each input ends in a clean error naming its place, or a safe result."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maas.config import ConfigError, load_config, raw_from_stack_file
from maas.config.stackfile import MAX_DEPTH, yaml_document
from maas.observe import ObservationError, Observed, Scope, dump_snapshot, parse_snapshot
from maas.observe.yaml_text import yaml_text
from maas.plan.tenants.migration import fingerprint
from maas.tools.import_command import stack_document


def merge_chain(levels: int, padding: int = 20_000) -> str:
    """`m{i}: &m{i} {<<: *m{i-1}, ...}`, padded with plain scalars so that aliases stay a small share of the
    decoded values (the yaml.v3 alias bound does not see it)."""
    lines = [f"pad: [{', '.join(['0'] * padding)}]", "m0: &m0 {a0: 0}"]
    lines += [f"m{i}: &m{i} {{<<: *m{i - 1}, p{i}: {i}}}" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


# -------------------------------------------------------------------------------------------- merge chains


def test_hostile_merge_key_chain_in_a_snapshot_is_refused_at_its_place_not_a_recursion_error():
    with pytest.raises(ObservationError) as caught:
        parse_snapshot(merge_chain(700), "chain.yaml")
    # m99 (line 101), a value of the document's mapping merging 99 others: 100 levels
    assert str(caught.value).startswith("chain.yaml:101:16: lists, mappings and the mappings that merge keys")


def test_hostile_merge_key_chain_in_the_live_plugins_configmap_reads_as_customized_not_a_crash():
    """Operators edit that ConfigMap, and `pulumi preview` reads it: unreadable is customized (IPP kept)."""
    configmap = {"data": {"plugins.yaml": merge_chain(700)}}
    assert fingerprint(configmap) is None


def test_a_merge_chain_within_the_bound_still_merges():
    document = yaml_document(merge_chain(MAX_DEPTH - 1, padding=10), "ok.yaml")
    assert document[f"m{MAX_DEPTH - 2}"] == {"a0": 0, **{f"p{i}": i for i in range(1, MAX_DEPTH - 1)}}


def test_nesting_and_merging_share_one_bound_so_the_stack_of_the_decoder_stays_small():
    """Nested 60 deep, each inner value merging a chain of 50: more than 100 levels, refused."""
    chain = ["m0: &m0 {a: 0}", *(f"m{i}: &m{i} {{<<: *m{i - 1}}}" for i in range(1, 50))]
    nested = "top: " + "{x: " * 60 + "{<<: *m49}" + "}" * 60
    with pytest.raises(ConfigError, match="merge keys"):
        yaml_document("\n".join([*chain, nested]), "deep.yaml")


# ----------------------------------------------------------------------------------------- stack-file values


def test_hostile_5000_digit_integer_in_a_stack_file_is_text_as_the_cli_reads_it_not_a_traceback(tmp_path):
    """yaml.v3 cannot parse it as a number and keeps the text; Python refuses to convert 4300+ digits at all."""
    stack = tmp_path / "Pulumi.big.yaml"
    stack.write_text(f"config:\n  maas:platform:\n    gatewayBudget: {'1' * 5000}\n")
    raw, _ = raw_from_stack_file(stack)
    assert raw["platform"]["gatewayBudget"] == "1" * 5000
    with pytest.raises(ConfigError) as caught:
        load_config(raw)
    assert "maas:platform.gatewayBudget" in str(caught.value)


def test_hostile_key_with_brackets_inside_platform_is_an_unknown_key_not_a_traceback(tmp_path):
    stack = tmp_path / "Pulumi.brackets.yaml"
    stack.write_text("config:\n  maas:platform:\n    kubernetes[context]: my-cluster\n    kubernetes[0]: x\n")
    with pytest.raises(ConfigError) as caught:
        load_config(raw_from_stack_file(stack)[0])
    assert [issue.path for issue in caught.value.issues] == [
        "maas:platform.kubernetes[context]",  # no position: before the one whose brackets read as one
        "maas:platform.kubernetes[0]",
    ]
    assert "unknown key 'kubernetes[context]'" in str(caught.value)


# ------------------------------------------------------------------- what observe and import write reads back

# RFC 1123 labels (names and namespaces), with those YAML 1.2 reads as numbers or constants given every chance.
NUMERIC_LOOKING = [
    "1e3",
    "1e+3",
    "1e-3",
    "0o17",
    "0x1f",
    "0b1",
    "0777",
    "1_0",
    "123",
    "1.0",
    "inf",
    "nan",
    "true",
    "null",
]
DNS_LABELS = st.one_of(
    st.sampled_from(NUMERIC_LOOKING),
    st.from_regex(r"[0-9][0-9eE]{0,3}[0-9]", fullmatch=True),
    st.from_regex(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", fullmatch=True),
)


def test_hostile_numeric_names_are_quoted_by_the_shared_writer():
    text = yaml_text({"names": ["1e3", "1e+3", "0o17"], "0o17": "1e3"}, sort_keys=True)
    assert text == "'0o17': '1e3'\nnames:\n- '1e3'\n- '1e+3'\n- '0o17'\n"
    assert yaml_document(text, "x") == {"names": ["1e3", "1e+3", "0o17"], "0o17": "1e3"}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    names=st.lists(st.tuples(DNS_LABELS, DNS_LABELS), min_size=1, max_size=4, unique=True),
    values=st.lists(st.one_of(DNS_LABELS, st.text(max_size=20)), min_size=1, max_size=4),
)
def test_hostile_snapshot_of_dns_label_names_reads_back_identically(names, values):
    objects = [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace, "labels": {name: namespace}},
            "data": {f"k{i}": value for i, value in enumerate(values)} | {namespace: name},
        }
        for namespace, name in names
    ]
    observed = Observed.of(objects, listed=[Scope("ConfigMap", namespace) for namespace, _ in names])
    again = parse_snapshot(dump_snapshot(observed))
    assert again.objects == observed.objects
    assert again.listed == observed.listed


@settings(max_examples=150, deadline=None)
@given(
    tenants=st.lists(DNS_LABELS, min_size=1, max_size=3, unique=True),
    models=st.lists(st.tuples(DNS_LABELS, DNS_LABELS), min_size=1, max_size=3, unique=True),
)
def test_hostile_imported_stack_file_of_dns_label_names_reads_back_identically(tmp_path_factory, tenants, models):
    config = {
        "tenants": [{"name": name, "namespace": name} for name in tenants],
        "models": [
            {"name": name, "namespace": namespace, "modelRef": {"kind": "LLMInferenceService", "name": name}}
            for namespace, name in models
        ],
    }
    stack = tmp_path_factory.mktemp("import") / "Pulumi.dev.yaml"
    stack.write_text(stack_document(config, "the snapshot 1e3.yaml"))
    assert raw_from_stack_file(stack)[0] == config


def test_hostile_yaml_line_breaks_in_a_value_read_back_identically():
    """NEL, LS and PS are line breaks to a YAML reader: PyYAML wrote them raw inside single quotes, where they were
    folded into spaces, so a snapshot of a ConfigMap holding one did not read back (hypothesis found `'\\x85'`)."""
    for value in ("\x85", "a\u2028b", "\u2029", "x\x85y"):
        text = yaml_text({"k": value}, sort_keys=True)
        assert yaml_document(text, "x") == {"k": value}, text
