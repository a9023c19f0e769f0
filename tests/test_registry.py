import sys
import textwrap

import pytest

from repomapper.model import SourceFile
from repomapper.registry import PluginConfig, PluginSet

PLUGIN_SOURCE = """
from repomapper.hookspecs import hookimpl
from repomapper.model import BackendInfo, Tag

@hookimpl
def backend_info():
    return BackendInfo("{name}", "9", ("python",), (".py",), ("definitions",))

@hookimpl
def extract_tags(source):
    return [Tag(source.path, 1, 1, "from_{name}", "def", "function")]
"""


@pytest.fixture
def installed_plugin(tmp_path, monkeypatch):
    """A third-party plugin installed the way pip would: a module plus dist-info entry points."""
    name = "thirdpy"
    (tmp_path / f"{name}_plugin.py").write_text(PLUGIN_SOURCE.format(name=name))
    dist = tmp_path / f"{name}-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        textwrap.dedent(f"""
        [repomapper]
        {name} = {name}_plugin
    """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("REPOMAPPER_NO_ENTRY_POINTS", raising=False)
    yield name
    sys.modules.pop(f"{name}_plugin", None)


def test_builtins_are_registered_by_name():
    ps = PluginSet(PluginConfig(load_entry_points=False))
    assert "python_ast" in ps.infos
    assert ps.candidates("x.py")[0] == "python_ast"
    assert "python_libcst" not in ps.infos  # opt-in only


def test_entry_point_plugins_take_precedence_over_builtins(installed_plugin):
    ps = PluginSet(PluginConfig())
    assert ps.candidates("a.py")[:2] == (installed_plugin, "python_ast")
    name, tags = ps.call_first(
        "extract_tags", ps.candidates("a.py"), source=SourceFile.from_text("a.py", "x=1")
    )
    assert name == installed_plugin and tags[0].name == f"from_{installed_plugin}"


def test_entry_points_can_be_disabled_by_env_and_option(installed_plugin, monkeypatch):
    assert installed_plugin not in PluginSet(PluginConfig(load_entry_points=False)).infos
    monkeypatch.setenv("REPOMAPPER_NO_ENTRY_POINTS", "1")
    assert installed_plugin not in PluginSet(PluginConfig()).infos


def test_a_named_plugin_can_be_blocked(installed_plugin, monkeypatch):
    assert installed_plugin not in PluginSet(PluginConfig(blocked=(installed_plugin,))).infos
    monkeypatch.setenv("REPOMAPPER_BLOCK_PLUGINS", f"{installed_plugin}, python_ast")
    ps = PluginSet(PluginConfig())
    assert installed_plugin not in ps.infos and "python_ast" not in ps.infos


def test_broken_entry_point_is_reported_not_fatal(tmp_path, monkeypatch):
    dist = tmp_path / "broken-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[repomapper]\nbroken = no_such_module_anywhere\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("REPOMAPPER_NO_ENTRY_POINTS", raising=False)
    ps = PluginSet(PluginConfig())
    assert [n for n, _ in ps.load_errors] == ["broken"]
    assert "python_ast" in ps.infos


def test_unknown_python_backend_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown Python backend"):
        PluginSet(PluginConfig(python_backend="jedi"))
