"""Regenerate docs/languages.md from the code (see repomapper.conformance.languages_table).

    python benchmarks/languages_table.py [--check]

Run it with every extra installed (``pip install -e ".[languages,langpack]"``): the table says
which grammar serves each language, and a missing one would be written as missing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from repomapper.conformance.languages_table import (
    collect_rows,
    every_grammar_installed,
    render_markdown,
)

DOC = Path(__file__).resolve().parent.parent / "docs" / "languages.md"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the document differs")
    args = parser.parse_args(argv)
    if not every_grammar_installed():
        print(
            "not every grammar is installed: pip install -e '.[languages,langpack]'",
            file=sys.stderr,
        )
        return 2
    text = render_markdown(collect_rows())
    if args.check:
        same = DOC.is_file() and DOC.read_text(encoding="utf-8") == text
        print("docs/languages.md is up to date" if same else "docs/languages.md is stale")
        return 0 if same else 1
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
