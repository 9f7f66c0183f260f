"""The MCP Skills extension and protocol 2026-07-28, end to end: the real `boost mcp`
subprocess driven by the official MCP Python SDK 2.x client (a test-only dependency), as a
host would drive it: negotiate, list, search, get, read every file and verify it."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any, Awaitable, Callable, Dict, List, Tuple, TypeVar

import pytest

from tests.helpers import ROOT, commit_all, make_repo, run_boost, skill

mcp = pytest.importorskip("mcp.client.client")  # the 2.x Client (mode="auto" | "legacy")
yaml = pytest.importorskip("yaml")

from mcp import Client, StdioServerParameters, types  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from pydantic import BaseModel, ConfigDict  # noqa: E402

T = TypeVar("T")
SECRET = "TOP-SECRET-OUTSIDE-THE-SKILL"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))


class Raw(BaseModel):
    """Any result, as the server sent it (the extension's methods are not in the SDK)."""

    model_config = ConfigDict(extra="allow")


def _registry(root: Path) -> Path:
    files: Dict[str, str] = {
        "secret.md": f"{SECRET}\n",
        "skills/pdf-tools/SKILL.md": (
            "---\nname: pdf-tools\ndescription: Fill, split and merge PDF files.\n"
            "license: Apache-2.0\nallowed-tools: [Read, Bash]\n"
            "metadata:\n  version: '2.1'\n  tags: [pdf, forms]\n---\n# PDF tools\n\n"
            "Read references/FORMS.md, pick a template from templates/.\n"
        ),
        "skills/pdf-tools/references/FORMS.md": "# Forms\n\nFill fields — naïvely, café.\r\n",
        "skills/pdf-tools/scripts/extract.py": "print('extract')\n",
        "skills/pdf-tools/templates/regional/eu invoice.md": "# EU invoice\n",
        "skills/pdf-tools/templates/order.md": "# Order\n",
        "skills/Not Valid/SKILL.md": skill("Not Valid", "A name with a space and capitals."),
        "skills/folder-x/SKILL.md": skill("other-name", "Its folder is named differently."),
        "skills/many/SKILL.md": skill("many", "More files than the extension allows."),
        "skills/huge/SKILL.md": skill("huge", "Larger than the extension allows."),
        "commands/deploy.md": "---\ndescription: Deploy the app.\n---\nRun the deploy.\n",
    }
    for i in range(57):  # 58 served skills in all: more than one page of skills/list
        files[f"skills/s-{i:02d}/SKILL.md"] = skill(f"s-{i:02d}", f"Filler skill number {i}.")
    for i in range(512):
        files[f"skills/many/parts/p{i:03d}.md"] = f"part {i}\n"
    repo = make_repo(root, files)
    (repo / "skills/pdf-tools/assets").mkdir()
    (repo / "skills/pdf-tools/assets/logo.png").write_bytes(PNG)
    (repo / "skills/huge/blob.bin").write_bytes(b"\x01" * (16 * 1024 * 1024 + 1))
    os.symlink("../../secret.md", repo / "skills/pdf-tools/leak.md")
    os.symlink("../../.git/config", repo / "skills/pdf-tools/gitconfig.md")
    os.symlink("../../skills", repo / "skills/pdf-tools/all-skills")
    os.symlink("references/FORMS.md", repo / "skills/pdf-tools/forms-link.md")
    commit_all(repo)
    return repo


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("skills")
    home = base / "home"
    repo = _registry(base / "reg")
    r = run_boost(["tap", str(repo), "--name", "acme"], home)
    assert r.returncode == 0, r.stderr
    r = run_boost(["reindex"], home)
    assert r.returncode == 0, r.stderr
    return home


def _params(home: Path) -> StdioServerParameters:
    env = {**os.environ, "BOOST_HOME": str(home)}
    env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), "/usr/bin", "/bin"])
    return StdioServerParameters(
        command=sys.executable, args=["-m", "boost_cli", "mcp"], env=env, cwd=str(ROOT)
    )


def run(home: Path, body: Callable[[Client], Awaitable[T]], mode: str = "auto") -> T:
    async def main() -> T:
        async with Client(_params(home), mode=mode) as client:  # type: ignore[arg-type]
            return await body(client)

    return asyncio.run(main())


async def request(client: Client, method: str, params: Dict[str, Any]) -> Dict[str, Any]:
    req = types.Request[Dict[str, Any], str](method=method, params=params)
    got = await client.session.send_request(req, Raw)
    return got.model_dump(by_alias=True)


async def all_skills(client: Client) -> Tuple[List[Dict[str, Any]], int]:
    skills: List[Dict[str, Any]] = []
    cursor = None
    pages = 0
    while True:
        page = await request(client, "skills/list", {"cursor": cursor} if cursor else {})
        assert page["resultType"] == "complete"
        assert page["cacheScope"] == "public" and page["ttlMs"] > 0
        skills.extend(page["skills"])
        pages += 1
        cursor = page.get("nextCursor")
        if not cursor:
            return skills, pages


def content_bytes(contents: Any) -> bytes:
    assert len(contents) == 1
    item = contents[0]
    if getattr(item, "text", None) is not None:
        return item.text.encode("utf-8")
    return base64.b64decode(item.blob)


def frontmatter_of(data: bytes) -> Dict[str, Any]:
    """The frontmatter as a host reads it: a real YAML parser, not boost's."""
    text = data.decode("utf-8")
    assert text.startswith("---\n")
    fm, _, _ = text[4:].partition("\n---")
    loaded = yaml.safe_load(fm)
    assert isinstance(loaded, dict)
    return loaded


# --------------------------------------------------------------------------- negotiation


def test_auto_mode_lands_on_2026_07_28_with_the_extension(home: Path) -> None:
    async def body(client: Client) -> None:
        assert client.protocol_version == "2026-07-28"
        assert client.session.discover_result is not None
        caps = client.session.server_capabilities
        assert caps is not None and caps.resources is not None and caps.tools is not None
        assert caps.extensions == {"io.modelcontextprotocol/skills": {"directoryRead": True}}
        assert "load by URI" in (client.session.instructions or "")
        tools = await client.list_tools()
        assert "boost_search" in [t.name for t in tools.tools]

    run(home, body)


def test_legacy_mode_lands_on_2025_11_25_and_still_reads_skills(home: Path) -> None:
    async def body(client: Client) -> None:
        assert client.protocol_version == "2025-11-25"
        assert client.session.initialize_result is not None
        listed = await request(client, "skills/list", {})
        uri = listed["skills"][0]["uri"]
        got = await client.read_resource(uri)
        assert content_bytes(got.contents)

    run(home, body, mode="legacy")


# --------------------------------------------------------------------------- load and verify


def test_list_search_get_and_read_every_file_verified(home: Path) -> None:
    async def body(client: Client) -> Dict[str, Any]:
        skills, pages = await all_skills(client)
        by_uri = {s["uri"]: s for s in skills}
        assert len(by_uri) == len(skills) == 58 and pages == 2
        assert [s["uri"] for s in skills] == sorted(by_uri)
        pdf = by_uri["skill://acme/skills/pdf-tools/SKILL.md"]
        checked = 0
        for entry in skills:
            uris = [r["uri"] for r in entry["resources"]]
            assert entry["uri"] in uris and len(set(uris)) == len(uris)
            prefix = entry["uri"][: -len("SKILL.md")]
            assert all(u.startswith(prefix) for u in uris)
            assert entry["uri"].split("/")[-2] == entry["frontmatter"]["name"]
            got = await request(client, "skills/get", {"uri": entry["uri"]})
            assert got["skill"] == entry and got["resultType"] == "complete"
            for res in entry["resources"]:
                data = content_bytes((await client.read_resource(res["uri"])).contents)
                assert len(data) == res["size"], res["uri"]
                assert "sha256:" + hashlib.sha256(data).hexdigest() == res["digest"], res["uri"]
                checked += 1
                if res["uri"] == entry["uri"]:
                    assert frontmatter_of(data) == entry["frontmatter"]
        search = await client.call_tool(
            "boost_search", {"query": "fill and merge PDF files", "limit": 3}
        )
        return {"pdf": pdf, "search": search, "checked": checked}

    out = run(home, body)
    pdf = out["pdf"]
    assert out["checked"] == 57 + 7  # the fillers and the 7 files of pdf-tools
    files = {r["uri"].rpartition("pdf-tools/")[2] for r in pdf["resources"]}
    assert files == {
        "SKILL.md",
        "references/FORMS.md",
        "scripts/extract.py",
        "templates/order.md",
        "templates/regional/eu%20invoice.md",
        "assets/logo.png",
        "forms-link.md",  # a symlink to a file inside the folder counts
    }
    assert pdf["frontmatter"] == {
        "name": "pdf-tools",
        "description": "Fill, split and merge PDF files.",
        "license": "Apache-2.0",
        "allowed-tools": ["Read", "Bash"],
        "metadata": {"version": "2.1", "tags": ["pdf", "forms"]},
    }
    search = out["search"]
    first = search.structured_content["results"][0]
    assert first["id"] == "acme:pdf-tools" and first["uri"] == pdf["uri"]
    links = [c for c in search.content if c.type == "resource_link"]
    assert links and links[0].uri == pdf["uri"] and links[0].name == "pdf-tools"


def test_binary_files_are_blobs_and_text_is_byte_exact(home: Path) -> None:
    async def body(client: Client) -> Tuple[Any, Any]:
        png = await client.read_resource("skill://acme/skills/pdf-tools/assets/logo.png")
        forms = await client.read_resource("skill://acme/skills/pdf-tools/references/FORMS.md")
        return png.contents[0], forms.contents[0]

    png, forms = run(home, body)
    assert png.mime_type == "image/png" and base64.b64decode(png.blob) == PNG
    assert forms.mime_type == "text/markdown" and forms.text.endswith("café.\r\n")


def test_directory_read_lists_direct_children(home: Path) -> None:
    async def body(client: Client) -> Tuple[Dict[str, Any], Dict[str, Any], int]:
        root = await request(
            client, "resources/directory/read", {"uri": "skill://acme/skills/pdf-tools"}
        )
        sub = await request(
            client, "resources/directory/read", {"uri": "skill://acme/skills/pdf-tools/templates"}
        )
        with pytest.raises(MCPError) as exc:
            await request(
                client,
                "resources/directory/read",
                {"uri": "skill://acme/skills/pdf-tools/SKILL.md"},
            )
        return root, sub, exc.value.error.code

    root, sub, code = run(home, body)
    names = {r["name"]: r["mimeType"] for r in root["resources"]}
    assert names == {
        "SKILL.md": "text/markdown",
        "forms-link.md": "text/markdown",
        "references": "inode/directory",
        "scripts": "inode/directory",
        "templates": "inode/directory",
        "assets": "inode/directory",
    }
    assert {r["uri"] for r in sub["resources"]} == {
        "skill://acme/skills/pdf-tools/templates/order.md",
        "skill://acme/skills/pdf-tools/templates/regional",
    }
    assert code == -32602


def test_pagination_and_a_bad_cursor(home: Path) -> None:
    async def body(client: Client) -> Tuple[Dict[str, Any], int]:
        first = await request(client, "skills/list", {})
        with pytest.raises(MCPError) as exc:
            await request(client, "skills/list", {"cursor": "not-a-cursor"})
        return first, exc.value.error.code

    first, code = run(home, body)
    assert len(first["skills"]) == 50 and first["nextCursor"]
    assert code == -32602


# --------------------------------------------------------------------------- refusals


ESCAPES = [
    "skill://acme/skills/pdf-tools/../../secret.md",
    "skill://acme/skills/pdf-tools/%2e%2e/%2e%2e/secret.md",
    "skill://acme/skills/pdf-tools/%2E%2E%2F%2E%2E%2Fsecret.md",
    "skill://acme/secret.md",
    "/etc/passwd",
    "file:///etc/passwd",
    "skill:///etc/passwd",
    "skill://acme/.git/config",
    "skill://acme/skills/pdf-tools/.git/config",
    "skill://acme/skills/pdf-tools/leak.md",
    "skill://acme/skills/pdf-tools/gitconfig.md",
    "skill://acme/skills/pdf-tools/all-skills/s-01/SKILL.md",
    "skill://acme/skills/pdf-tools/./SKILL.md",
    "skill://acme/skills/pdf-tools//SKILL.md",
    "skill://ACME/skills/pdf-tools/SKILL.md",
    "skill://nope/SKILL.md",
]


def test_unknown_and_escaping_uris_are_refused_with_no_content(home: Path) -> None:
    async def body(client: Client) -> List[Tuple[str, str, int, str]]:
        out = []
        for uri in ESCAPES:
            for method in ("resources/read", "skills/get", "resources/directory/read"):
                with pytest.raises(MCPError) as exc:
                    await request(client, method, {"uri": uri})
                out.append((uri, method, exc.value.error.code, exc.value.error.message))
        return out

    for uri, method, code, message in run(home, body):
        assert code == -32602, (uri, method)
        assert SECRET not in message and "[core]" not in message, (uri, method)
    listed = json.dumps(run(home, lambda c: all_skills(c)))
    assert "leak.md" not in listed and "gitconfig" not in listed and "all-skills" not in listed


def test_skills_over_the_limits_or_misnamed_are_not_served_and_say_why(home: Path) -> None:
    async def body(client: Client) -> Tuple[List[str], List[str], str]:
        skills, _ = await all_skills(client)
        messages = []
        for folder in ("many", "huge", "folder-x"):
            with pytest.raises(MCPError) as exc:
                await request(
                    client, "skills/get", {"uri": f"skill://acme/skills/{folder}/SKILL.md"}
                )
            messages.append(exc.value.error.message)
        got = await client.call_tool("boost_get_skill", {"name": "acme:many"})
        return [s["uri"] for s in skills], messages, got.content[0].text

    uris, messages, text = run(home, body)
    assert not any(f"/{f}/" in u for u in uris for f in ("many", "huge", "folder-x", "Not"))
    assert "more than 512 files (513 files)" in messages[0]
    assert "more than 16 MiB" in messages[1]
    assert "not named after its frontmatter name" in messages[2]
    assert text.startswith("# acme:many [skill]")
    assert "Not served as an MCP skill: it has more than 512 files (513 files)." in text


def test_search_json_and_explain_carry_the_uri_or_the_reason(home: Path) -> None:
    r = run_boost(["search", "fill merge PDF", "--json", "--limit", "2"], home)
    hits = json.loads(r.stdout)
    assert hits[0]["uri"] == "skill://acme/skills/pdf-tools/SKILL.md"
    r = run_boost(["search", "more files than the extension allows", "--explain"], home)
    assert r.returncode == 0, r.stderr
    assert "MCP skill: not served (it has more than 512 files (513 files))" in r.stdout


# --------------------------------------------------------------------------- hostile


def test_a_hostile_registry_is_served_without_a_leak(tmp_path: Path) -> None:
    from tests.test_hostile_registry import _hostile_repo

    repo = _hostile_repo(tmp_path / "hostile")
    (repo / "skills/ok-skill").mkdir()
    (repo / "skills/ok-skill/SKILL.md").write_text(skill("ok-skill", "A fine one."))
    os.symlink("../../../.git/config", repo / "skills/ok-skill/cfg.md")
    os.symlink("/etc/passwd", repo / "skills/ok-skill/passwd.md")
    commit_all(repo)
    rooty = make_repo(tmp_path / "rooty", {"SKILL.md": skill("rooty", "At the root.")})
    os.symlink(".git/config", rooty / "notes.md")
    (rooty / "ok.md").write_text("fine\n")
    commit_all(rooty)
    home = tmp_path / "home"
    for src, name in ((repo, "evil"), (rooty, "rooty")):
        assert run_boost(["tap", str(src), "--name", name], home).returncode == 0

    async def body(client: Client) -> Tuple[List[Dict[str, Any]], List[bytes]]:
        skills, _ = await all_skills(client)
        datas = []
        for entry in skills:
            for res in entry["resources"]:
                data = content_bytes((await client.read_resource(res["uri"])).contents)
                assert "sha256:" + hashlib.sha256(data).hexdigest() == res["digest"]
                datas.append(data)
        return skills, datas

    skills, datas = run(home, body)
    assert sorted(s["uri"] for s in skills) == [
        "skill://evil/skills/ok-skill/SKILL.md",
        "skill://rooty/SKILL.md",
    ]
    uris = [r["uri"] for s in skills for r in s["resources"]]
    assert sorted(uris) == [
        "skill://evil/skills/ok-skill/SKILL.md",
        "skill://rooty/SKILL.md",
        "skill://rooty/ok.md",
    ]
    assert all(u.isascii() and u.isprintable() for u in uris)
    assert not any(b"[core]" in d or b"root:" in d for d in datas)


# --------------------------------------------------------------------------- the corpus

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


@pytest.mark.corpus
@pytest.mark.slow
@pytest.mark.skipif(not CORPUS.is_dir(), reason="needs ../shared/corpus")
def test_every_served_corpus_skill_has_the_frontmatter_a_yaml_parser_reads() -> None:
    """What a host does on load (parse the SKILL.md frontmatter with a YAML library and
    compare it with the entry field by field), over every skill of the corpus boost serves.
    YAML dates become their ISO text: JSON, the entry's format, has no date type."""
    from boost_cli.core import catalog, frontmatter, skillmap
    from boost_cli.core.models import TapSnapshot

    served = refused = 0
    for root in sorted(p for p in CORPUS.iterdir() if p.is_dir()):
        scan = catalog.scan_tap(root.name, root)
        skills = skillmap.build(TapSnapshot(root.name, "c", root, scan.entries))
        refused += len(skills.refused)
        for s in skills.served:
            raw = frontmatter.split((root / s.path).read_text(encoding="utf-8"))[0]
            loaded = json.loads(json.dumps(yaml.safe_load(raw), default=str))
            assert loaded == s.frontmatter, s.uri
            served += 1
    assert served > 4000 and refused > 1000
