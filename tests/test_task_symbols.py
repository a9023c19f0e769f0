"""Symbols ranked for the task: each definition by its own evidence (named in the text, a frame
inside it, the task's words in its name, signature, docstring and body), with module lists, class
attributes and helpers nested in methods only when the task names them."""

from __future__ import annotations

import pytest

from repomapper import RepoMap
from repomapper.model import RankedFile, Reason, SymbolKind, Tag
from repomapper.ranked import RankedRepository, map_items
from repomapper.relevance import parse_task
from repomapper.relevance.symbols import (
    INCIDENTAL,
    WORDS_WEIGHT,
    incidental,
    score_symbols,
    task_evidence,
)

PRETTY = '''"""A pretty printer."""

__all__ = ["Printer", "render"]


class Printer:
    __slots__ = ("width", "depth")
    printmethod = "_pretty"
    indent_size = 4

    def _print_add(self, expr):
        def parens(x):
            return "(" + x + ")"

        return parens(expr.left) + " + " + parens(expr.right)

    def _print_mul(self, expr):
        def parens(x):
            return "(" + x + ")"

        left = parens(expr.left)
        return left + " * " + parens(expr.right)

    def _print_pow(self, expr):
        """Print a power: the base, then the raised part."""

        def parens(x):
            return "(" + x + ")"

        exponent = expr.exp
        return parens(expr.base) + "**" + str(exponent)

    def doprint(self, expr):
        return getattr(self, self.printmethod)(expr)


def render(expr):
    return Printer().doprint(expr)
'''
#: line of ``left = parens(expr.left)`` in _print_mul (outside its nested helper)
MUL_LINE = PRETTY.splitlines().index("        left = parens(expr.left)") + 1

USERS = {
    f"printing/user{i}.py": (
        "from printing.pretty import Printer, __all__\n\n"
        f"class P{i}(Printer):\n    printmethod = '_p{i}'\n    __slots__ = ()\n\n"
        f"def go{i}(x):\n    return P{i}.printmethod, P{i}.indent_size, __all__\n"
    )
    for i in range(6)
}
REPO = {"printing/__init__.py": "", "printing/pretty.py": PRETTY, **USERS}
INCIDENTALS = {"__all__", "__slots__", "printmethod", "indent_size", "parens"}


@pytest.fixture
def printer(make_tree):
    return make_tree(REPO, "printer")


def symbols_of(root, task, path="printing/pretty.py"):
    rm = RepoMap(root, use_cache=False)
    try:
        return [name for name, _ in rm.rank(task=task).symbols_of(path)]
    finally:
        rm.close()


def test_without_a_task_the_incidental_symbols_rank_high(printer):
    # the premise of the tests below: by the reference graph alone, the attributes every
    # subclass repeats come before the methods
    rm = RepoMap(printer, use_cache=False)
    plain = [name for name, _ in rm.rank().symbols_of("printing/pretty.py")]
    rm.close()
    assert plain.index("indent_size") < plain.index("_print_pow")


def test_the_function_the_words_describe_leads_and_incidentals_come_last(printer):
    order = symbols_of(printer, "Printing a power loses the brackets around a negative exponent")
    assert order[0] == "_print_pow"  # "power" in its docstring, "exponent" in its body
    incidental_at = [order.index(n) for n in INCIDENTALS]
    others = [i for i, n in enumerate(order) if n not in INCIDENTALS]
    assert min(incidental_at) > max(others), order


def test_an_incidental_symbol_leads_when_the_task_names_it(printer):
    order = symbols_of(printer, "A subclass's own `printmethod` is ignored")
    assert order[0] == "printmethod"
    assert order.index("_print_pow") < order.index("parens")


def test_a_traceback_frame_inside_a_method_leads_it(printer):
    task = (
        "Traceback (most recent call last):\n"
        f'  File "/site-packages/printing/pretty.py", line {MUL_LINE}, in _print_mul\n'
        "AttributeError: 'int' object has no attribute 'left'\n"
    )
    assert symbols_of(printer, task)[0] == "_print_mul"


def test_a_line_written_in_words_after_a_path_points_at_its_definition(printer):
    assert parse_task(f"The bug is in `pretty.py` at line {MUL_LINE}.").paths[0].line == MUL_LINE
    order = symbols_of(printer, f"Wrong output: the problem is in `pretty.py` at line {MUL_LINE}.")
    assert order[0] == "_print_mul"


def test_ranked_symbols_lead_with_the_function_the_task_is_about(printer):
    rm = RepoMap(printer, 400, use_cache=False)
    try:
        result = rm.map(task="Printing a power loses the brackets around a negative exponent")
    finally:
        rm.close()
    first = result.ranked_symbols[0]
    assert (first.path, first.name) == ("printing/pretty.py", "_print_pow")
    assert any(r.signal == "words" for r in first.why)


def _tag(name, kind, scope="", start=1, end=1, doc=None):
    return Tag("m.py", start, end, name, "def", kind, scope, None, doc)


def test_what_counts_as_incidental():
    functions = frozenset({"f", "C.m", "C.m.inner"})
    assert incidental(_tag("__all__", SymbolKind.VARIABLE), functions)
    assert incidental(_tag("x", SymbolKind.FIELD, "C"), functions)
    assert incidental(_tag("inner", SymbolKind.FUNCTION, "C.m"), functions)
    assert incidental(_tag("Deep", SymbolKind.CLASS, "C.m.inner"), functions)
    assert not incidental(_tag("m", SymbolKind.METHOD, "C"), functions)
    assert not incidental(_tag("C", SymbolKind.CLASS), functions)
    assert not incidental(_tag("Inner", SymbolKind.CLASS, "C"), functions)


def test_scores_words_named_and_incidental():
    defs = {
        "m.py": [
            _tag("__all__", SymbolKind.VARIABLE),
            _tag("load_config", SymbolKind.FUNCTION, doc="Read the settings file."),
            _tag("dump", SymbolKind.FUNCTION, start=5, end=9),
        ],
        "n.py": [_tag("load_config", SymbolKind.FUNCTION, doc="Read the settings file.")],
    }
    idf = {"load": 1.0, "config": 2.0, "setting": 1.5}
    named = {("m.py", "dump"): 0.5}
    reasons = {("m.py", "dump"): (Reason("identifier", "dump", 0.5),)}
    got = score_symbols([("m.py", 2.0), ("n.py", 1.0)], defs, named, reasons, idf)
    s = got.scores
    assert s[("m.py", "__all__")] == INCIDENTAL
    assert s[("m.py", "dump")] == pytest.approx(0.5)  # named, no words

    def evidence(key):
        return task_evidence(s.get(key, 0.0), got.reasons.get(key, ()))

    # words evidence is a reason, not a score (the packs read scores as "the task names it")
    assert ("m.py", "load_config") not in s
    assert evidence(("m.py", "load_config")) == pytest.approx(WORDS_WEIGHT)  # the best
    # the same name in a file half as relevant has half the words evidence
    assert evidence(("m.py", "load_config")) == pytest.approx(2 * evidence(("n.py", "load_config")))
    assert got.reasons[("m.py", "load_config")][0].signal == "words"
    assert "setting" in got.reasons[("m.py", "load_config")][0].detail


def test_the_best_files_strong_symbols_come_before_weaker_files_first_ones():
    """A file's k-th symbol is wanted as much as its own evidence says (at least 1/k of the
    file's score, never more than the symbol before it): the second function the task is about
    is not pushed behind every other file's first symbol."""
    ranked = RankedRepository(
        files=(RankedFile("a.py", 1.0), RankedFile("b.py", 0.8)),
        definitions=(),
        by_file={"a.py": [("a1", 0.1), ("a2", 0.1), ("a3", 0.1)], "b.py": [("b1", 0.1)]},
        symbol_scores={("a.py", "a1"): 0.5, ("b.py", "b1"): 0.3},
        symbol_reasons={("a.py", "a2"): (Reason("words", "x", 0.45),)},
        named=frozenset(),
        chat=frozenset(),
        mapped={},
        table=None,  # type: ignore[arg-type]
        entries=[],
        all_entries=[],
        seen=0,
        diagnostics=(),
        task=True,
    )
    items = [(i.path, i.ident) for i in map_items(ranked)]
    assert items == [("a.py", "a1"), ("a.py", "a2"), ("b.py", "b1"), ("a.py", "a3")]
