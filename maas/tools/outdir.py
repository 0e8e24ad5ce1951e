"""`render --out DIR`: one file per object, written so that a failed or interrupted run never leaves a partial file
and no file this command did not write is ever touched.

Every file is rendered into a temporary sibling of DIR first; DIR changes only after all of them exist. A new DIR
is that sibling renamed (atomic). In an existing DIR each file is moved in with an atomic rename, then the files
of the previous render that are no longer produced are deleted. The manifest `DIR/.maas-render` lists what the
last render wrote, and it is what makes deletion safe: before anything moves it lists the previous and the new
files together, so even a run killed halfway leaves every file of ours listed for the next run to clean up.
A DIR that is not empty and has no manifest belongs to someone else and is refused, whatever it holds.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..config.errors import escaped, quoted

MANIFEST = ".maas-render"
_HEADER = "# Files written by `python -m maas render --out`; the next render there replaces exactly these.\n"
FILE_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")  # what `cli.file_name` produces: no path, not hidden


class OutputError(Exception):
    """A problem with the `--out` directory, as one line naming it and the fix."""


@dataclass(frozen=True)
class OutDir:
    path: Path
    exists: bool
    previous: frozenset[str]  # what the last render wrote there (its manifest)

    @classmethod
    def open(cls, path: Path) -> OutDir:
        """Check DIR before anything is rendered, so a bad `--out` fails fast."""
        try:
            if path.is_dir():
                return cls(path, True, _previous(path))
            if path.exists() or path.is_symlink():
                raise _error(path, "is not a directory; give the path of a directory (it is created if missing)")
            if not path.parent.is_dir():
                raise _error(path, f"cannot be created: its parent {_shown(path.parent)} is not a directory")
        except OSError as error:
            raise _error(path, f"cannot be inspected ({error.strerror})") from None
        return cls(path, False, frozenset())

    def replace(self, files: Mapping[str, str]) -> None:
        """Make DIR hold `files` (name -> text) in place of the previous render's files."""
        bad = next((name for name in files if not FILE_NAME.fullmatch(name)), None)
        if bad is not None:
            raise _error(self.path, f"{quoted(bad)} is not a plain file name; nothing was written")
        self._refuse_foreign(files)
        staging = self._staging()
        try:
            for name, text in files.items():
                (staging / name).write_text(text, encoding="utf-8")
            _write_manifest(staging, files)
            if self.exists:
                self._swap(staging, files)
            else:
                staging.rename(self.path)
        except OSError as error:
            failed = error.filename2 or error.filename  # a rename's target, else the file written
            where = f" ({_shown(failed)})" if failed else ""
            raise _error(self.path, f"cannot be written: {error.strerror}{where}") from None
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def _refuse_foreign(self, files: Iterable[str]) -> None:
        for name in sorted(files):
            target = self.path / name
            if name not in self.previous and (target.exists() or target.is_symlink()):
                raise _error(self.path, f"{quoted(name)} exists and was not written by render; move it away")

    def _staging(self) -> Path:
        """An empty directory beside DIR (same file system, so renames are atomic), with the usual permissions."""
        parent = self.path.resolve().parent
        staging = parent / f".{self.path.name}.maas-render-{secrets.token_hex(6)}"
        try:
            staging.mkdir()
        except OSError as error:
            raise _error(self.path, f"cannot create a directory beside it ({error.strerror})") from None
        return staging

    def _swap(self, staging: Path, files: Mapping[str, str]) -> None:
        _write_manifest(self.path, [*files, *self.previous], via=staging)
        for name in sorted(files):
            os.replace(staging / name, self.path / name)
        for name in sorted(self.previous - set(files)):
            stale = self.path / name
            if stale.is_file() or stale.is_symlink():
                stale.unlink()
        os.replace(staging / MANIFEST, self.path / MANIFEST)


def _previous(path: Path) -> frozenset[str]:
    manifest = path / MANIFEST
    if not manifest.exists():
        if any(path.iterdir()):
            raise _error(
                path,
                f"is not empty and has no {MANIFEST} manifest, so render did not write it; "
                "choose a new or empty directory",
            )
        return frozenset()
    names = set()
    for number, line in enumerate(manifest.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        if line.startswith("#") or not line:
            continue
        if not FILE_NAME.fullmatch(line):
            raise _error(
                path,
                f"{MANIFEST} line {number} ({quoted(line)}) is not a file name render writes; "
                "the manifest was edited: delete the files it lists and the manifest by hand",
            )
        names.add(line)
    return frozenset(names)


def _write_manifest(directory: Path, names: Iterable[str], via: Path | None = None) -> None:
    """Write the manifest, atomically (through `via`) when it replaces one."""
    text = _HEADER + "".join(f"{name}\n" for name in sorted(set(names)))
    if via is None:
        (directory / MANIFEST).write_text(text, encoding="utf-8")
        return
    pending = via / f"{MANIFEST}.pending"
    pending.write_text(text, encoding="utf-8")
    os.replace(pending, directory / MANIFEST)


def _error(path: Path, problem: str) -> OutputError:
    return OutputError(f"--out {_shown(path)} {problem}")


def _shown(path: Path | str) -> str:
    """A path in a message: quoted and escaped, never shortened."""
    return f"'{escaped(str(path))}'"
