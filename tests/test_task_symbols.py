"""Symbols ranked for the task: each definition by its own evidence (named in the text, a frame
inside it, the task's words in its name, signature, docstring and body), with module lists, class
attributes and helpers nested in methods only when the task names them."""

from __future__ import annotations

import pytest

from repomapper import RepoMap
from repomapper.graph import SymbolTable
from repomapper.model import RankedFile, Reason, SymbolKind, Tag
from repomapper.ranked import RankedRepository, map_items
from repomapper.relevance import parse_task
from repomapper.relevance.symbol_weights import shipped_symbol_weights
from repomapper.relevance.symbols import (
    INCIDENTAL,
    incidental,
    named_evidence,
    score_symbols,
    task_evidence,
)

OWNER_SHARE = shipped_symbol_weights().owner_share
WORDS_WEIGHT = shipped_symbol_weights().words

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


def test_an_incidental_symbol_the_task_names_comes_after_the_function_that_uses_it(printer):
    # the attribute says where to look; the method that reads it is what a fix changes
    order = symbols_of(printer, "A subclass's own `printmethod` is ignored")
    assert order[:2] == ["doprint", "printmethod"], order
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
            _tag("load_config", SymbolKind.FUNCTION, start=2, end=2, doc="Read the settings file."),
            _tag("dump", SymbolKind.FUNCTION, start=5, end=9),
        ],
        "n.py": [_tag("load_config", SymbolKind.FUNCTION, doc="Read the settings file.")],
    }
    idf = {"load": 1.0, "config": 2.0, "setting": 1.5}
    found = {("m.py", "dump"): [("identifier", "dump", 0.5)]}
    got = score_symbols([("m.py", 2.0), ("n.py", 1.0)], defs, found, idf)
    s = got.scores
    assert s[("m.py", "__all__", 1)] == INCIDENTAL
    assert s[("m.py", "dump", 5)] == pytest.approx(0.5)  # named, no words

    def evidence(key):
        return task_evidence(s.get(key, 0.0), got.reasons.get(key, ()))

    # words evidence is a reason, not a score (the packs read scores as "the task names it")
    config_m, config_n = ("m.py", "load_config", 2), ("n.py", "load_config", 1)
    assert config_m not in s
    assert evidence(config_m) == pytest.approx(WORDS_WEIGHT)  # the best
    # the same name in a file half as relevant has half the words evidence
    assert evidence(config_m) == pytest.approx(2 * evidence(config_n))
    assert got.reasons[config_m][0].signal == "words"
    assert "setting" in got.reasons[config_m][0].detail


def _table(defs):
    table = SymbolTable()
    for t in defs:
        table.definitions[(t.file_path, t.name)].append(t)
    return table


def _task_ranked(files, symbols, scores, reasons):
    """A task's ranked repository of functions only: ``files`` (path, score) best first,
    ``symbols`` per path its functions' names (one a line, from line 1), and their evidence."""
    defs = [
        Tag(path, line, line, name, "def", SymbolKind.FUNCTION)
        for path, names in symbols.items()
        for line, name in enumerate(names, 1)
    ]
    return RankedRepository(
        files=tuple(RankedFile(p, s) for p, s in files),
        definitions=(),
        by_file={p: [(n, 0.1) for n in names] for p, names in symbols.items()},
        symbol_scores=scores,
        symbol_reasons=reasons,
        named=frozenset(),
        chat=frozenset(),
        mapped={},
        table=_table(defs),
        entries=[],
        all_entries=[],
        seen=0,
        diagnostics=(),
        task=True,
    )


@pytest.fixture
def root_share(monkeypatch):
    """The map's order with the constants these tests reason in: a file's k-th symbol wanted
    as 1/k of its file's score, or the square root of its evidence over the task's best (the
    mechanism is what they test; the shipped values are fitted)."""
    import dataclasses

    import repomapper.ranked as ranked_module
    from repomapper.relevance.symbol_weights import shipped_symbol_weights

    w = dataclasses.replace(
        shipped_symbol_weights(), place_share=1.0, place_power=1.0, evidence_power=0.5
    )
    monkeypatch.setattr(ranked_module, "shipped_symbol_weights", lambda: w)


@pytest.mark.usefixtures("root_share")
def test_the_best_files_strong_symbols_come_before_weaker_files_first_ones():
    """A file's k-th symbol is wanted as much as its own evidence says (at least 1/k of the
    file's score, never more than the symbol before it): the second function the task is about
    is not pushed behind every other file's first symbol."""
    ranked = _task_ranked(
        [("a.py", 1.0), ("b.py", 0.8)],
        {"a.py": ["a1", "a2", "a3"], "b.py": ["b1"]},
        {("a.py", "a1", 1): 0.5, ("b.py", "b1", 1): 0.3},
        {("a.py", "a2", 2): (Reason("words", "x", 0.45),)},
    )
    items = [(i.path, i.ident) for i in map_items(ranked)]
    assert items == [("a.py", "a1"), ("a.py", "a2"), ("b.py", "b1"), ("a.py", "a3")]


@pytest.mark.usefixtures("root_share")
def test_a_named_file_leads_with_a_symbol_only_when_the_task_gives_it_evidence():
    """The files the task names come first with their best symbol when the task gives that
    symbol evidence of its own; a named file none of whose definitions the task points at
    (its path pasted in a command line) is ranked by its score alone, and its first symbol
    does not push the function the task describes down."""
    from dataclasses import replace

    ranked = _task_ranked(
        [("a.py", 1.0), ("n.py", 0.7), ("m.py", 0.6)],
        {"a.py": ["a1", "a2"], "n.py": ["bad_args", "n2"], "m.py": ["m1", "m2"]},
        {("a.py", "a1", 1): 0.5, ("m.py", "m2", 2): 0.4},
        {},
    )
    ranked = replace(ranked, named=frozenset({"n.py", "m.py"}))
    items = [(i.path, i.ident) for i in map_items(ranked)]
    # m.py's best symbol has evidence: first; n.py's has none: by the file's score
    assert items[:3] == [("m.py", "m2"), ("a.py", "a1"), ("n.py", "bad_args")]


@pytest.mark.usefixtures("root_share")
def test_a_symbols_share_of_its_file_is_by_the_whole_tasks_best_evidence():
    """Past a file's first symbol, a definition is wanted as the root of its evidence over the
    task's best: a tenth of the best named function's evidence still comes before a lower
    file's first symbol, and a file whose best evidence is a few words does not carry its
    second such function up with it."""
    ranked = _task_ranked(
        [("a.py", 1.0), ("c.py", 0.9), ("b.py", 0.6)],
        {"a.py": ["a1", "a2", "a3"], "b.py": ["b1"], "c.py": ["c1", "c2"]},
        {("a.py", "a1", 1): 0.5},
        {
            ("a.py", "a2", 2): (Reason("words", "x", 0.2),),
            ("c.py", "c1", 1): (Reason("words", "y", 0.02),),
            ("c.py", "c2", 2): (Reason("words", "y", 0.019),),
        },
    )
    items = [(i.path, i.ident) for i in map_items(ranked)]
    assert items == [
        ("a.py", "a1"),
        ("c.py", "c1"),
        ("a.py", "a2"),  # sqrt(0.2 / 0.5) of 1.0, before b.py's 0.6
        ("b.py", "b1"),
        ("c.py", "c2"),  # 1/2 of 0.9: its share of the task's best is smaller
        ("a.py", "a3"),
    ]


READERS = '''"""Readers of two formats."""


class IniReader:
    """Reads ini files."""

    def __init__(self, path):
        self.path = path
        self.sections = {}

    def parse(self, text):
        for line in text.splitlines():
            if line.startswith("["):
                self.sections[line.strip("[]")] = {}
        return self.sections


class CsvReader:
    """Reads comma separated files."""

    def __init__(self, path, delimiter=","):
        self.path = path
        self.delimiter = delimiter

    def parse(self, text):
        rows = []
        for line in text.splitlines():
            rows.append(line.split(self.delimiter))
        return rows


def read(path):
    if path.endswith(".ini"):
        return IniReader(path).parse(open(path).read())
    return CsvReader(path).parse(open(path).read())
'''
READERS_REPO = {
    "fmt/__init__.py": "",
    "fmt/readers.py": READERS,
    **{
        f"fmt/use{i}.py": "from fmt.readers import IniReader, CsvReader\n\n"
        f"def u{i}(p):\n    return IniReader(p).parse(''), CsvReader(p).parse('')\n"
        for i in range(4)
    },
}
_LINES = READERS.splitlines()
INI_PARSE = _LINES.index("    def parse(self, text):") + 1
CSV_PARSE = _LINES.index("    def parse(self, text):", INI_PARSE) + 1
#: ``rows.append(...)`` inside CsvReader.parse
CSV_APPEND = _LINES.index("            rows.append(line.split(self.delimiter))") + 1


@pytest.fixture
def readers(make_tree):
    return make_tree(READERS_REPO, "readers")


def ranked_symbols(root, task):
    rm = RepoMap(root, 400, use_cache=False)
    try:
        return [s for s in rm.map(task=task).ranked_symbols if s.path == "fmt/readers.py"]
    finally:
        rm.close()


def _at(symbols, name, line):
    return next(i for i, s in enumerate(symbols) if s.name == name and s.line == line)


def test_two_methods_of_one_name_are_ranked_apart(readers):
    # the words describe CsvReader.parse (delimiter, rows, split), not IniReader.parse: one name,
    # two definitions, each with its own evidence and its own place
    got = ranked_symbols(readers, "The delimiter is ignored and every row splits at the comma")
    assert (got[0].name, got[0].scope, got[0].line) == ("parse", "CsvReader", CSV_PARSE)
    ini = got[_at(got, "parse", INI_PARSE)]
    assert not any(r.signal == "words" and "delimiter" in r.detail for r in ini.why)
    assert _at(got, "parse", INI_PARSE) > _at(got, "__init__", CSV_PARSE - 4)


def test_a_traceback_frame_leads_only_the_definition_holding_it(readers):
    task = (
        "Traceback (most recent call last):\n"
        f'  File "/site-packages/fmt/readers.py", line {CSV_APPEND}, in parse\n'
        "TypeError: 'NoneType' object is not iterable\n"
    )
    got = ranked_symbols(readers, task)
    assert (got[0].name, got[0].line) == ("parse", CSV_PARSE)
    assert any(r.signal == "traceback" for r in got[0].why)
    ini = got[_at(got, "parse", INI_PARSE)]
    assert not any(r.signal == "traceback" for r in ini.why)


def test_a_qualified_name_leads_its_method_and_then_its_class(readers):
    got = ranked_symbols(readers, "`CsvReader.parse` drops empty rows")
    assert (got[0].name, got[0].line) == ("parse", CSV_PARSE)
    # the class after its method (how far after is the fitted constants' say: a function
    # whose body the words describe may come between)
    assert _at(got, "CsvReader", 18) > 0
    ini = got[_at(got, "parse", INI_PARSE)]
    assert not any(r.signal == "qualified_name" for r in ini.why)


def test_a_class_the_task_names_comes_after_its_method_the_task_describes(readers):
    got = ranked_symbols(readers, "IniReader loses the keys after a section header")
    assert got[0].scope == "IniReader"  # one of its methods (sections are made and filled there)
    assert _at(got, "IniReader", 4) > 0
    assert any(r.signal == "scope" for r in got[0].why)


def test_named_evidence_goes_to_the_definitions_it_points_at():
    defs = {
        "m.py": [
            _tag("A", SymbolKind.CLASS, start=1, end=9),
            _tag("run", SymbolKind.METHOD, "A", start=2, end=4),
            _tag("B", SymbolKind.CLASS, start=10, end=19),
            _tag("run", SymbolKind.METHOD, "B", start=11, end=14),
            _tag("run", SymbolKind.FUNCTION, start=20, end=22),
        ]
    }
    found = {
        ("m.py", "run"): [
            ("traceback", "line 12", 0.8),
            ("qualified_name", "A.run", 0.4),
            ("module", "pkg.m.run", 0.6),
            ("identifier", "run", 0.2),
        ],
        ("m.py", "A"): [("qualified_name", "A.run", 0.4)],
    }
    got = named_evidence(defs, found)

    def total(key):
        return sum(w for w, _ in got[key].values())

    assert total(("m.py", "B.run", 11)) == pytest.approx(0.8 + 0.2)  # the frame's line
    assert total(("m.py", "A.run", 2)) == pytest.approx(0.4 + 0.2)  # the qualified name
    assert total(("m.py", "run", 20)) == pytest.approx(0.6 + 0.2)  # the module path's name
    assert got[("m.py", "A", 1)] == {("qualified_name", "A.run"): (0.4, True)}  # as the owner
    assert ("m.py", "B", 10) not in got
    assert sorted(got[("m.py", "B.run", 11)]) == [("identifier", "run"), ("traceback", "line 12")]


def test_a_nested_helper_comes_last_even_when_a_function_shares_its_name(make_tree):
    # a module-level ``parens`` makes the name a real function's too; the copies nested in the
    # methods are still incidental, each its own entry after the file's other definitions
    pretty = PRETTY + '\n\ndef parens(text):\n    return "(" + text + ")"\n'
    root = make_tree({**REPO, "printing/pretty.py": pretty}, "printer2")
    rm = RepoMap(root, 400, use_cache=False)
    try:
        task = "Printing a power loses the brackets around a negative exponent"
        got = [s for s in rm.map(task=task).ranked_symbols if s.path == "printing/pretty.py"]
    finally:
        rm.close()
    nested = [i for i, s in enumerate(got) if s.name == "parens" and s.scope]
    others = [
        i
        for i, s in enumerate(got)
        if s.name not in INCIDENTALS or (s.name == "parens" and not s.scope)
    ]
    assert len(nested) == 3 and min(nested) > max(others), [(s.name, s.scope) for s in got]


def test_a_long_body_is_no_evidence_against_its_function():
    """Body term counts are not normalized by length: a long function with the task's terms is
    as much evidence as a short one (changes land in long functions more often)."""
    long_body = 60
    defs = {
        "m.py": [
            _tag("alpha", SymbolKind.FUNCTION, start=1, end=3),
            _tag("beta", SymbolKind.FUNCTION, start=4, end=4 + long_body),
        ]
    }
    text = "def alpha():\n    retry_timeout()\n\ndef beta():\n    retry_timeout()\n"
    text += "    pass\n" * long_body
    idf = {"retry": 2.0, "timeout": 2.0}
    got = score_symbols([("m.py", 1.0)], defs, {}, idf, read=lambda p: text.encode())

    def evidence(key):
        return task_evidence(got.scores.get(key, 0.0), got.reasons.get(key, ()))

    assert evidence(("m.py", "beta", 4)) == pytest.approx(evidence(("m.py", "alpha", 1)))


def test_a_class_comes_after_its_method_that_has_evidence_of_its_own():
    """What the words say of a class is most often about one of its methods: the class keeps
    OWNER_SHARE of its evidence, so the method the words also describe comes first."""
    defs = {
        "m.py": [
            _tag("RetryPolicy", SymbolKind.CLASS, start=1, end=9, doc="Retry with a timeout."),
            _tag("backoff", SymbolKind.METHOD, "RetryPolicy", start=2, end=4, doc="The backoff."),
        ]
    }
    idf = {"retry": 2.0, "timeout": 2.0, "policy": 1.0, "backoff": 3.0}
    got = score_symbols([("m.py", 1.0)], defs, {}, idf)

    def evidence(key):
        return task_evidence(got.scores.get(key, 0.0), got.reasons.get(key, ()))

    cls, method = ("m.py", "RetryPolicy", 1), ("m.py", "RetryPolicy.backoff", 2)
    # the class matches more of the words, yet keeps only OWNER_SHARE of them
    assert evidence(cls) == pytest.approx(OWNER_SHARE * WORDS_WEIGHT)
    assert evidence(method) > evidence(cls)


def test_a_coding_pack_shows_the_body_of_the_function_the_words_describe(printer):
    from repomapper import RepoMapper

    task = "Printing a power loses the brackets around a negative exponent"
    m = RepoMapper(printer, env={}, use_cache=False)
    try:
        coding = m.generate_context_pack_sync("t", task, [], "coding", 4000)
        planning = m.generate_context_pack_sync("t", task, [], "planning", 4000)
    finally:
        m.close()
    body = "        exponent = expr.exp"
    assert body in next(f.content for f in coding.files if f.path == "printing/pretty.py")
    # a planner reads outlines: no body beyond the targets
    assert all(body not in f.content for f in planning.files)


def test_the_ranked_functions_bodies_take_at_most_their_share_of_the_pack(printer, monkeypatch):
    """The bodies the task ranking suggests fit in RANKED_BODY_SHARE of the budget: with no
    share, no function beyond the targets is shown whole (by the selection: what the budget
    leaves once every file is placed is widened apart, see tests/test_pack.py)."""
    from repomapper import RepoMapper
    from repomapper.pack import budget, select

    task = "Printing a power loses the brackets around a negative exponent"
    body = "        exponent = expr.exp"
    monkeypatch.setattr(select, "RANKED_BODY_SHARE", 0.0)
    monkeypatch.setattr(budget._Filling, "widen", lambda self: None)
    m = RepoMapper(printer, env={}, use_cache=False)
    try:
        coding = m.generate_context_pack_sync("t", task, [], "coding", 4000)
    finally:
        m.close()
    assert all(body not in f.content for f in coding.files)
    assert any(f.path == "printing/pretty.py" for f in coding.files)


def test_the_ranked_bodies_share_is_of_what_the_targets_shown_in_full_leave(make_tree):
    """A target a coder sees in full is paid first: the ranked functions' share is of the
    budget it leaves (half of the whole budget would hold the body; half of what is left does
    not)."""
    from repomapper import RepoMapper
    from repomapper.pack.content import joined
    from repomapper.pack.roles import policy_for
    from repomapper.pack.select import BodyBudget, select

    big = "".join(f"SETTING_{i} = {i}  # a constant nobody asked about\n" for i in range(300))
    root = make_tree({**REPO, "big.py": big}, "printer-target")
    task = "Printing a power loses the brackets around a negative exponent"
    m = RepoMapper(root, env={}, use_cache=False)
    try:
        ranked = m.repomap.rank(task=task, mentioned_fnames=("big.py",))
        links = m._links(ranked, m._left_out(ranked.entries))
        count = m.counter.count
        pow_tag = next(
            t for t in links.view.definitions("printing/pretty.py") if t.name == "_print_pow"
        )
        lines = PRETTY.splitlines()
        body = count(joined(lines[pow_tag.start_line - 1 : pow_tag.end_line]))
        target = count(joined(big.splitlines()))
        assert target > body  # half the whole budget holds the body

        def bodies(budget: int) -> dict[str, None]:
            chosen = select(
                links, ranked, ["big.py"], policy_for("coding"), 1, 0.0, BodyBudget(budget, count)
            )
            found = chosen.candidates.get("printing/pretty.py")
            return found.bodies if found is not None else {}

        assert "printing/pretty.py::Printer._print_pow" not in bodies(target + body)
        assert "printing/pretty.py::Printer._print_pow" in bodies(target + 2 * body)
    finally:
        m.close()
