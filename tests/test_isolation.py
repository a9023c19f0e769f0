"""A plugin that crashes, hangs or lies costs one file, never the run (issue 14).

Every mode of :mod:`tests.misbehaving_plugin` is run on a mixed repository: the map finishes, the
other files' symbols are byte-identical to a run without the plugin, the diagnostics name the
plugin (and the file, for faults at extraction), and the CLI exits 0 with the diagnostics in
its JSON unless nothing at all could be mapped.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from repomapper.cache import open_cache
from repomapper.cli import main
from repomapper.isolation.limits import Limits
from repomapper.registry import PluginConfig, PluginSet
from repomapper.repomap import RepoMap
from tests.conftest import write_tree

REPO = Path(__file__).resolve().parent.parent
FOO = ("foo", "tests.misbehaving_plugin.foo")
LIMITS = Limits(timeout=1.0, max_failures=3)

#: mode -> (diagnostic code, names the file)
EXTRACTION_FAULTS = {
    "hang": "backend_timeout",
    "segfault": "backend_crashed",
    "exit": "backend_crashed",
    "raise": "backend_error",
    "garbage": "backend_invalid_output",
    "lines": "backend_invalid_output",
    "million": "backend_invalid_output",
}
LOAD_FAULTS = {
    "wrong_info": FOO,
    "exits_on_import": ("foo", "tests.misbehaving_plugin.exits_on_import"),
    "misspelled": ("foo", "tests.misbehaving_plugin.misspelled"),
}


@pytest.fixture
def mixed(tmp_path):
    return write_tree(
        tmp_path / "repo",
        {
            "app/models.py": "class User:\n    def name(self):\n        return 'u'\n",
            "app/service.py": "from app.models import User\n\n\ndef load():\n    return User().name()\n",
            "app/util.py": "import os\n\nLIMIT = 3\n\n\ndef helper(x):\n    return os.path.join(x, 'y')\n",
            "data/thing.foo": "widget spins\nmore text\n",
        },
    )


def plugins(module=FOO, limits=LIMITS) -> PluginSet:
    return PluginSet(
        PluginConfig(load_entry_points=False, modules=(module,) if module else (), limits=limits)
    )


def extract_all(root, ps, jobs=1):
    rm = RepoMap(root, plugins=ps, use_cache=False, jobs=jobs)
    entries, _, _ = rm.collect(None)
    return rm.extract(entries, full=True)


def others(extractions):
    return {
        p: (ex.tags, ex.imports, ex.plugin)
        for p, ex in extractions.items()
        if not p.endswith(".foo")
    }


@pytest.fixture
def baseline(mixed):
    return others(extract_all(mixed, plugins(None)))


def test_the_plugin_works_when_it_behaves(mixed, monkeypatch):
    monkeypatch.setenv("FOO_MODE", "ok")
    ex = extract_all(mixed, plugins())
    assert ex["data/thing.foo"].plugin == "foo" and ex["data/thing.foo"].tags[0].name == "widget"


@pytest.mark.parametrize("mode", sorted(EXTRACTION_FAULTS))
def test_a_fault_at_extraction_costs_the_file(mode, mixed, baseline, monkeypatch):
    monkeypatch.setenv("FOO_MODE", mode)
    # only a hang needs the short time limit: on a busy machine, a million tags can take longer
    # than a second to cross from the worker, and would then be reported as a time-out
    limits = LIMITS if mode == "hang" else Limits(timeout=30.0, max_failures=3)
    result = RepoMap(mixed, plugins=plugins(limits=limits), use_cache=False).map()
    assert result.map and "app/models.py" in result.map
    codes = {d.code: d for d in result.diagnostics if d.path == "data/thing.foo"}
    diag = codes[EXTRACTION_FAULTS[mode]]
    assert "foo" in diag.message
    assert others(extract_all(mixed, plugins())) == baseline


def test_lines_out_of_range_keep_the_sound_tags_and_say_what_was_wrong(mixed, monkeypatch):
    monkeypatch.setenv("FOO_MODE", "lines")
    ex = extract_all(mixed, plugins())["data/thing.foo"]
    assert [t.name for t in ex.tags] == ["widget"]
    [diag] = [d for d in ex.diagnostics if d.code == "backend_invalid_output"]
    assert "dropped 2 of 3 tags" in diag.message and "outside the file" in diag.message


def test_garbage_names_what_it_was(mixed, monkeypatch):
    monkeypatch.setenv("FOO_MODE", "garbage")
    ex = extract_all(mixed, plugins())["data/thing.foo"]
    assert ex.plugin is None
    [diag] = [d for d in ex.diagnostics if d.code == "backend_invalid_output"]
    assert "4 not a Tag" in diag.message and "{'name': 'x'}" in diag.message


def test_a_million_tags_are_refused_at_the_cap(mixed, monkeypatch):
    monkeypatch.setenv("FOO_MODE", "million")
    ex = extract_all(mixed, plugins(limits=Limits(timeout=30, max_tags=1000)))["data/thing.foo"]
    assert ex.plugin is None and "more than 1000 tags" in ex.diagnostics[0].message


def test_a_plugin_claiming_every_file_is_a_fallback(mixed, baseline, monkeypatch):
    monkeypatch.setenv("FOO_MODE", "claim_all")
    ps = plugins()
    ex = extract_all(mixed, ps)
    assert others(ex) == baseline
    assert ex["data/thing.foo"].plugin == "foo"
    order = ps.candidates("lib/x.pl")  # a type only ctags names: ctags first, foo after it
    assert order.index("ctags") < order.index("foo")


@pytest.mark.parametrize("mode", sorted(LOAD_FAULTS))
def test_a_fault_at_loading_leaves_the_plugin_out_with_one_diagnostic(
    mode, mixed, baseline, monkeypatch
):
    monkeypatch.setenv("FOO_MODE", mode)
    ps = plugins(LOAD_FAULTS[mode])
    result = RepoMap(mixed, plugins=ps, use_cache=False).map()
    [diag] = [d for d in result.diagnostics if d.code == "plugin_load_error"]
    assert diag.message.startswith("plugin foo left out")
    assert "foo" not in ps.infos
    assert others(extract_all(mixed, plugins(LOAD_FAULTS[mode]))) == baseline


def test_load_fault_messages_say_what_was_wrong(monkeypatch):
    monkeypatch.setenv("FOO_MODE", "wrong_info")
    messages = {k: plugins(m).load_diagnostics()[0].message for k, m in LOAD_FAULTS.items()}
    assert "returned dict, not a BackendInfo" in messages["wrong_info"]
    assert "SystemExit(3)" in messages["exits_on_import"]
    assert "unknown hook(s) extract_tag" in messages["misspelled"]


CLI_MODES = [*sorted(EXTRACTION_FAULTS), *sorted(LOAD_FAULTS)]


@pytest.mark.parametrize("mode", CLI_MODES)
def test_cli_exits_0_with_the_diagnostics_in_json(mode, mixed, monkeypatch):
    module = LOAD_FAULTS.get(mode, FOO)
    monkeypatch.setenv("FOO_MODE", mode)
    monkeypatch.setenv("REPOMAPPER_PLUGINS", "=".join(module))
    r = CliRunner().invoke(
        main,
        ["map", str(mixed), "--format", "json", "--no-cache", "--plugin-timeout", "1"],
        catch_exceptions=False,
    )
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert "app/models.py" in out["map"]
    assert any(
        "foo" in d["message"]
        for d in out["diagnostics"]
        if d["severity"] != "info" or d["code"] == "backend_invalid_output"
    )


@pytest.mark.parametrize("mode", ["segfault", "exit", "garbage"])
def test_cli_exits_nonzero_only_when_nothing_could_be_mapped(mode, tmp_path, monkeypatch):
    root = write_tree(tmp_path / "only", {"a.foo": "alpha\n", "b.foo": "beta\n"})
    monkeypatch.setenv("FOO_MODE", mode)
    monkeypatch.setenv("REPOMAPPER_PLUGINS", "=".join(FOO))
    r = CliRunner().invoke(
        main, ["map", str(root), "--format", "json", "--no-cache"], catch_exceptions=False
    )
    assert r.exit_code == 1
    codes = {d["code"] for d in json.loads(r.stdout)["diagnostics"]}
    assert "nothing_to_map" in codes


def test_a_crash_is_never_cached_and_the_next_run_tries_again(mixed, tmp_path, monkeypatch):
    cache_dir = tmp_path / "cache"
    monkeypatch.setenv("FOO_MODE", "segfault")
    crashed = RepoMap(mixed, plugins=plugins(), cache_dir=cache_dir).map()
    assert any(d.code == "backend_crashed" for d in crashed.diagnostics)
    monkeypatch.setenv("FOO_MODE", "ok")
    fixed = RepoMap(mixed, plugins=plugins(), cache_dir=cache_dir, map_tokens=4096).map()
    assert not any(d.code == "backend_crashed" for d in fixed.diagnostics)
    assert "widget" in fixed.map
    cache = open_cache(mixed, cache_dir)
    assert cache.get_map("x") is None  # the cache opens; the crashed map was not replayed above
    cache.close()


def test_a_plugin_failing_on_many_files_is_disabled_and_its_files_still_mapped(
    tmp_path, monkeypatch
):
    files = {f"src/m{i:02}.bar": f"item{i} here\n" for i in range(12)}
    files["src/main.py"] = "def main():\n    pass\n"
    root = write_tree(tmp_path / "many", files)
    monkeypatch.setenv("FOO_MODE", "raise")
    # a fallback backend that claims .bar too, as ctags claims what others fail on
    from repomapper.model import DEF, Tag
    from tests.test_extract import make_plugin

    fallback = make_plugin(
        "fallback", ".bar", lambda s: [Tag(s.path, 1, 1, s.text().split()[0], DEF)]
    )
    from tests.misbehaving_plugin import foo

    # registered last, foo is asked first
    ps = PluginSet(
        PluginConfig(
            load_entry_points=False, extra=(("fallback", fallback), ("foo", foo)), limits=LIMITS
        )
    )
    assert ps.candidates("src/m00.bar")[:2] == ("foo", "fallback")
    result = RepoMap(root, plugins=ps, use_cache=False, map_tokens=4096).map()
    [warning] = [d for d in result.diagnostics if d.code == "backend_disabled"]
    assert "foo failed on 3 files in a row" in warning.message
    ex = extract_all(root, ps)
    assert all(ex[p].tags and ex[p].plugin == "fallback" for p in files if p.endswith(".bar"))


def test_hooks_run_in_a_worker_even_for_one_file(tmp_path, monkeypatch):
    root = write_tree(tmp_path / "one", {"x.foo": "solo\n"})
    monkeypatch.setenv("FOO_MODE", "exit")
    ex = extract_all(root, plugins())
    assert ex["x.foo"].diagnostics[0].code == "backend_crashed"
    assert "exited with status 3" in ex["x.foo"].diagnostics[0].message


def test_many_files_in_parallel_keep_every_other_file(tmp_path, monkeypatch):
    files = {f"pkg/mod{i:03}.py": f"def f{i}():\n    return {i}\n" for i in range(120)}
    files["pkg/zz.foo"] = "bad\n"
    root = write_tree(tmp_path / "big", files)
    monkeypatch.setenv("FOO_MODE", "segfault")
    ex = extract_all(root, plugins(), jobs=2)
    assert all(ex[p].tags for p in files if p.endswith(".py"))
    assert ex["pkg/zz.foo"].diagnostics[0].code == "backend_crashed"


def test_jobs_are_capped_at_the_cpu_count(mixed):
    r = CliRunner().invoke(
        main, ["map", str(mixed), "--no-cache", "-j", "500"], catch_exceptions=False
    )
    assert r.exit_code == 0 and "capped at" in r.stderr


def _children(pid: int) -> list[int]:
    """The pids whose parent is ``pid`` (from /proc: no ``ps`` needed)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split()[2] == "Z")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_workers_exit_when_the_parent_is_killed(sig, mixed, monkeypatch):
    env = {
        **os.environ,
        "FOO_MODE": "hang",
        "REPOMAPPER_PLUGINS": "=".join(FOO),
        "PYTHONPATH": str(REPO),
        "REPOMAPPER_PLUGIN_TIMEOUT": "60",
    }
    parent = subprocess.Popen(
        [sys.executable, "-m", "repomapper.cli", "map", str(mixed), "--no-cache"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    workers: list[int] = []
    while time.monotonic() < deadline and not workers:
        time.sleep(0.1)
        workers = _children(parent.pid)
    assert workers, "no worker started"
    time.sleep(0.3)
    parent.send_signal(sig)
    parent.wait(10)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(_alive(w) for w in workers):
        time.sleep(0.1)
    orphans = [w for w in workers if _alive(w)]
    for w in orphans:  # never leave them behind, even when the test fails
        os.kill(w, signal.SIGKILL)
    assert not orphans


def test_conformance_runs_the_boundary_validator():
    import dataclasses

    from repomapper.conformance.runner import run_conformance
    from repomapper.conformance.testing import isolated_plugin_set
    from repomapper.hookspecs import hookimpl
    from repomapper.model import BackendInfo
    from tests.conformance_broken_plugin import BrokenPythonPlugin

    class WrongSignature(BrokenPythonPlugin):
        @hookimpl
        def backend_info(self):
            return BackendInfo("sig", "1", ("python",), (".py",), ("definitions",))

        @hookimpl
        def extract_tags(self, source):
            return [
                dataclasses.replace(t, signature=42) if t.is_def else t
                for t in super().extract_tags(source)
            ]

    report = run_conformance(isolated_plugin_set("sig", WrongSignature()), "sig", examples=0)
    [result] = report.results
    well_formed = next(p for p in result.properties if p.name == "well_formed")
    assert (
        not well_formed.passed
        and "the framework drops an item with a field of the wrong type" in well_formed.message
    )


@pytest.mark.parametrize("mode", sorted(LOAD_FAULTS))
def test_every_command_reports_a_load_fault_and_carries_on(mode, mixed, monkeypatch):
    monkeypatch.setenv("FOO_MODE", mode)
    monkeypatch.setenv("REPOMAPPER_PLUGINS", "=".join(LOAD_FAULTS[mode]))
    runner = CliRunner()
    assert runner.invoke(main, ["--help"]).exit_code == 0
    tags = runner.invoke(main, ["tags", str(mixed / "app"), "--no-cache"])
    assert tags.exit_code == 0 and "plugin_load_error" in tags.stderr and "User" in tags.stdout
    listing = runner.invoke(main, ["plugins"])
    assert listing.exit_code == 0 and "foo [FAILED TO LOAD]" in listing.stdout
    conformance = runner.invoke(main, ["conformance", "--plugin", "python_ast", "--examples", "0"])
    assert conformance.exit_code == 0, conformance.output


def test_a_crash_in_prepare_batch_is_narrowed_down_to_its_file(tmp_path, monkeypatch):
    root = write_tree(
        tmp_path / "prep", {"a.foo": "alpha\n", "bad.foo": "beta\n", "c.foo": "gamma\n"}
    )
    monkeypatch.setenv("FOO_MODE", "prepare_crash")
    ex = extract_all(root, plugins())
    assert [t.name for t in ex["a.foo"].tags] == ["alpha"] and [
        t.name for t in ex["c.foo"].tags
    ] == ["gamma"]
    [diag] = ex["bad.foo"].diagnostics[:1]
    assert (
        diag.code == "backend_crashed"
        and "plugin foo" in diag.message
        and "preparing a batch" in diag.message
    )


def test_a_map_with_a_crash_is_deterministic(mixed, monkeypatch):
    monkeypatch.setenv("FOO_MODE", "segfault")
    first = RepoMap(mixed, plugins=plugins(), use_cache=False).map().to_dict()
    second = RepoMap(mixed, plugins=plugins(), use_cache=False).map().to_dict()
    assert json.dumps(first) == json.dumps(second)


def test_the_time_limit_is_a_setting_everywhere(mixed, monkeypatch):
    monkeypatch.setenv("REPOMAPPER_PLUGIN_TIMEOUT", "2.5")
    monkeypatch.setenv("REPOMAPPER_MAX_TAGS_PER_FILE", "77")
    assert Limits.from_env() == Limits(timeout=2.5, max_tags=77)
    assert PluginConfig().limits.timeout == 2.5
    monkeypatch.setenv("FOO_MODE", "hang")
    ex = RepoMap(
        mixed, plugins=plugins(limits=Limits(timeout=60)), use_cache=False, plugin_timeout=0.5
    ).extract(RepoMap(mixed).collect(None)[0], full=True)
    assert "0.5s" in ex["data/thing.foo"].diagnostics[0].message
    with pytest.raises(ValueError):
        Limits(timeout=0)


@pytest.mark.parametrize("mode", ["exit", "garbage"])
def test_tags_of_a_file_that_could_not_be_mapped_exits_nonzero_with_the_reason(
    mode, mixed, monkeypatch
):
    monkeypatch.setenv("FOO_MODE", mode)
    monkeypatch.setenv("REPOMAPPER_PLUGINS", "=".join(FOO))
    r = CliRunner().invoke(main, ["tags", str(mixed / "data" / "thing.foo"), "--no-cache"])
    assert r.exit_code == 1 and "plugin foo" in r.stderr and "thing.foo" in r.stderr
    r = CliRunner().invoke(main, ["tags", str(mixed / "app"), "--no-cache"])
    assert r.exit_code == 0 and "User" in r.stdout


def _slow_runner(jobs, disabled, tracker):
    from repomapper.model import FileExtraction

    for i, job in enumerate(jobs):
        tracker(i, None, 2)
        if job.entry.path == "slow":
            time.sleep(3600)
    return [(j.entry.path, None, FileExtraction(j.entry.path)) for j in jobs], []


def test_an_interrupted_run_leaves_no_worker_behind():
    import multiprocessing

    from repomapper.discover import FileEntry
    from repomapper.isolation.supervisor import Supervisor

    before = set(multiprocessing.active_children())
    sup = Supervisor(_slow_runner, ["x"], Limits(timeout=60), 2, lambda p, d: False, lambda ex: ex)
    run = sup.run([[FileEntry("slow", 0, 0)], [FileEntry("fast", 0, 0)]])
    [(path, _, _)] = next(run)
    assert path == "fast"
    workers = set(multiprocessing.active_children()) - before
    assert len(workers) == 2  # one of them still busy with "slow"
    run.close()  # the caller gives up (an exception, a timeout of its own)
    assert not any(w.is_alive() for w in workers)


def test_a_long_lived_repomap_tries_a_crashed_file_again(mixed, monkeypatch):
    rm = RepoMap(mixed, plugins=plugins(), map_tokens=4096)
    monkeypatch.setenv("FOO_MODE", "exit")
    assert any(d.code == "backend_crashed" for d in rm.map().diagnostics)
    monkeypatch.setenv("FOO_MODE", "ok")
    again = rm.map()
    assert not any(d.code == "backend_crashed" for d in again.diagnostics)
    assert "widget" in again.map


def test_a_plugin_that_segfaults_fails_its_conformance_pair_not_the_suite(monkeypatch, tmp_path):
    import tempfile

    from repomapper.conformance.runner import run_conformance

    monkeypatch.setenv("FOO_MODE", "segfault")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    report = run_conformance(plugins(), plugin="foo", examples=5)  # properties on generated input
    (crashed,) = report.results
    assert not crashed.ok and "killed by SIGSEGV" in crashed.errors[0]
    assert not report.ok
    assert list(tmp_path.iterdir()) == []  # the killed check's temporary files are gone too
    # this process survived the crash and goes on checking other plugins
    after = run_conformance(plugins(), plugin="treesitter", language="go", examples=5)
    assert after.ok and after.results[0].language == "go"
