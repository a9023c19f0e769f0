"""What a file is for, from its path: code, or a test, example, documentation, template,
generated or vendored copy.

A task that is not about tests rarely needs a test file first, and never an example or a vendored
copy of a library; those files still rank, below the code they exercise. The map without a task
ranks them below code too (see :mod:`repomapper.rank`).

Tests are recognised by each language's own conventions (:data:`CONVENTIONS`, by extension):
``*_test.go`` and Go's test helpers (``testhelpers.go``, ``integrationtest_builder.go``, folders
such as ``htesting/``), ``FooTest.java``/``FooIT.java`` and Gradle's ``src/integrationTest/``,
``FooTests.cs`` and ``Foo.Tests/`` projects, ``*_spec.rb``, ``*.test.ts``/``*.spec.js`` and
``__tests__/``, ``foo_unittest.cc``; and by the folders every language uses (``tests/``,
``testdata/``, ``testing/``, ``spec/``, ``fixtures/``).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

CODE = "code"
TEST = "test"
EXAMPLE = "example"
DOCS = "docs"
#: generated or compiled: minified bundles, protocol-buffer stubs, the ``.js``/``.d.ts`` copies
#: of a package's TypeScript ``src/`` (the latter found by :func:`file_roles`, which sees the set)
GENERATED = "generated"
VENDORED = "vendored"
#: a page template (Jinja, Django, Go templates, ERB, ...): read by the templates backend, but
#: presentation, which a task rarely needs before the code unless it is about templates
TEMPLATE = "template"
#: every role, code first
ROLES = (CODE, TEST, EXAMPLE, DOCS, TEMPLATE, GENERATED, VENDORED)
#: Lower-case extensions of template files (those the templates backend claims).
TEMPLATE_EXTENSIONS = (
    ".html",
    ".htm",
    ".gohtml",
    ".gotmpl",
    ".tmpl",
    ".tpl",
    ".jinja",
    ".jinja2",
    ".j2",
    ".njk",
    ".twig",
    ".liquid",
    ".hbs",
    ".handlebars",
    ".mustache",
    ".erb",
    ".ftl",
    ".ftlh",
    ".ftlx",
)

#: Folder names (lower case) that hold tests, test data or test support in any language.
_TEST_DIRS = frozenset(
    {
        "test",
        "tests",
        "testing",
        "__tests__",
        "__mocks__",
        "__fixtures__",
        "__snapshots__",
        "spec",
        "specs",
        "testdata",
        "test_data",
        "fixtures",
        "e2e",
        "testutil",
        "testutils",
        "unittests",
        "integrationtests",
    }
)
#: A folder is a test folder when one of its words (split at ``_ - .`` and camel case) is one of
#: these: ``integration_tests/``, ``Foo.Tests/``, ``test-utils/``.
_TEST_DIR_WORDS = frozenset({"test", "tests", "testing", "testdata", "testutil", "testutils"})
#: Source sets of Gradle and Kotlin Multiplatform (``src/test``, ``src/androidTest``,
#: ``src/jvmTest``, ``src/testFixtures``, ``src/integrationTest``), compared case-sensitively.
_SOURCE_SET = re.compile(r"^(?:[a-z][a-zA-Z]*Test|test[A-Z][a-zA-Z]*)$")
_EXAMPLE_DIRS = frozenset(
    {"example", "examples", "sample", "samples", "demo", "demos", "benchmarks", "bench", "benches"}
)
_DOC_DIRS = frozenset({"doc", "docs", "documentation"})
_VENDOR_DIRS = frozenset(
    {
        "vendor",
        "vendored",
        "third_party",
        "thirdparty",
        "external",
        "extern",
        "node_modules",
        "_vendor",
        "vendors",
        "third-party",
        "3rdparty",
        "bower_components",
        "jspm_packages",
    }
)
#: Lower-case name suffixes of files a tool writes (protocol buffers, bundles, designers).
_GENERATED_SUFFIXES = (
    "_pb2.py",
    "_pb2.pyi",
    "_pb2_grpc.py",
    ".pb.go",
    ".pb.cc",
    ".pb.h",
    ".pb.ts",
    "_pb.js",
    "_pb.d.ts",
    ".g.dart",
    ".freezed.dart",
    ".designer.cs",
    ".g.cs",
)
#: Extensions of a compiled JavaScript copy or a TypeScript declaration, longest first.
_COMPILED_EXTENSIONS = (".d.mts", ".d.cts", ".d.ts", ".mjs", ".cjs", ".js")
#: Extensions of the sources such copies are compiled from.
_SOURCE_EXTENSIONS = (".d.ts", ".tsx", ".mts", ".cts", ".ts", ".jsx", ".mjs", ".cjs", ".js")
#: Output folders a build puts its copies in, dropped before a copy is compared with ``src/``.
_BUILD_DIRS = frozenset(
    {"dist", "lib", "build", "out", "esm", "cjs", "es", "umd", "types", "typings", "mjs"}
)

#: Stems (lower case) that are tests or test support whatever the language.
_TEST_STEMS = frozenset({"conftest", "tests", "test"})
#: Lower-case stem prefixes and suffixes of test files in every language.
_TEST_PREFIXES = ("test_",)
_TEST_SUFFIXES = ("_test", "_tests", ".test", ".spec", "_spec")
#: Words of a stem that make it a test file in every language (``test_util``, ``setupTests``).
_COMMON_WORDS = frozenset({"test", "tests"})
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


@dataclass(frozen=True, slots=True)
class NamingConvention:
    """How one language family names its tests, beyond what every language does."""

    name: str
    extensions: tuple[str, ...]
    #: stem words (lower case, split at ``_ - .`` and camel case) that mark test code or support
    words: frozenset[str] = frozenset()
    #: case-sensitive stem suffixes of a test class (``FooTest``), each after a lower-case letter
    #: or digit, and the part before them is the module tested
    class_suffixes: tuple[str, ...] = ()
    #: more lower-case stem suffixes (``_unittest``), the part before them is the module tested
    suffixes: tuple[str, ...] = ()
    #: more whole stems (lower case) of test support (``spec_helper``)
    stems: frozenset[str] = frozenset()
    #: more folder names (lower case) of test support (Go's ``mocks/``)
    dirs: frozenset[str] = frozenset()


_JVM_CLASSES = ("Tests", "Test", "TestCase", "ITCase", "IT")
_SPEC_CLASSES = ("Spec", "Specs", "Suite")

CONVENTIONS: tuple[NamingConvention, ...] = (
    # test_*.py and *_test.py only: ``flask/testing.py`` is an API for users' tests, code
    NamingConvention("python", (".py", ".pyi")),
    NamingConvention(
        "go",
        (".go",),
        words=frozenset(
            {
                "testing",
                "testutil",
                "testutils",
                "testhelper",
                "testhelpers",
                "integrationtest",
                "testenv",
                "mock",
                "mocks",
            }
        ),
        dirs=frozenset({"mock", "mocks", "fake", "fakes", "testenv"}),
    ),
    NamingConvention("rust", (".rs",), words=frozenset({"testing", "testutil", "testutils"})),
    NamingConvention(
        "c/c++",
        (".c", ".h", ".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".ipp", ".m", ".mm"),
        words=frozenset({"unittest", "unittests", "testutil", "testutils", "gtest", "mock"}),
        suffixes=("_unittest", "_unittests", "-test", "-tests"),
    ),
    NamingConvention(
        "javascript/typescript",
        (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".vue", ".svelte"),
        words=frozenset({"testutils", "testhelpers"}),
        suffixes=("-test", "-spec", ".e2e", ".cy", ".test-d"),
        dirs=frozenset({"cypress"}),
    ),
    NamingConvention("java", (".java",), class_suffixes=_JVM_CLASSES),
    NamingConvention(
        "kotlin/scala/groovy",
        (".kt", ".kts", ".scala", ".sc", ".groovy"),
        class_suffixes=_JVM_CLASSES + _SPEC_CLASSES,
    ),
    NamingConvention("c#", (".cs", ".fs", ".vb"), class_suffixes=("Tests", "Test", "Fixture")),
    NamingConvention("php", (".php",), class_suffixes=("Test", "TestCase")),
    NamingConvention("swift", (".swift",), class_suffixes=("Tests", "Test", "Spec")),
    NamingConvention(
        "ruby",
        (".rb", ".rake"),
        stems=frozenset({"spec_helper", "rails_helper", "test_helper"}),
    ),
    NamingConvention("haskell", (".hs",), class_suffixes=("Spec", "Test", "Tests")),
    NamingConvention("elixir", (".ex", ".exs"), stems=frozenset({"test_helper"})),
    NamingConvention("lua", (".lua",)),
)
_BY_EXTENSION = {ext: c for c in CONVENTIONS for ext in c.extensions}
_NONE = NamingConvention("other", ())
_BY_NAME = {c.name: c for c in CONVENTIONS}


def convention_for(path: str) -> NamingConvention:
    """The test naming conventions of ``path``'s language (by extension)."""
    return _BY_EXTENSION.get(posixpath.splitext(path)[1].lower(), _NONE)


def _words(text: str) -> list[str]:
    """``integrationtest_builder`` -> integrationtest, builder; ``setupTests`` -> setup, tests;
    ``Foo.UnitTests`` -> foo, unit, tests (lower case)."""
    return [w.lower() for w in _WORD.findall(text)]


def _is_test_dir(original: str, convention: NamingConvention) -> bool:
    name = original.lower()
    if name in _TEST_DIRS or name in convention.dirs:
        return True
    if _SOURCE_SET.match(original):
        return True
    # Go's per-package test support: ``htesting``, ``apitesting``, ``envtesting``
    if name.endswith("testing") and name.isalnum():
        return True
    return any(w in _TEST_DIR_WORDS for w in _words(original))


@lru_cache(maxsize=1 << 14)  # a folder's name is asked once per file in it
def _is_test_folder(original: str, convention: str) -> bool:
    """:func:`_is_test_dir` by the convention's name (cheaper to hash than the convention)."""
    return _is_test_dir(original, _BY_NAME.get(convention, _NONE))


def _class_suffix(stem: str, convention: NamingConvention) -> str | None:
    """The test-class suffix ``stem`` ends with (``Test`` in ``FooTest``), or ``None``."""
    for suffix in convention.class_suffixes:
        if stem.endswith(suffix) and len(stem) > len(suffix):
            before = stem[-len(suffix) - 1]
            if before.islower() or before.isdigit():
                return suffix
    return None


def _is_test_name(name: str, convention: NamingConvention) -> bool:
    stem = name.rsplit(".", 1)[0] if "." in name else name
    lower = stem.lower()
    if lower in _TEST_STEMS or lower in convention.stems:
        return True
    if lower.startswith(_TEST_PREFIXES) or lower.endswith(_TEST_SUFFIXES + convention.suffixes):
        return True
    if _class_suffix(stem, convention) is not None:
        return True
    words = _words(stem)
    return any(w in _COMMON_WORDS or w in convention.words for w in words)


def _is_generated_name(name: str) -> bool:
    lower = name.lower()
    return ".min." in lower or lower.endswith(_GENERATED_SUFFIXES) or ".generated." in lower


#: paths whose role is remembered: every file of a kernel-sized tree (66,712 mapped files
#: overran 65,536, and a least-recently-used cache read in the same order every ranking then
#: kept none of them)
ROLES_REMEMBERED = 1 << 18


@lru_cache(maxsize=ROLES_REMEMBERED)
def file_role(path: str) -> str:
    """The role of ``path`` from the path alone (see :func:`file_roles` for the whole set);
    remembered, since every ranking asks it of every file."""
    folder, _, name = path.rpartition("/")
    convention = convention_for(path)
    vendored, tests, examples, docs = _folder_facts(folder, convention.name)
    if vendored:
        return VENDORED
    if _is_generated_name(name):
        return GENERATED
    if tests or _is_test_name(name, convention):
        return TEST
    if examples:
        return EXAMPLE
    if docs:
        return DOCS
    if name.lower().endswith(TEMPLATE_EXTENSIONS):
        return TEMPLATE
    return CODE


@lru_cache(maxsize=1 << 16)
def _folder_facts(folder: str, convention: str) -> tuple[bool, bool, bool, bool]:
    """Whether a folder path (its files' naming ``convention``) is or lies in a vendored, test,
    example or docs folder: asked once per folder, not per file (a large tree has ten files a
    folder)."""
    original = folder.split("/") if folder else []
    dirs = [d.lower() for d in original]
    return (
        any(d in _VENDOR_DIRS for d in dirs),
        any(_is_test_folder(d, convention) for d in original),
        any(d in _EXAMPLE_DIRS for d in dirs),
        any(d in _DOC_DIRS for d in dirs),
    )


def tested_stem(path: str) -> str | None:
    """The stem of the module a test file is named after: ``tests/test_fields.py`` -> ``fields``,
    ``FooTest.java`` -> ``Foo``, ``parser_unittest.cc`` -> ``parser``, ``app.spec.ts`` -> ``app``."""
    stem = posixpath.basename(path).rsplit(".", 1)[0]
    convention = convention_for(path)
    for prefix in _TEST_PREFIXES:
        if stem.lower().startswith(prefix) and len(stem) > len(prefix):
            return stem[len(prefix) :]
    for suffix in _TEST_SUFFIXES + convention.suffixes:
        if stem.lower().endswith(suffix) and len(stem) > len(suffix):
            return stem[: -len(suffix)]
    class_suffix = _class_suffix(stem, convention)
    if class_suffix is not None:
        return stem[: -len(class_suffix)]
    return None


def _strip_extension(path: str, extensions: tuple[str, ...]) -> str | None:
    lower = path.lower()
    for ext in extensions:
        if lower.endswith(ext):
            return path[: -len(ext)]
    return None


def _module_path(path: str, extensions: tuple[str, ...]) -> str | None:
    """``dist/esm/v3/errors.d.ts`` -> ``v3/errors``: the path without its extension and its
    build folders, or None when it has none of ``extensions``."""
    stem = _strip_extension(path, extensions)
    if stem is None:
        return None
    *dirs, name = stem.split("/")
    return "/".join([*(d for d in dirs if d.lower() not in _BUILD_DIRS), name])


def file_roles(paths: Iterable[str]) -> dict[str, str]:
    """Each path's role (:func:`file_role`), and what only the set shows: a ``.js``, ``.cjs``,
    ``.mjs`` or ``.d.ts``/``.d.cts``/``.d.mts`` file outside ``src/`` whose path, build folders
    (``dist/``, ``lib/``, ``esm/``...) and extension dropped, is that of a TypeScript or
    JavaScript file under a ``src/`` folder of the same package (``src/`` dropped) is a compiled
    copy of it (``v3/errors.d.ts`` of ``src/v3/errors.ts``, ``pkg/dist/a.js`` of
    ``pkg/src/a.ts``): :data:`GENERATED`."""
    paths = sorted(set(paths))
    roles = {p: file_role(p) for p in paths}
    sources: set[str] = set()
    for p in paths:
        head, sep, rest = p.partition("src/")
        if sep and (not head or head.endswith("/")) and roles[p] == CODE:
            module = _module_path(rest, _SOURCE_EXTENSIONS)
            if module is not None:
                sources.add(head + module)
    if not sources:
        return roles
    for p in paths:
        if roles[p] != CODE or p.startswith("src/") or "/src/" in p:
            continue
        module = _module_path(p, _COMPILED_EXTENSIONS)
        if module is not None and module in sources:
            roles[p] = GENERATED
    return roles
