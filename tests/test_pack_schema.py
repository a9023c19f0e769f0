"""Real packs (every role, budgets from none to plenty, this repository's own code) validate
against docs/schemas/context_pack.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repomapper.pack import AgentRole, RepoMapper

jsonschema = pytest.importorskip("jsonschema", reason="jsonschema comes with the dev extra")

from test_pack import make_repo  # noqa: E402

SCHEMA = json.loads(
    (Path(__file__).parent.parent / "docs/schemas/context_pack.json").read_text(encoding="utf-8")
)
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def test_schema_is_valid():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("role", list(AgentRole))
@pytest.mark.parametrize("budget", [1, 120, 100_000])
def test_real_packs_validate(tmp_path, role, budget):
    repo = make_repo(tmp_path / "repo")
    m = RepoMapper(repo, env={}, pack_dir=tmp_path / "out")
    m.generate_context_pack_sync("v-1", "save records in memory", ["app/memory.py"], role, budget)
    m.close()
    data = json.loads((tmp_path / "out/v-1.json").read_text(encoding="utf-8"))
    VALIDATOR.validate(data)
    assert data["token_count"] <= data["metadata"]["budget"]


def test_pack_of_this_repository_validates(tmp_path):
    root = Path(__file__).parent.parent
    m = RepoMapper(root, env={})
    pack = m.generate_context_pack_sync(
        "self", "rank files for a task", ["core/ranked.py"], "reviewing", 6000
    )
    VALIDATOR.validate(json.loads(json.dumps(pack.to_dict())))
    assert pack.files and pack.token_count <= 6000


def test_a_broken_pack_fails_validation(tmp_path):
    repo = make_repo(tmp_path / "repo")
    pack = RepoMapper(repo, env={}, write=False).generate_context_pack_sync(
        "v-2", "save", ["app/memory.py"], "coding"
    )
    data = pack.to_dict()
    data["files"][0]["mode"] = "everything"
    with pytest.raises(jsonschema.ValidationError):
        VALIDATOR.validate(data)
