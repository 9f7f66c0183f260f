"""Issue 10: what a hostile registry, or a hand-edited home, can do to boost — through the
real CLI (subprocesses) where the item is about the CLI.

Items: 1 (file names that are not UTF-8), 2 (terminal escapes in everything printed),
9 (config and catalog cache of the wrong shape), 10 (a tampered catalog cache),
14 (a symlink into ``.git``), 15 (entry names with ':'), 17 (a tap named '..').
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import commit_all, make_repo, run_boost, skill

# Everything `text.printable` escapes: C0 (but tab and newline), DEL, C1, bidi overrides.
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

CSI_CLEAR = "\x1b[2J\x1b[H"
OSC52 = "\x1b]52;c;cm0gLXJmIH4=\x07"  # writes "rm -rf ~" to the clipboard
OSC8 = "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\"
BIDI = "\u202e"


def assert_terminal_safe(text: str) -> None:
    found = UNSAFE.findall(text)
    assert not found, f"raw control characters reached the terminal: {found!r}\n{text!r}"


def _hostile_repo(root: Path) -> Path:
    """A registry whose names, descriptions, folders and file names carry escapes."""
    files = {
        "skills/clear/SKILL.md": skill(f"clear{CSI_CLEAR}me", f"wipes{OSC52} the screen"),
        "skills/link/SKILL.md": skill("link-skill", f"see {OSC8} now\a\b\b"),
        f"commands/evil{BIDI}dm.md": "---\ndescription: bidi name\n---\nbody\n",
        "commands/plain.md": f"---\ndescription: plain\n---\nbody with {CSI_CLEAR} and {OSC52}\n",
        # a broken frontmatter: its warning quotes the file name
        "rules/bad\x1b[31mred.md": '---\nname: "unterminated\n---\nx\n',
        # a newline in a file name would forge an extra result line
        "commands/fake\n 2. fake:result  [skill]  99.000.md": "---\ndescription: forged\n---\nx\n",
    }
    return make_repo(root, files)


# --------------------------------------------------------------------------- item 2


@pytest.fixture
def hostile_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    repo = _hostile_repo(tmp_path / "hostile")
    r = run_boost(["tap", str(repo), "--name", "evil"], home)
    assert r.returncode == 0, r.stderr
    assert_terminal_safe(r.stdout + r.stderr)
    return home


def test_show_escapes_the_file_body_unless_raw(hostile_home: Path) -> None:
    """Item 2: `boost show` prints registry text; control sequences are escaped."""
    r = run_boost(["show", "evil:plain"], hostile_home)
    assert r.returncode == 0, r.stderr
    assert_terminal_safe(r.stdout)
    assert "body with \\x1b[2J\\x1b[H and \\x1b]52;c;cm0gLXJmIH4=\\x07" in r.stdout
    raw = run_boost(["show", "evil:plain", "--raw"], hostile_home)
    assert raw.returncode == 0, raw.stderr
    assert CSI_CLEAR in raw.stdout and OSC52 in raw.stdout
    as_json = run_boost(["show", "evil:plain", "--json"], hostile_home)
    assert CSI_CLEAR + " and " + OSC52 in json.loads(as_json.stdout)["text"]  # exact


def test_show_escapes_names_and_paths(hostile_home: Path) -> None:
    r = run_boost(["show", f"evil:clear{CSI_CLEAR}me"], hostile_home)
    assert r.returncode == 0, r.stderr
    assert_terminal_safe(r.stdout)
    # the id percent-escapes what a terminal would run (issue 33: one word, safe to paste)
    assert r.stdout.startswith("# evil:clear%1B%5B2J%1B%5BHme [skill]\n")
    again = run_boost(["show", "evil:clear%1B%5B2J%1B%5BHme", "--json"], hostile_home)
    assert json.loads(again.stdout)["name"] == f"clear{CSI_CLEAR}me"
    bidi = run_boost(["show", f"evil:evil{BIDI}dm"], hostile_home)
    assert bidi.returncode == 0, bidi.stderr
    assert_terminal_safe(bidi.stdout)
    assert "evil\\u202edm" in bidi.stdout


def test_search_output_has_one_line_per_field(hostile_home: Path) -> None:
    r = run_boost(["search", "forged", "bidi", "plain", "wipes", "--no-rerank"], hostile_home)
    assert r.returncode == 0, r.stderr
    assert_terminal_safe(r.stdout + r.stderr)
    results = [ln for ln in r.stdout.splitlines() if re.match(r"^ ?\d+\. ", ln)]
    assert not any("fake:result" in ln and ln.startswith(" 2. fake") for ln in results)
    assert all(ln.startswith(("evil:", " ", f"{n}.")) for n, ln in enumerate(results, 1))


def test_taps_warnings_update_and_errors_are_escaped(tmp_path: Path, hostile_home: Path) -> None:
    r = run_boost(["taps", "--warnings"], hostile_home)
    assert r.returncode == 0, r.stderr
    assert_terminal_safe(r.stdout)
    assert "rules/bad\\x1b[31mred.md: frontmatter" in r.stdout
    up = run_boost(["update"], hostile_home)
    assert_terminal_safe(up.stdout + up.stderr)
    doctor = run_boost(["doctor"], hostile_home)
    assert_terminal_safe(doctor.stdout + doctor.stderr)
    # an ambiguous name lists registry names in the error line
    repo2 = _hostile_repo(tmp_path / "hostile2")
    (repo2 / "skills" / "clear" / "SKILL.md").write_text(skill(f"clear{CSI_CLEAR}me", "other"))
    commit_all(repo2)
    assert run_boost(["tap", str(repo2), "--name", "evil2"], hostile_home).returncode == 0
    amb = run_boost(["show", f"clear{CSI_CLEAR}me"], hostile_home)
    assert amb.returncode == 3
    assert_terminal_safe(amb.stderr)
    assert "\n  evil:clear%1B%5B2J%1B%5BHme\n" in amb.stderr  # one candidate a line, its id


def test_reranker_reasons_are_escaped(example_repo: Path, tmp_path: Path) -> None:
    """Item 2: a reason from the LLM reranker reaches `why`; search escapes it."""
    from tests.anthropic_stub import AnthropicStub, StubReply

    home = tmp_path / "home"
    assert run_boost(["tap", str(example_repo), "--name", "ex"], home).returncode == 0
    evil = f"great match{CSI_CLEAR}{OSC52}\n 2. fake:result  [skill]  99.000"
    with AnthropicStub() as stub:
        stub.responder = lambda request: StubReply(
            text=json.dumps({"picks": [{"id": "ex:jest-runner", "why": evil}]})
        )
        env = {"ANTHROPIC_API_KEY": "sk-test-key-123456", "ANTHROPIC_BASE_URL": stub.base_url}
        r = run_boost(["search", "jest", "tests"], home, env=env)
    assert r.returncode == 0, r.stderr
    assert_terminal_safe(r.stdout)
    assert "great match\\x1b[2J\\x1b[H\\x1b]52;c;cm0gLXJmIH4=\\x07 2. fake:result" in r.stdout
    assert not any(ln.startswith(" 2. fake:result") for ln in r.stdout.splitlines())


# --------------------------------------------------------------------------- item 1


def _bad_name_repo(root: Path) -> Path:
    repo = make_repo(root, {"skills/good/SKILL.md": skill("good", "a good skill")})
    (repo / "commands").mkdir()
    (repo / os.fsdecode(b"commands/\xff.md")).write_bytes(b"---\ndescription: latin\n---\nx\n")
    bad_dir = repo / os.fsdecode(b"skills/\xfe")
    bad_dir.mkdir()
    (bad_dir / "SKILL.md").write_text(skill("in-bad-folder", "hidden"))
    commit_all(repo)
    return repo


def test_tap_skips_file_names_that_are_not_utf8(tmp_path: Path) -> None:
    """Item 1: such a registry can be tapped; the names are skipped with a warning."""
    home = tmp_path / "home"
    repo = _bad_name_repo(tmp_path / "bad")
    r = run_boost(["tap", str(repo), "--name", "bad"], home)
    assert r.returncode == 0, r.stderr
    assert "Tapped bad at" in r.stdout and "1 skill, 0 rules, 0 workflows" in r.stdout
    warnings = run_boost(["taps", "--warnings"], home)
    assert "commands/\\xff.md: skipped, the name is not valid UTF-8" in warnings.stdout
    assert "skills/\\xfe: skipped, the name is not valid UTF-8" in warnings.stdout
    assert run_boost(["reindex"], home).returncode == 0
    found = run_boost(["search", "good", "skill", "--no-rerank"], home)
    assert found.returncode == 0 and "bad:good" in found.stdout


def test_update_to_a_commit_with_bad_names_goes_on(tmp_path: Path) -> None:
    """Item 1: `update` to such a commit works and later taps are still updated."""
    home = tmp_path / "home"
    first = make_repo(tmp_path / "first", {"skills/a/SKILL.md": skill("a", "first")})
    second = make_repo(tmp_path / "second", {"skills/b/SKILL.md": skill("b", "second")})
    assert run_boost(["tap", str(first), "--name", "a-first"], home).returncode == 0
    assert run_boost(["tap", str(second), "--name", "b-second"], home).returncode == 0
    (first / os.fsdecode(b"commands")).mkdir()
    (first / os.fsdecode(b"commands/\xff.md")).write_text("x\n")
    new_first = commit_all(first)
    (second / "skills" / "c").mkdir()
    (second / "skills" / "c" / "SKILL.md").write_text(skill("c", "third"))
    new_second = commit_all(second)
    r = run_boost(["update"], home)
    assert r.returncode == 0, r.stderr
    cfg = json.loads((home / "config.json").read_text())
    assert cfg["taps"]["a-first"]["commit"] == new_first
    assert cfg["taps"]["b-second"]["commit"] == new_second


# --------------------------------------------------------------------------- item 14


def test_a_symlink_into_dot_git_is_never_an_entry(tmp_path: Path) -> None:
    """Item 14: nothing under .git is an entry or a readable file."""
    home = tmp_path / "home"
    repo = make_repo(tmp_path / "linky", {"skills/ok/SKILL.md": skill("ok", "fine")})
    (repo / "skills" / "evil").mkdir()
    os.symlink("../../.git/config", repo / "skills" / "evil" / "SKILL.md")
    os.symlink(".git/HEAD", repo / "head.mdc")
    commit_all(repo)
    r = run_boost(["tap", str(repo), "--name", "linky"], home)
    assert r.returncode == 0, r.stderr
    assert "1 skill, 0 rules" in r.stdout
    shown = run_boost(["show", "linky:evil"], home)
    assert shown.returncode == 3 and "[core]" not in shown.stdout
    assert run_boost(["show", "linky:head"], home).returncode == 3
    assert run_boost(["reindex"], home).returncode == 0
    hits = run_boost(["search", "repositoryformatversion", "refs", "--json", "--no-rerank"], home)
    assert all(h["id"] == "linky:ok" for h in json.loads(hits.stdout))


# --------------------------------------------------------------------------- item 15


def test_an_entry_named_with_colons_is_shown_by_its_search_id(tmp_path: Path) -> None:
    """Item 15: `show` takes the id `search` prints, whatever the name holds."""
    home = tmp_path / "home"
    repo = make_repo(
        tmp_path / "colons",
        {
            "commands/ns.md": "---\nname: git:commit\ndescription: commit with care\n---\nbody\n",
            "commands/tricky.md": "---\nname: 'colons:a:b'\ndescription: more colons\n---\nx\n",
        },
    )
    assert run_boost(["tap", str(repo), "--name", "colons"], home).returncode == 0
    hits = run_boost(["search", "commit", "care", "colons", "--json", "--no-rerank"], home)
    ids = [h["id"] for h in json.loads(hits.stdout)]
    assert "colons:git:commit" in ids and "colons:colons:a:b" in ids
    for hit_id in ids:
        shown = run_boost(["show", hit_id], home)
        assert shown.returncode == 0, shown.stderr
    assert "commit with care" in run_boost(["show", "colons:git:commit"], home).stdout
    assert "more colons" in run_boost(["show", "colons:a:b"], home).stdout  # a bare name


# --------------------------------------------------------------------------- item 9


def _tapped(tmp_path: Path, example_repo: Path) -> Path:
    home = tmp_path / "home"
    assert run_boost(["tap", str(example_repo), "--name", "ex"], home).returncode == 0
    return home


@pytest.mark.parametrize(
    "config, problem",
    [
        ([], "expected a JSON object, found a list"),
        ({"taps": {"ex": "a string"}}, "tap 'ex': expected an object, found a string"),
        ({"taps": {"ex": {"counts": "many"}}}, "tap 'ex': 'counts' does not map kinds"),
        ({"taps": {"ex": {"counts": {"skill": "3"}}}}, "tap 'ex': 'counts' does not map kinds"),
        ({"taps": {"ex": {"warnings": "lots"}}}, "tap 'ex': 'warnings' is not a number"),
        ({"taps": {"ex": {"commit": 42}}}, "tap 'ex': 'commit' is not a string"),
        ({"taps": {}, "settings": []}, "'settings' is not an object"),
        ({"version": "one", "taps": {}}, "'version' is not a number"),
    ],
)
def test_a_config_of_the_wrong_shape_is_one_line_with_the_fix(
    tmp_path: Path, config: Any, problem: str
) -> None:
    """Item 9."""
    home = tmp_path / "home"
    home.mkdir()
    path = home / "config.json"
    path.write_text(json.dumps(config))
    doctor = run_boost(["doctor"], home)  # reports it rather than failing
    assert doctor.returncode == 1
    assert f"config: unreadable — {path} has an unexpected shape: {problem}" in doctor.stdout
    for args in (["taps"], ["search", "x", "--no-rerank"], ["show", "x"]):
        r = run_boost(args, home)
        assert r.returncode == 7, (args, r.stderr)
        assert r.stderr.startswith(f"boost: error: {path} has an unexpected shape: {problem}")
        fix = (  # a tap's record is repaired by untapping it (issue 32, item 10)
            f"remove that tap with 'boost untap -- ex' (then tap or import it again), or fix {path}"
            if problem.startswith("tap 'ex'")
            else f"fix or delete {path}; then re-add taps with 'boost tap'"
        )
        assert r.stderr.endswith(f" — {fix}\n")
        assert r.stderr.count("\n") == 1, r.stderr


@pytest.mark.parametrize(
    "cache",
    [
        [],
        "text",
        {"version": 2, "commit": "COMMIT", "entries": "x"},
        {"version": 2, "commit": "COMMIT", "entries": [1, 2]},
        {"version": 2, "commit": "COMMIT", "entries": [{"name": "n"}]},
        {"version": 2, "commit": "COMMIT", "entries": [], "warnings": 5, "skipped": []},
        {
            "version": 2,
            "commit": "COMMIT",
            "entries": [
                {"name": "n", "kind": "bogus", "tap": "ex", "path": "skills/jest-runner/SKILL.md"}
            ],
        },
    ],
)
def test_a_catalog_cache_of_the_wrong_shape_is_rebuilt(
    tmp_path: Path, example_repo: Path, cache: Any
) -> None:
    """Item 9: the cache is boost's own; a bad one is scanned again, not a crash."""
    home = _tapped(tmp_path, example_repo)
    commit = json.loads((home / "config.json").read_text())["taps"]["ex"]["commit"]
    text = json.dumps(cache).replace("COMMIT", commit)
    (home / "cache" / "catalog" / "ex.json").write_text(text)
    for args in (["show", "ex:jest-runner"], ["taps", "--warnings"], ["reindex"]):
        r = run_boost(args, home)
        assert r.returncode == 0, (args, r.stderr)
    assert "name: jest-runner" in run_boost(["show", "ex:jest-runner"], home).stdout


# --------------------------------------------------------------------------- item 10


@pytest.mark.parametrize(
    "path",
    [
        "../../../../../../../../etc/passwd",
        "/etc/passwd",
        "skills/../../../../../../../etc/passwd",
        ".git/config",
        "skills/link/SKILL.md",  # a symlink in the clone the scan refused
    ],
)
def test_a_tampered_catalog_cache_never_leaves_the_tap(
    tmp_path: Path, example_repo: Path, path: str
) -> None:
    """Item 10: every path from the cache is checked under the tap like the scan does."""
    home = _tapped(tmp_path, example_repo)
    link = home / "repos" / "ex" / "skills" / "link"
    link.mkdir()
    os.symlink("/etc/passwd", link / "SKILL.md")
    cache_file = home / "cache" / "catalog" / "ex.json"
    cache = json.loads(cache_file.read_text())
    for e in cache["entries"]:
        if e["name"] == "jest-runner":
            e["path"] = path
            e["rel_dir"] = path.rpartition("/")[0]
    cache_file.write_text(json.dumps(cache))
    for args in (["show", "ex:jest-runner"], ["show", f"ex:{path}"], ["show", "ex:link"]):
        r = run_boost(args, home)
        assert "root:" not in r.stdout and "[core]" not in r.stdout, args
    assert "name: jest-runner" in run_boost(["show", "ex:jest-runner"], home).stdout
    assert run_boost(["reindex"], home).returncode == 0
    hits = run_boost(["search", "root", "bin", "bash", "nologin", "--json", "--no-rerank"], home)
    assert "/etc/passwd" not in hits.stdout and "nologin" not in hits.stdout


# --------------------------------------------------------------------------- item 17


@pytest.mark.parametrize("bad", ["..", ".", "a/b", "../../x", ".clone-x", "-rf", ""])
def test_a_hand_written_bad_tap_name_is_ignored_and_untappable(
    tmp_path: Path, example_repo: Path, bad: str, capsys: pytest.CaptureFixture
) -> None:
    """Item 17: a record under a name boost refuses breaks nothing and `untap` removes it."""
    home = _tapped(tmp_path, example_repo)
    path = home / "config.json"
    cfg = json.loads(path.read_text())
    cfg["taps"][bad] = dict(cfg["taps"]["ex"])
    path.write_text(json.dumps(cfg))
    for args in (["taps"], ["search", "jest", "--no-rerank"], ["show", "ex:jest-runner"]):
        r = run_boost(args, home)
        assert r.returncode == 0, (args, r.stderr)
    doctor = run_boost(["doctor"], home)
    assert f"fix: config.json has a tap record under an invalid name {bad!r}" in doctor.stdout
    assert run_boost(["reindex"], home).returncode == 0
    r = run_boost(["untap", "--", bad], home)
    assert r.returncode == 0, r.stderr
    assert bad not in json.loads(path.read_text())["taps"]
    assert (home / "repos" / "ex" / ".git").is_dir()  # nothing else touched
    assert example_repo.is_dir() and (example_repo / ".git").is_dir()


def test_llm_keywords_are_escaped_in_explain(example_repo: Path, tmp_path: Path) -> None:
    """Item 2: keywords from the LLM expander are model output; --explain shows them."""
    from tests.anthropic_stub import AnthropicStub, StubReply

    home = tmp_path / "home"
    assert run_boost(["tap", str(example_repo), "--name", "ex"], home).returncode == 0

    def answer(request: Any) -> StubReply:
        if "keywords" in json.dumps(request.body.get("system", "")):
            return StubReply(text=json.dumps({"keywords": [f"jest{OSC52}", f"vitest{CSI_CLEAR}"]}))
        return StubReply(text=json.dumps({"picks": [{"id": "ex:jest-runner", "why": "ok"}]}))

    with AnthropicStub(responder=answer) as stub:
        env = {"ANTHROPIC_API_KEY": "sk-test-key-123456", "ANTHROPIC_BASE_URL": stub.base_url}
        r = run_boost(["search", "test my react app", "--explain"], home, env=env)
    assert r.returncode == 0, r.stderr
    assert_terminal_safe(r.stdout + r.stderr)
    assert "jest\\x1b]52;c;cm0gLXJmIH4=\\x07" in r.stdout


def test_git_runs_no_hooks_fsmonitor_or_submodules(tmp_path: Path) -> None:
    """What held in the audit and must keep holding now that tap/update/repair run more git
    (status, checkout, clean): with a user config that sets hooks and an fsmonitor, and a
    registry with a submodule, tap, update, reindex and show run none of them."""
    marks = tmp_path / "marks"
    marks.mkdir()
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for name in ("post-checkout", "post-merge", "reference-transaction", "post-index-change"):
        hook = hooks / name
        hook.write_text(f"#!/bin/sh\ntouch '{marks}/{name}'\n")
        hook.chmod(0o755)
    monitor = tmp_path / "fsmonitor.sh"
    monitor.write_text(f"#!/bin/sh\ntouch '{marks}/fsmonitor'\n")
    monitor.chmod(0o755)
    user_config = tmp_path / "gitconfig"
    user_config.write_text(f"[core]\n\thooksPath = {hooks}\n\tfsmonitor = {monitor}\n")
    sub = make_repo(tmp_path / "sub", {"skills/s/SKILL.md": skill("from-submodule", "x")})
    repo = make_repo(tmp_path / "reg", {"skills/a/SKILL.md": skill("a", "first")})
    (repo / ".gitmodules").write_text(f'[submodule "sub"]\n\tpath = sub\n\turl = {sub}\n')
    commit_all(repo)
    home = tmp_path / "home"
    env = {"GIT_CONFIG_GLOBAL": str(user_config)}
    assert run_boost(["tap", str(repo), "--name", "reg"], home, env=env).returncode == 0
    (repo / "skills" / "b").mkdir()
    (repo / "skills" / "b" / "SKILL.md").write_text(skill("b", "second"))
    commit_all(repo)
    for args in (["update"], ["reindex"], ["show", "reg:b"], ["doctor"], ["update"]):
        r = run_boost(args, home, env=env)
        assert r.returncode == 0, (args, r.stderr)
    assert sorted(p.name for p in marks.iterdir()) == []
    assert not (home / "repos" / "reg" / "sub" / "skills").exists()


def test_a_root_skill_never_hands_out_the_clones_git_files(tmp_path: Path) -> None:
    """Item 14 for the skill-folder reader (merged from main): a skill at the tap's root
    has the whole clone as its folder; a symlink there into .git is neither listed nor read."""
    from tests.test_mcp_server import McpProcess

    repo = make_repo(tmp_path / "rooty", {"SKILL.md": skill("rooty", "a skill at the root")})
    os.symlink(".git/config", repo / "notes.md")
    (repo / "ref").mkdir()
    os.symlink("../.git/config", repo / "ref" / "cfg.md")
    (repo / "ok.md").write_text("fine\n")
    commit_all(repo)
    home = tmp_path / "home"
    assert run_boost(["tap", str(repo), "--name", "rooty"], home).returncode == 0
    server = McpProcess(home)
    try:
        server.initialize()
        listing = server.call_result("boost_get_skill", {"name": "rooty:rooty"})
        text = listing["content"][0]["text"]
        assert "- ok.md" in text and "notes.md" not in text and "cfg.md" not in text
        for rel in ("notes.md", "ref/cfg.md", ".git/config"):
            got = server.call_result("boost_get_skill", {"name": "rooty:rooty", "file": rel})
            assert got["isError"] is True, rel
            assert "[core]" not in got["content"][0]["text"]
        assert server.close() == 0
    finally:
        server.kill()
