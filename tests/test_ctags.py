"""The Universal Ctags fallback backend (plugin ``ctags``).

Tests that need a real Universal Ctags skip when it is missing; the detection, robustness and
resolution tests run everywhere (the fake ctags binaries are tiny POSIX shell scripts).
"""

from __future__ import annotations

import json
import logging
import os
import stat
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repomapper.index import RepoIndex
from repomapper.isolation.normalize import normalize_signature
from repomapper.isolation.validate import validate_tags
from repomapper.model import Import, SourceFile, Tag
from repomapper.plugins.ctags import backend as ctags
from repomapper.plugins.ctags.detect import ENV_CTAGS, NOT_CODE_LANGUAGES, LanguageMap, detect
from repomapper.plugins.ctags.kinds import (
    ImportCollector,
    SourceLines,
    declared_kind,
    dotted_scope,
    make_signature,
    pattern_text,
    symbol_kind,
)
from repomapper.registry import PluginConfig, PluginSet

FIXTURES = Path(__file__).parent / "fixtures" / "ctags"
FIXTURE_FILES = (
    "c/main.c",
    "c/util.c",
    "c/util.h",
    "java/com/example/Shapes.java",
    "ruby/app.rb",
    "ruby/lib/helpers.rb",
    "rust/shapes.rs",
    "sketch/blink.ino",
    "sketch/led.h",
)
POSIX = pytest.mark.skipif(os.name != "posix", reason="the fake ctags is a POSIX shell script")


def _real_ctags_available() -> bool:
    saved = os.environ.pop(ENV_CTAGS, None)
    try:
        ctags.reset_detection()
        return detect().available
    finally:
        if saved is not None:
            os.environ[ENV_CTAGS] = saved
        ctags.reset_detection()


HAVE_CTAGS = _real_ctags_available()
needs_ctags = pytest.mark.skipif(
    not HAVE_CTAGS,
    reason="Universal Ctags with json is not installed (apt-get install -y universal-ctags)",
)


@pytest.fixture(autouse=True)
def _fresh_detection(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(ENV_CTAGS, raising=False)
    ctags.reset_detection()
    yield
    ctags.reset_detection()


def fixture(rel: str) -> SourceFile:
    return SourceFile(FIXTURES, rel, (FIXTURES / rel).read_bytes())


def defs(rel: str) -> dict[tuple[str, str], Tag]:
    """(scope, name) -> tag as the core keeps it; asserts there is no other tag with that key."""
    found: dict[tuple[str, str], Tag] = {}
    src = fixture(rel)
    kept, problem = validate_tags(ctags.extract_tags(src), src, 10**6)
    assert problem is None and kept is not None
    for tag in kept:
        assert (tag.scope, tag.name) not in found, tag
        found[(tag.scope, tag.name)] = tag
    return found


def fake_ctags(tmp_path: Path, body: str, name: str = "ctags") -> Path:
    """An executable shell script standing in for ctags."""
    script = tmp_path / name
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return script


#: A fake Universal Ctags that knows Rust and answers -L runs with the body given.
FAKE_UNIVERSAL = """\
for a in "$@"; do
  case "$a" in
    --version) echo "Universal Ctags 9.9.9, Copyright (C) 2015 Universal Ctags Team"; exit 0;;
    --list-features) printf '#NAME DESCRIPTION\\njson supports json format output\\n'; exit 0;;
    --list-languages) printf 'Rust\\n'; exit 0;;
    --list-map-extensions) printf 'Rust\\trs\\n'; exit 0;;
    --list-map-patterns) exit 0;;
  esac
done
"""


def codes(caplog: pytest.LogCaptureFixture, code: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if getattr(r, "code", None) == code]


# -- detection ------------------------------------------------------------------------------------
def test_missing_binary_is_reported_once_and_hooks_step_aside(monkeypatch, caplog, tmp_path):
    monkeypatch.setenv(ENV_CTAGS, "/nonexistent/ctags")
    ctags.reset_detection()
    caplog.set_level(logging.WARNING)
    info = ctags.backend_info()
    assert info.available is False
    # without ctags, only source-code suffixes are claimed: those files are reported unmapped
    assert info.name == "ctags" and ".rs" in info.extensions and ".md" not in info.extensions
    assert "apt-get install -y universal-ctags" in info.detail
    assert "brew install universal-ctags" in info.detail
    assert "/nonexistent/ctags" in info.detail and "\n" not in info.detail
    src = SourceFile.from_text("lib.rs", "fn main() {}\n", tmp_path)
    ctags.prepare_batch([src])
    for _ in range(2):
        assert ctags.extract_tags(src) is None
        assert ctags.extract_imports(src) is None
    assert ctags.resolve_import(Import("lib.rs", "x"), RepoIndex(tmp_path, ["lib.rs"])) is None
    ctags.backend_info()
    assert len(codes(caplog, "backend_unavailable")) == 1


@POSIX
def test_exuberant_ctags_is_rejected(monkeypatch, tmp_path):
    fake = fake_ctags(
        tmp_path, 'echo "Exuberant Ctags 5.8, Copyright (C) 1996-2009 Darren Hiebert"\n'
    )
    monkeypatch.setenv(ENV_CTAGS, str(fake))
    ctags.reset_detection()
    info = ctags.backend_info()
    assert info.available is False
    assert "not Universal Ctags" in info.detail and "Exuberant" in info.detail
    assert "apt-get install -y universal-ctags" in info.detail
    assert ctags.extract_tags(SourceFile.from_text("a.c", "int f(void);\n", tmp_path)) is None


@POSIX
def test_universal_ctags_without_json_is_rejected(monkeypatch, tmp_path):
    fake = fake_ctags(tmp_path, FAKE_UNIVERSAL.replace("json supports", "yaml supports"))
    monkeypatch.setenv(ENV_CTAGS, str(fake))
    ctags.reset_detection()
    info = ctags.backend_info()
    assert info.available is False
    assert "json" in info.detail and "brew install universal-ctags" in info.detail


@needs_ctags
def test_backend_info_declares_languages_and_maps():
    info = ctags.backend_info()
    assert info.available, info.detail
    assert info.extensions == ("*",)
    version = detect().version
    assert version and version in info.version  # a ctags upgrade invalidates the tag cache
    assert {"rust", "ruby", "c", "cpp", "java"} <= set(info.languages)
    exts = dict(info.language_extensions)
    assert ".ino" in exts["cpp"] and ".pde" in exts["cpp"]
    assert ".rs" in exts["rust"] and ".c" in exts["c"]
    assert info.language_for("src/lib.rs") == "rust"
    assert info.language_for("sketch/blink.ino") == "cpp"
    assert info.to_dict()["available"] is True


def test_ctags_is_asked_last():
    plugins = PluginSet(PluginConfig(load_entry_points=False))
    for hook in ("extract_tags", "extract_imports", "resolve_import"):
        impls = [
            i for i in getattr(plugins.pm.hook, hook).get_hookimpls() if i.plugin_name == "ctags"
        ]
        assert len(impls) == 1 and impls[0].trylast, hook


# -- the language map -----------------------------------------------------------------------------
def test_language_map_follows_ctags_rules():
    lm = LanguageMap(
        {
            "c": ("C",),
            "h": ("C++", "ObjectiveC"),
            "C": ("C++",),
            "xml": ("Ant", "XML"),
            "txt": ("Txt2tags",),
        },
        (("[Mm]akefile", "Make"), ("pom.xml", "Maven2"), ("CMakeLists.txt", "CMake")),
    )
    assert lm.language_of("src/a.c") == "C"
    assert lm.language_of("src/a.C") == "C++"  # case matters, as it does for ctags on POSIX
    assert lm.language_of("x.h") == "C++"  # ctags's order breaks ties
    assert lm.language_of("CMakeLists.txt") == "CMake"  # file-name patterns beat extensions
    # prose and configuration formats are left out, whichever rule picks them
    assert lm.language_of("notes.txt") is None
    assert lm.language_of("pom.xml") is None
    assert lm.language_of("build/other.xml") is None
    assert lm.language_of("sub/Makefile") == "Make"
    assert lm.language_of("Makefile.in") == "Make"  # template suffix
    assert lm.language_of("config.c.in") == "C"
    assert lm.language_of("x.in.in") is None
    assert lm.language_of("README") is None
    assert lm.language_of("a.c~") is None
    assert lm.language_of("notes.xyzzy") is None
    # lower-case suffixes, each once, under the language ctags picks for it (.c is C, not C++)
    assert lm.language_extensions() == (("c", (".c",)), ("cpp", (".h",)))


@needs_ctags
def test_language_map_agrees_with_ctags_print_language(tmp_path):
    names = [
        "a.rs",
        "B.RS",
        "c.h",
        "d.m",
        "e.xml",
        "f.pm",
        "g.s",
        "h.S",
        "k.C",
        "x.ino",
        "x.pde",
        "Makefile",
        "makefile",
        "GNUmakefile",
        "Makefile.in",
        "Makefile.am",
        "CMakeLists.txt",
        "pom.xml",
        "x.c.in",
        "x.in",
        "Rakefile",
        "Gemfile",
        "a.cjs",
        "x.tar.gz",
        "LICENSE",
        ".gdbinit",
        "Kconfig.debug",
        "x.lds.S",
        "a.txt",
        "a.rb",
        "a.java",
        "a.py",
        "a.go",
    ]
    for name in names:
        (tmp_path / name).write_text("\n")
    install = detect()
    done = subprocess.run(
        [
            install.path,
            "--options=NONE",
            *install.map_options,
            "--print-language",
            *(f"./{n}" for n in names),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    printed = dict(line.rsplit(": ", 1) for line in done.stdout.splitlines() if ": " in line)
    for name in names:
        expected = printed.get(f"./{name}", "NONE")
        if expected in NOT_CODE_LANGUAGES:  # prose and configuration are deliberately left out
            expected = "NONE"
        assert install.language_map.language_of(name) == (
            None if expected == "NONE" else expected
        ), name


# -- extraction -----------------------------------------------------------------------------------
@needs_ctags
def test_rust_definitions():
    d = defs("rust/shapes.rs")
    point = d[("", "Point")]
    assert (point.start_line, point.symbol_kind, point.kind) == (8, "class", "def")
    assert point.signature == "pub struct Point"
    assert d[("Point", "x")].symbol_kind == "field"
    assert d[("", "Shape")].symbol_kind == "enum"
    assert d[("Shape", "Circle")].start_line == 14
    assert d[("", "Area")].symbol_kind == "interface"
    area_decl = d[("Area", "area")]
    assert (area_decl.start_line, area_decl.symbol_kind) == (19, "method")
    fmt = d[("Point", "fmt")]
    assert (fmt.start_line, fmt.symbol_kind) == (32, "method")
    assert fmt.signature == "fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result"
    # an impl block is not a definition of its type (ctags tags it with the type's name) ...
    assert [t.start_line for t in d.values() if t.name == "Shape"] == [13]
    # ... but the methods inside it are scoped by that type
    assert d[("Shape", "area")].start_line == 23
    assert d[("", "geometry")].symbol_kind == "module"
    assert d[("geometry", "distance")].symbol_kind == "function"
    assert d[("", "Points")].symbol_kind == "type"
    assert d[("", "square")].symbol_kind == "constant"  # macro_rules!
    shoelace = d[("", "shoelace")]
    assert (shoelace.start_line, shoelace.scope) == (51, "")
    assert all(t.end_line >= t.start_line for t in d.values())
    assert ctags.extract_imports(fixture("rust/shapes.rs")) == []


@needs_ctags
def test_ruby_definitions_and_requires():
    d = defs("ruby/app.rb")
    billing = d[("", "Billing")]
    assert (billing.start_line, billing.end_line, billing.symbol_kind) == (4, 22, "module")
    assert d[("Billing", "TAX_RATE")].symbol_kind == "constant"
    invoice = d[("Billing", "Invoice")]
    assert (invoice.start_line, invoice.end_line, invoice.symbol_kind) == (7, 21, "class")
    init = d[("Billing.Invoice", "initialize")]
    assert (init.start_line, init.end_line, init.symbol_kind) == (10, 12, "method")
    assert init.signature == "def initialize(total)"
    parse = d[("Billing.Invoice", "parse")]  # def self.parse: a singleton method
    assert (parse.start_line, parse.end_line, parse.symbol_kind) == (14, 16, "method")
    assert d[("Billing.Invoice", "with_tax")].end_line == 20
    imports = ctags.extract_imports(fixture("ruby/app.rb"))
    assert [(i.source, i.is_relative, i.line_number) for i in imports] == [
        ("json", False, 1),
        ("lib/helpers", True, 2),
    ]
    assert all(i.file_path == "ruby/app.rb" for i in imports)


@needs_ctags
def test_c_definitions_and_includes():
    util_c = defs("c/util.c")
    clamp = util_c[("", "util_clamp")]
    assert (clamp.start_line, clamp.end_line, clamp.symbol_kind) == (6, 12, "function")
    assert clamp.signature == "int util_clamp(int value, int low, int high)"
    assert (util_c[("", "buffer_new")].start_line, util_c[("", "buffer_new")].end_line) == (14, 21)
    assert util_c[("", "counter")].symbol_kind == "variable"

    header = defs("c/util.h")
    assert header[("", "UTIL_MAX_NAME")].symbol_kind == "constant"
    buffer = header[("", "buffer")]
    assert (buffer.start_line, buffer.end_line, buffer.symbol_kind) == (8, 11, "class")
    assert header[("buffer", "len")].symbol_kind == "field"
    assert header[("", "buffer_t")].symbol_kind == "type"
    assert header[("", "color")].symbol_kind == "enum"
    assert header[("color", "GREEN")].symbol_kind == "constant"
    proto = header[("", "util_clamp")]  # prototypes are a header's API
    assert (proto.start_line, proto.symbol_kind) == (15, "function")

    main = ctags.extract_imports(fixture("c/main.c"))
    assert [(i.source, i.is_relative, i.line_number) for i in main] == [
        ("stdio.h", False, 1),
        ("util.h", True, 2),
    ]


@needs_ctags
def test_java_definitions_and_imports():
    d = defs("java/com/example/Shapes.java")
    shapes = d[("", "Shapes")]
    assert (shapes.start_line, shapes.end_line, shapes.symbol_kind) == (6, 32, "class")
    assert d[("Shapes", "LIMIT")].symbol_kind == "field"
    shape = d[("Shapes", "Shape")]
    assert (shape.start_line, shape.end_line, shape.symbol_kind) == (10, 12, "interface")
    assert d[("Shapes.Shape", "area")].symbol_kind == "method"
    square = d[("Shapes", "Square")]
    assert (square.start_line, square.end_line) == (14, 25)
    area = d[("Shapes.Square", "area")]
    assert (area.start_line, area.end_line, area.signature) == (22, 24, "public double area()")
    assert d[("Shapes", "Unit")].symbol_kind == "enum"
    assert d[("Shapes.Unit", "INCH")].symbol_kind == "constant"
    add = d[("Shapes", "add")]
    assert (add.start_line, add.end_line, add.symbol_kind) == (29, 31, "method")
    imports = ctags.extract_imports(fixture("java/com/example/Shapes.java"))
    assert [(i.source, i.line_number) for i in imports] == [
        ("java.util.List", 3),
        ("java.util.ArrayList", 4),
    ]


@needs_ctags
def test_arduino_sketch_is_cpp():
    d = defs("sketch/blink.ino")
    assert d[("", "LED_PIN")].start_line == 3
    blinker = d[("", "Blinker")]
    assert (blinker.start_line, blinker.end_line, blinker.symbol_kind) == (5, 16, "class")
    toggle = d[("Blinker", "toggle")]  # a C++ member function is a method
    assert (toggle.start_line, toggle.end_line, toggle.symbol_kind) == (8, 11, "method")
    assert d[("Blinker", "pin_")].symbol_kind == "field"
    assert (d[("", "setup")].start_line, d[("", "setup")].end_line) == (20, 22)
    assert (d[("", "loop")].start_line, d[("", "loop")].end_line) == (24, 27)
    imports = ctags.extract_imports(fixture("sketch/blink.ino"))
    assert [(i.source, i.is_relative) for i in imports] == [("led.h", True)]
    assert defs("sketch/led.h")[("led", "brightness")].symbol_kind == "function"


@needs_ctags
def test_every_definition_is_well_formed():
    for rel in FIXTURE_FILES:
        src = fixture(rel)
        lines = src.text().splitlines()
        tags = ctags.extract_tags(src)
        assert tags, rel
        assert tags == sorted(
            tags,
            key=lambda t: (
                t.start_line,
                t.kind,
                t.name,
                t.end_line,
                t.scope,
                t.symbol_kind,
                t.signature or "",
            ),
        )
        kept, problem = validate_tags(tags, src, 10**6)  # as the core keeps them (normalised)
        assert problem is None and kept is not None and len(kept) == len(tags)
        for tag in kept:
            assert tag.file_path == rel and tag.kind == "def"
            assert 1 <= tag.start_line <= tag.end_line <= len(lines), tag
            assert tag.name in lines[tag.start_line - 1], tag
            assert tag.signature and "\n" not in tag.signature and len(tag.signature) <= 240


@needs_ctags
def test_files_ctags_does_not_know_are_left_to_the_core(tmp_path):
    for name in ("notes.xyzzy", "LICENSE", "data.bin.gz"):
        src = SourceFile(tmp_path, name, b"int main(void) { return 0; }\n")
        assert ctags.extract_tags(src) is None
        assert ctags.extract_imports(src) is None
        index = RepoIndex(tmp_path, [name])
        assert ctags.resolve_import(Import(name, "x.h"), index) is None


@needs_ctags
def test_unparseable_content_yields_empty_lists(tmp_path):
    src = SourceFile(tmp_path, "weird.rs", b"\x00\xff\xfe garbage {{{ ]]]")
    assert ctags.extract_tags(src) == []
    assert ctags.extract_imports(src) == []


# -- batching -------------------------------------------------------------------------------------
def _extract_all(sources):
    return {s.path: (ctags.extract_tags(s), ctags.extract_imports(s)) for s in sources}


@needs_ctags
def test_batched_results_equal_one_by_one(monkeypatch):
    def fresh():  # each round gets new file objects: their memos start empty
        return [fixture(rel) for rel in FIXTURE_FILES]

    one_by_one = _extract_all(fresh())  # nothing prepared: one ctags run per file

    runs = []
    real_run = ctags._run
    monkeypatch.setattr(ctags, "_run", lambda *a: runs.append(len(a[1])) or real_run(*a))
    sources = fresh()
    ctags.prepare_batch(sources)
    assert runs == [len(sources)]  # one process for the whole batch
    assert _extract_all(sources) == one_by_one
    assert runs == [len(sources)]  # ... and every answer came from it

    sources = fresh()
    ctags.prepare_batch(list(reversed(sources[:4])))
    ctags.prepare_batch(sources[4:])
    assert _extract_all(sources) == one_by_one

    monkeypatch.setattr(ctags, "MAX_FILES_PER_RUN", 2)
    sources = fresh()
    ctags.prepare_batch(sources)
    assert _extract_all(sources) == one_by_one


@needs_ctags
def test_twin_objects_of_one_file_share_one_run(monkeypatch):
    runs = []
    real_run = ctags._run
    monkeypatch.setattr(ctags, "_run", lambda *a: runs.append(len(a[1])) or real_run(*a))
    a, b = fixture(FIXTURE_FILES[0]), fixture(FIXTURE_FILES[0])
    ctags.prepare_batch([a, b])
    assert runs == [1]
    assert _extract_all([a]) == _extract_all([b])
    assert runs == [1]


@needs_ctags
def test_the_bytes_given_win_over_the_file_on_disk(tmp_path):
    (tmp_path / "lib.rs").write_text("fn on_disk() {}\n")
    given_src = SourceFile(tmp_path, "lib.rs", b"fn given() {}\n")
    assert [t.name for t in ctags.extract_tags(given_src)] == ["given"]
    virtual = SourceFile.from_text("src/virtual.rs", "pub fn nowhere() {}\n", tmp_path)
    ctags.prepare_batch([virtual, given_src])
    assert [t.name for t in ctags.extract_tags(virtual)] == ["nowhere"]
    assert [t.name for t in ctags.extract_tags(given_src)] == ["given"]


# -- hostile input --------------------------------------------------------------------------------
@needs_ctags
def test_file_name_with_newline_is_skipped(tmp_path, caplog):
    caplog.set_level(logging.WARNING)
    bad_name = "evil.rs\ngood.rs"  # would smuggle a second line onto ctags's stdin
    (tmp_path / "good.rs").write_text("fn good() {}\n")
    (tmp_path / bad_name).write_text("fn evil() {}\n")
    bad = SourceFile(tmp_path, bad_name, (tmp_path / bad_name).read_bytes())
    good = SourceFile(tmp_path, "good.rs", (tmp_path / "good.rs").read_bytes())
    ctags.prepare_batch([bad, good])
    assert ctags.extract_tags(bad) == []
    assert ctags.extract_imports(bad) == []
    assert [t.name for t in ctags.extract_tags(good)] == ["good"]
    warnings = codes(caplog, "unsafe_path")
    assert len(warnings) == 1 and warnings[0].path == bad_name


@needs_ctags
def test_file_names_that_look_like_options_are_files(tmp_path):
    for name in ("-R.rs", "--options=x.rs", "--version.rs"):
        (tmp_path / name).write_text("fn looks_like_an_option() {}\n")
    sources = [
        SourceFile(tmp_path, n, (tmp_path / n).read_bytes())
        for n in ("-R.rs", "--options=x.rs", "--version.rs")
    ]
    ctags.prepare_batch(sources)
    for src in sources:
        assert [t.name for t in ctags.extract_tags(src)] == ["looks_like_an_option"]


@needs_ctags
def test_repository_ctags_options_are_never_read():
    install = detect()
    # Without --options=NONE, ctags run in the fixture directory obeys its .ctags.d ...
    naive = subprocess.run(
        [install.path, "--output-format=json", "-f", "-", "c/main.c", "rust/shapes.rs"],
        cwd=FIXTURES,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert "EVIL_" in naive.stdout
    # ... but the backend never lets it.
    sources = [fixture("c/main.c"), fixture("rust/shapes.rs")]
    ctags.prepare_batch(sources)
    for src in sources:
        tags = ctags.extract_tags(src)
        assert not any("EVIL" in t.name for t in tags)
    assert [t.name for t in ctags.extract_tags(fixture("c/main.c"))] == ["main"]
    assert "shoelace" in {t.name for t in ctags.extract_tags(fixture("rust/shapes.rs"))}


@needs_ctags
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.one_of(
        st.binary(max_size=400),
        st.text(alphabet="fnstructimplpub (){}<>;:&'\"\\/\n\t\r\x00é#![]", max_size=300).map(
            lambda s: s.encode("utf-8", "surrogatepass")
        ),
    )
)
def test_arbitrary_bytes_never_raise(tmp_path, data):
    src = SourceFile(tmp_path, "fuzz.rs", data)
    tags = ctags.extract_tags(src)
    imports = ctags.extract_imports(src)
    assert isinstance(tags, list) and isinstance(imports, list)
    lines = data.split(b"\n")
    kept, problem = validate_tags(tags, src, 10**6)  # as the core keeps them (normalised)
    assert problem is None and kept is not None and len(kept) == len(tags)
    for tag in kept:
        assert 1 <= tag.start_line <= tag.end_line <= len(lines)
        assert tag.name in lines[tag.start_line - 1].decode("utf-8", "replace")


# -- failures of ctags itself (fake binaries) --------------------------------------------------------
@POSIX
def test_a_crash_costs_only_the_file_that_caused_it(monkeypatch, tmp_path, caplog):
    body = (
        FAKE_UNIVERSAL
        + """\
while read f; do
  case "$f" in *crash*) exit 3;; esac
  printf '{"_type": "tag", "name": "ok", "path": "%s", "line": 1, "kind": "function", "roles": "def"}\\n' "$f"
done
"""
    )
    monkeypatch.setenv(ENV_CTAGS, str(fake_ctags(tmp_path, body)))
    ctags.reset_detection()
    caplog.set_level(logging.WARNING)
    names = ["a.rs", "crash.rs", "b.rs"]
    sources = [SourceFile.from_text(n, "fn ok() {}\n", tmp_path) for n in names]
    ctags.prepare_batch(sources)
    got = {s.path: [t.name for t in ctags.extract_tags(s)] for s in sources}
    assert got == {"a.rs": ["ok"], "crash.rs": [], "b.rs": ["ok"]}
    errors = codes(caplog, "backend_error")
    assert [r.path for r in errors] == ["crash.rs"]


@POSIX
def test_a_hanging_ctags_is_killed(monkeypatch, tmp_path, caplog):
    fake = fake_ctags(tmp_path, FAKE_UNIVERSAL + "exec sleep 60\n")
    monkeypatch.setenv(ENV_CTAGS, str(fake))
    monkeypatch.setenv(ctags.ENV_TIMEOUT, "0.5")
    monkeypatch.setenv(ctags.ENV_TIMEOUT_PER_FILE, "0")
    ctags.reset_detection()
    caplog.set_level(logging.WARNING)
    src = SourceFile.from_text("slow.rs", "fn slow() {}\n", tmp_path)
    assert ctags.extract_tags(src) == []
    assert ctags.extract_imports(src) == []  # memoised: not run (and warned) twice
    errors = codes(caplog, "backend_error")
    assert len(errors) == 1 and "timed out" in errors[0].getMessage()


# -- import resolution ----------------------------------------------------------------------------
def _index(*files: str) -> RepoIndex:
    return RepoIndex(Path("/repo"), files)


def test_resolve_c_includes():
    index = _index(
        "src/main.c", "src/util.h", "include/api.h", "lib/x/util.h", "a/dup.h", "b/dup.h"
    )

    def r(src: str, rel: bool) -> list[str]:
        return ctags.resolve(Import("src/main.c", src, is_relative=rel), index, "C", (".c",))

    assert r("util.h", True) == ["src/util.h"]  # the including file's directory first
    assert r("api.h", True) == ["include/api.h"]  # then the include roots
    # then the files ending with the written path nearest the includer (the tree-sitter
    # backend's rules for C, which the fallback shares): two equally near
    assert r("dup.h", True) == ["a/dup.h", "b/dup.h"]
    assert r("x/util.h", False) == ["lib/x/util.h"]  # <x/util.h>: a path suffix
    assert r("stdio.h", False) == []


def test_resolve_dotted_and_path_imports():
    index = _index(
        "src/main/java/com/example/Shapes.java",
        "src/main/java/com/example/Util.java",
        "src/main/java/com/example/sub/Deep.java",
        "app.rb",
        "lib/helpers.rb",
        "lib/Foo/Bar.pm",
    )

    def java(spec: str) -> list[str]:
        importer = "src/main/java/com/example/Main.java"
        return ctags.resolve(Import(importer, spec), index, "Java", (".java",))

    assert java("com.example.Shapes") == ["src/main/java/com/example/Shapes.java"]
    assert java("com.example.Shapes.area") == ["src/main/java/com/example/Shapes.java"]  # static
    assert java("com.example.*") == [
        "src/main/java/com/example/Shapes.java",
        "src/main/java/com/example/Util.java",
    ]
    assert java("java.util.List") == []

    def ruby(spec: str, rel: bool) -> list[str]:
        return ctags.resolve(Import("app.rb", spec, is_relative=rel), index, "Ruby", (".rb",))

    assert ruby("lib/helpers", True) == ["lib/helpers.rb"]
    assert ruby("helpers", False) == ["lib/helpers.rb"]
    assert ruby("json", False) == []
    perl = ctags.resolve(Import("app.pl", "Foo::Bar"), index, "Perl", (".pm", ".pl"))
    assert perl == ["lib/Foo/Bar.pm"]
    assert (
        ctags.resolve(
            Import("app.rb", "../../etc/passwd", is_relative=True), index, "Ruby", (".rb",)
        )
        == []
    )


@needs_ctags
def test_resolve_import_hook_on_fixtures():
    index = RepoIndex(FIXTURES, FIXTURE_FILES)
    resolved = {
        (imp.file_path, imp.source): ctags.resolve_import(imp, index)
        for rel in FIXTURE_FILES
        for imp in ctags.extract_imports(fixture(rel))
    }
    assert resolved[("c/main.c", "util.h")] == ["c/util.h"]
    assert resolved[("c/main.c", "stdio.h")] == []
    assert resolved[("ruby/app.rb", "lib/helpers")] == ["ruby/lib/helpers.rb"]
    assert resolved[("sketch/blink.ino", "led.h")] == ["sketch/led.h"]
    assert resolved[("java/com/example/Shapes.java", "java.util.List")] == []


@needs_ctags
def test_python_imports_with_names_aliases_and_levels(tmp_path):
    src = SourceFile.from_text(
        "pkg/mod.py",
        (
            "import os.path\n"
            "import xml.etree.ElementTree as ET\n"
            "from collections import OrderedDict, defaultdict as dd\n"
            "from ..core.models import (\n"
            "    Model,\n"
            "    Field as ModelField,\n"
            ")\n"
            "from . import sibling\n"
            "class Shape:\n"
            "    def area(self):\n"
            "        return 0\n"
        ),
        tmp_path,
    )
    got = [
        (i.source, i.names, i.aliases, i.alias, i.level, i.is_relative, i.line_number)
        for i in ctags.extract_imports(src)
    ]
    assert got == [
        ("os.path", (), (), None, 0, False, 1),
        ("xml.etree.ElementTree", (), (), "ET", 0, False, 2),
        ("collections", ("OrderedDict", "defaultdict"), (None, "dd"), None, 0, False, 3),
        ("core.models", ("Model", "Field"), (None, "ModelField"), None, 2, True, 4),
        ("", ("sibling",), (None,), None, 1, True, 8),
    ]
    tags = ctags.extract_tags(src)  # aliases are not definitions; a Python member is a method
    assert [(t.name, t.symbol_kind, t.scope) for t in tags] == [
        ("Shape", "class", ""),
        ("area", "method", "Shape"),
    ]
    index = RepoIndex(tmp_path, ["pkg/mod.py", "pkg/sibling.py", "core/models.py"])
    resolved = [ctags.resolve_import(i, index) for i in ctags.extract_imports(src)]
    assert resolved[3] == ["core/models.py"] and resolved[4] == ["pkg/sibling.py"]


@needs_ctags
def test_go_scopes_drop_the_package(tmp_path):
    src = SourceFile.from_text(
        "shapes/shapes.go",
        (
            "package shapes\n"
            "\n"
            'import str "strings"\n'
            "\n"
            "type Point struct {\n"
            "\tX, Y float64\n"
            "}\n"
            "\n"
            "func (p Point) Norm() float64 { return p.X }\n"
            "\n"
            "func Upper(s string) string { return str.ToUpper(s) }\n"
        ),
        tmp_path,
    )
    d = {(t.scope, t.name): t.symbol_kind for t in ctags.extract_tags(src)}
    assert d[("", "Point")] == "class" and d[("Point", "X")] == "field"
    assert d[("Point", "Norm")] == "method" and d[("", "Upper")] == "function"
    assert ("", "str") not in d  # an import alias, not a definition
    [imp] = ctags.extract_imports(src)
    assert (imp.source, imp.alias, imp.line_number) == ("strings", "str", 3)


@needs_ctags
def test_names_ctags_gets_wrong_are_dropped(tmp_path):
    src = SourceFile.from_text(
        "x.c",
        (
            "int größe(void) { return 1; }\n"  # ctags's C parser says 'e'
            "#define SQUARE(x) ((x) * (x))\n"
            "#define LIMIT 10\n"
        ),
        tmp_path,
    )
    assert [(t.name, t.symbol_kind) for t in ctags.extract_tags(src)] == [
        ("SQUARE", "function"),  # a macro with parameters is function-like
        ("LIMIT", "constant"),
    ]


# -- the record mapping ---------------------------------------------------------------------------
def test_import_collector_folds_names_and_aliases():
    c = ImportCollector("a.py")
    records = [
        {"name": "typing", "kind": "module", "roles": "namespace", "line": 6, "language": "Python"},
        {
            "name": "Any",
            "kind": "unknown",
            "roles": "imported",
            "scope": "typing",
            "scopeKind": "module",
            "line": 7,
        },
        {
            "name": "Optional",
            "kind": "unknown",
            "roles": "indirectlyImported",
            "scope": "typing",
            "scopeKind": "module",
            "line": 8,
        },
        {
            "name": "Opt",
            "kind": "unknown",
            "roles": "def",
            "nameref": "unknown:Optional",
            "line": 8,
        },
        {"name": "util.h", "kind": "header", "roles": "local", "line": 1, "language": "C"},
        {"name": "stdio.h", "kind": "header", "roles": "system", "line": 2, "language": "C"},
        {"name": "x", "kind": "macro", "roles": "undef", "line": 3},
    ]
    taken = [c.add(r) for r in records]
    assert taken == [True, True, True, True, True, True, True]
    assert c.add({"name": "f", "kind": "function", "roles": "def", "line": 9}) is False
    assert [(i.source, i.names, i.aliases, i.is_relative) for i in c.imports()] == [
        ("util.h", (), (), True),
        ("stdio.h", (), (), False),
        ("typing", ("Any", "Optional"), (None, "Opt"), False),
    ]


def test_whole_word_name_check():
    lines = SourceLines("int größe(void);\nstruct Sx {};\n  x = 1\nint operator+(int);\n".encode())
    assert lines.place("e", 1) is None  # inside a longer identifier
    assert lines.place("größe", 1) == 1
    assert lines.place("x", 2) == 3  # not on ctags's line: found just below
    assert lines.place("Sfn", 2) is None
    assert lines.place("operator+", 4) == 4
    assert lines.place("x", 99) is None


def test_kind_scope_and_signature_mapping():
    assert symbol_kind("member") == "field"
    assert symbol_kind("struct") == "class"
    assert symbol_kind("subroutine") == "function"
    assert symbol_kind("function", "class") == "method"
    assert symbol_kind("function", "namespace") == "function"
    assert symbol_kind("trait") == "interface"
    assert symbol_kind("typedef") == "type"
    assert symbol_kind("define") == "constant"
    assert symbol_kind("namespace") == "module"
    assert symbol_kind("heading1") == "heading1"  # unknown kinds keep ctags's name
    assert dotted_scope("ns::Outer::Inner") == "ns.Outer.Inner"
    assert dotted_scope("A\\B") == "A.B" and dotted_scope("") == ""
    assert pattern_text(r"/^int a\/b = \\x;$/") == r"int a/b = \x;"
    assert make_signature("  pub fn area(&self) -> f64 {", "area") == "pub fn area(&self) -> f64"
    assert (
        make_signature("fn long(", "long", "(a: i32, b: i32) -> i32")
        == "fn long(a: i32, b: i32) -> i32"
    )
    long_line = "x = " + "1" * 1000
    assert make_signature(long_line, "x") == long_line  # the core cuts it, for every backend
    assert len(normalize_signature(make_signature(long_line, "x"))) == 240


def test_unsafe_paths_are_recognised():
    assert ctags._unsafe_reason("a\nb.rs")
    assert ctags._unsafe_reason("a\rb.rs")
    assert ctags._unsafe_reason("../outside.rs")
    assert ctags._unsafe_reason("/etc/passwd")
    assert ctags._unsafe_reason("bad\udcff.rs")  # not UTF-8: ctags's JSON cannot name it
    assert ctags._unsafe_reason("ok dir/-R.rs") is None


@POSIX
def test_env_var_may_name_a_binary_on_path(monkeypatch, tmp_path):
    fake_ctags(tmp_path, FAKE_UNIVERSAL, "my-ctags")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv(ENV_CTAGS, "my-ctags")
    ctags.reset_detection()
    install = detect()
    assert install.available and install.path == str(tmp_path / "my-ctags")
    assert install.version == "9.9.9" and install.languages == ("Rust",)
    assert install.language_map.language_of("x.rs") == "Rust"


def test_unknown_kinds_are_definitions_only_by_an_unambiguous_declaring_keyword():
    assert declared_kind("(defclass shapes-circle ()", "shapes-circle") == "class"
    assert declared_kind("  (cl-defmethod area ((c circle))", "area") == "method"
    assert declared_kind("(defconstant +max-sides+ 12)", "+max-sides+") == "constant"
    assert declared_kind("(my-define-thing widget)", "widget") is None  # unknown keyword
    assert declared_kind("(defclass widget-base ()", "widget") is None  # not the whole name
    assert declared_kind("x = 1", "x") is None


@needs_ctags
def test_emacs_lisp_defclass_and_lisp_macros_are_mapped(tmp_path):
    src = SourceFile.from_text(
        "shapes.el",
        (
            "(defclass shapes-circle ()\n"
            "  ((radius :initarg :radius)))\n"
            "(defmacro shapes-twice (x) x)\n"
            "(defun shapes-area (c) c)\n"
        ),
        tmp_path,
    )
    got = {(t.name, t.symbol_kind, t.start_line) for t in ctags.extract_tags(src)}
    assert got == {
        ("shapes-circle", "class", 1),
        ("shapes-twice", "function", 3),
        ("shapes-area", "function", 4),
    }


@needs_ctags
def test_java_properties_are_code_and_their_keys_definitions(tmp_path):
    assert "JavaProperties" not in NOT_CODE_LANGUAGES
    src = SourceFile.from_text("app.properties", "db.url=jdbc:x\nserver.port: 8080\n", tmp_path)
    got = [(t.name, t.symbol_kind, t.start_line) for t in ctags.extract_tags(src)]
    assert got == [("db.url", "constant", 1), ("server.port", "constant", 2)]


@needs_ctags
def test_udev_rules_are_code_through_a_defined_ctags_language(tmp_path):
    assert "UdevRules" in detect().languages
    src = SourceFile.from_text(
        "99-x.rules",
        (
            '# comment ENV{NOT_THIS}="1"\n'
            'SUBSYSTEM=="usb", ENV{SHAPES_DEVICE}="1"\n'
            'ENV{SHAPES_DEVICE}=="1", GOTO="shapes_end"\n'
            'LABEL="shapes_end"\n'
        ),
        tmp_path,
    )
    got = [(t.name, t.symbol_kind, t.start_line) for t in ctags.extract_tags(src)]
    assert ("SHAPES_DEVICE", "variable", 2) in got
    assert ("shapes_end", "constant", 4) in got
    assert not [g for g in got if g[2] in (1, 3)]  # comments and matches (==) define nothing


@needs_ctags
def test_a_detection_is_remembered_on_disk_until_the_binary_changes(tmp_path, monkeypatch):
    import subprocess

    from repomapper.plugins.ctags import detect as detect_module

    record = tmp_path / "ctags-detect.json"
    monkeypatch.setattr(detect_module, "_detect_cache_file", lambda: record)
    first = detect()
    assert first.available and record.exists()

    def no_probe(*args, **kwargs):
        raise AssertionError("probed although the binary is unchanged")

    ctags.reset_detection()
    monkeypatch.setattr(subprocess, "run", no_probe)
    assert detect() == first
    monkeypatch.undo()
    monkeypatch.setattr(detect_module, "_detect_cache_file", lambda: record)
    # a damaged or hostile record is not trusted: the binary is probed again
    for junk in ("not json", '{"format": 1, "entries": {"x": 1}}', '{"format": 1, "entries": []}'):
        record.write_text(junk)
        ctags.reset_detection()
        assert detect() == first
    data = json.loads(record.read_text())
    (key,) = data["entries"]
    data["entries"][key]["languages"] = "Python"  # wrong type
    record.write_text(json.dumps(data))
    ctags.reset_detection()
    assert detect() == first
