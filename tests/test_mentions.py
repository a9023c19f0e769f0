from repomapper.mentions import mentions_in

FILES = ["src/sqlfluff/rules/L031.py", "src/sqlfluff/rules/L032.py", "src/pkg/utils.py",
         "tests/utils.py", "src/pkg/session_store.py", "a.py"]


def test_paths_suffixes_and_distinctive_base_names():
    text = "See rules/L032.py and also session_store.py; a.py and utils.py are too vague."
    m = mentions_in(text, FILES, [])
    assert m.files == {"src/sqlfluff/rules/L032.py", "src/pkg/session_store.py"}


def test_identifiers_are_words_defined_in_the_repository_or_file_stems():
    text = "L031 incorrectly triggers `Rule_L031._eval` when get_select_statement_info() is None"
    m = mentions_in(text, FILES, ["Rule_L031", "_eval", "get_select_statement_info", "other"])
    assert m.idents == {"L031", "Rule_L031", "_eval", "get_select_statement_info"}


def test_task_mentions_personalize_the_map(pyrepo):
    from repomapper import RepoMap

    plain = RepoMap(pyrepo, 200, use_cache=False).map()
    task = RepoMap(pyrepo, 200, use_cache=False).map(task="The receipt shows the wrong total: apply_discount rounds down")
    assert task.ranked_symbols[0].name == "apply_discount"
    assert plain.ranked_symbols[0].name != "apply_discount"


def test_paths_leading_into_the_repository_from_a_traceback():
    files = ["astroid/brain/brain_builtin_inference.py", "astroid/raw_building.py"]
    text = ('File "/usr/lib/python3/dist-packages/astroid/brain/brain_builtin_inference.py", line 956\n'
            "/x/site-packages/astroid/raw_building.py:470: FutureWarning")
    assert mentions_in(text, files, []).files == set(files)
