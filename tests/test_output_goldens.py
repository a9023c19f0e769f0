"""The maps and JSON envelopes of the fixture repositories, byte for byte, against committed
goldens: a change of structure (where state lives, how stages are called) must not change a byte
of what users read. A change that means to change the output regenerates them on purpose:

    REPOMAPPER_REGEN_GOLDENS=1 python -m pytest -q tests/test_output_goldens.py

and says why in its commit. Each case runs cold (no cache), then twice with a cache (the second
replays the memoised map), and all three must equal the golden.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from repomapper.cli import main
from tests.conftest import FIXTURES

GOLDENS = Path(__file__).parent / "goldens"
REGEN = os.environ.get("REPOMAPPER_REGEN_GOLDENS") == "1"

#: (case name, fixture folder, extra arguments); files named by --chat are relative to the copy
CASES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("pyrepo-512", "pyrepo", ("--tokens", "512")),
    ("pyrepo-128", "pyrepo", ("--tokens", "128")),
    ("pyrepo-task", "pyrepo", ("--tokens", "256", "--task", "discount for the basket total")),
    ("pyrepo-chat", "pyrepo", ("--tokens", "512", "--chat", "@/shop/orders.py")),
    ("pyrepo-mention", "pyrepo", ("--tokens", "256", "--mention-ident", "Catalog")),
    ("pyrepo-include", "pyrepo", ("--tokens", "512", "--include", "shop/**")),
    ("mixed-1024", "mixed", ("--tokens", "1024")),
    ("mixed-task", "mixed", ("--tokens", "512", "--task", "the web handler that formats users")),
    ("libcst-512", "libcst", ("--tokens", "512", "--python-backend", "libcst")),
    ("ts-512", "treesitter/ts_project", ("--tokens", "512")),
    ("go-512", "treesitter/go_project", ("--tokens", "512")),
    ("rust-512", "treesitter/rust_crate", ("--tokens", "512")),
)


def _ctags_missing() -> bool:
    return shutil.which("ctags") is None


def _run(root: Path, args: tuple[str, ...], fmt: str, cache: Path | None) -> str:
    resolved = tuple(a.replace("@", str(root)) for a in args)
    cache_args = ("--cache-dir", str(cache)) if cache is not None else ("--no-cache",)
    result = CliRunner().invoke(
        main, ["map", str(root), "--format", fmt, *cache_args, *resolved], catch_exceptions=False
    )
    return result.output


@pytest.mark.parametrize("name,fixture,args", CASES, ids=[c[0] for c in CASES])
def test_output_equals_golden(tmp_path, name: str, fixture: str, args: tuple[str, ...]) -> None:
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / fixture, root)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)  # the same listing everywhere
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    outputs = {}
    for fmt in ("text", "json"):
        runs = [_run(root, args, fmt, None)]
        cache = tmp_path / f"cache-{fmt}"
        runs += [_run(root, args, fmt, cache), _run(root, args, fmt, cache)]
        assert runs[1] == runs[0], f"{name} ({fmt}): the cached run differs from the cold one"
        assert runs[2] == runs[0], f"{name} ({fmt}): the replayed run differs from the cold one"
        outputs[fmt] = runs[0].replace(str(root), "<root>")
    golden = GOLDENS / f"{name}.json"
    if REGEN:
        GOLDENS.mkdir(exist_ok=True)
        golden.write_text(json.dumps(outputs, indent=1, ensure_ascii=False) + "\n", "utf-8")
        return
    expected = json.loads(golden.read_text("utf-8"))
    assert outputs["text"] == expected["text"]
    assert outputs["json"] == expected["json"]
