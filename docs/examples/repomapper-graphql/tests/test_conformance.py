"""repomapper's conformance suite, run from this plugin's own test suite."""

from importlib.metadata import PackageNotFoundError, distribution

import pytest
import repomapper_graphql.plugin

from repomapper.conformance.testing import assert_conformant


def test_plugin_module_is_conformant():
    # Works from a source checkout: the module is registered on its own, next to the built-ins.
    assert_conformant(repomapper_graphql.plugin, examples=25)


def test_installed_plugin_is_conformant():
    # Once `pip install`ed, the entry point registers it under its name, as for any user.
    try:
        distribution("repomapper-graphql")
    except PackageNotFoundError:
        pytest.skip("repomapper-graphql is not installed")
    report = assert_conformant("graphql", examples=25)
    assert {r.language for r in report.results} == {"graphql"}
