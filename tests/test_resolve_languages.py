"""Import resolution as Java, Kotlin, C#, Ruby and PHP resolve imports (tree-sitter backend):
each on a small repository written to a temporary folder, with a name that must not resolve
(a standard-library or third-party import beside a repository file of the same name outside the
import root)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repomapper.index import RepoIndex
from repomapper.model import SourceFile
from repomapper.plugins import treesitter as backend
from repomapper.plugins.treesitter import namespaces


def write(root: Path, files: dict[str, str]) -> RepoIndex:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return RepoIndex(root, [r for r in files if not r.endswith(".json")])


def resolved(index: RepoIndex, rel: str) -> dict[str, list[str]]:
    """Every import of ``rel`` as the backend extracts it -> the files it resolves to."""
    source = SourceFile(index.root, rel, (index.root / rel).read_bytes())
    return {
        f"{imp.line_number}:{imp.source}": backend.resolve_import(imp, index)
        for imp in backend.extract_imports(source)
    }


# -- Java and Kotlin ---------------------------------------------------------------------------

JAVA = {
    "core/src/main/java/com/acme/model/User.java": "package com.acme.model;\npublic class User {}\n",
    "core/src/main/java/com/acme/model/Role.java": "package com.acme.model;\nclass Role {}\n",
    "core/src/main/java/com/acme/util/Strings.java": (
        "/* licence\n * package not.this.one;\n */\npackage com.acme.util;\n"
        "public class Strings { public static String shout(String s) { return s; } }\n"
    ),
    # a folder that does not match its package: the declaration decides
    "legacy/Odd.java": "package com.acme.odd;\npublic class Odd {}\n",
    # named like java.util.List by path, but in package ``util``
    "tools/src/main/java/util/List.java": "package util;\npublic class List {}\n",
    # Kotlin: a file of top-level functions, named freely, in a flat folder
    "app/src/main/kotlin/Extensions.kt": (
        "package com.acme.ext\n\nfun String.shout(): String = this\nclass Helper\n"
    ),
    "app/src/main/java/com/acme/app/App.java": (
        "package com.acme.app;\n"
        "import java.util.List;\n"
        "import com.acme.model.User;\n"
        "import com.acme.model.*;\n"
        "import static com.acme.util.Strings.shout;\n"
        "import static com.acme.util.Strings.*;\n"
        "import com.acme.odd.Odd;\n"
        "import com.acme.model.User.Inner;\n"
        "public class App {}\n"
    ),
    "app/src/main/kotlin/com/acme/app/Main.kt": (
        "package com.acme.app\n\n"
        "import com.acme.ext.shout\n"
        "import com.acme.ext.Helper as H\n"
        "import com.acme.model.*\n"
        "import kotlin.collections.List\n"
        "import util.List\n"
    ),
}


def test_java_imports_resolve_by_declared_packages(tmp_path):
    pytest.importorskip("tree_sitter_java")
    index = write(tmp_path, JAVA)
    model = "core/src/main/java/com/acme/model"
    strings = ["core/src/main/java/com/acme/util/Strings.java"]
    assert resolved(index, "app/src/main/java/com/acme/app/App.java") == {
        "2:java.util.List": [],  # the JDK, not tools/src/main/java/util/List.java
        "3:com.acme.model.User": [f"{model}/User.java"],
        "4:com.acme.model": [f"{model}/Role.java", f"{model}/User.java"],
        "5:com.acme.util.Strings.shout": strings,  # a static member: its class's file
        "6:com.acme.util.Strings": strings,  # static wildcard: the class, not a package
        "7:com.acme.odd.Odd": ["legacy/Odd.java"],  # the package as declared
        "8:com.acme.model.User.Inner": [f"{model}/User.java"],  # a nested class
    }


def test_kotlin_imports_resolve_to_top_level_declarations_and_java(tmp_path):
    pytest.importorskip("tree_sitter_kotlin")
    index = write(tmp_path, JAVA)
    model = "core/src/main/java/com/acme/model"
    assert resolved(index, "app/src/main/kotlin/com/acme/app/Main.kt") == {
        "3:com.acme.ext.shout": ["app/src/main/kotlin/Extensions.kt"],
        "4:com.acme.ext.Helper": ["app/src/main/kotlin/Extensions.kt"],
        "5:com.acme.model": [f"{model}/Role.java", f"{model}/User.java"],
        "6:kotlin.collections.List": [],
        "7:util.List": ["tools/src/main/java/util/List.java"],
    }


def test_a_jvm_file_without_a_readable_declaration_falls_back_to_its_source_root(tmp_path):
    from repomapper.plugins.treesitter.declared import folder_package

    assert folder_package("m/src/main/java/com/acme/X.java") == "com.acme"
    assert folder_package("m/src/test/kotlin/a/B.kt") == "a"
    assert folder_package("scripts/X.java") == ""
    # a file listed but gone from the disk is placed by its folder, not dropped
    index = RepoIndex(tmp_path, ["m/src/main/java/com/acme/X.java"])
    assert namespaces.jvm_packages(index).files == {
        "com.acme": ("m/src/main/java/com/acme/X.java",)
    }


# -- C# ------------------------------------------------------------------------------------------


def test_csharp_using_resolves_to_declaring_files_with_a_bounded_fan_out(tmp_path):
    pytest.importorskip("tree_sitter_c_sharp")
    files = {
        "src/Models/User.cs": "namespace Acme.Models\n{\n    public class User {}\n}\n",
        "src/Models/Role.cs": "namespace Acme.Models;\npublic class Role {}\n",
        "src/Text/Format.cs": "namespace Acme.Text { public static class Format {} }\n",
        # named like System.Text.Json by folder, but in namespace Acme.Json
        "src/System/Text/Json.cs": "namespace Acme.Json { class Json {} }\n",
        "src/App.cs": (
            "using System;\n"
            "using System.Text;\n"
            "using Acme.Models;\n"
            "using static Acme.Text.Format;\n"
            "using R = Acme.Models.Role;\n"
            "namespace Acme.App { class App {} }\n"
        ),
    }
    for i in range(40):
        files[f"big/F{i:02}.cs"] = "namespace Acme.Big { class F {} }\n"
    files["big/near/Uses.cs"] = "using Acme.Big;\nclass Uses {}\n"
    index = write(tmp_path, files)
    assert resolved(index, "src/App.cs") == {
        "1:System": [],
        "2:System.Text": [],
        "3:Acme.Models": ["src/Models/Role.cs", "src/Models/User.cs"],
        "4:Acme.Text.Format": ["src/Text/Format.cs"],
        "5:Acme.Models.Role": ["src/Models/Role.cs"],
    }
    big = resolved(index, "big/near/Uses.cs")["1:Acme.Big"]
    assert len(big) == namespaces.MAX_NAMESPACE_FILES
    assert big == [f"big/F{i:02}.cs" for i in range(namespaces.MAX_NAMESPACE_FILES)]


# -- Ruby ---------------------------------------------------------------------------------------


def test_ruby_require_uses_the_load_path_and_require_relative_the_file(tmp_path):
    pytest.importorskip("tree_sitter_ruby")
    files = {
        "lib/acme.rb": "require 'acme/version'\nrequire_relative 'acme/util'\nrequire 'json'\n",
        "lib/acme/version.rb": "VERSION = '1'\n",
        "lib/acme/util.rb": "require_relative '../acme'\nrequire 'set'\n",
        "app/json.rb": "# not the standard library's json\n",
        "mylib/set.rb": "# a folder named like lib, but not lib\n",
        "test/test_helper.rb": "require 'acme'\n",
        "test/acme_test.rb": "require 'test_helper'\nrequire 'acme/missing'\n",
        # a monorepo: each gem's lib is a root; the requiring file's own gem wins
        "gems/a/lib/shared.rb": "",
        "gems/b/lib/shared.rb": "",
        "gems/b/lib/b.rb": "require 'shared'\n",
    }
    index = write(tmp_path, files)
    assert resolved(index, "lib/acme.rb") == {
        "1:acme/version": ["lib/acme/version.rb"],
        "2:acme/util": ["lib/acme/util.rb"],
        "3:json": [],
    }
    assert resolved(index, "lib/acme/util.rb") == {"1:../acme": ["lib/acme.rb"], "2:set": []}
    assert resolved(index, "test/acme_test.rb") == {
        "1:test_helper": ["test/test_helper.rb"],
        "2:acme/missing": [],
    }
    assert resolved(index, "gems/b/lib/b.rb") == {"1:shared": ["gems/b/lib/shared.rb"]}


# -- PHP ---------------------------------------------------------------------------------------


def test_php_use_follows_composer_psr4_and_psr0_maps(tmp_path):
    pytest.importorskip("tree_sitter_php")
    composer = {
        "autoload": {
            "psr-4": {"Acme\\": "src/", "Acme\\Legacy\\": ["legacy/", "old/"]},
            "psr-0": {"Old_": "lib/"},
        },
        "autoload-dev": {"psr-4": {"Acme\\Tests\\": "tests/"}},
    }
    files = {
        "composer.json": json.dumps(composer),
        "src/Http/Kernel.php": "<?php\nnamespace Acme\\Http;\nclass Kernel {}\n",
        "src/Support/Str.php": "<?php\nnamespace Acme\\Support;\nclass Str {}\n",
        "old/Thing.php": "<?php\nnamespace Acme\\Legacy;\nclass Thing {}\n",
        "lib/Old/Mail/Sender.php": "<?php\nclass Old_Mail_Sender {}\n",
        "tests/KernelTest.php": (
            "<?php\nnamespace Acme\\Tests;\n"
            "use Acme\\Http\\Kernel;\n"
            "use Acme\\Legacy\\Thing;\n"
            "use Acme\\Support\\{Str, Arr};\n"
            "use Symfony\\Component\\Console\\Command;\n"
            "use Old_Mail_Sender;\n"
        ),
        # where Symfony's class would be if the namespace were read as a path
        "src/Component/Console/Command.php": "<?php\nnamespace Acme\\Component\\Console;\n",
    }
    index = write(tmp_path, files)
    assert resolved(index, "tests/KernelTest.php") == {
        "3:Acme\\Http\\Kernel": ["src/Http/Kernel.php"],
        "4:Acme\\Legacy\\Thing": ["old/Thing.php"],  # the second folder of the prefix
        "5:Acme\\Support": ["src/Support/Str.php"],  # a group use: Str found, Arr not
        "6:Symfony\\Component\\Console\\Command": [],  # a dependency, in vendor/
        "7:Old_Mail_Sender": ["lib/Old/Mail/Sender.php"],  # PSR-0: underscores are folders
    }


def test_php_without_composer_reads_the_namespace_as_a_path(tmp_path):
    pytest.importorskip("tree_sitter_php")
    files = {
        "app/Models/User.php": "<?php\nnamespace App\\Models;\nclass User {}\n",
        "app/Http/Controller.php": "<?php\nuse App\\Models\\User;\n",
    }
    index = write(tmp_path, files)
    assert resolved(index, "app/Http/Controller.php") == {
        "2:App\\Models\\User": ["app/Models/User.php"]
    }


def test_a_changed_package_declaration_is_read_again_for_a_new_index(tmp_path):
    rel = "src/main/java/a/X.java"
    index = write(tmp_path, {rel: "package a;\nclass X {}\n"})
    assert namespaces.jvm_packages(index).files == {"a": (rel,)}
    (tmp_path / rel).write_text("package moved.elsewhere;\nclass X {}\n")
    again = RepoIndex(tmp_path, [rel])
    assert namespaces.jvm_packages(again).files == {"moved.elsewhere": (rel,)}
