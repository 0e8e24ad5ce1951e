"""The pull-request workflow: actionlint accepts it (and rejects broken copies), and it runs what the review needs."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from maas.tools.cli import _parser
from tests.conftest import ROOT

WORKFLOW = ROOT / ".github" / "workflows" / "pull-request.yml"
ACTIONLINT = Path(sys.executable).parent / "actionlint"  # installed by requirements.txt
PINNED = re.compile(r"uses: [\w.-]+/[\w.-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+")


def actionlint(path: Path, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(ACTIONLINT), "-no-color", "-oneline", str(path)], cwd=cwd, capture_output=True, text=True, check=False
    )


def workflow() -> dict:
    return yaml.load(WORKFLOW.read_text(), Loader=yaml.BaseLoader)  # `on:` stays a key, every value text


def steps(job: str) -> list[dict]:
    return workflow()["jobs"][job]["steps"]


def step_using(job: str, action: str) -> dict:
    return next(step for step in steps(job) if step.get("uses", "").startswith(f"{action}@"))


def test_actionlint_accepts_the_workflow():
    result = actionlint(WORKFLOW, ROOT)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


@pytest.mark.parametrize(
    ("old", "new", "complaint"),
    [
        (
            "if: needs.pulumi-token.outputs.present == 'true'",
            "if: secrets.PULUMI_ACCESS_TOKEN != ''",
            'context "secrets" is not allowed here',
        ),
        ("needs: [test, pulumi-token]", "needs: [test, pulumi-tokn]", 'needs job "pulumi-tokn" which does not exist'),
        ("run: make test", 'run: echo "${{ github.event.pull_request.title }}"', "is potentially untrusted"),
        ("steps.check.outputs.present", "steps.chek.outputs.present", 'property "chek" is not defined'),
    ],
)
def test_actionlint_rejects_a_broken_copy(tmp_path, old, new, complaint):
    text = WORKFLOW.read_text()
    assert text.count(old) == 1
    broken = tmp_path / ".github" / "workflows" / WORKFLOW.name
    broken.parent.mkdir(parents=True)
    broken.write_text(text.replace(old, new))
    result = actionlint(broken, tmp_path)
    assert result.returncode == 1
    assert complaint in result.stdout


def test_every_action_is_pinned_to_a_commit_with_its_tag():
    lines = [line.strip().removeprefix("- ") for line in WORKFLOW.read_text().splitlines() if "uses:" in line]
    used = [step["uses"] for job in workflow()["jobs"].values() for step in job.get("steps", []) if "uses" in step]
    assert len(lines) == len(used) == 9
    assert [line for line in lines if not PINNED.fullmatch(line)] == []


def test_it_runs_on_pull_requests_and_the_test_job_runs_make_test():
    assert "pull_request" in workflow()["on"]
    assert [step.get("run") for step in steps("test")][-1] == "make test"


def test_the_review_job_renders_validates_and_diffs_against_the_base_branch_with_full_history():
    review = steps("review")
    assert step_using("review", "actions/checkout")["with"]["fetch-depth"] == "0"
    runs = [step.get("run", "") for step in review]
    assert "make render > rendered.yaml" in runs
    assert step_using("review", "actions/upload-artifact")["with"]["path"] == "rendered.yaml"
    assert any('-m maas validate --config-file "$stack"' in run for run in runs)
    diff_step = next(step for step in review if "-m maas diff" in step.get("run", ""))
    assert diff_step["env"] == {"BASE_REF": "${{ github.base_ref }}"}


def test_the_workflows_commands_parse_with_the_real_command_line():
    """Each `python -m maas` line of the review job, with the shell variables set as the runner sets them."""
    lines = [
        line.strip() for step in steps("review") for line in step.get("run", "").splitlines() if "-m maas " in line
    ]
    values = {"$stack": "Pulumi.dev.yaml", "$BASE_REF": "main"}
    parsed = {}
    for line in lines:
        for variable, value in values.items():
            line = line.replace(variable, value)
        argv = shlex.split(line)
        parsed[argv[3]] = _parser().parse_args(argv[3:])
    assert set(parsed) == {"validate", "diff"}
    assert (parsed["diff"].base_ref, parsed["diff"].format) == ("origin/main", "markdown")
    assert (parsed["validate"].config_file, parsed["validate"].files) == (Path("Pulumi.dev.yaml"), [])


def test_the_diff_is_one_sticky_comment_updated_on_every_push():
    comment = step_using("review", "actions/github-script")
    script = comment["with"]["script"]
    assert "const marker = '<!-- maas-diff -->';" in script
    assert "github.rest.issues.updateComment" in script and "github.rest.issues.createComment" in script
    diff_step = next(step for step in steps("review") if "-m maas diff" in step.get("run", ""))
    assert 'echo "<!-- maas-diff -->"' in diff_step["run"]
    assert workflow()["jobs"]["review"]["permissions"]["pull-requests"] == "write"


def test_pulumi_preview_comments_on_the_pr_only_when_a_token_secret_exists():
    jobs = workflow()["jobs"]
    check = jobs["pulumi-token"]["steps"][0]
    assert check["env"] == {"PULUMI_ACCESS_TOKEN": "${{ secrets.PULUMI_ACCESS_TOKEN }}"}
    assert jobs["pulumi-token"]["outputs"] == {"present": "${{ steps.check.outputs.present }}"}
    preview = jobs["preview"]
    assert preview["if"] == "needs.pulumi-token.outputs.present == 'true'"
    pulumi = step_using("preview", "pulumi/actions")["with"]
    assert (pulumi["command"], pulumi["comment-on-pr"], pulumi["policyPacks"]) == ("preview", "true", "policy")
