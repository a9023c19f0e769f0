"""The CPU floor of a cold Python map: what parsing alone costs, with CPython's ast and with
tree-sitter-python, against the Python backend that extracts the map's tags.

    python benchmarks/parse_floor.py [--corpus sympy] [--repeat 2]

The speed issue asks whether a C-level pass (tree-sitter-python queries for references, or for
both) would beat ``ast``; this answers it with CPU seconds on one core, every file of the corpus
read into memory first (``benchmarks/corpora.py``; sympy's sdist by default). Rows:

- ``ast.parse``: CPython's parser only;
- the ``python_ast`` backend's ``extract_tags`` (parse plus our walk into definitions and
  references), what a cold map spends per file in the workers;
- ``tree-sitter-python`` parsing only;
- a tags query (class and function definitions, calls, every identifier, as tags queries ask
  for references) run over those trees, captures counted, and then each capture's text and line
  read, the least a backend needs before it makes a single tag.

Prints a markdown table (best of ``--repeat``); ``docs/benchmarks.md`` discusses a run.
"""

from __future__ import annotations

import argparse
import ast
import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpora  # noqa: E402

QUERY = """
(class_definition name: (identifier) @name.definition.class) @definition.class
(function_definition name: (identifier) @name.definition.function) @definition.function
(call function: [(identifier) @name.reference.call
                 (attribute attribute: (identifier) @name.reference.call)]) @reference.call
(identifier) @name.reference
"""


def best_cpu(repeat: int, fn: Callable[[], object]) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.process_time()
        out = fn()
        best = min(best, time.process_time() - start)
    return best, out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default="sympy", help="a corpus of benchmarks/corpora.py")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args(argv)
    logging.disable(logging.WARNING)  # a corpus's syntax errors are not this benchmark's news

    from repomapper.model import SourceFile
    from repomapper.plugins.python import ast_backend

    root = corpora.ensure(args.corpus)
    files = [f for f in corpora.file_list(root) if f.endswith(".py")]
    data = [(f, (root / f).read_bytes()) for f in files]
    rows: list[tuple[str, float, str]] = []

    def ast_parse() -> int:
        ok = 0
        for _, text in data:
            try:
                ast.parse(text)
                ok += 1
            except (SyntaxError, ValueError):
                pass
        return ok

    def backend() -> int:
        return sum(len(ast_backend.extract_tags(SourceFile(root, f, d)) or ()) for f, d in data)

    seconds, parsed = best_cpu(args.repeat, ast_parse)
    rows.append(("ast.parse", seconds, f"{parsed:,} files parsed"))
    seconds, tags = best_cpu(args.repeat, backend)
    rows.append(("python_ast backend: extract_tags (parse + walk)", seconds, f"{tags:,} tags"))
    try:
        import tree_sitter_python
        from tree_sitter import Language, Parser, Query, QueryCursor
    except ImportError:
        print("tree-sitter-python is not installed: its rows are left out", file=sys.stderr)
    else:
        language = Language(tree_sitter_python.language())
        parser, query = Parser(language), Query(language, QUERY)
        seconds, trees = best_cpu(args.repeat, lambda: [parser.parse(d) for _, d in data])
        rows.append(("tree-sitter-python: parse", seconds, f"{len(trees):,} trees"))

        def captures() -> int:
            return sum(
                len(nodes)
                for tree in trees
                for nodes in QueryCursor(query).captures(tree.root_node).values()
            )

        def with_text() -> int:
            n = 0
            for (_, text), tree in zip(data, trees, strict=True):
                for nodes in QueryCursor(query).captures(tree.root_node).values():
                    for node in nodes:
                        text[node.start_byte : node.end_byte].decode("utf-8", "replace")
                        node.start_point[0]  # noqa: B018 - the line, as a tag needs it
                        n += 1
            return n

        seconds, n = best_cpu(args.repeat, captures)
        rows.append(("tree-sitter-python: tags query, captures", seconds, f"{n:,} captures"))
        seconds, n = best_cpu(args.repeat, with_text)
        rows.append(("... and each capture's text and line", seconds, f"{n:,} captures"))

    print(
        f"{args.corpus}: {len(data):,} .py files, CPU seconds on one core (best of {args.repeat})"
    )
    print()
    print("| pass | CPU s | what came out |")
    print("|---|---:|---|")
    for label, seconds, what in rows:
        print(f"| {label} | {seconds:.2f} | {what} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
