"""Every command example of README.md and docs/*.md runs as written and exits as its text says, or is marked as
needing what this test cannot give (the Pulumi CLI, kubectl, a real cluster), with the reason: never silently left
out. The references are checked too: every flag a synopsis names exists, every flag of every command is in the
docs, every configuration key is in docs/configuration.md, and every link between the pages resolves.

What counts as an example:

- every command of a fenced `sh`/`bash`/`shell`/`console` block (continuation lines joined). A comment on its line
  says what the text promises: `# exit N: …` an exit status other than 0, `# needs: …` what the command needs;
  `# needs: …` alone on the block's first line holds for the whole block;
- every inline code span that runs this project: `maas …`, `python -m maas …`, `make TARGET …`, `python FILE.py …`.
  A span with a placeholder (`NS/NAME`, `[--flag]`, `a|b`, `…`) is a synopsis, checked against the command's
  `--help` instead; `maas COMMAND` alone names the command. Spans of other programs (`pulumi up`, `kubectl get …`)
  are prose about those CLIs, listed in `OTHER_PROGRAMS` with the reason they do not run here.

How they run: each fenced block in order, in a fresh copy of a sandbox (the stack files, `tests/stacks/`, the
Makefile, `.venv` linked in, a git repository whose `origin/main` is its one commit), after the earlier blocks of
its page that wrote a file it reads; each inline span alone in another; `bash -c` the text as written, with `.venv/bin` first on PATH as `source .venv/bin/activate` leaves it.
`needs:` is honoured for other programs only: this project's own commands always run, and those that need a
cluster (`maas observe`, `maas import --context`) run against fake API servers (tests/fake_kube.py) under the
kubeconfig contexts the docs name: `maas-dev` (the dev stack's cluster) and `prod` (a cluster a maas-controller
built, tests/controller_cluster.py). `GIVEN` holds the files that a command not run here would have written for
the commands after it. `NOT_RUN` lists this project's commands that do not run here, each with its reason.
"""

from __future__ import annotations

import copy
import itertools
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT

DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
VENV = ROOT / ".venv"
TIMEOUT = 300  # seconds for one command

# This project's commands that do not run here, by how they start.
NOT_RUN = {
    "make install": "creates .venv and pip-installs requirements.txt (minutes, and the network); every other "
    "command runs in the .venv it made",
    "make test": "the whole test suite, this module included (.ci/run runs it)",
    "make bench": "the benchmarks, minutes; tests/test_bench.py runs small cases of them",
    "python bench/": "a benchmark (bench/gateway_budget.py: about 40 s); tests/test_gateway_size.py and "
    "tests/test_gateway_budget.py test the size model it measures",
}
# Inline spans of other programs: prose about their CLIs, not run.
OTHER_PROGRAMS = {
    "pulumi": "needs the Pulumi CLI and a stack backend (and, to preview or update, the cluster)",
    "kubectl": "needs kubectl and a cluster",
    "git": "acts on the reader's own repository and remote (`diff --base-ref` runs on a temporary one here)",
}
# The files a command that does not run here would have written for the commands after it.
GIVEN = {"cluster-crds.yaml": "`kubectl get crd -o yaml > cluster-crds.yaml`: the vendored CRDs, one document each"}
# What a text says a command prints, beyond its exit status.
PRINTS = {
    # docs/migrating.md, step 2: "the render against the snapshot must show no `quota reset` line"
    "maas render --stack prod --observed prod-snapshot.yaml > prod-objects.yaml": ("stderr", "quota reset", False),
    # docs/reviewing-changes.md: "# 403 at ext-b/gpt"
    "maas explain request --config-file tests/stacks/Pulumi.enforcement.yaml --path //ext-a/cheap/v1/chat/completions "
    "--model gpt-4o --user dana --groups engineers": ("stdout", "result: 403 'model gpt-4o not found'", True),
    # docs/migrating.md, step 2: "the controller's `request.path` exemptions become `request.url_path`"
    "maas drift --stack prod --observed prod-snapshot.yaml": ("stdout", "+ !request.url_path.endsWith", True),
    # docs/reviewing-changes.md: "exit 1: something changes", the limit the sed line changed ("premium: 2000/1h")
    "maas diff Pulumi.dev.yaml Pulumi.new.yaml --exit-code": (
        "stdout",
        "models-as-a-service/premium on llm/granite-7b: 1000/1h, 99999/1s -> 2000/1h, 99999/1s",
        True,
    ),
}

FENCE = re.compile(r"(\s*)```\s*(\w*)\s*")
SHELL = {"sh", "bash", "shell", "console"}
OURS = re.compile(r"(?:\.venv/bin/)?(?:(?:maas|python3? -m maas|make)\s+\S|python3? \S+\.py\b)")
PLACEHOLDER = re.compile(r"[A-Z][A-Z0-9_]*(?:[/,=.:-][A-Z0-9_]*)*(?:\.\.\.|…)?")
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


@dataclass(frozen=True)
class Example:
    path: Path
    line: int
    text: str  # as written, continuation lines joined, comments dropped
    block: int | None = None  # the first line of its fenced block; None for an inline span
    needs: str | None = None  # what the text says it needs
    exit: int = 0  # what the text says it exits with

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    @property
    def ours(self) -> bool:
        return bool(OURS.match(self.text))

    @property
    def synopsis(self) -> bool:
        """A usage line of this project's rather than an example: it has a placeholder."""
        if not self.ours:
            return False
        if re.search(r"[\[\]|…]|\.\.\.|<[A-Za-z]", self.text):
            return True
        return any(PLACEHOLDER.fullmatch(word) for word in self.text.split())

    @property
    def not_run(self) -> str | None:
        """Why it does not run here, or None: `NOT_RUN`'s reason for this project's commands; for another
        program's, what its text says it needs, else `OTHER_PROGRAMS`' reason (None: it runs, as `sed` does)."""
        if self.ours:
            return next((why for start, why in NOT_RUN.items() if self.text.startswith(start)), None)
        return f"needs {self.needs}" if self.needs else OTHER_PROGRAMS.get(self.text.split()[0])

    @property
    def command(self) -> tuple[str, ...]:
        """The maas subcommand it runs (`('explain', 'caller')`), or () for another program."""
        words = re.sub(r"^(?:\.venv/bin/)?(?:python3? -m )?", "", self.text).split()
        if not words or words[0] != "maas":
            return ()
        path = []
        for word in words[1:]:
            if word.startswith("-") or not re.fullmatch(r"[a-z]+", word):
                break
            path.append(word)
        return tuple(path[:2] if path[:1] == ["explain"] else path[:1])


# ----------------------------------------------------------------------------------------------- reading the docs


def fenced_examples(path: Path) -> list[Example]:
    lines = path.read_text(encoding="utf-8").splitlines()
    found, index = [], 0
    while index < len(lines):
        fence = FENCE.fullmatch(lines[index])
        index += 1
        if not fence:
            continue
        indent, language, start, body = len(fence.group(1)), fence.group(2), index, []
        while not FENCE.fullmatch(lines[index]):
            body.append((index + 1, lines[index][indent:]))
            index += 1
        index += 1
        if language in SHELL:
            found += _block(path, start, body)
    return found


def _block(path: Path, start: int, body: list[tuple[int, str]]) -> list[Example]:
    block_needs = None
    if body and body[0][1].lstrip().startswith("#"):
        block_needs = _needs(body[0][1])
    found, pending, first = [], "", None
    for number, line in body:
        line = re.sub(r"^\$ ", "", line)
        if line.rstrip().endswith("\\"):
            first = first or number
            pending += line.rstrip()[:-1] + " "
            continue
        whole, comment = _comment(pending + line)
        text = " ".join(whole.split())
        if text:
            needs = _needs(comment) or block_needs
            said = re.search(r"\bexit (\d+)\b", comment)
            found.append(Example(path, first or number, text, start, needs, int(said.group(1)) if said else 0))
        pending, first = "", None
    return found


def _comment(line: str) -> tuple[str, str]:
    """The command and its trailing comment (a `#` that starts a word)."""
    match = re.search(r"(?:^|\s)#(.*)$", line)
    return (line[: match.start()], match.group(1)) if match else (line, "")


def _needs(comment: str) -> str | None:
    said = re.search(r"\bneeds:\s*([^;]+)", comment)
    return said.group(1).strip() if said else None


def inline_spans(path: Path) -> list[tuple[int, str]]:
    """Every inline code span outside fenced blocks, with its line; `\\|` (a pipe in a table cell) read as `|`."""
    text = path.read_text(encoding="utf-8")
    kept = []
    inside = False
    for line in text.splitlines():
        if FENCE.fullmatch(line):
            inside = not inside
            kept.append("")
        else:
            kept.append("" if inside else line)
    prose = "\n".join(kept)
    spans = []
    for match in re.finditer(r"(?<!`)`([^`]+)`(?!`)", prose):
        if "\n\n" in match.group(1):
            continue
        spans.append((prose.count("\n", 0, match.start()) + 1, " ".join(match.group(1).replace("\\|", "|").split())))
    return spans


def inline_examples(path: Path) -> list[Example]:
    """The spans that are commands: this project's (but `maas COMMAND` alone, which names the command) and other
    programs' (`OTHER_PROGRAMS`)."""
    found = []
    for line, span in inline_spans(path):
        example = Example(path, line, span)
        words = re.sub(r"^(?:\.venv/bin/)?(?:python3? -m )?", "", span).split()
        named = bool(example.command) and words == ["maas", *example.command]
        if (example.ours and not named) or span.split()[0] in OTHER_PROGRAMS:
            found.append(example)
    return found


def all_examples() -> list[Example]:
    return [e for path in DOCUMENTS for e in (*fenced_examples(path), *inline_examples(path))]


EXAMPLES = all_examples()
RUNNABLE = [e for e in EXAMPLES if not e.synopsis and e.not_run is None]


# ----------------------------------------------------------------------------------------------- the sandbox


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str
    seconds: float


def fake_clusters() -> tuple[list[dict], list[dict]]:
    """The objects of the two fake API servers: the dev stack's cluster (its Gateways, backends, maas-api) and a
    cluster a maas-controller built (3.5 upgraded to 3.6, two tenants; KServe serving its two LLM models)."""
    from tests.controller_cluster import controller_objects
    from tests.fake_kube import (
        all_crds,
        db_secret,
        dev_cluster_objects,
        kserve_route,
        llm_inference_service,
        platform_gateway,
    )

    def gateway(name: str) -> dict:
        body = copy.deepcopy(platform_gateway())
        body["metadata"]["name"] = name
        return body

    dev = [*dev_cluster_objects(), gateway("redteam"), *all_crds()]
    served = [("llm", "granite-7b-instruct"), ("llm", "llama-3-8b-instruct")]
    backends = [o for ns, name in served for o in (llm_inference_service(ns, name, True), kserve_route(ns, name))]
    prod = [*controller_objects(), platform_gateway(), gateway("redteam-gateway"), db_secret(), *backends, *all_crds()]
    return dev, prod


def kubeconfig(dev_url: str, prod_url: str) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "current-context": "maas-dev",
            "clusters": [
                {"name": "dev", "cluster": {"server": dev_url}},
                {"name": "prod", "cluster": {"server": prod_url}},
            ],
            "users": [{"name": "me", "user": {"token": "good-token"}}],
            "contexts": [
                {"name": "maas-dev", "context": {"cluster": "dev", "user": "me"}},
                {"name": "prod", "context": {"cluster": "prod", "user": "me"}},
            ],
        }
    )


def linked_venv(into: Path) -> None:
    """`.venv` as the sandbox's own: the real one's directories linked, and `make`'s install stamp newer than the
    sandbox's requirements, so that no make target reinstalls."""
    venv = into / ".venv"
    venv.mkdir()
    for entry in VENV.iterdir():
        if entry.name in ("bin", "lib", "lib64", "include"):
            (venv / entry.name).symlink_to(entry.resolve(), target_is_directory=True)
    shutil.copy(VENV / "pyvenv.cfg", venv / "pyvenv.cfg")
    (venv / ".installed").touch()


def command_env(home: Path, config: Path) -> dict[str, str]:
    """The environment of every command: a home of its own, the fake clusters' kubeconfig, no Pulumi settings, and
    no outer make's (run under `make test`, a `make render > objects.yaml` would be a sub-make, which prints
    "Entering directory" on stdout: a reader's shell has no MAKELEVEL)."""
    drop = ("PULUMI_", "VIRTUAL_ENV", "KUBECONFIG", "GIT_", "MAKEFLAGS", "MFLAGS", "MAKELEVEL")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(HOME=str(home), KUBECONFIG=str(config), GIT_CONFIG_NOSYSTEM="1")
    return env


def activated(env: dict[str, str], sandbox: Path) -> dict[str, str]:
    """What `source .venv/bin/activate` leaves in the sandbox: its .venv/bin first on PATH."""
    venv = sandbox / ".venv"
    return {**env, "VIRTUAL_ENV": str(venv), "PATH": os.pathsep.join([str(venv / "bin"), env.get("PATH", "")])}


def template(root: Path, env: dict[str, str]) -> Path:
    """The sandbox every session copies: what the docs' commands read, `.venv`, a git repository, `GIVEN`."""
    box = root / "sandbox"
    box.mkdir()
    for name in ("Pulumi.yaml", "Pulumi.dev.yaml", "Makefile", "requirements.txt", "pyproject.toml"):
        shutil.copy(ROOT / name, box / name)
    shutil.copytree(ROOT / "tests" / "stacks", box / "tests" / "stacks")
    linked_venv(box)
    crds = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "crds").glob("*.yaml"))]
    (box / "cluster-crds.yaml").write_text("".join(f"---\n{text}" for text in crds))  # GIVEN
    for argv in (
        ["init", "-q", "-b", "main"],
        ["add", "-A"],
        ["-c", "user.name=docs", "-c", "user.email=docs@example.com", "commit", "-q", "-m", "main"],
        ["update-ref", "refs/remotes/origin/main", "HEAD"],
    ):
        subprocess.run(["git", *argv], cwd=box, env=env, check=True, capture_output=True)
    return box


def written(example: Example) -> set[str]:
    """The files a command writes: redirections, and the paths of the options that name an output."""
    words = example.text.replace(">", " > ").split()
    outputs = {"--out", "--save-snapshot", "--import-file"}
    found = {after for before, after in itertools.pairwise(words) if before == ">" or before in outputs}
    if words[:2] == ["maas", "import"] and "--import-file" not in words:
        found.add("pulumi-import.json")
    return found


def sessions() -> list[list[Example]]:
    """What runs in one sandbox, in order: each fenced block's runnable commands, after the earlier blocks of its
    page that wrote a file it reads (the migration's step 2 reads what step 1 wrote); each inline example that no
    fenced line already is, alone. The longest first."""
    blocks: dict[tuple[Path, int], list[Example]] = {}
    for example in RUNNABLE:
        if example.block is not None:
            blocks.setdefault((example.path, example.block), []).append(example)
    chained: list[list[Example]] = []
    for (path, _), block in blocks.items():
        own, reads = set(), set()
        for example in block:
            reads |= set(example.text.replace(">", " > ").split()) - own - written(example)
            own |= written(example)
        earlier = next(
            (s for s in chained if s[0].path == path and reads & {f for e in s for f in written(e)}),
            None,
        )
        if earlier is None:
            chained.append(list(block))
        else:
            earlier.extend(block)
    fenced = {e.text for e in RUNNABLE if e.block is not None}
    inline = {}
    for example in RUNNABLE:
        if example.block is None and example.text not in fenced:
            inline.setdefault(example.text, example)
    every = [*chained, *([e] for e in inline.values())]
    return sorted(every, key=lambda s: -sum(e.ours for e in s))


def run_session(session: list[Example], box: Path, into: Path, env: dict[str, str]) -> dict[Example, Result]:
    shutil.copytree(box, into, symlinks=True)
    env = activated(env, into)
    results = {}
    for example in session:
        started = time.monotonic()
        done = subprocess.run(
            ["bash", "-c", example.text],
            cwd=into,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
        results[example] = Result(done.returncode, done.stdout, done.stderr, time.monotonic() - started)
    return results


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Iterator[dict[Example, Result]]:
    """Every session run, two at a time (or one per core), against the two fake clusters."""
    from tests.fake_kube import FakeKube

    dev, prod = fake_clusters()
    root = tmp_path_factory.mktemp("doc-commands")
    home = root / "home"
    home.mkdir()
    with FakeKube(dev) as dev_kube, FakeKube(prod) as prod_kube:
        config = root / "kubeconfig"
        config.write_text(kubeconfig(dev_kube.url, prod_kube.url))
        env = command_env(home, config)
        box = template(root, env)
        found: dict[Example, Result] = {}
        with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
            futures = [pool.submit(run_session, s, box, root / f"session-{i}", env) for i, s in enumerate(sessions())]
            for future in futures:
                found.update(future.result())
        yield found


def result_of(runs: dict[Example, Result], example: Example) -> Result:
    if example in runs:
        return runs[example]
    return next(r for e, r in runs.items() if e.text == example.text)  # an inline span that a block also runs


# ----------------------------------------------------------------------------------------------- the examples


@pytest.mark.parametrize("example", RUNNABLE, ids=lambda e: f"{e.where} {e.text[:60]}")
def test_the_example_exits_as_its_text_says(runs, example):
    result = result_of(runs, example)
    assert result.code == example.exit, (
        f"{example.where}: {example.text}\nexit {result.code} after {result.seconds:.1f} s, the text says "
        f"{example.exit}\n"
        f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}"
    )
    if example.text in PRINTS:
        stream, text, present = PRINTS[example.text]
        assert (text in getattr(result, stream)) == present, (example.where, stream, text, present)


def test_every_example_is_run_or_marked_with_a_reason():
    """Each example is a synopsis, runs, or says why not: a fenced command of another program by its `needs:` (on
    its line or on its block's first line), an inline one by `OTHER_PROGRAMS`, this project's by `NOT_RUN`."""
    assert RUNNABLE, "no example found"
    for example in EXAMPLES:
        if example.synopsis or example in RUNNABLE:
            continue
        assert example.not_run, example.where
        if example.block is not None and not example.ours:
            assert example.needs, f"{example.where}: {example.text}: say what it needs (# needs: ...)"


def test_this_projects_commands_are_never_hidden_behind_a_needs_mark():
    """`needs:` is honoured for other programs only: a `maas` or `make` command marked so still runs."""
    marked = [e for e in EXAMPLES if e.ours and e.needs]
    assert marked, "the docs mark the commands that read a cluster (observe, import --context)"
    assert all(e in RUNNABLE for e in marked if not e.synopsis)


def test_what_the_text_says_it_prints_names_examples():
    assert set(PRINTS) <= {e.text for e in RUNNABLE}


# ----------------------------------------------------------------------------------------------- the references


def help_text(*command: str) -> str:
    done = subprocess.run(
        [str(VENV / "bin" / "python"), "-m", "maas", *command, "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def listed_commands(text: str) -> list[str]:
    """The subcommands a `--help` lists (`    name    summary`)."""
    return re.findall(r"(?m)^    ([a-z][a-z-]*)(?:\s{2,}|$)", text)


@pytest.fixture(scope="module")
def usages() -> dict[tuple[str, ...], set[str]]:
    """Each subcommand's flags, from the usage lines of its --help."""
    found = {}
    for name in listed_commands(help_text()):
        nested = listed_commands(help_text(name)) if name == "explain" else []
        for command in [(name, n) for n in nested] or [(name,)]:
            usage = help_text(*command).split("\n\n")[0]
            found[command] = set(FLAG.findall(usage)) - {"--help"}
    return found


def test_every_flag_the_docs_name_exists(usages):
    for example in EXAMPLES:
        if example.command:
            assert example.command in usages, (example.where, example.text)
            unknown = set(FLAG.findall(example.text)) - usages[example.command] - {"--help"}
            assert not unknown, f"{example.where}: {example.text}: no such option {sorted(unknown)}"


def readme_table() -> dict[tuple[str, ...], set[str]]:
    """The README's command table: each row's command and the flags of its 'most useful flags' cell."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) == 4 and cells[0].startswith("`maas"):
            command = Example(ROOT / "README.md", 0, cells[0].strip("`").replace("\\|", "|")).command
            rows[command] = set(FLAG.findall(cells[2]))
    return rows


def test_the_readme_table_has_every_command_and_only_its_flags(usages):
    table = readme_table()
    assert set(table) == set(usages)
    for command, flags in table.items():
        assert flags <= usages[command], (command, flags - usages[command])


def test_every_flag_of_every_command_is_documented(usages):
    """The reference is complete: each flag is in a synopsis, an example or the README table row of its command,
    or is one of the stack options the README's Commands section explains once for all."""
    shared = {"--stack", "--config-file", "--observed"}
    commands = (ROOT / "README.md").read_text(encoding="utf-8").split("## Commands")[1].split("\n## ")[0]
    assert all(f"`{flag} " in commands for flag in shared)
    documented = {command: set(flags) for command, flags in readme_table().items()}
    for example in EXAMPLES:
        if example.command:
            documented.setdefault(example.command, set()).update(FLAG.findall(example.text))
    for command, flags in usages.items():
        missing = flags - documented.get(command, set()) - shared
        assert not missing, f"maas {' '.join(command)}: {sorted(missing)} documented nowhere"


def test_the_configuration_reference_has_every_key():
    """A heading per top-level key, and every field of every entry named (in a table row or its text)."""
    from pydantic import BaseModel

    from maas.config.schema import MaasConfig

    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    for key in MaasConfig.model_fields:
        assert re.search(rf"(?m)^### `maas:{key}`", text), key
    words = set(re.findall(r"[A-Za-z][A-Za-z0-9]*", text))
    seen, todo = set(), [MaasConfig]
    while todo:
        model = todo.pop()
        for name, info in model.model_fields.items():
            assert name in words, f"{model.__name__}.{name} is not in docs/configuration.md"
            for kind in _models_in(info.annotation, BaseModel):
                if kind not in seen:
                    seen.add(kind)
                    todo.append(kind)


def _models_in(annotation, base) -> list[type]:
    if isinstance(annotation, type) and issubclass(annotation, base):
        return [annotation]
    return [m for arg in getattr(annotation, "__args__", ()) for m in _models_in(arg, base)]


def anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lowercase, punctuation but `-` and `_` dropped, spaces as `-`, repeats numbered."""
    found, counts = set(), {}
    inside = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.fullmatch(line):
            inside = not inside
        if inside or not line.startswith("#"):
            continue
        slug = re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        count = counts.get(slug, 0)
        counts[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.name)
def test_every_link_between_the_pages_resolves(path):
    text = path.read_text(encoding="utf-8")
    for target, anchor in re.findall(r"\]\((?!https?:|mailto:)([^)#\s]*)(?:#([^)\s]*))?\)", text):
        linked = (path.parent / target).resolve() if target else path
        assert linked.exists(), f"{path.name}: {target} does not exist"
        if anchor:
            assert linked.suffix == ".md" and anchor in anchors(linked), f"{path.name}: {target}#{anchor}"
    assert not re.search(r'[Ss]ee\s+"[A-Z]', text), f'{path.name}: a `see "Section"` that is no link'
