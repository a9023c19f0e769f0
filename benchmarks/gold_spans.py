"""The functions and classes an accepted fix changed, for function-level localization scores.

    python benchmarks/gold_spans.py TASKS.jsonl --mirror-root DIR [--output FILE]

``tasks.jsonl`` names each task's gold files but (for the 22 development tasks) not the code inside
them. This script reads it from the repositories' history: for each task, the commit that merged
the fix (its pull request number ``(#N)`` in the subject, the instance id's last part; failing that,
the only child of the base commit that touches a gold file), the fix's diff against the commit it
was written on, and for each changed line of a gold file the definition around it, read with
:mod:`ast` (never executed). A changed line inside a function or method gives that function (a
function nested in another gives the outer one: the fix is "in" the function an agent opens); a
line in a class body outside its methods gives the class; module-level lines give nothing. The
spans are then looked up by qualified name in the gold file at the task's base commit, so their
lines are those of the snapshot.

``DIR/<owner>+<name>/repo`` is a git directory with the repository's full history (the mirrors the
workspace fetches). The output (JSON lines: ``instance_id``, ``commit``, ``gold_spans``: a list of
``{"path", "name", "kind", "start_line", "end_line"}``) is what ``benchmarks/localization.py``
reads when a task line has no ``gold_spans`` of its own.
"""

from __future__ import annotations

import argparse
import ast
import functools
import json
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from repomapper.registry import PluginSet

HERE = Path(__file__).resolve().parent
DEFAULT_OUTPUT = HERE / "data" / "localization_gold_spans.jsonl"
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")

Span = tuple[str, str, int, int]  # qualified name, kind, first line, last line


def git(git_dir: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(git_dir), *args],
        check=True,
        capture_output=True,
        text=True,
        errors="replace",
    ).stdout


def definitions(source: str) -> list[Span]:
    """Every function and class with its qualified name; functions nested in functions are left
    out (their lines belong to the outer function)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    out: list[Span] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                kind = "class" if isinstance(child, ast.ClassDef) else "function"
                start = min([child.lineno] + [d.lineno for d in child.decorator_list])
                out.append((name, kind, start, child.end_lineno or child.lineno))
                if kind == "class":
                    walk(child, name + ".")
            elif not isinstance(child, ast.expr):
                walk(child, prefix)  # defs under if/try at module or class level

    walk(tree, "")
    return out


#: tag kinds whose lines make a span of their own (data definitions and modules do not: a line
#: in a field's initializer belongs to the class around it, a module's to no span)
_SPAN_KINDS = frozenset({"class", "function", "method", "interface", "type", "enum"})
_CALLABLE_KINDS = frozenset({"function", "method"})


def tag_definitions(path: str, source: str) -> list[Span]:
    """:func:`definitions` for any language repomapper maps: its backends' definitions with
    their line ranges (classes, interfaces, types, enums, functions and methods; a definition
    inside a function is left out, as its lines belong to the function). Empty when no backend
    reads ``path`` or none gives end lines."""
    from repomapper.extract import extract_source
    from repomapper.model import SourceFile

    extraction = extract_source(_plugins(), SourceFile.from_text(path, source))
    defs = [
        t
        for t in extraction.tags
        if t.kind == "def" and str(t.symbol_kind) in _SPAN_KINDS and t.end_line > 0
    ]
    callables = {t.qualified_name for t in defs if str(t.symbol_kind) in _CALLABLE_KINDS}

    def nested_in_function(scope: str) -> bool:
        parts = scope.split(".") if scope else []
        return any(".".join(parts[: k + 1]) in callables for k in range(len(parts)))

    out: list[Span] = []
    for t in defs:
        if nested_in_function(t.scope):
            continue
        kind = "function" if str(t.symbol_kind) in _CALLABLE_KINDS else "class"
        out.append((t.qualified_name, kind, t.start_line, max(t.end_line, t.start_line)))
    return sorted(set(out), key=lambda s: (s[2], s[3], s[0]))


@functools.lru_cache(maxsize=1)
def _plugins() -> PluginSet:  # the bundled backends, loaded once
    from repomapper.registry import PluginSet

    return PluginSet()


def definitions_of(path: str, source: str) -> list[Span]:
    """A file's spans: :func:`definitions` (``ast``) for Python, :func:`tag_definitions` for
    the other languages."""
    return definitions(source) if path.endswith(".py") else tag_definitions(path, source)


def innermost(spans: Sequence[Span], line: int) -> Span | None:
    inside = [s for s in spans if s[2] <= line <= s[3]]
    return min(inside, key=lambda s: s[3] - s[2]) if inside else None


def changed_lines(diff: str) -> tuple[list[int], list[int]]:
    """The pre-image lines a unified diff removes or changes, and the post-image lines it adds."""
    old: list[int] = []
    new: list[int] = []
    for line in diff.splitlines():
        m = _HUNK.match(line)
        if m:
            for out, start, count in ((old, m.group(1), m.group(2)), (new, m.group(3), m.group(4))):
                n = int(count) if count is not None else 1
                out.extend(range(int(start), int(start) + n))
    return old, new


def fix_commit(git_dir: Path, instance_id: str, base: str, gold: Sequence[str]) -> str | None:
    number = instance_id.rsplit("-", 1)[-1]
    found = git(
        git_dir, "log", "--all", "--format=%H", "-E", f"--grep=\\(#{number}\\)", "--", *gold
    ).split()
    after = [
        c
        for c in found
        if subprocess.run(
            ["git", "--git-dir", str(git_dir), "merge-base", "--is-ancestor", base, c],
            capture_output=True,
        ).returncode
        == 0
    ]
    if after:  # the one nearest the base commit (backports come later)
        return min(after, key=lambda c: int(git(git_dir, "rev-list", "--count", f"{base}..{c}")))
    children = [
        c.split()[0]
        for c in git(git_dir, "rev-list", "--all", "--parents").splitlines()
        if base in c.split()[1:]
    ]
    diffs = {c: git(git_dir, "diff", base, c, "--", *gold) for c in sorted(children)}
    touching = {d: c for c, d in reversed(diffs.items()) if d}
    # one fix (the same change committed twice, as a rebase leaves it, is one)
    return next(iter(touching.values())) if len(touching) == 1 else None


def spans_of(git_dir: Path, task: dict) -> tuple[str | None, list[dict]]:
    gold = list(task["gold_files"])
    base = task["base_commit"]
    commit = fix_commit(git_dir, task["instance_id"], base, gold)
    if commit is None:
        return None, []
    parents = git(git_dir, "rev-list", "--parents", "-n", "1", commit).split()[1:]
    # a merge: the pull request's own changes, from where it left the main line
    before = git(git_dir, "merge-base", *parents).strip() if len(parents) > 1 else parents[0]
    after = parents[1] if len(parents) > 1 else commit
    out: list[dict] = []
    for path in gold:
        diff = git(git_dir, "diff", "-U0", before, after, "--", path)
        old, new = changed_lines(diff)
        at_base = {s[0]: s for s in definitions(git(git_dir, "show", f"{base}:{path}"))}
        names: list[str] = []
        for version, lines in ((before, old), (after, new)):
            spans = definitions(git(git_dir, "show", f"{version}:{path}"))
            for line in lines:
                s = innermost(spans, line)
                name = s[0] if s is not None else ""
                while name and name not in at_base:  # a new method: the class it was added to
                    name = name.rpartition(".")[0]
                if name and name not in names:
                    names.append(name)
        # a class counts when its own body changed, not when only its methods did
        names = [n for n in names if not any(m.startswith(n + ".") for m in names)]
        for name in names:
            if name in at_base:
                _, kind, start, end = at_base[name]
                out.append(
                    {"path": path, "name": name, "kind": kind, "start_line": start, "end_line": end}
                )
    return commit, out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tasks", type=Path)
    ap.add_argument("--mirror-root", type=Path, required=True)
    ap.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = ap.parse_args(argv)
    rows = []
    for line in args.tasks.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        task = json.loads(line)
        git_dir = args.mirror_root / task["repo"].replace("/", "+") / "repo"
        commit, spans = spans_of(git_dir, task)
        if not spans:
            print(
                f"{task['instance_id']}: no function-level gold (commit {commit})", file=sys.stderr
            )
        rows.append({"instance_id": task["instance_id"], "commit": commit, "gold_spans": spans})
    rows.sort(key=lambda r: r["instance_id"])
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows), "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
