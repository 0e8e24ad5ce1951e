"""`python -m maas validate`: the stack's plan or YAML files against the CRDs, exit 0 / 1 (invalid) / 2 (unusable)."""

from __future__ import annotations

import io
import json
import re
from xml.etree import ElementTree

import pytest
import yaml

from maas.config import load_config, raw_from_stack_file
from maas.observe import Observed
from maas.plan.build import build_plan
from maas.tools.cli import main, stack_file
from maas.tools.render import canonical, object_sort_key
from tests.conftest import DEV_STACK, ROOT

CRDS = ROOT / "crds"
XKS_STACK = ROOT / "tests" / "stacks" / "Pulumi.xks-coexist.yaml"
TRLP = "kuadrant.io_tokenratelimitpolicies.yaml"
DAY_CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: day, namespace: llm}\ndata: {day: 2024-01-01}\n"
BAD_TRLP = """apiVersion: kuadrant.io/v1alpha1
kind: TokenRateLimitPolicy
metadata: {name: maas-trlp-granite-7b, namespace: llm}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: granite}
  limitz: {}
  limits:
    tokens-10-per-1d:
      rates: [{limit: 10, window: 1d}]
"""
LIST_WITH_UNKNOWN_KIND = """apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Namespace, metadata: {name: llm}}
- {apiVersion: example.com/v1, kind: Widget, metadata: {name: w, namespace: llm}}
"""
KUADRANT_ONLY_NOTE = (
    "note: no CRD in {dump} for extensions.kuadrant.io/v1alpha1 TelemetryPolicy (2), gateway.networking.k8s.io/v1 "
    "HTTPRoute (4), maas.opendatahub.io/v1alpha1 ExternalModel (2), maas.opendatahub.io/v1alpha1 MaaSAuthPolicy (4), "
    "maas.opendatahub.io/v1alpha1 MaaSModelRef (5), maas.opendatahub.io/v1alpha1 MaaSSubscription (7), "
    "maas.opendatahub.io/v1alpha1 MaasTenantConfig (2), monitoring.coreos.com/v1 PodMonitor (1), "
    "networking.istio.io/v1 DestinationRule (8), networking.istio.io/v1 ServiceEntry (2), networking.istio.io/v1alpha3 "
    "EnvoyFilter (2), telemetry.istio.io/v1 Telemetry (2); the API server refuses such objects: install the CRDs (and "
    "add them to the --crds dump), or remove the objects"
)


def validate(capsys, *args: str) -> tuple[int, list[str], list[str]]:
    code = main(["validate", *args])
    captured = capsys.readouterr()
    return code, captured.out.splitlines(), captured.err.splitlines()


def crd_documents(*names: str) -> list[dict]:
    return [doc for name in names for doc in yaml.load_all((CRDS / name).read_text(), Loader=yaml.CSafeLoader) if doc]


def kuadrant_dump(tmp_path, patch=None):
    """`kubectl get crd -o json` (YAML's JSON subset) of a cluster with only Kuadrant's CRDs: one List."""
    items = crd_documents(*sorted(path.name for path in CRDS.glob("kuadrant.io_*.yaml")))
    for item in items:
        if patch is not None:
            patch(item)
    path = tmp_path / "cluster-crds.yaml"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return path


def cap_token_limits(crd: dict) -> None:
    """A cluster whose TokenRateLimitPolicy CRD allows at most 10 tokens per rate."""
    if crd["spec"]["names"]["kind"] == "TokenRateLimitPolicy":
        limits = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["limits"]
        limits["additionalProperties"]["properties"]["rates"]["items"]["properties"]["limit"]["maximum"] = 10


# ------------------------------------------------------------------------------------------------ the stack's plan


def test_dev_stack_is_valid_exit_0_and_nothing_on_stdout(capsys):
    code, out, err = validate(capsys)
    assert (code, out) == (0, [])
    assert err[-1] == "validated 101 object(s): no problem"


def test_stack_mode_checks_exactly_the_objects_render_prints(dev_rendering):
    raw, _ = raw_from_stack_file(DEV_STACK)
    plan = build_plan(load_config(raw), Observed.nothing())
    bodies = sorted((canonical(o.body) for o in plan.objects() if o.subresource is None), key=object_sort_key)
    assert bodies == dev_rendering.objects()


def test_the_cluster_crds_judge_the_stack_and_kinds_they_lack_are_problems_listed_once(capsys, tmp_path):
    dump = kuadrant_dump(tmp_path, cap_token_limits)
    code, out, err = validate(capsys, "--crds", str(dump))
    assert code == 1
    assert (
        "maas:models (external-models/gpt-4o): TokenRateLimitPolicy external-models/maas-trlp-gpt-4o: "
        "spec.limits.tokens-20000-per-24h.rates[0].limit: 20000 is greater than the maximum of 10"
    ) in out
    assert (
        "maas:tenants (redteam): Telemetry openshift-ingress/latency-per-subscription-redteam: <root>: no schema for "
        f"telemetry.istio.io/v1/Telemetry (neither a CRD in {dump} nor a core kind)"
    ) in out
    missing_kinds = [line for line in out if "no schema for" in line]
    assert len(missing_kinds) == 41  # every object of the 12 kinds the dump lacks
    assert KUADRANT_ONLY_NOTE.format(dump=dump) in err


def test_certificate_without_a_vendored_crd_is_a_note_not_a_silent_pass(capsys):
    code, out, err = validate(capsys, "--config-file", str(XKS_STACK))
    assert (code, out) == (0, [])
    assert (
        f"note: 3 object(s) of cert-manager.io/v1 Certificate (3) not checked: no CRD for them in {CRDS}; pass --crds "
        "with your cluster's CRDs to check them"
    ) in err


def test_certificate_is_a_problem_when_the_cluster_dump_lacks_cert_manager(capsys, tmp_path):
    dump = kuadrant_dump(tmp_path)
    code, out, _ = validate(capsys, "--config-file", str(XKS_STACK), "--crds", str(dump))
    assert code == 1
    assert (
        "maas:tenants (blue): Certificate odh-ai-gateway-infra/maas-api-serving-cert-blue: <root>: no schema for "
        f"cert-manager.io/v1/Certificate (neither a CRD in {dump} nor a core kind)"
    ) in out


def test_invalid_configuration_is_unusable_input_exit_2(capsys, tmp_path):
    stack = tmp_path / "Pulumi.bad.yaml"
    stack.write_text("config:\n  maas:models: 3\n")
    code, out, err = validate(capsys, "--config-file", str(stack))
    assert (code, out) == (2, [])
    assert err[0].startswith("error: invalid MaaS configuration (1 problem(s))")


def test_missing_stack_file_exits_2(capsys, tmp_path):
    code, _, err = validate(capsys, "--config-file", str(tmp_path / "Pulumi.none.yaml"))
    assert code == 2
    assert err == [
        f"error: stack file {tmp_path / 'Pulumi.none.yaml'} not found; pass --stack NAME or --config-file PATH"
    ]


def test_files_and_a_stack_together_are_refused(capsys, tmp_path):
    code, _, err = validate(capsys, "--stack", "dev", str(tmp_path / "x.yaml"))
    assert code == 2
    assert err == ["error: give FILEs or a stack (--stack, --config-file, --observed), not both"]


# ------------------------------------------------------------------------------------------------------ YAML files


def test_render_output_validates_as_yaml_and_as_json_array(capsys, tmp_path, dev_rendering):
    as_yaml = tmp_path / "dev.yaml"
    as_json = tmp_path / "dev.json"
    as_yaml.write_text(yaml.safe_dump_all(dev_rendering.objects(), sort_keys=False))
    as_json.write_text(json.dumps(dev_rendering.objects()))
    code, out, err = validate(capsys, str(as_yaml), str(as_json))
    assert (code, out, err) == (0, [], ["validated 202 object(s): no problem"])


def test_status_writes_of_render_status_are_noted_not_passed_as_objects(capsys, tmp_path, dev_rendering):
    path = tmp_path / "with-status.yaml"
    objects, writes = dev_rendering.objects(), dev_rendering.statuses()
    path.write_text(yaml.dump_all(objects + writes, Dumper=yaml.CSafeDumper))
    first_write = [n for n, line in enumerate(path.read_text().splitlines(), 1) if line == "---"][len(objects) - 1] + 1
    code, out, err = validate(capsys, str(path))
    assert (code, out) == (0, [])
    assert err == [
        f"note: {len(writes)} status write(s) (`render --status` documents, e.g. {path}:{first_write}) not checked: a "
        "status is judged on the object it is written to, so validate the stack instead (no FILE), which checks them",
        f"validated {len(objects)} object(s): no problem",
    ]


def test_each_problem_names_file_line_object_and_path(capsys, tmp_path):
    """Issue 20: the second document was `change.yaml:1` (its 0-based index, which reads as line 1); it starts on
    line 6."""
    path = tmp_path / "change.yaml"
    path.write_text(f"{DAY_CONFIGMAP}---\n{BAD_TRLP}")
    assert path.read_text().splitlines()[5] == "apiVersion: kuadrant.io/v1alpha1"
    code, out, _ = validate(capsys, str(path))
    assert code == 1
    assert out == [
        f"{path}:6 TokenRateLimitPolicy llm/maas-trlp-granite-7b: spec.limits.tokens-10-per-1d.rates[0].window: "
        "'1d' does not match '^([0-9]{1,5}(h|m|s|ms)){1,4}$'",
        f"{path}:6 TokenRateLimitPolicy llm/maas-trlp-granite-7b: spec.limitz: unknown field (the API server would "
        "silently prune it)",
    ]


def test_unquoted_dates_stay_text_as_kubectl_reads_them(capsys, tmp_path):
    path = tmp_path / "day.yaml"
    path.write_text(DAY_CONFIGMAP)
    assert validate(capsys, str(path))[:2] == (0, [])


def test_list_items_are_placed_at_their_line_and_an_unknown_kind_is_a_problem(capsys, tmp_path):
    path = tmp_path / "list.yaml"
    path.write_text(LIST_WITH_UNKNOWN_KIND)
    code, out, err = validate(capsys, str(path))
    assert code == 1
    assert out == [
        f"{path}:5 Widget llm/w: <root>: no schema for example.com/v1/Widget (neither a CRD in {CRDS} nor a core kind)"
    ]
    assert err[-1] == "validated 2 object(s): 1 problem(s)"


def test_stdin_is_read_for_a_dash(capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(BAD_TRLP))
    code, out, _ = validate(capsys, "-")
    assert code == 1
    assert out[0].startswith("<stdin>:1 TokenRateLimitPolicy llm/maas-trlp-granite-7b: ")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "a: [\n",
            "{path}:2:1: invalid YAML: did not find expected node content (while parsing a flow node at line 2, "
            "column 1); fix the YAML syntax here",
        ),
        ("--- just text\n", "{path}:1: not a Kubernetes object (a mapping with apiVersion and kind)"),
        ("- 1\n- 2\n", "{path}:1: not a Kubernetes object (a mapping with apiVersion and kind)"),
        (
            f"{DAY_CONFIGMAP}---\n\n# a comment\n- 1\n",
            "{path}:8: not a Kubernetes object (a mapping with apiVersion and kind)",
        ),
    ],
)
def test_unusable_file_exits_2_and_the_other_files_are_still_checked(capsys, tmp_path, text, message):
    broken = tmp_path / "broken.yaml"
    broken.write_text(text)
    good = tmp_path / "change.yaml"
    good.write_text(BAD_TRLP)
    code, out, err = validate(capsys, str(broken), str(good))
    assert code == 2
    assert len(out) == 2  # the TRLP's two problems
    assert err == [
        f"error: {message.format(path=broken)}",
        "validated 1 object(s): 2 problem(s); 1 input(s) could not be used",
    ]


def test_missing_file_and_empty_file_exit_2(capsys, tmp_path):
    empty = tmp_path / "empty.yaml"
    empty.write_text("---\n")
    assert validate(capsys, str(tmp_path / "nope.yaml"))[0] == 2
    code, _, err = validate(capsys, str(empty))
    assert code == 2
    assert err[0] == f"error: no Kubernetes object in '{empty}'; nothing was validated"


# ----------------------------------------------------------------------------------------------- --crds: the dump


def test_crds_as_multi_document_yaml_and_as_a_directory(capsys, tmp_path):
    trlp = tmp_path / "change.yaml"
    trlp.write_text(BAD_TRLP.replace("  limitz: {}\n", "").replace("1d", "1h"))
    multi = tmp_path / "multi.yaml"
    multi.write_text(yaml.dump_all(crd_documents(TRLP, "kuadrant.io_authpolicies.yaml"), Dumper=yaml.CSafeDumper))
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "dump.yaml").write_text(multi.read_text())
    assert validate(capsys, "--crds", str(multi), str(trlp))[:2] == (0, [])
    assert validate(capsys, "--crds", str(folder), str(trlp))[:2] == (0, [])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "--crds '{path}' not found; "),
        ("apiVersion: v1\nkind: List\nitems: []\n", "--crds '{path}' holds no CustomResourceDefinition; "),
        (
            "kind: CustomResourceDefinition\n",
            "--crds '{path}': cannot read its CRDs (a CustomResourceDefinition lacks 'spec'); ",
        ),
        ("kind: [\n", "--crds '{path}': {path}:2:1: not valid YAML: while parsing a flow node; did not find expected"),
    ],
)
def test_unusable_crd_dump_exits_2(capsys, tmp_path, content, message):
    dump = tmp_path / "crds.yaml"
    if content is not None:
        dump.write_text(content)
    code, out, err = validate(capsys, "--crds", str(dump))
    assert (code, out, len(err)) == (2, [], 1)
    assert err[0].startswith(f"error: {message.format(path=dump)}")


def test_a_stack_the_update_would_refuse_for_its_gateway_budget_is_invalid(capsys, tmp_path):
    """validate runs every check `pulumi up` runs (maas.plan.checks.issues), not only the CRD schemas."""
    route = {"hostnames": [f"h{i:03d}.example.com" for i in range(50)]}
    model = {"name": "granite", "namespace": "llm", "modelRef": {"kind": "LLMInferenceService", "name": "granite"}}
    stack = tmp_path / "Pulumi.big.yaml"
    stack.write_text(yaml.safe_dump({"config": {"maas:models": [{**model, "route": route}]}}))
    code, out, _ = validate(capsys, "--config-file", str(stack))
    assert code == 1
    assert any(line.startswith("maas:platform.gatewayBudget: gateway openshift-ingress/") for line in out), out


# ------------------------------------------------------------------------------- places, and output for CI


def test_objects_sharing_a_line_are_told_apart_by_column(capsys, tmp_path):
    """A JSON array on one line (`render --format json | jq -c`): each object's line and column."""
    path = tmp_path / "compact.json"
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "llm"}}
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    path.write_text(json.dumps([namespace, widget], separators=(",", ":")) + "\n")
    column = path.read_text().index('{"apiVersion":"example.com') + 1
    code, out, _ = validate(capsys, str(path))
    assert code == 1
    assert out == [
        f"{path}:1:{column} Widget w: <root>: no schema for example.com/v1/Widget (neither a CRD in {CRDS} nor a core kind)"
    ]


def test_a_kubectl_list_file_places_each_item_on_its_line(capsys, tmp_path):
    """`kubectl get -o yaml` of two TokenRateLimitPolicies, the second invalid: its `- apiVersion` line."""
    trlp = yaml.safe_load(BAD_TRLP)
    good = yaml.safe_load(BAD_TRLP.replace("  limitz: {}\n", "").replace("1d", "1h"))
    text = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [good, trlp]}, sort_keys=False)
    path = tmp_path / "list.yaml"
    path.write_text(text)
    second = [n for n, line in enumerate(text.splitlines(), 1) if line.startswith("- ")][1]
    code, out, _ = validate(capsys, str(path))
    assert code == 1
    assert {line.split(" ", 1)[0] for line in out} == {f"{path}:{second}"}


def validate_as(capsys, fmt: str, *args: str) -> tuple[int, str, list[str]]:
    code = main(["validate", "--format", fmt, *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err.splitlines()


def test_format_json_gives_file_line_object_and_message_of_each_problem(capsys, tmp_path):
    path = tmp_path / "change.yaml"
    path.write_text(f"{DAY_CONFIGMAP}---\n{BAD_TRLP}")
    broken = tmp_path / "broken.yaml"
    broken.write_text("- 1\n")
    code, out, err = validate_as(capsys, "json", str(path), str(broken))
    document = json.loads(out)
    assert code == document["exitCode"] == 2
    assert document["inputs"] == [str(path), str(broken)]
    assert document["checked"] == 2
    assert document["problems"][1] == {
        "file": str(path),
        "line": 6,
        "object": "TokenRateLimitPolicy llm/maas-trlp-granite-7b",
        "message": "TokenRateLimitPolicy llm/maas-trlp-granite-7b: spec.limitz: unknown field (the API server would "
        "silently prune it)",
    }
    assert document["unusable"] == [f"{broken}:1: not a Kubernetes object (a mapping with apiVersion and kind)"]
    assert err[-1] == "validated 2 object(s): 2 problem(s); 1 input(s) could not be used"  # stderr as for text


def test_format_json_of_a_stack_names_the_configuration_entry(capsys, tmp_path):
    dump = kuadrant_dump(tmp_path, cap_token_limits)
    code, out, _ = validate_as(capsys, "json", "--crds", str(dump))
    document = json.loads(out)
    assert (code, document["exitCode"], document["inputs"]) == (1, 1, [str(stack_file("dev"))])
    assert {
        "entry": "maas:models (external-models/gpt-4o)",
        "message": "TokenRateLimitPolicy external-models/maas-trlp-gpt-4o: spec.limits.tokens-20000-per-24h.rates[0]"
        ".limit: 20000 is greater than the maximum of 10",
    } in document["problems"]
    assert document["notes"] == [KUADRANT_ONLY_NOTE.format(dump=dump).removeprefix("note: ")]


def test_format_json_says_why_nothing_could_be_checked(capsys, tmp_path):
    code, out, err = validate_as(capsys, "json", "--config-file", str(tmp_path / "Pulumi.none.yaml"))
    missing = f"stack file {tmp_path / 'Pulumi.none.yaml'} not found; pass --stack NAME or --config-file PATH"
    assert code == 2
    assert json.loads(out) == {
        "exitCode": 2,
        "inputs": [str(tmp_path / "Pulumi.none.yaml")],
        "checked": 0,
        "problems": [],
        "unusable": [missing],
        "warnings": [],
        "notes": [],
    }
    assert err == [f"error: {missing}"]


def junit(text: str) -> ElementTree.Element:
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    return ElementTree.fromstring(text.encode())


def test_format_junit_has_a_testcase_per_object_of_each_file(capsys, tmp_path, dev_rendering):
    path = tmp_path / "change.yaml"
    path.write_text(f"{DAY_CONFIGMAP}---\n{BAD_TRLP}")
    broken = tmp_path / "broken.yaml"
    broken.write_text("a: [\n")
    rendered = tmp_path / "with-status.yaml"
    rendered.write_text(
        yaml.dump_all(dev_rendering.objects()[:2] + dev_rendering.statuses()[:1], Dumper=yaml.CSafeDumper)
    )
    code, out, _ = validate_as(capsys, "junit", str(path), str(broken), str(rendered))
    assert code == 2
    root = junit(out)
    assert root.tag == "testsuites"
    assert {key: root.get(key) for key in ("tests", "failures", "errors", "skipped")} == {
        "tests": "6",
        "failures": "1",
        "errors": "1",
        "skipped": "1",
    }
    suites = root.findall("testsuite")
    assert [suite.get("name") for suite in suites] == [str(path), str(broken), str(rendered)]
    ok, bad = suites[0].findall("testcase")
    assert (ok.get("name"), ok.get("file"), ok.get("line"), list(ok)) == ("ConfigMap llm/day", str(path), "1", [])
    assert (bad.get("name"), bad.get("line"), bad.get("classname")) == (
        "TokenRateLimitPolicy llm/maas-trlp-granite-7b",
        "6",
        str(path),
    )
    [failure] = bad
    assert failure.tag == "failure" and failure.get("message").startswith(
        f"2 problem(s): {path}:6 TokenRateLimitPolicy"
    )
    assert failure.text.splitlines()[1] == (
        f"{path}:6 TokenRateLimitPolicy llm/maas-trlp-granite-7b: spec.limitz: unknown field (the API server would "
        "silently prune it)"
    )
    [error] = suites[1].find("testcase")
    assert error.tag == "error" and error.get("message").startswith(f"{broken}:2:1: invalid YAML: ")
    skipped = [case for case in suites[2].findall("testcase") if case.find("skipped") is not None]
    third = [n for n, line in enumerate(rendered.read_text().splitlines(), 1) if line == "---"][1] + 1
    assert [case.get("line") for case in skipped] == [str(third)]


def test_format_junit_of_a_stack_is_one_testcase_for_the_stack_file(capsys, tmp_path):
    code, out, _ = validate_as(capsys, "junit", "--config-file", str(XKS_STACK))
    assert code == 0
    [suite] = junit(out).findall("testsuite")
    [case] = suite.findall("testcase")
    assert (suite.get("name"), case.get("name"), list(case)) == (str(XKS_STACK), str(XKS_STACK), [])
    said = suite.find("system-err").text.splitlines()
    assert any(line.startswith("note: 3 object(s) of cert-manager.io/v1 Certificate (3)") for line in said)
    assert any(line.startswith("warning: maas:models[1] (green-models/claude).external.tls") for line in said)
    dump = kuadrant_dump(tmp_path, cap_token_limits)
    code, out, _ = validate_as(capsys, "junit", "--crds", str(dump))
    [failure] = junit(out).find("testsuite").find("testcase")
    assert code == 1 and failure.tag == "failure"
    assert re.match(r"\d+ problem\(s\): maas:", failure.get("message"))
    assert (
        "maas:models (external-models/gpt-4o): TokenRateLimitPolicy external-models/maas-trlp-gpt-4o: "
        "spec.limits.tokens-20000-per-24h.rates[0].limit: 20000 is greater than the maximum of 10"
    ) in failure.text.splitlines()


def test_format_junit_escapes_what_xml_cannot_hold(capsys, tmp_path):
    path = tmp_path / "bell.yaml"
    path.write_text('apiVersion: v1\nkind: "Wid\\aget<&>"\nmetadata: {name: w}\n')
    code, out, _ = validate_as(capsys, "junit", str(path))
    assert code == 1 and "\a" not in out
    [case] = junit(out).find("testsuite").findall("testcase")
    assert case.get("name") == '"Wid\\u0007get<&>" w'


def test_validate_of_a_stack_prints_the_plans_warnings_as_render_does(capsys):
    """A reviewer running only `validate` in CI sees what `render` and `pulumi preview` warn about: here the dev
    stack's `premium-users`, which owns two subscriptions to llm/llama-3-8b (403 multiple_subscriptions)."""
    code, _, err = validate_as(capsys, "text", "--config-file", str(ROOT / "Pulumi.dev.yaml"))
    assert code == 0
    assert any(line.startswith("warning: group premium-users owns 2 subscriptions") for line in err), err
