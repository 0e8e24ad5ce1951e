"""`diff --base-ref REF`: a stack file as it is at a git revision, read with `git show` (no shell, no checkout)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from ...config.errors import escaped, quoted


class GitError(Exception):
    """The base revision cannot be read: no git, not a work tree, or an unknown ref."""


@dataclass(frozen=True)
class GitFile:
    """A stack file at a revision. It reads as a file does (`read_bytes`) and is named `REF:path` in every
    message, the spelling `git show` takes, so an error points at the revision, not at a temporary copy."""

    ref: str
    path: str  # relative to the repository root, with `/`
    data: bytes

    def read_bytes(self) -> bytes:
        return self.data

    def __str__(self) -> str:
        return f"{self.ref}:{self.path}"


def file_at(ref: str, path: Path) -> GitFile | None:
    """`path` (a file in a git work tree) as it is at `ref`; None when the file does not exist there (a stack
    that the change adds). GitError for anything else."""
    if not ref or ref.startswith("-"):
        raise GitError(f"--base-ref {quoted(ref)} is not a git revision; give one such as origin/main")
    outside = f"{escaped(str(path))} is not in a git work tree; --base-ref reads BASE from the repository it is in"
    root = Path(_git(path.resolve().parent, "rev-parse", "--show-toplevel", failure=outside).decode().strip())
    relative = path.resolve().relative_to(root.resolve()).as_posix()
    unknown = (
        f"git ref {quoted(ref)} is not a commit of the repository at {escaped(str(root))}; fetch it first, e.g. "
        "git fetch origin main"
    )
    commit_id = _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", failure=unknown).decode().strip()
    if _run(root, "cat-file", "-e", f"{commit_id}:{relative}").returncode != 0:
        return None
    return GitFile(ref, relative, _git(root, "show", f"{commit_id}:{relative}"))


def _git(where: Path, *args: str, failure: str | None = None) -> bytes:
    """The output of a git command that must succeed; `failure` says what a failure means (else git's message)."""
    result = _run(where, *args)
    if result.returncode == 0:
        return result.stdout
    if failure is not None:
        raise GitError(failure)
    message = escaped(result.stderr.decode(errors="replace").strip().splitlines()[-1] if result.stderr else "")
    raise GitError(f"git {args[0]} failed in {escaped(str(where))}: {message or f'exit status {result.returncode}'}")


def _run(where: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", "-C", str(where), *args], capture_output=True, check=False)
    except OSError as error:
        raise GitError(f"cannot run git ({error.strerror}); --base-ref needs git on the PATH") from None
