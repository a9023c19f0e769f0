"""Python imports resolve as Python would import them: absolute names from the repository's
import roots only, relative names from the importing package. A standard-library or third-party
name never lands on a repository file that is not importable under that name."""

from __future__ import annotations

from pathlib import Path

import pytest

from repomapper import RepoMap
from repomapper.index import RepoIndex
from repomapper.model import Import
from repomapper.plugins.python.common import resolve_python_import, resolve_python_target
from repomapper.plugins.python.modules import resolve_module, resolve_relative

#: A package with modules named like standard-library modules (json, typing, logging), a
#: ``src/`` layout, a ``lib/`` root, a namespace package, scripts and tests in plain folders.
FILES = [
    "app/__init__.py",
    "app/json.py",
    "app/typing.py",
    "app/logging/__init__.py",
    "app/logging/handlers.py",
    "app/core/__init__.py",
    "app/core/serializers/__init__.py",
    "app/core/serializers/json.py",
    "app/core/serializers/python.py",
    "src/flaskish/__init__.py",
    "src/flaskish/json/__init__.py",
    "src/flaskish/json/provider.py",
    "src/flaskish/typing.py",
    "src/flaskish/app.py",
    "lib/vendorpkg/__init__.py",
    "lib/vendorpkg/util.py",
    "nsroot/plugins/extra.py",
    "email/parser.py",
    "tests/conftest.py",
    "tests/helpers.py",
    "tests/test_app.py",
    "scripts/tool.py",
    "scripts/tool_utils.py",
    "setup.py",
]
INDEX = RepoIndex(Path("."), FILES)


def resolved(path: str, source: str, names: tuple[str, ...] = (), level: int = 0) -> list[str]:
    imp = Import(path, source, names, level > 0, 1, level)
    found = resolve_python_import(imp, INDEX)
    assert found is not None
    return list(found)


@pytest.mark.parametrize(
    "importer",
    ["app/core/serializers/python.py", "app/core/__init__.py", "src/flaskish/app.py", "setup.py"],
)
@pytest.mark.parametrize("name", ["json", "typing", "logging", "logging.handlers", "email.parser"])
def test_standard_library_names_never_land_on_a_module_of_the_same_last_name(importer, name):
    assert resolved(importer, name) == []
    assert resolved(importer, name.rsplit(".", 1)[0], (name.rsplit(".", 1)[-1],)) == []


def test_from_import_of_a_standard_library_name():
    # "from json import dumps", "from typing import Any" in a package with json.py / typing.py
    assert resolved("app/core/serializers/python.py", "json", ("dumps",)) == []
    assert resolved("src/flaskish/json/provider.py", "typing", ("Any",)) == []
    # "import typing as t" in flask's own modules
    assert resolved("src/flaskish/app.py", "typing") == []


def test_top_level_packages_resolve_by_their_full_name_only():
    assert resolve_module(INDEX, "app.json") == ("app/json.py",)
    assert resolve_module(INDEX, "app.core.serializers.json") == ("app/core/serializers/json.py",)
    assert resolve_module(INDEX, "app.logging") == ("app/logging/__init__.py",)
    assert resolve_module(INDEX, "app.logging.handlers") == ("app/logging/handlers.py",)
    # a suffix of a path is not a module name
    assert resolve_module(INDEX, "serializers.json") == ()
    assert resolve_module(INDEX, "core.serializers") == ()
    assert resolve_module(INDEX, "handlers") == ()
    assert resolved("app/core/serializers/python.py", "app.core.serializers", ("json",)) == [
        "app/core/serializers/__init__.py",
        "app/core/serializers/json.py",
    ]


def test_src_layout_and_other_roots_that_hold_packages():
    assert resolve_module(INDEX, "flaskish") == ("src/flaskish/__init__.py",)
    assert resolve_module(INDEX, "flaskish.json") == ("src/flaskish/json/__init__.py",)
    assert resolve_module(INDEX, "flaskish.typing") == ("src/flaskish/typing.py",)
    assert resolve_module(INDEX, "vendorpkg.util") == ("lib/vendorpkg/util.py",)
    # the src folder itself is a namespace package from the repository root
    assert resolve_module(INDEX, "src.flaskish.app") == ("src/flaskish/app.py",)
    assert resolved("src/flaskish/app.py", "flaskish.json", ("provider",)) == [
        "src/flaskish/json/__init__.py",
        "src/flaskish/json/provider.py",
    ]


def test_namespace_packages_without_init():
    assert resolve_module(INDEX, "nsroot.plugins.extra") == ("nsroot/plugins/extra.py",)
    assert resolved("setup.py", "nsroot.plugins", ("extra",)) == ["nsroot/plugins/extra.py"]
    # a namespace portion named like a standard-library package does not shadow it
    assert resolve_module(INDEX, "email.parser") == ()
    assert resolve_module(INDEX, "extra") == ()


def test_relative_imports_at_several_levels():
    here = "app/core/serializers/python.py"
    assert resolve_relative(INDEX, here, "json", 1) == "app/core/serializers/json.py"
    assert resolve_relative(INDEX, here, "", 1) == "app/core/serializers/__init__.py"
    assert resolve_relative(INDEX, here, "", 2) == "app/core/__init__.py"
    assert resolve_relative(INDEX, here, "json", 3) == "app/json.py"
    assert resolve_relative(INDEX, here, "logging.handlers", 3) == "app/logging/handlers.py"
    assert resolved(here, "", ("json",), level=1) == [
        "app/core/serializers/__init__.py",
        "app/core/serializers/json.py",
    ]
    assert resolved(here, "", ("typing",), level=3) == ["app/__init__.py", "app/typing.py"]
    # dots that climb above the repository root resolve to nothing
    assert resolve_relative(INDEX, here, "json", 5) is None
    assert resolve_relative(INDEX, "setup.py", "x", 2) is None


def test_a_test_directory_imports_the_package_and_its_own_helpers():
    assert resolved("tests/test_app.py", "flaskish", ("json",)) == [
        "src/flaskish/__init__.py",
        "src/flaskish/json/__init__.py",
    ]
    assert resolved("tests/test_app.py", "app.core.serializers.json") == [
        "app/core/serializers/json.py"
    ]
    # a plain test folder is on sys.path for its own modules (pytest, python tests/x.py)
    assert resolved("tests/test_app.py", "helpers") == ["tests/helpers.py"]
    assert resolved("scripts/tool.py", "tool_utils") == ["scripts/tool_utils.py"]
    # but not for modules in a package, nor from elsewhere
    assert resolved("app/core/__init__.py", "helpers") == []
    assert resolved("src/flaskish/app.py", "tool_utils") == []
    assert resolved("tests/test_app.py", "json") == []


def test_qualified_targets_follow_the_same_rules():
    assert resolve_python_target("app/core/__init__.py", "json.dumps", INDEX) == []
    assert resolve_python_target("app/core/__init__.py", "typing.Any", INDEX) == []
    assert resolve_python_target("tests/test_app.py", "flaskish.json.dumps", INDEX) == [
        "src/flaskish/json/__init__.py"
    ]
    assert resolve_python_target("tests/test_app.py", "helpers.make", INDEX) == ["tests/helpers.py"]


def test_import_edges_of_a_mapped_repository(tmp_path: Path):
    """End to end: the backends' imports of real files, resolved by the map."""
    files = {
        "src/shop/__init__.py": "from .cart import Cart\n",
        "src/shop/json.py": "import json\n\ndef dumps(x):\n    return json.dumps(x)\n",
        "src/shop/typing.py": "import typing as t\n\nCartId = t.NewType('CartId', int)\n",
        "src/shop/cart.py": (
            "import json\nimport typing as t\nimport logging\nfrom . import json as sj\n"
            "from .typing import CartId\n\nclass Cart:\n    def dump(self) -> str:\n"
            "        return sj.dumps(json.loads('{}'))\n"
        ),
        "src/shop/logging/__init__.py": "import logging\n\nlog = logging.getLogger('shop')\n",
        "tests/test_cart.py": (
            "import json\nfrom shop.cart import Cart\n\ndef test_dump():\n"
            "    assert json.loads(Cart().dump()) == {}\n"
        ),
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    rm = RepoMap(tmp_path, 1024, use_cache=False, jobs=1)
    try:
        imports = {p: sorted(t) for p, t in rm.rank().imports.items()}
    finally:
        rm.close()
    assert imports["src/shop/cart.py"] == [
        "src/shop/__init__.py",
        "src/shop/json.py",
        "src/shop/typing.py",
    ]
    assert imports["tests/test_cart.py"] == ["src/shop/cart.py"]
    assert "src/shop/json.py" not in imports
    assert "src/shop/typing.py" not in imports
    assert "src/shop/logging/__init__.py" not in imports
