"""The templates backend (issue 27, "templates without a backend"): template files are mapped,
ranked for a task, linked by their includes, and bad input costs only its own file."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from repomapper import RepoMap
from repomapper.cli import main
from repomapper.index import RepoIndex
from repomapper.model import SourceFile
from repomapper.plugins import templates
from repomapper.plugins.templates import scanner
from repomapper.plugins.templates.resolve import resolve_template
from repomapper.plugins.templates.scanner import GO, JINJA, scan
from tests.conftest import write_tree

FIXTURES = Path(templates.__file__).resolve().parents[2] / "conformance" / "fixtures"

TAXONOMY = """\
{{- $page := . }}
{{- range $taxonomy, $terms := .Site.Taxonomies }}
  <h2>{{ $taxonomy | title }}</h2>
  <ul>
  {{- range $terms }}
    <li><a href="{{ .Page.RelPermalink }}">{{ .Page.LinkTitle }}</a></li>
  {{- end }}
  </ul>
{{- end }}
"""
GO_FILE = """\
package pages

// Render renders one page of the site.
func Render(name string) string {
\treturn "page " + name
}

// Paginate splits the pages into groups.
func Paginate(n int) []int { return make([]int, n) }
"""


@pytest.fixture
def run():
    runner = CliRunner()

    def invoke(*args: object) -> object:
        return runner.invoke(main, [str(a) for a in args], catch_exceptions=False)

    return invoke


def _tags(path: str, text: str | bytes) -> list:
    data = text.encode() if isinstance(text, str) else text
    return templates.extract_tags(SourceFile(Path("."), path, data))


def _imports(path: str, text: str) -> list:
    return templates.extract_imports(SourceFile(Path("."), path, text.encode()))


# -- the example ------------------------------------------------------------------------
def test_a_task_about_a_template_ranks_the_template_first(run, tmp_path):
    # a site of a few files: the ranking's length and centrality features are percentiles over
    # the mapped files, which two files alone make all-or-nothing
    helpers = {
        f"pages/helpers{i}.go": "package pages\n\n"
        + "".join(f"func Helper{i}x{j}(x int) int {{ return x + {j} }}\n" for j in range(i + 2))
        for i in range(4)
    }
    root = write_tree(
        tmp_path / "site",
        {"layouts/partials/taxonomy-terms.html": TAXONOMY, "pages/render.go": GO_FILE, **helpers},
    )
    task = "taxonomy terms template renders the wrong title"
    args = ("map", root, "--task", task, "--format", "json", "--no-cache")
    d = json.loads(run(*args).stdout)
    assert [f["path"] for f in d["ranked_files"]][0] == "layouts/partials/taxonomy-terms.html"
    # without the backend the template is not ranked at all (what issue 27 found)
    blocked = json.loads(run(*args, "--block", "templates").stdout)
    ranked = [f["path"] for f in blocked["ranked_files"]]
    assert ranked[0] == "pages/render.go"
    assert "layouts/partials/taxonomy-terms.html" not in ranked


# -- imports --------------------------------------------------------------------------------------
def test_jinja_extends_and_include_edges(run, tmp_path):
    root = write_tree(
        tmp_path / "app",
        {
            "shop/templates/base.html": "<html>{% block body %}{% endblock %}</html>\n",
            "shop/templates/partials/nav.html": "<nav>{{ user.name }}</nav>\n",
            "shop/templates/macros.html": "{% macro price(x) %}{{ x }}{% endmacro %}\n",
            "shop/templates/cart.html": (
                '{% extends "base.html" %}\n'
                '{% from "macros.html" import price %}\n'
                '{% block body %}{% include "partials/nav.html" %}{{ price(1) }}{% endblock %}\n'
            ),
            # a same-named file outside the template root is not what "base.html" means
            "docs/base.html": "<p>{{ docs }}</p>\n",
        },
    )
    out = run("imports", root, "--no-cache").stdout
    assert "shop/templates/cart.html:1\tbase.html" in out
    assert "shop/templates/cart.html:2\tmacros.html\tprice" in out
    assert "shop/templates/cart.html:3\tpartials/nav.html" in out
    rm = RepoMap(root, use_cache=False)
    try:
        edges = rm.rank().imports["shop/templates/cart.html"]
    finally:
        rm.close()
    assert dict(edges) == {
        "shop/templates/base.html": 1,
        "shop/templates/macros.html": 1,
        "shop/templates/partials/nav.html": 1,
    }


def _index(*files: str) -> RepoIndex:
    return RepoIndex(Path("."), files)


def test_hugo_partials_resolve_under_layouts_partials():
    index = _index(
        "layouts/_default/baseof.html",
        "layouts/partials/head.html",
        "layouts/_partials/footer.html",
        "layouts/partials/nav/menu.html",
        "themes/t/layouts/partials/head.html",
    )
    importer = "layouts/_default/baseof.html"
    assert resolve_template(importer, "head.html", index) == ["layouts/partials/head.html"]
    assert resolve_template(importer, "footer.html", index) == ["layouts/_partials/footer.html"]
    assert resolve_template(importer, "nav/menu", index) == ["layouts/partials/nav/menu.html"]
    # a theme's template finds the theme's partial, the nearest root
    theme = "themes/t/layouts/_default/baseof.html"
    assert resolve_template(theme, "head.html", index) == ["themes/t/layouts/partials/head.html"]


def test_jekyll_includes_resolve_from_a_layout_beside_them():
    index = _index("_layouts/default.html", "_includes/footer.html", "blog/_includes/footer.html")
    assert resolve_template("_layouts/default.html", "footer.html", index) == [
        "_includes/footer.html"
    ]


def test_names_that_match_nothing_stay_unresolved():
    index = _index(
        "web/templates/page.html",
        "vendor/lib/header.html",  # same base name, not under a root of the importer
        "other/templates/header.html",  # another root: a bare name is not looked up there
    )
    assert resolve_template("web/templates/page.html", "header.html", index) == []
    assert resolve_template("web/templates/page.html", "missing/x.html", index) == []
    assert resolve_template("web/templates/page.html", "../../etc/passwd", index) == []
    assert resolve_template("web/templates/page.html", "{{ name }}.html", index) == []
    assert resolve_template("web/templates/page.html", "https://x.org/a.html", index) == []


def test_namespaced_names_relative_names_and_partial_conventions():
    index = _index(
        "blog/templates/blog/post.html",
        "accounts/templates/accounts/base.html",
        "site/pages/index.njk",
        "site/pages/card.njk",
        "app/views/users/show.html.erb",
        "app/views/users/_form.html.erb",
        "app/views/users/_form.json.jbuilder",
        "app/views/shared/_avatar.html.erb",
        "views/home.hbs",
        "views/partials/user-card.hbs",
    )
    # Django: another app's namespaced template
    post = "blog/templates/blog/post.html"
    assert resolve_template(post, "accounts/base.html", index) == [
        "accounts/templates/accounts/base.html"
    ]
    # relative names are relative to the importing file only
    assert resolve_template("site/pages/index.njk", "./card.njk", index) == ["site/pages/card.njk"]
    # Rails partials: _name, the importer's own format first
    show = "app/views/users/show.html.erb"
    assert resolve_template(show, "form", index) == ["app/views/users/_form.html.erb"]
    assert resolve_template(show, "shared/avatar", index) == ["app/views/shared/_avatar.html.erb"]
    # Handlebars partials by name, from a partials folder
    assert resolve_template("views/home.hbs", "user-card", index) == [
        "views/partials/user-card.hbs"
    ]


def test_a_go_template_name_is_a_reference_and_a_file_name_also_an_import():
    text = '{{ template "header" . }}\n{{ template "footer.html" . }}\n{{ partial "x.html" . }}\n'
    refs = {(t.name, t.start_line) for t in _tags("page.tmpl", text) if not t.is_def}
    assert refs == {("header", 1), ("footer.html", 2)}
    assert [(i.source, i.line_number) for i in _imports("page.tmpl", text)] == [
        ("footer.html", 2),
        ("x.html", 3),
    ]


def test_a_hugo_inline_partial_is_not_an_import():
    text = (
        '{{ partial "inline/walk.html" . }}\n{{ define "_partials/inline/walk.html" }}x{{ end }}\n'
    )
    assert _imports("menu.html", text) == []


# -- what is read ---------------------------------------------------------------------------------
def test_plain_html_is_declined_and_a_template_is_claimed(tmp_path):
    assert _tags("index.html", "<html><body><h1 id='top'>Hi</h1></body></html>\n") is None
    assert _tags("card.hbs", "<div>plain</div>\n") == []  # a template extension: claimed
    assert _tags("index.html", "<h1>{{ .Title }}</h1>\n") == []


def test_definitions_end_lines_scopes_and_docstrings():
    text = (
        "{# Shared page chrome. #}\n"  # 1
        "{% block page %}\n"  # 2
        "  {% block title 'Home' %}\n"  # 3  Twig's short block: no end tag
        "  {% block body scoped %}\n"  # 4
        "    {{ forms.field(x) }}\n"  # 5
        "  {% endblock body %}\n"  # 6
        "{% endblock %}\n"  # 7
    )
    defs = {t.name: t for t in _tags("page.twig", text) if t.is_def}
    assert (defs["page"].start_line, defs["page"].end_line, defs["page"].scope) == (2, 7, "")
    assert defs["page"].docstring == "Shared page chrome."
    assert (defs["title"].start_line, defs["title"].end_line, defs["title"].scope) == (3, 3, "page")
    assert (defs["body"].end_line, defs["body"].scope) == (6, "page")
    assert ("field", 5) in {(t.name, t.start_line) for t in _tags("page.twig", text)}


def test_comments_raw_blocks_and_strings_are_not_read():
    text = (
        "{# {% block ghost %}{% endblock %} #}\n"
        '{% raw %}{% include "raw.html" %}{% endraw %}\n'
        "{{ \"{% include 'string.html' %}\" }}\n"
        '{{/* {{ template "gone" }} */}}\n'
        '{% include "real.html" %}\n'
    )
    assert _tags("x.html", text) == []
    assert [i.source for i in _imports("x.html", text)] == ["real.html"]


def test_mustache_sections_and_partials():
    text = "{{! a card }}\n{{#product}}\n  {{> price}}\n{{/product}}\n{{^product}}-{{/product}}\n"
    assert [(t.name, t.start_line) for t in _tags("card.mustache", text)] == [("price", 3)]
    assert [i.source for i in _imports("card.mustache", text)] == ["price"]


def test_rails_content_blocks_and_liquid_captures():
    erb = (
        "<% content_for :sidebar do %>\n"  # 1
        "  <% if admin? %><%= render 'tools' %><% end %>\n"  # 2
        "<% end %>\n"  # 3
        "<%= yield :sidebar %>\n"  # 4
    )
    tags = _tags("show.html.erb", erb)
    sidebar = next(t for t in tags if t.is_def)
    assert (sidebar.name, sidebar.start_line, sidebar.end_line) == ("sidebar", 1, 3)
    assert ("sidebar", 4) in {(t.name, t.start_line) for t in tags if not t.is_def}
    liquid = "{% capture title %}\n{{ page.title }}\n{% endcapture %}\n{{ title }}\n"
    [capture] = _tags("page.liquid", liquid)
    assert (capture.name, capture.symbol_kind, capture.end_line) == ("title", "variable", 3)


def test_freemarker_macros_calls_and_imports(tmp_path):
    page = (
        '<#import "../_features.html" as f>\n'  # 1
        "<#-- <#macro ghost> is a comment -->\n"  # 2
        '<@f.scaffold title="x">\n'  # 3
        "  <@note/>\n"  # 4
        "</@f.scaffold>\n"  # 5
        "<#macro note>\n"  # 6
        "  <p>note</p>\n"  # 7
        "</#macro>\n"  # 8
    )
    tags = {(t.name, t.kind, t.start_line, t.end_line) for t in _tags("features/page.html", page)}
    assert tags == {("scaffold", "ref", 3, 3), ("note", "ref", 4, 4), ("note", "def", 6, 8)}
    root = write_tree(
        tmp_path / "site",
        {
            "website/templates/features/page.html": page,
            "website/templates/_features.html": "<#macro scaffold title><#nested></#macro>\n",
        },
    )
    rm = RepoMap(root, use_cache=False)
    try:
        edges = dict(rm.rank().imports["website/templates/features/page.html"])
    finally:
        rm.close()
    assert edges == {"website/templates/_features.html": 1}


def test_an_imported_alias_refers_to_the_macro_it_names():
    text = '{% from "forms.html" import field as f %}\n{{ f(user.name) }}\n'
    assert [(t.name, t.start_line) for t in _tags("x.j2", text)] == [("field", 2)]


# -- bad input ------------------------------------------------------------------------------------
HOSTILE = {
    "huge-line.html": b"<p>{{ .Title }}" + b"a" * 5_000_000 + b"</p>\n",
    "unclosed.html": b"{{ .Title }}{{ partial " + b"{{" * 1_000_000 + b"\n",
    "nul.tmpl": b'{{ define "x" }}\x00\x00{{ template "y" }}\x00{{ end }}\n' * 20_000,
    "deep.tmpl": b"{{ if . }}" * 200_000 + b'{{ define "d" }}{{ end }}',
    "tags.hbs": b"{{> a}}" * 200_000,
    "unclosed.ftl": b"<#macro a " * 300_000 + b"<#-- " * 300_000 + b"<@x.y" * 300_000,
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_input_is_bounded(name):
    started = time.perf_counter()
    source = SourceFile(Path("."), name, HOSTILE[name])
    tags = templates.extract_tags(source)
    imports = templates.extract_imports(source)
    # generous: a loaded shared machine; the point is that nothing is quadratic (seconds for
    # a quadratic scan of these inputs would be hours)
    assert time.perf_counter() - started < 20
    assert tags is not None and imports is not None
    assert all(t.start_line >= 1 and len(t.name) <= scanner.MAX_NAME_CHARS for t in tags)


def test_hostile_files_cost_only_themselves(tmp_path):
    files: dict[str, str | bytes] = {f"layouts/bad/{n}": d for n, d in HOSTILE.items()}
    files["layouts/partials/taxonomy-terms.html"] = TAXONOMY
    files["layouts/_default/list.html"] = (
        '{{ define "main" }}{{ partial "taxonomy-terms" . }}{{ end }}\n'
    )
    root = write_tree(tmp_path / "site", files)
    rm = RepoMap(root, use_cache=False, max_file_size=8_000_000)
    try:
        ranked = rm.rank()
        result = rm.map()
    finally:
        rm.close()
    assert dict(ranked.imports["layouts/_default/list.html"]) == {
        "layouts/partials/taxonomy-terms.html": 1
    }
    assert "layouts/_default/list.html" in result.map
    assert not [d for d in result.diagnostics if d.code in ("backend_crashed", "backend_timeout")]


def test_the_scan_stops_after_max_tags():
    doc = scan("{{ x }}" * (scanner.MAX_TAGS + 10), frozenset({GO, JINJA}))
    assert doc.tags == scanner.MAX_TAGS
    assert any("template tags only" in p for p in doc.problems)


# -- determinism ----------------------------------------------------------------------------------
def test_output_is_deterministic(tmp_path):
    sources = sorted(
        p for p in FIXTURES.rglob("*") if p.is_file() and templates.syntaxes_for(p.name)
    )
    assert len(sources) >= 12
    for path in sources:
        data = path.read_bytes()
        first = (
            _tags(path.name, data),
            templates.extract_imports(SourceFile(Path("."), path.name, data)),
        )
        again = (
            _tags(path.name, data),
            templates.extract_imports(SourceFile(Path("."), path.name, data)),
        )
        assert first == again, path
    root = write_tree(
        tmp_path / "site",
        {"layouts/partials/taxonomy-terms.html": TAXONOMY, "pages/render.go": GO_FILE},
    )
    runs = []
    for _ in range(2):
        rm = RepoMap(root, use_cache=False)
        try:
            runs.append(rm.map(task="taxonomy terms title").map)
        finally:
            rm.close()
    assert runs[0] == runs[1] and "taxonomy-terms.html" in runs[0]
