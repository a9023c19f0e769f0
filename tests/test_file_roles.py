"""File roles by each language's test conventions (``repomapper.relevance.roles``), table-driven:
every row is a path a real repository has and the role its language's conventions give it."""

from __future__ import annotations

import pytest

from repomapper.relevance.roles import (
    CODE,
    DOCS,
    EXAMPLE,
    TEST,
    VENDORED,
    convention_for,
    file_role,
)
from repomapper.relevance.roles import tested_stem as stem_under_test

ROLES = [
    # every language: folders
    ("tests/test_mod.py", TEST),
    ("src/pkg/mod.py", CODE),
    ("spec/models/user_spec.rb", TEST),
    ("spec/support/helpers.rb", TEST),
    ("pkg/parser/testdata/input.go", TEST),
    ("internal/testing/server.go", TEST),
    ("crates/core/tests/integration.rs", TEST),
    ("src/components/__tests__/Button.jsx", TEST),
    ("src/__mocks__/fs.js", TEST),
    ("test/fixtures/app/index.js", TEST),
    ("integration_tests/run.go", TEST),
    ("packages/e2e/login.ts", TEST),
    # Python: test_*.py, *_test.py, conftest; a public ``testing`` module is code
    ("src/flask/testing.py", CODE),
    ("pkg/conftest.py", TEST),
    ("pkg/parser_test.py", TEST),
    # Go: *_test.go and the helpers of a package's tests
    ("hugolib/integrationtest_builder.go", TEST),
    ("htesting/testhelpers.go", TEST),
    ("pkg/store/testing.go", TEST),
    ("internal/testutil/db.go", TEST),
    ("pkg/store/mock_store.go", TEST),
    ("pkg/client/fake/clientset.go", TEST),
    ("pkg/mod_test.go", TEST),
    ("pkg/export_test.go", TEST),
    ("cmd/latest.go", CODE),
    ("cmd/contest/main.go", CODE),
    ("resources/page/pagination.go", CODE),
    # Rust: tests/ crates, tests.rs modules, benches
    ("src/parser/tests.rs", TEST),
    ("src/test_utils.rs", TEST),
    ("benches/parse.rs", EXAMPLE),
    ("src/paging.rs", CODE),
    # JavaScript / TypeScript
    ("src/app.spec.ts", TEST),
    ("src/app.test.tsx", TEST),
    ("lib/router-test.js", TEST),
    ("src/setupTests.ts", TEST),
    ("src/test-utils.tsx", TEST),
    ("index.test-d.ts", TEST),
    ("cypress/integration/login.js", TEST),
    ("src/jsx.d.ts", CODE),
    ("src/protest.ts", CODE),
    # Java and Kotlin: *Test, *Tests, *IT, Gradle source sets
    ("core/src/main/java/lombok/SneakyThrowsRemover.java", CODE),
    ("core/src/test/java/lombok/LombokTest.java", TEST),
    ("src/org/acme/ParserTest.java", TEST),
    ("src/org/acme/ParserTests.java", TEST),
    ("src/org/acme/ParserIT.java", TEST),
    ("src/org/acme/AbstractIntegrationTestBase.java", TEST),
    ("app/src/androidTest/kotlin/MainScreen.kt", TEST),
    ("lib/src/jvmTest/kotlin/Codec.kt", TEST),
    ("lib/src/testFixtures/java/Builders.java", TEST),
    ("src/java/security/spec/KeySpec.java", TEST),  # (a folder named spec)
    ("src/java/security/KeySpec.java", CODE),  # Spec is not a Java test suffix
    ("src/main/kotlin/ParserSpec.kt", TEST),
    ("src/main/scala/ParserSuite.scala", TEST),
    ("src/main/java/org/acme/Latest.java", CODE),
    ("src/main/java/org/acme/Split.java", CODE),
    # C#: *Tests.cs and test projects
    ("src/Newtonsoft.Json.Tests/Serialization/JsonTests.cs", TEST),
    ("src/MyLib.UnitTests/Parser.cs", TEST),
    ("src/MyLib/ParserTests.cs", TEST),
    ("src/MyLib/Attestation.cs", CODE),
    # PHP, Ruby, Swift
    ("src/Illuminate/Database/Schema/Blueprint.php", CODE),
    ("src/Illuminate/Database/ModelTest.php", TEST),
    ("lib/rubygems/spec_fetcher.rb", CODE),
    ("lib/attest.rb", CODE),
    ("spec_helper.rb", TEST),
    ("Sources/App/Router.swift", CODE),
    ("Tests/AppTests/RouterTests.swift", TEST),
    # C and C++
    ("src/server.h", CODE),
    ("src/printf.h", CODE),
    ("base/strings/string_util_unittest.cc", TEST),
    ("tests/unit/test_sds.c", TEST),
    ("src/testutil.h", TEST),
    ("kernel/contest.c", CODE),
    # other roles keep their folders
    ("examples/demo.py", EXAMPLE),
    ("docs/conf.py", DOCS),
    ("vendor/lib/x.go", VENDORED),
    ("third_party/tests/a.py", VENDORED),
    ("node_modules/pkg/index.test.js", VENDORED),
]


@pytest.mark.parametrize(("path", "role"), ROLES)
def test_file_role_follows_the_language_conventions(path, role):
    assert file_role(path) == role


TESTED = [
    ("tests/test_fields.py", "fields"),
    ("pkg/mod_test.go", "mod"),
    ("src/app.spec.ts", "app"),
    ("src/app.test.tsx", "app"),
    ("lib/router-test.js", "router"),
    ("spec/user_spec.rb", "user"),
    ("src/org/acme/ParserTest.java", "Parser"),
    ("src/org/acme/ParserTests.java", "Parser"),
    ("src/org/acme/ParserIT.java", "Parser"),
    ("src/org/acme/ParserTestCase.java", "Parser"),
    ("src/ParserSpec.scala", "Parser"),
    ("src/MyLib/ParserTests.cs", "Parser"),
    ("tests/ModelTest.php", "Model"),
    ("base/string_util_unittest.cc", "string_util"),
    ("src/pkg/mod.py", None),
    ("src/java/security/KeySpec.java", None),
    ("hugolib/integrationtest_builder.go", None),  # a helper: it tests no one module
]


@pytest.mark.parametrize(("path", "stem"), TESTED)
def test_the_module_a_test_file_is_named_after(path, stem):
    assert stem_under_test(path) == stem


def test_each_extension_has_one_convention():
    from repomapper.relevance.roles import CONVENTIONS

    extensions = [e for c in CONVENTIONS for e in c.extensions]
    assert len(extensions) == len(set(extensions))
    assert convention_for("a/B.JAVA").name == "java"
    assert convention_for("Makefile").name == "other"


def test_templates_are_their_own_role_below_code() -> None:
    from repomapper.relevance.roles import CODE, TEMPLATE, TEST, file_role

    assert file_role("layouts/partials/taxonomy-terms.html") == TEMPLATE
    assert file_role("django/contrib/admin/templates/admin/base.html") == TEMPLATE
    assert file_role("app/views/users/_form.html.erb") == TEMPLATE
    assert file_role("tests/templates/form.html") == TEST  # a test's data first
    assert file_role("src/render.py") == CODE


def test_every_extension_the_templates_backend_reads_is_a_template_role() -> None:
    """The role is decided in the core without asking a backend; the built-in templates backend
    and the role must agree on what a template file is."""
    from repomapper.plugins.templates.dialects import EXTENSIONS
    from repomapper.relevance.roles import TEMPLATE_EXTENSIONS

    assert set(EXTENSIONS) <= set(TEMPLATE_EXTENSIONS)


def test_a_template_is_demoted_unless_the_task_is_about_templates(tmp_path) -> None:
    from repomapper.repomap import RepoMap

    (tmp_path / "shop" / "templates").mkdir(parents=True)
    (tmp_path / "shop" / "templates" / "cart.html").write_text(
        "{% block cart_total %}<b>{{ cart_total(items) }}</b>{% endblock %}\n"
    )
    (tmp_path / "shop" / "cart.py").write_text("def cart_total(items):\n    return sum(items)\n")

    def why(task: str) -> dict[str, list[str]]:
        ranked = RepoMap(tmp_path, use_cache=False).rank(task=task).files
        return {f.path: [r.signal for r in f.why] for f in ranked}

    code_task = why("cart_total is wrong when the cart has no items")
    assert "demoted" in code_task["shop/templates/cart.html"]
    assert "demoted" not in code_task["shop/cart.py"]
    template_task = why("the cart_total block of the cart template shows no items")
    assert "demoted" not in template_task["shop/templates/cart.html"]


def test_a_process_remembers_the_role_of_every_file_of_a_kernel_sized_tree():
    """A ranking asks every file's role in the same order: a remembered set smaller than the
    tree (65,536 against the kernel's 66,712 mapped files) kept none from one ranking to the
    next in a long-lived process."""
    from repomapper.relevance import roles

    paths = [f"drivers/d{i // 10}/f{i}.c" for i in range(70_000)]
    roles.file_role.cache_clear()
    roles.file_roles(paths)
    before = roles.file_role.cache_info().hits
    roles.file_roles(paths)
    assert roles.file_role.cache_info().hits - before == len(paths)
