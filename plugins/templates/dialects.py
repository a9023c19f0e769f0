"""Which template files the backend reads, as which language, with which tag syntaxes."""

from __future__ import annotations

from .syntaxes import ERB, FTL, GO, JINJA

#: language -> (extensions, the tag syntaxes its files are read with). ``GO`` stands for
#: ``{{ }}`` actions and expressions (Go templates, Handlebars, Jinja's ``{{ }}``), ``JINJA`` for
#: ``{% %}`` statements and ``{# #}`` comments, ``ERB`` for ``<% %>``, ``FTL`` for FreeMarker's
#: ``<#directive>`` and ``<@macro>``.
LANGUAGES: tuple[tuple[str, tuple[str, ...], frozenset[str]], ...] = (
    # a .html file may be a Go (Hugo), Jinja, Django, Twig, Nunjucks, Liquid or FreeMarker
    # template
    ("html", (".html", ".htm"), frozenset({GO, JINJA, FTL})),
    # .tmpl and .tpl are Go's usual names (Helm's _helpers.tpl), and Jinja's now and then
    ("gotemplate", (".gohtml", ".gotmpl", ".tmpl", ".tpl"), frozenset({GO, JINJA})),
    ("jinja", (".jinja", ".jinja2", ".j2", ".njk", ".twig"), frozenset({GO, JINJA})),
    ("liquid", (".liquid",), frozenset({GO, JINJA})),
    ("handlebars", (".hbs", ".handlebars", ".mustache"), frozenset({GO})),
    ("erb", (".erb",), frozenset({ERB})),
    ("freemarker", (".ftl", ".ftlh", ".ftlx"), frozenset({FTL})),
)

#: extensions whose files are templates only when they hold template syntax: a plain HTML page
#: is markup, which the backend leaves unclaimed as the ctags fallback does (its element ids
#: would crowd a map and nothing in the code refers to them by name)
MARKUP_EXTENSIONS = frozenset({".html", ".htm"})

EXTENSIONS: tuple[str, ...] = tuple(e for _, exts, _ in LANGUAGES for e in exts)
_SYNTAXES = {e: syntaxes for _, exts, syntaxes in LANGUAGES for e in exts}
#: every extension a template file may have, for names written without one
TEMPLATE_EXTENSIONS = frozenset(EXTENSIONS)


def suffix_of(path: str) -> str:
    """The lower-case last extension of a path (``.erb`` for ``_form.html.erb``)."""
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return name[dot:].lower() if dot > 0 else ""


def syntaxes_for(path: str) -> frozenset[str] | None:
    """The tag syntaxes a file is read with, or None when it is not a template file."""
    return _SYNTAXES.get(suffix_of(path))
