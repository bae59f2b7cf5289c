"""Wrong variants in Mesa's real C: our own small patches (`NAME.patch`, unified diffs
against Mesa 23.3.6's `src/asahi/compiler`), each re-introducing one class of bug that a
model zoo variant mirrors (its header comment says which), and the strict applier that
`fuzz/mesa/build.py` uses to write patched copies of the files into an overlay directory.

A patch is applied exactly: every hunk's context and removed lines must be in the file
(at the line the hunk names or, if the file moved, anywhere once); a hunk that is not is
`PatchDoesNotApply`, one line naming the patch, never a silent skip.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).parent
HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class PatchDoesNotApply(Exception):
    """One line: which patch, which file, which hunk."""

    def __init__(self, name: str, detail: str) -> None:
        self.name = name
        super().__init__(f"agxfuzz: patch {name} does not apply: {detail}")


@dataclass(frozen=True)
class Patch:
    name: str
    text: str
    # (file relative to the tree, [(old line index, old lines, new lines)])
    files: tuple[tuple[str, tuple[tuple[int, tuple[str, ...], tuple[str, ...]], ...]], ...]

    @property
    def header(self) -> list[str]:
        return [line[2:] for line in self.text.splitlines() if line.startswith("# ")]

    def mirrors(self) -> str:
        for line in self.header:
            if line.startswith("Mirrors the model zoo's "):
                return line.removeprefix("Mirrors the model zoo's ").rstrip(".")
        return ""

    def bug_class(self) -> str:
        for line in self.header:
            if line.startswith("Bug class: "):
                return line.removeprefix("Bug class: ").rstrip(".")
        return ""


def parse_patch(name: str, text: str) -> Patch:
    files: list = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("+++ "):
            path = line[4:].split("\t")[0].strip()
            path = path[2:] if path.startswith("b/") else path
            files.append((path, []))
        elif (match := HUNK.match(line)) is not None:
            if not files:
                raise PatchDoesNotApply(name, "a hunk before any +++ line")
            old: list[str] = []
            new: list[str] = []
            i += 1
            while i < len(lines) and not lines[i].startswith(("@@", "--- ", "+++ ")):
                body = lines[i]
                kind, rest = (body[:1], body[1:]) if body else (" ", "")
                if kind in (" ", "-"):
                    old.append(rest)
                if kind in (" ", "+"):
                    new.append(rest)
                i += 1
            files[-1][1].append((int(match.group(1)) - 1 if old else int(match.group(1)),
                                 tuple(old), tuple(new)))
            continue
        i += 1
    if not files:
        raise PatchDoesNotApply(name, "no file in it")
    return Patch(name, text, tuple((path, tuple(hunks)) for path, hunks in files))


def load(name: str, directory: Path = HERE) -> Patch:
    """The patch `NAME` of `directory` (default this one; fuzz/mesa/fixes keeps its own),
    KeyError when there is none."""
    path = directory / f"{name}.patch"
    if not path.is_file():
        raise KeyError(name)
    return parse_patch(name, path.read_text())


def names(directory: Path = HERE) -> list[str]:
    return sorted(path.stem for path in directory.glob("*.patch"))


def apply(patch: Patch, read) -> dict[str, str]:
    """{path: patched text} for each file `patch` touches; `read(path)` gives the tree's
    text (None when the file is missing)."""
    out = {}
    for path, hunks in patch.files:
        text = read(path)
        if text is None:
            raise PatchDoesNotApply(patch.name, f"{path} is not in the tree")
        lines = text.split("\n")
        shift = 0
        for number, (start, old, new) in enumerate(hunks, 1):
            at = start + shift
            if list(lines[at:at + len(old)]) != list(old):
                found = [k for k in range(len(lines) - len(old) + 1)
                         if lines[k:k + len(old)] == list(old)]
                if len(found) != 1:
                    raise PatchDoesNotApply(
                        patch.name, f"hunk {number} of {path} (line {start + 1}) "
                        + ("matches nowhere" if not found else "matches more than once"))
                at = found[0]
            lines[at:at + len(old)] = list(new)
            shift = at - start + len(new) - len(old)
        out[path] = "\n".join(lines)
    return out
