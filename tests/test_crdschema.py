"""maas.crdschema: rendered objects checked against the real CRDs (schema + CEL) and core schemas."""

from __future__ import annotations

import copy
import hashlib
import json
import re
import textwrap
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from maas import crdschema
from maas.crdschema import CrdRegistry, validate, validate_all

# Kinds the program renders; every CEL rule reachable from them must be evaluable.
RENDERED_KINDS = {
    ("kuadrant.io/v1", "AuthPolicy"),
    ("kuadrant.io/v1alpha1", "TokenRateLimitPolicy"),
    ("extensions.kuadrant.io/v1alpha1", "TelemetryPolicy"),
    ("gateway.networking.k8s.io/v1", "HTTPRoute"),
    ("networking.istio.io/v1", "DestinationRule"),
    ("networking.istio.io/v1", "ServiceEntry"),
    ("networking.istio.io/v1alpha3", "EnvoyFilter"),
    ("telemetry.istio.io/v1", "Telemetry"),
    ("maas.opendatahub.io/v1alpha1", "MaaSModelRef"),
    ("maas.opendatahub.io/v1alpha1", "MaaSAuthPolicy"),
    ("maas.opendatahub.io/v1alpha1", "MaaSSubscription"),
    ("maas.opendatahub.io/v1alpha1", "MaasTenantConfig"),
    ("maas.opendatahub.io/v1alpha1", "ExternalModel"),
    ("monitoring.coreos.com/v1", "PodMonitor"),
    ("perses.dev/v1alpha1", "PersesDashboard"),
}


def meta(name: str, namespace: str = "llm") -> dict:
    return {"name": name, "namespace": namespace}


def trlp() -> dict:
    return {
        "apiVersion": "kuadrant.io/v1alpha1",
        "kind": "TokenRateLimitPolicy",
        "metadata": meta("maas-trlp-x"),
        "spec": {
            "targetRef": {"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": "x-kserve-route"},
            "limits": {
                "tokens-1000-per-1h": {
                    "rates": [{"limit": 1000, "window": "1h"}],
                    "counters": [{"expression": "auth.identity.userid"}],
                    "when": [{"predicate": 'auth.identity.userid == "a"'}],
                }
            },
        },
    }


def auth_policy() -> dict:
    return {
        "apiVersion": "kuadrant.io/v1",
        "kind": "AuthPolicy",
        "metadata": meta("m1-auth"),
        "spec": {
            "targetRef": {"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": "m1-kserve-route"},
            "rules": {"authentication": {"service-accounts": {"kubernetesTokenReview": {"audiences": ["maas"]}}}},
        },
    }


def http_route() -> dict:
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": meta("m1-kserve-route"),
        "spec": {
            "parentRefs": [{"name": "maas-default-gateway", "namespace": "openshift-ingress"}],
            "hostnames": ["maas.example.com"],
            "rules": [
                {
                    "matches": [{"path": {"type": "PathPrefix", "value": "/llm/m1"}}],
                    "filters": [
                        {
                            "type": "URLRewrite",
                            "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}},
                        }
                    ],
                    "backendRefs": [{"name": "m1-kserve-workload-svc", "port": 8000}],
                    "timeouts": {"request": "300s", "backendRequest": "200s"},
                }
            ],
        },
    }


def maas_auth_policy(subjects: dict) -> dict:
    return {
        "apiVersion": "maas.opendatahub.io/v1alpha1",
        "kind": "MaaSAuthPolicy",
        "metadata": meta("team-a", "models-as-a-service"),
        "spec": {"modelRefs": [{"name": "m1", "namespace": "llm"}], "subjects": subjects},
    }


def deployment() -> dict:
    container = {
        "name": "api",
        "image": "quay.io/opendatahub/maas-api:1.0",
        "ports": [{"containerPort": 8080}],
        "resources": {"limits": {"cpu": "500m", "memory": "256Mi"}},
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta("maas-api", "models-as-a-service"),
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "maas-api"}},
            "template": {"metadata": {"labels": {"app": "maas-api"}}, "spec": {"containers": [container]}},
        },
    }


# One valid object per rendered kind (plus core kinds), as the program would produce them.
VALID_OBJECTS = [
    trlp(),
    auth_policy(),
    http_route(),
    maas_auth_policy({"groups": [{"name": "team-a"}]}),
    deployment(),
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "models-as-a-service"}},
    {
        "apiVersion": "extensions.kuadrant.io/v1alpha1",
        "kind": "TelemetryPolicy",
        "metadata": meta("maas-telemetry", "openshift-ingress"),
        "spec": {
            "targetRef": {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "maas-default-gateway"},
            "metrics": {"default": {"labels": {"user": "auth.identity.userid"}}},
        },
    },
    {
        "apiVersion": "networking.istio.io/v1",
        "kind": "DestinationRule",
        "metadata": meta("ext-openai"),
        "spec": {
            "host": "api.openai.com",
            "trafficPolicy": {
                "tls": {"mode": "SIMPLE", "sni": "api.openai.com"},
                "connectionPool": {"tcp": {"connectTimeout": "10s"}, "http": {"idleTimeout": "60s"}},
            },
        },
    },
    {
        "apiVersion": "networking.istio.io/v1",
        "kind": "ServiceEntry",
        "metadata": meta("ext-openai"),
        "spec": {
            "hosts": ["api.openai.com"],
            "location": "MESH_EXTERNAL",
            "resolution": "DNS",
            "ports": [{"number": 443, "name": "https", "protocol": "TLS"}],
        },
    },
    {
        "apiVersion": "telemetry.istio.io/v1",
        "kind": "Telemetry",
        "metadata": meta("maas-telemetry", "openshift-ingress"),
        "spec": {
            "selector": {"matchLabels": {"app": "gateway"}},
            "metrics": [{"providers": [{"name": "prometheus"}], "reportingInterval": "15s"}],
        },
    },
    {
        "apiVersion": "maas.opendatahub.io/v1alpha1",
        "kind": "MaaSModelRef",
        "metadata": meta("m1"),
        "spec": {"modelRef": {"kind": "LLMInferenceService", "name": "m1"}},
    },
    {
        "apiVersion": "maas.opendatahub.io/v1alpha1",
        "kind": "MaaSSubscription",
        "metadata": meta("s1", "models-as-a-service"),
        "spec": {
            "owner": {"users": ["alice"]},
            "modelRefs": [{"name": "m1", "namespace": "llm", "tokenRateLimits": [{"limit": 1000, "window": "1h"}]}],
        },
    },
    {
        "apiVersion": "maas.opendatahub.io/v1alpha1",
        "kind": "MaasTenantConfig",
        "metadata": meta("default-tenant", "models-as-a-service"),
        "spec": {"telemetry": {"enabled": True}},
    },
    {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PodMonitor",
        "metadata": meta("limitador", "kuadrant-system"),
        "spec": {"selector": {"matchLabels": {"app": "limitador"}}, "podMetricsEndpoints": [{"port": "http"}]},
    },
]


def errors_of(obj: dict) -> list[str]:
    return validate(obj)


def only_error(obj: dict) -> str:
    errors = validate(obj)
    assert len(errors) == 1, errors
    return errors[0]


# --------------------------------------------------------------------------------------------------
# locating the folder


REPO_ROOT = Path(crdschema.__file__).resolve().parents[2]  # maas/crdschema/__init__.py
VENDORED = REPO_ROOT / "crds"


def test_crds_dir_honours_the_environment_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(crdschema.CRDS_DIR_ENV, str(tmp_path))
    assert crdschema.crds_dir() == tmp_path


def test_crds_dir_defaults_to_the_copy_vendored_in_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(crdschema.CRDS_DIR_ENV, raising=False)
    assert crdschema.crds_dir() == VENDORED


def sources_listing() -> tuple[set[str], re.Match]:
    """The CRD files SOURCES.md names (table rows and the backticked names of later additions), and its total line."""
    text = (VENDORED / "SOURCES.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| ([^ |/]+\.yaml) \|", text, re.MULTILINE))
    later = set(re.findall(r"`([^`/ ]+\.yaml)`", text))
    total = re.search(r"^Total: (\d+) files, (\d+) bytes\.$", text, re.MULTILINE)
    assert total is not None
    return rows | later, total


def test_vendored_crds_are_exactly_the_files_sources_md_lists() -> None:
    listed, _ = sources_listing()
    present = {path.name for path in VENDORED.glob("*.yaml")}
    assert len(listed) == 34
    assert sorted(listed - present) == []  # every listed file is vendored
    assert sorted(present - listed) == []  # every vendored CRD file is listed


def test_vendored_crds_are_byte_identical_to_their_recorded_checksums() -> None:
    """SHA256SUMS (``cd crds && sha256sum -c SHA256SUMS``) was taken from the source folder at vendoring time."""
    recorded = dict(
        reversed(line.split("  ", 1)) for line in (VENDORED / "SHA256SUMS").read_text(encoding="utf-8").splitlines()
    )
    listed, _ = sources_listing()
    assert set(recorded) == listed | {"SOURCES.md"}
    actual = {name: hashlib.sha256((VENDORED / name).read_bytes()).hexdigest() for name in recorded}
    assert actual == recorded


def test_the_table_of_sources_md_adds_up_to_its_total() -> None:
    text = (VENDORED / "SOURCES.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| ([^ |/]+\.yaml) \|", text, re.MULTILINE)
    _, total = sources_listing()
    assert (len(rows), sum((VENDORED / row).stat().st_size for row in rows)) == (30, 4_460_871)
    assert (int(total.group(1)), int(total.group(2))) == (30, 4_460_871)


def test_a_crd_list_in_a_file_of_any_name_is_loaded(tmp_path: Path) -> None:
    """What `kubectl get crd -o yaml > crds.yaml` writes: one List of CRDs, in a file named after no group."""
    crd = yaml.safe_load(textwrap.dedent(WIDGET_CRD))
    for name in ("crds.yaml", "my_crds.yaml"):
        folder = tmp_path / name.removesuffix(".yaml")
        folder.mkdir()
        (folder / name).write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [crd]}))
        registry = CrdRegistry(folder)
        assert registry.served_versions("example.com", "Widget") == ["v1"]
        assert validate(widget(port=8080), registry=registry) == []


def test_a_missing_crd_folder_is_named_with_the_fix(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=f"CRD folder {tmp_path / 'absent'} not found \\(set MAAS_CRDS_DIR\\)"):
        CrdRegistry(tmp_path / "absent")


# --------------------------------------------------------------------------------------------------
# valid objects


@pytest.mark.parametrize("obj", VALID_OBJECTS, ids=lambda o: o["kind"])
def test_valid_objects_pass(obj: dict) -> None:
    assert validate(obj) == []


def test_validation_does_not_modify_the_object() -> None:
    route = http_route()
    validate(route)
    assert route == http_route()  # defaults are applied to a copy


def test_every_rule_of_the_rendered_kinds_can_be_evaluated() -> None:
    assert crdschema.default_registry().unsupported_rules(RENDERED_KINDS) == []


# --------------------------------------------------------------------------------------------------
# TokenRateLimitPolicy


def test_pattern_violation_names_object_and_path() -> None:
    obj = trlp()
    obj["spec"]["limits"]["tokens-1000-per-1h"]["rates"][0]["window"] = "1d"
    error = only_error(obj)
    assert error.startswith(
        "TokenRateLimitPolicy llm/maas-trlp-x: spec.limits.tokens-1000-per-1h.rates[0].window: '1d' does not match"
    )


def test_unknown_field_is_an_error_not_pruned() -> None:
    obj = trlp()
    obj["spec"]["limitz"] = {}
    assert only_error(obj) == (
        "TokenRateLimitPolicy llm/maas-trlp-x: spec.limitz: unknown field (the API server would silently prune it)"
    )


def test_unknown_field_inside_a_map_value_is_an_error() -> None:
    obj = trlp()
    obj["spec"]["limits"]["tokens-1000-per-1h"]["rates"][0]["burst"] = 5
    assert "spec.limits.tokens-1000-per-1h.rates[0].burst: unknown field" in only_error(obj)


def test_target_ref_group_is_checked_by_its_cel_rule() -> None:
    obj = trlp()
    obj["spec"]["targetRef"]["group"] = "networking.istio.io"
    error = only_error(obj)
    assert "spec.targetRef: Invalid targetRef.group" in error
    assert "self.group == 'gateway.networking.k8s.io'" in error


def test_defaults_and_limits_are_mutually_exclusive() -> None:
    obj = trlp()
    obj["spec"]["defaults"] = {"limits": obj["spec"]["limits"]}
    error = only_error(obj)
    assert "spec: Implicit and explicit defaults are mutually exclusive" in error
    assert "!(has(self.defaults) && has(self.limits))" in error


@pytest.mark.parametrize("bad", [1000.0, "1000", True])
def test_integers_must_stay_integers(bad: object) -> None:
    obj = trlp()
    obj["spec"]["limits"]["tokens-1000-per-1h"]["rates"][0]["limit"] = bad
    assert "rates[0].limit:" in only_error(obj)
    core = deployment()
    core["spec"]["replicas"] = bad
    assert "spec.replicas:" in only_error(core)


def test_missing_required_field() -> None:
    obj = trlp()
    del obj["spec"]["targetRef"]["name"]
    assert "spec.targetRef: 'name' is a required property" in only_error(obj)


# --------------------------------------------------------------------------------------------------
# AuthPolicy


def test_auth_policy_with_implicit_and_explicit_defaults_fails() -> None:
    obj = auth_policy()
    obj["spec"]["defaults"] = {"rules": {"authentication": {"anonymous": {"anonymous": {}}}}}
    assert "Implicit and explicit defaults are mutually exclusive" in only_error(obj)


def test_auth_policy_without_rules_fails() -> None:
    obj = auth_policy()
    del obj["spec"]["rules"]
    assert "spec: At least one spec.rules must be defined" in only_error(obj)


# --------------------------------------------------------------------------------------------------
# MaaSAuthPolicy: rule `size(self.groups) > 0 || size(self.users) > 0` on spec.subjects


def test_maas_auth_policy_with_empty_subject_lists_fails() -> None:
    error = only_error(maas_auth_policy({"groups": [], "users": []}))
    assert "spec.subjects: at least one group or user must be specified in subjects" in error


def test_maas_auth_policy_with_no_subjects_fails_like_the_api_server() -> None:
    # Neither field present: the rule errors ("no such key"), which the API server counts as a failure.
    error = only_error(maas_auth_policy({}))
    assert "at least one group or user must be specified" in error
    assert "no such key: groups, users" in error


def test_maas_auth_policy_with_users_only_passes() -> None:
    # `size(self.groups)` errors, but `error || true` is true in CEL.
    assert validate(maas_auth_policy({"users": ["alice"]})) == []


# --------------------------------------------------------------------------------------------------
# HTTPRoute (CEL rules that read schema defaults, duration())


def test_backend_ref_without_port_fails_through_defaulted_group_and_kind() -> None:
    obj = http_route()
    del obj["spec"]["rules"][0]["backendRefs"][0]["port"]
    error = only_error(obj)
    assert "spec.rules[0].backendRefs[0]: Must have port for Service reference" in error


def test_backend_request_timeout_longer_than_request_timeout_fails_via_duration() -> None:
    obj = http_route()
    obj["spec"]["rules"][0]["timeouts"] = {"request": "1m", "backendRequest": "90s"}
    assert "spec.rules[0].timeouts: backendRequest timeout cannot be longer than request timeout" in only_error(obj)


@pytest.mark.parametrize("request_timeout", ["300s", "5m", "1h30m", "0s"])
def test_request_timeouts_that_satisfy_pattern_and_duration_rule(request_timeout: str) -> None:
    obj = http_route()
    obj["spec"]["rules"][0]["timeouts"] = {"request": request_timeout, "backendRequest": "200s"}
    assert validate(obj) == []


def test_fractional_timeout_fails_the_pattern() -> None:
    obj = http_route()
    obj["spec"]["rules"][0]["timeouts"] = {"request": "0.5ms"}
    assert "spec.rules[0].timeouts.request: '0.5ms' does not match" in only_error(obj)


def test_relative_path_prefix_fails() -> None:
    obj = http_route()
    obj["spec"]["rules"][0]["matches"][0]["path"]["value"] = "llm/m1"
    assert "value must be an absolute path and start with '/'" in only_error(obj)


def test_duplicate_parent_refs_fail_with_escaped_namespace_field() -> None:
    obj = http_route()
    obj["spec"]["parentRefs"].append(dict(obj["spec"]["parentRefs"][0]))
    assert "spec.parentRefs: sectionName must be unique" in only_error(obj)


# --------------------------------------------------------------------------------------------------
# other CRDs: Kubernetes CEL specifics


def test_duration_rule_uses_go_duration_syntax() -> None:
    rule = VALID_OBJECTS[7]  # DestinationRule
    for timeout, expected in [("0.5ms", "must be a valid duration greater than 1ms"), ("1d", "invalid duration '1d'")]:
        obj = copy.deepcopy(rule)
        obj["spec"]["trafficPolicy"]["connectionPool"]["tcp"]["connectTimeout"] = timeout
        assert expected in only_error(obj)


def test_substring_extension_function() -> None:
    entry = copy.deepcopy(VALID_OBJECTS[8])  # ServiceEntry
    entry["spec"].update(resolution="STATIC", endpoints=[{"address": "unix:///var/run/model.sock"}])
    assert validate(entry) == []
    entry["spec"]["endpoints"][0]["address"] = "unix://model.sock"
    assert "UDS must be an absolute path or abstract socket" in only_error(entry)


def test_root_rule_sees_metadata_name() -> None:
    config = copy.deepcopy(VALID_OBJECTS[12])  # MaasTenantConfig
    config["metadata"]["name"] = "tenant-b"
    assert "<root>: MaasTenantConfig name must be default-tenant" in only_error(config)


def test_reserved_word_fields_are_escaped_for_cel() -> None:
    def datasource(basic_auth: dict) -> dict:
        return {
            "apiVersion": "perses.dev/v1alpha2",
            "kind": "PersesDatasource",
            "metadata": meta("prometheus", "openshift-operators"),
            "spec": {
                "config": {"default": True, "plugin": {"kind": "PrometheusDatasource", "spec": {}}},
                "client": {"basicAuth": basic_auth},
            },
        }

    auth = {"type": "secret", "name": "creds", "username": "perses", "passwordPath": "password"}
    assert validate(datasource({**auth, "namespace": "monitoring"})) == []
    error = only_error(datasource(auth))
    assert "spec.client.basicAuth:" in error
    assert "has(self.__namespace__)" in error


# --------------------------------------------------------------------------------------------------
# metadata


def test_custom_resource_metadata_is_checked() -> None:
    obj = trlp()
    obj["metadata"].update(name="Maas_TRLP", labelz={}, labels={"app.kubernetes.io/name": "a b"})
    errors = validate(obj)
    assert any("metadata.labelz: unknown field" in e for e in errors)
    assert any("metadata.name: 'Maas_TRLP' must be a DNS-1123 subdomain" in e for e in errors)
    assert any("metadata.labels[\"app.kubernetes.io/name\"]: value 'a b'" in e for e in errors)


QUALIFIED_RULE = (
    "an optional DNS-1123 subdomain prefix (at most 253 characters) and '/', then 1-63 alphanumerics, '-', '_' or "
    "'.', starting and ending alphanumeric (e.g. 'example.com/my-name')"
)
SUBDOMAIN_RULE = (
    "must be a DNS-1123 subdomain (lower-case alphanumerics, '-' or '.', starting and ending alphanumeric); "
    "at most 253 characters"
)
LABEL_RULE = "at most 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric, or empty"


def with_metadata(**metadata: object) -> dict:
    obj = trlp()
    obj["metadata"].update(metadata)
    return obj


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (with_metadata(name="maas-trlp-x\n"), f"metadata.name: 'maas-trlp-x\\n' {SUBDOMAIN_RULE}"),
        (
            with_metadata(namespace="llm\n"),
            "metadata.namespace: 'llm\\n' must be a DNS-1123 label (lower-case alphanumerics or '-', starting and "
            "ending alphanumeric); at most 63 characters",
        ),
        (
            {"apiVersion": "v1", "kind": "Service", "metadata": meta("maas-api\n")},
            "metadata.name: 'maas-api\\n' must be a DNS-1035 label",
        ),
        (
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "llm\n"}},
            "metadata.name: 'llm\\n' must be a DNS-1123 label",
        ),
        (
            with_metadata(labels={"app\n": "a"}),
            f'metadata.labels["app\\n"]: key is not a qualified name (invalid characters in the name): {QUALIFIED_RULE}',
        ),
        (
            with_metadata(labels={"app": "a\n"}),
            f"metadata.labels.app: value 'a\\n' must be a label value: {LABEL_RULE}",
        ),
        (with_metadata(annotations={"note\n": "a"}), 'metadata.annotations["note\\n"]: key is not a qualified name'),
    ],
    ids=["name", "namespace", "service", "namespace-kind", "label-key", "label-value", "annotation-key"],
)
def test_a_trailing_newline_is_refused_in_every_name(obj: dict, expected: str) -> None:
    """``re.match`` with ``$`` accepts a trailing newline; the API server's Go regexps do not."""
    assert expected in only_error(obj)


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        ("example.com/a/b", "more than one '/'"),
        ("/app", "empty prefix"),
        ("Example.com/app", "the prefix is not a DNS-1123 subdomain"),
        ("a" * 254 + "/app", "the prefix is not a DNS-1123 subdomain"),
        ("example.com/", "empty name"),
        ("x" * 64, "the name part has 64 characters"),
        ("example.com/" + "x" * 64, "the name part has 64 characters"),
        ("-app", "invalid characters in the name"),
        ("a b", "invalid characters in the name"),
        ("\u0663app", "invalid characters in the name"),  # an Arabic-Indic digit: Python's \w and \d would admit it
    ],
)
def test_label_keys_must_be_qualified_names(key: str, reason: str) -> None:
    error = only_error(with_metadata(labels={key: "a"}))
    assert error.endswith(f": key is not a qualified name ({reason}): {QUALIFIED_RULE}")


@pytest.mark.parametrize("key", ["app", "x" * 63, "app.kubernetes.io/name", "a" * 253 + "/" + "b" * 63, "A_b.c-9"])
def test_valid_label_keys(key: str) -> None:
    assert validate(with_metadata(labels={key: "v"})) == []


@pytest.mark.parametrize(
    ("value", "valid"),
    [("", True), ("x" * 63, True), ("a_b.c-D", True), ("x" * 64, False), ("-a", False), ("a\u0663", False)],
)
def test_label_values(value: str, valid: bool) -> None:
    errors = validate(with_metadata(labels={"app": value}))
    assert errors == (
        []
        if valid
        else [
            f"TokenRateLimitPolicy llm/maas-trlp-x: metadata.labels.app: value {value!r} must be a label value: {LABEL_RULE}"
        ]
    )


def test_null_label_and_annotation_values_are_refused() -> None:
    """The ObjectMeta JSON schema admits null values; Kubernetes' string maps do not."""
    errors = validate(with_metadata(labels={"app": None}, annotations={"note": None}))
    assert errors == [
        "TokenRateLimitPolicy llm/maas-trlp-x: metadata.annotations.note: value None must be a string",
        "TokenRateLimitPolicy llm/maas-trlp-x: metadata.labels.app: value None must be a string",
    ]


def test_annotation_keys_ignore_ascii_case_only() -> None:
    """apimachinery lower-cases annotation keys before the qualified-name check; labels keep their case."""
    assert validate(with_metadata(annotations={"Example.COM/Display-Name": "x"})) == []
    kelvin = "\u212aey"  # KELVIN SIGN: Go's ToLower folds it to 'k'; a renderer emitting it has a bug
    assert only_error(with_metadata(annotations={kelvin: "x"})).endswith(
        f": key is not a qualified name (invalid characters in the name): {QUALIFIED_RULE}"
    )


def test_annotations_may_total_256_kib_of_keys_and_values() -> None:
    limit = 256 * 1024
    fits = {"a": "x" * (limit - 3), "b": "e"}  # 1 + (limit - 3) + 1 + 1 bytes
    assert validate(with_metadata(annotations=fits)) == []
    over = {**fits, "b": "é"}  # as many characters, but two UTF-8 bytes, as Go's len() counts them
    assert only_error(with_metadata(annotations=over)) == (
        "TokenRateLimitPolicy llm/maas-trlp-x: metadata.annotations: annotations total 262145 bytes (keys plus "
        "values); the API server allows at most 262144 bytes (256 KiB)"
    )


def test_cronjob_names_leave_room_for_the_job_suffix() -> None:
    def cronjob(name: str) -> dict:
        container = {"name": "c", "image": "busybox"}
        template = {"spec": {"template": {"spec": {"containers": [container], "restartPolicy": "Never"}}}}
        return {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": meta(name),
            "spec": {"schedule": "@daily", "jobTemplate": template},
        }

    assert validate(cronjob("c" * 52)) == []
    assert only_error(cronjob("c" * 53)).endswith(
        "metadata.name: '"
        + "c" * 53
        + "' must be at most 52 characters (the CronJob controller appends 11 to its Jobs' names)"
    )


def test_durations_and_times_are_ascii_and_whole() -> None:
    assert crdschema.formats.is_strfmt_duration("1h")
    assert not crdschema.formats.is_strfmt_duration("\u0661h")  # Go's \d is ASCII
    checker = crdschema.formats.format_checker()
    assert checker.conforms("2026-01-01T00:00:00Z", "date-time")
    assert not checker.conforms("2026-01-01T00:00:00Z\n", "date-time")
    assert not checker.conforms("\u0662026-01-01T00:00:00Z", "date-time")
    rule = copy.deepcopy(VALID_OBJECTS[7])  # DestinationRule: `duration(self) >= duration('1ms')`
    rule["spec"]["trafficPolicy"]["connectionPool"]["tcp"]["connectTimeout"] = "10s\n"
    assert "invalid duration '10s\\n'" in only_error(rule)


def test_namespace_on_a_cluster_scoped_custom_resource() -> None:
    gateway_class = {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "GatewayClass",
        "metadata": meta("openshift-default"),
        "spec": {"controllerName": "openshift.io/gateway-controller/v1"},
    }
    assert "metadata.namespace: not allowed on a cluster-scoped kind" in only_error(gateway_class)


# --------------------------------------------------------------------------------------------------
# core kinds (kubernetes-validate schemas)


def test_deployment_with_unknown_field_and_wrong_type() -> None:
    obj = deployment()
    container = obj["spec"]["template"]["spec"]["containers"][0]
    container["imagePullPolicy"] = "IfNotPresent"
    container["bogus"] = 1
    container["ports"][0]["containerPort"] = "8080"
    assert validate(obj) == [
        "Deployment models-as-a-service/maas-api: spec.template.spec.containers[0].bogus: "
        "unknown field (the API server would silently prune it)",
        "Deployment models-as-a-service/maas-api: spec.template.spec.containers[0].ports[0].containerPort: "
        "'8080' is not of type 'integer'",
    ]


def test_core_names_follow_kind_specific_rules() -> None:
    assert "must be a DNS-1123 label" in only_error(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a.b"}}
    )
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "maas:reader"}}
    assert validate(role) == []


# --------------------------------------------------------------------------------------------------
# kinds without a schema


CERTIFICATE = {
    "apiVersion": "cert-manager.io/v1",
    "kind": "Certificate",
    "metadata": meta("maas-tls"),
    "spec": {"secretName": "maas-tls"},
}


def test_kind_without_schema_is_an_error_unless_allowed() -> None:
    assert "no schema for cert-manager.io/v1/Certificate" in only_error(CERTIFICATE)
    assert validate(CERTIFICATE, unknown_ok={("cert-manager.io/v1", "Certificate")}) == []


def test_unserved_version_names_the_served_ones() -> None:
    obj = auth_policy()
    obj["apiVersion"] = "kuadrant.io/v1beta3"
    assert "the CRD serves only v1" in only_error(obj)


def test_validate_all_concatenates_in_order() -> None:
    bad = trlp()
    bad["spec"]["limitz"] = 1
    errors = validate_all([trlp(), CERTIFICATE, bad], unknown_ok={("cert-manager.io/v1", "Certificate")})
    assert len(errors) == 1 and "spec.limitz" in errors[0]


# --------------------------------------------------------------------------------------------------
# structural-schema extensions and unsupported rules, on a small synthetic CRD

WIDGET_CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              port: {x-kubernetes-int-or-string: true}
              note: {type: string, nullable: true}
              extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
              tags: {type: array, items: {type: string}, x-kubernetes-list-type: set}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    protocol: {type: string, default: TCP}
                x-kubernetes-validations:
                - rule: self.all(p, p.protocol == 'TCP')
                  message: only TCP
              weird:
                type: string
                x-kubernetes-validations:
                - rule: self.isURL()
                  message: must be a URL
              broken:
                type: string
                x-kubernetes-validations:
                - rule: self ==
              frozen:
                type: string
                x-kubernetes-validations:
                - rule: self == oldSelf
                  message: immutable
              count:
                type: integer
                x-kubernetes-validations:
                - rule: self < 10
                  messageExpression: "'count must be below 10, got ' + string(self)"
"""


@pytest.fixture(scope="module")
def widgets(tmp_path_factory: pytest.TempPathFactory) -> CrdRegistry:
    folder = tmp_path_factory.mktemp("crds")
    (folder / "example.com_widgets.yaml").write_text(textwrap.dedent(WIDGET_CRD))
    return CrdRegistry(folder)


def widget(**spec: object) -> dict:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": meta("w"), "spec": spec}


def test_structural_extensions(widgets: CrdRegistry) -> None:
    ok = widget(port="http", note=None, extra={"anything": {"goes": [1]}}, tags=["a", "b"], frozen="x")
    assert validate(ok, registry=widgets) == []
    assert validate(widget(port=8080), registry=widgets) == []
    assert "spec.port:" in only_error_in(widget(port=1.5), widgets)
    assert "spec.note:" in only_error_in(widget(note=3), widgets)


def test_list_type_set_and_map_must_be_unique(widgets: CrdRegistry) -> None:
    assert "spec.tags[1]: duplicate entry in list-type=set list" in only_error_in(widget(tags=["a", "a"]), widgets)
    ports = [{"name": "http"}, {"name": "http", "protocol": "TCP"}]
    assert "spec.ports[1]: duplicate entry in list-type=map list" in only_error_in(widget(ports=ports), widgets)


def test_defaults_are_applied_before_cel(widgets: CrdRegistry) -> None:
    assert validate(widget(ports=[{"name": "http"}]), registry=widgets) == []
    assert "only TCP" in only_error_in(widget(ports=[{"name": "dns", "protocol": "UDP"}]), widgets)


def test_message_expression(widgets: CrdRegistry) -> None:
    assert "spec.count: count must be below 10, got 12" in only_error_in(widget(count=12), widgets)


def test_rules_that_cannot_be_evaluated_are_reported_never_passed(widgets: CrdRegistry) -> None:
    assert "cannot evaluate rule 'self.isURL()': uses unsupported function(s) isURL" in only_error_in(
        widget(weird="https://x"), widgets
    )
    assert "cannot evaluate rule 'self =='" in only_error_in(widget(broken="x"), widgets)
    unsupported = widgets.unsupported_rules()
    assert len(unsupported) == 2
    assert unsupported[0].startswith("Widget example.com/v1 spec.weird: cannot evaluate rule")


def only_error_in(obj: dict, registry: CrdRegistry) -> str:
    errors = validate(obj, registry=registry)
    assert len(errors) == 1, errors
    return errors[0]


# --------------------------------------------------------------------------------------------------
# properties

SPEC_FIELDS = {"targetRef", "limits", "defaults", "overrides", "when"}


@settings(max_examples=30, deadline=None)
@given(st.from_regex(r"[a-zA-Z][a-zA-Z0-9]{0,10}", fullmatch=True).filter(lambda k: k not in SPEC_FIELDS))
def test_any_undeclared_spec_field_is_reported_at_its_path(key: str) -> None:
    obj = trlp()
    obj["spec"][key] = "x"
    assert only_error(obj).startswith(f"TokenRateLimitPolicy llm/maas-trlp-x: spec.{key}: unknown field")


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 99999), st.sampled_from(["h", "m", "s", "ms"])), min_size=1, max_size=4))
def test_windows_matching_the_crd_pattern_are_valid(parts: list[tuple[int, str]]) -> None:
    obj = trlp()
    obj["spec"]["limits"]["tokens-1000-per-1h"]["rates"][0]["window"] = "".join(f"{n}{u}" for n, u in parts)
    assert validate(obj) == []


def test_format_path() -> None:
    assert crdschema.format_path(["spec", "limits", "a-b", "rates", 0, "window"]) == "spec.limits.a-b.rates[0].window"
    assert crdschema.format_path(["metadata", "labels", "a.b/c"]) == 'metadata.labels["a.b/c"]'
    assert crdschema.format_path([]) == "<root>"


def test_cached_rule_results_follow_the_fields_a_rule_reads() -> None:
    assert validate(trlp()) == []
    obj = trlp()
    obj["spec"]["limits"] = {}  # same has() answers as before, but size(self.limits) now 0
    assert "spec: At least one spec.limits must be defined" in only_error(obj)


_PRESENT = crdschema.SelfUse()
_WHOLE = crdschema.SelfUse(whole=True)
_SIZE = crdschema.SelfUse(size=True)


@pytest.mark.parametrize(
    ("rule", "fields"),
    [
        ("has(self.x) && self.y == 1", {"x": _PRESENT, "y": _WHOLE}),
        ("!(has(self.defaults) && has(self.limits))", {"defaults": _PRESENT, "limits": _PRESENT}),
        ("has(self.a) ? size(self.a) > 0 : true", {"a": _SIZE}),
        ("has(self.a.b)", {"a": crdschema.SelfUse(fields=(("b", _PRESENT),))}),
        ("size(self.a) == 1 && self.a.b == 2", {"a": crdschema.SelfUse(size=True, fields=(("b", _WHOLE),))}),
        ("has(self.a) && self.a == {} && size(self.a.b) > 0", {"a": _WHOLE}),
        ("self.a.size() > 0 && self.b['c'] == 1", {"a": _WHOLE, "b": _WHOLE}),
    ],
)
def test_self_use_analysis(rule: str, fields: dict) -> None:
    use = crdschema.default_registry().engine.compiled(rule).self_use
    assert use == crdschema.SelfUse(fields=tuple(sorted(fields.items())))


@pytest.mark.parametrize("rule", ["self.all(k, k != '')", "size(self) > 0", "self[0] == 1", "self == oldSelf"])
def test_self_use_analysis_falls_back_to_the_whole_value(rule: str) -> None:
    assert crdschema.default_registry().engine.compiled(rule).self_use is None


def test_memoised_list_items_are_reported_at_each_of_their_own_paths() -> None:
    bad = {"limit": 1000, "window": "1d"}
    first, second = trlp(), trlp()
    first["spec"]["limits"]["tokens-1000-per-1h"]["rates"] = [bad, dict(bad)]
    second["metadata"]["name"] = "maas-trlp-y"
    second["spec"]["limits"]["tokens-1000-per-1h"]["rates"] = [
        {"limit": 1, "window": "1h"},
        {"limit": 2, "window": "1h"},
        dict(bad),
    ]
    rates = "spec.limits.tokens-1000-per-1h.rates"
    assert [e.split(": ")[1] for e in validate(first)] == [f"{rates}[0].window", f"{rates}[1].window"]
    assert [e.split(": ")[1] for e in validate(second)] == [f"{rates}[2].window"]
    assert [e.split(": ")[1] for e in validate(first)] == [f"{rates}[0].window", f"{rates}[1].window"]


def test_tuples_are_checked_as_arrays() -> None:
    obj = trlp()
    obj["spec"]["limits"]["tokens-1000-per-1h"]["rates"] = ({"limit": 1000, "window": "1d"},)
    assert "rates[0].window: '1d' does not match" in only_error(obj)


# --------------------------------------------------------------------------------------------------
# rules evaluated on what they read, and status writes checked on their status alone

GADGET_CRDS = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinitionList
items:
- &gadget
  apiVersion: apiextensions.k8s.io/v1
  kind: CustomResourceDefinition
  metadata: {name: gadgets.example.com}
  spec:
    group: example.com
    names: {kind: Gadget, plural: gadgets}
    scope: Namespaced
    versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-validations:
          - rule: self.metadata.name != 'forbidden'
          properties:
            metadata: {type: object}
            spec:
              type: object
              x-kubernetes-validations:
              - rule: has(self.parts) && size(self.parts) > 1
                message: two parts
              - rule: "!has(self.labels) || size(self.labels) < 3"
                messageExpression: "'at most 2 labels, got ' + string(size(self.labels))"
              properties:
                parts:
                  type: object
                  properties:
                    a: {type: integer}
                    b: {type: integer}
                labels: {type: object, additionalProperties: {type: string}}
            status:
              type: object
              properties:
                phase: {type: string, enum: [New, Done], default: New}
                tags: {type: array, items: {type: string}, x-kubernetes-list-type: set}
                count:
                  type: integer
                  x-kubernetes-validations:
                  - rule: self < 10
- metadata: {name: snoops.example.com}
  apiVersion: apiextensions.k8s.io/v1
  kind: CustomResourceDefinition
  spec:
    group: example.com
    names: {kind: Snoop, plural: snoops}
    scope: Namespaced
    versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-validations:
          - rule: "!has(self.status) || has(self.spec)"
          properties:
            spec: {type: object}
            status: {type: object, properties: {phase: {type: string}}}
- metadata: {name: counteds.example.com}
  apiVersion: apiextensions.k8s.io/v1
  kind: CustomResourceDefinition
  spec:
    group: example.com
    names: {kind: Counted, plural: counteds}
    scope: Namespaced
    versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          maxProperties: 4
          properties:
            spec: {type: object}
            status: {type: object, properties: {phase: {type: string}}}
"""


@pytest.fixture(scope="module")
def gadgets(tmp_path_factory: pytest.TempPathFactory) -> CrdRegistry:
    folder = tmp_path_factory.mktemp("crds")
    (folder / "gadgets.yaml").write_text(GADGET_CRDS)
    return CrdRegistry(folder)


def gadget(kind: str = "Gadget", **spec: object) -> dict:
    return {"apiVersion": "example.com/v1", "kind": kind, "metadata": meta("g"), "spec": spec}


def test_a_rule_reading_sizes_counts_what_cel_sees(gadgets: CrdRegistry) -> None:
    assert validate(gadget(parts={"a": 1, "b": 2}), registry=gadgets) == []
    problems = validate(gadget(parts={"a": 1, "zzz": 2}), registry=gadgets)  # an unknown field is not in CEL's map
    assert [problem.split(": ", 2)[1:] for problem in problems] == [
        ["spec", "two parts (rule: has(self.parts) && size(self.parts) > 1)"],
        ["spec.parts.zzz", "unknown field (the API server would silently prune it)"],
    ]
    labels = {"x": "1", "y": "2", "z": "3"}
    assert "spec: at most 2 labels, got 3" in only_error_in(gadget(parts={"a": 1, "b": 2}, labels=labels), gadgets)


def test_auth_policy_rules_read_the_sizes_of_nested_maps() -> None:
    policy = auth_policy()
    assert validate(policy) == []
    policy["spec"]["rules"] = {"authentication": {}}
    assert "spec: At least one spec.rules must be defined" in only_error(policy)


def test_a_value_that_is_not_json_fails_every_rule_that_sees_it_as_before(gadgets: CrdRegistry) -> None:
    obj = gadget(parts={"a": 1, "b": 2}, labels={"x": object()})
    problems = validate(
        obj, registry=gadgets
    )  # the root, spec and spec.labels rules: as in a process that saw no other
    assert sum("cannot convert the value to CEL" in problem for problem in problems) == 3


def _added_by_validating_both(base: dict, status: object, registry: CrdRegistry) -> list[str]:
    known = set(validate(base, registry=registry))
    return [problem for problem in validate({**base, "status": status}, registry=registry) if problem not in known]


@pytest.mark.parametrize(
    "status",
    [
        {},
        {"phase": "Done", "tags": ["a", "b"], "count": 3},
        {"phase": "Bogus", "tags": ["a", "a"], "count": 12, "extra": 1},
        {"count": "x", "tags": "a"},
    ],
)
@pytest.mark.parametrize("spec", [{"parts": {"a": 1, "b": 2}}, {"parts": {"a": "x"}}])
def test_a_status_checked_alone_adds_what_validating_the_stored_object_adds(
    gadgets: CrdRegistry, spec: dict, status: dict
) -> None:
    base = gadget(**spec)
    added = crdschema.added_status_problems(base, status, gadgets)
    assert added == _added_by_validating_both(base, status, gadgets)


@pytest.mark.parametrize("status", [{"phase": "Bogus", "tags": ["é"]}, {"when": object()}, "not an object"])
def test_a_measured_status_write_has_the_same_problems_and_its_compact_json_size(
    gadgets: CrdRegistry, status: object
) -> None:
    problems, size = crdschema.added_status_problems_measured(gadget(), status, gadgets)
    assert problems == crdschema.added_status_problems(gadget(), status, gadgets)
    plain = not isinstance(status, dict) or "when" not in status
    assert size == (len(json.dumps(status, separators=(",", ":"), ensure_ascii=False).encode()) if plain else None)


@pytest.mark.parametrize("kind", ["Snoop", "Counted"])
def test_a_root_that_may_depend_on_the_status_is_not_checked_on_the_status_alone(
    gadgets: CrdRegistry, kind: str
) -> None:
    assert crdschema.added_status_problems(gadget(kind), {"phase": "x"}, gadgets) is None
    assert crdschema.added_status_problems(gadget(), {"when": object()}, gadgets) is None  # not JSON: whole
