"""The MCP Skills extension and the resources under it, as methods on a `core.mcp.Server`:
``skills/list``, ``skills/get``, ``resources/list``, ``resources/templates/list``,
``resources/read`` and ``resources/directory/read`` over a `skillmap.Holder`.

What is served: every Agent Skill (a ``SKILL.md`` entry) that `skillmap` accepts, and its
files. What is not: skills `skillmap` refuses (`skillmap.REASONS`: they stay searchable
and readable through ``boost_get_skill``), and rules and workflows. Those are single files
without a folder, frontmatter ``name`` or naming rules of their own: they are not Agent
Skills, so the extension has no place for them, and serving them as plain resources would
hand a host text it cannot verify or approve as a skill; they stay tools-only.

Errors follow the extension: a URI boost does not serve is -32602 (with the reason when it
names a refused skill), a broken cursor too.
"""

from __future__ import annotations

import base64
from typing import Any, Dict, List, Optional, Sequence, Tuple

from boost_cli.core import registry, skillmap, trust_scan
from boost_cli.core.errors import BoostError
from boost_cli.core.mcp import INVALID_PARAMS, Call, JsonRpcError, Server
from boost_cli.core.models import Entry
from boost_cli.core.protocol import DEFAULT_TTL_MS
from boost_cli.core.text import clip, one_line

EXTENSION = "io.modelcontextprotocol/skills"
SKILLS_PAGE = 50  # skill entries carry their manifests: pages stay a few hundred kB at most
RESOURCES_PAGE = 200
TEMPLATE = "skill://{tap}/{+path}"
#: Where a Skill entry carries boost's trust scan (`trust_scan`: what the skill asks an
#: agent to do): ``{"flags": [{kind, severity, count}], "findings": [{kind, severity,
#: file, line, detail, excerpt}]}``, so a host can show it before the user approves
#: loading the skill; absent when there is no finding.
TRUST_META = "dev.boost/trust"


def _trust_view() -> trust_scan.View:
    return registry.trust_view()


def _skill_entry(skill: skillmap.Served, view: trust_scan.View) -> Dict[str, Any]:
    d = skill.entry()
    name = str(skill.frontmatter.get("name", ""))
    entry = Entry(name, "skill", "", skill.tap, skill.folder, skill.path)
    findings = view.findings(entry)
    if findings:
        d["_meta"] = {
            TRUST_META: {
                "flags": view.flags(entry),
                "findings": [f.to_dict() for f in findings],
            }
        }
    return d


def capabilities() -> Dict[str, Any]:
    return {"resources": {"listChanged": False, "subscribe": False}}


def extensions() -> Dict[str, Any]:
    return {EXTENSION: {"directoryRead": True}}


def _cacheable(result: Dict[str, Any]) -> Dict[str, Any]:
    """The extension's results are cacheable in every revision (the methods are its own)."""
    return {"resultType": "complete", **result, "ttlMs": DEFAULT_TTL_MS, "cacheScope": "public"}


def _cursor(tag: str, offset: int) -> str:
    return base64.urlsafe_b64encode(f"{tag}:{offset}".encode()).decode().rstrip("=")


def _page(
    params: Dict[str, Any], tag: str, items: Sequence[Any], size: int
) -> Tuple[List[Any], Optional[str]]:
    """One page of ``items`` from ``params['cursor']`` (one of ours, else -32602) and the
    cursor of the next page (None on the last)."""
    cursor = params.get("cursor")
    start = 0
    if cursor is not None:
        try:
            text = base64.urlsafe_b64decode(str(cursor) + "=" * (-len(str(cursor)) % 4)).decode()
            got, _, offset = text.partition(":")
            start = int(offset)
            if got != tag or start < 0 or not isinstance(cursor, str):
                raise ValueError(cursor)
        except (ValueError, UnicodeDecodeError):
            raise JsonRpcError(
                INVALID_PARAMS, "invalid params: unknown cursor (pass back a nextCursor as is)"
            ) from None
    end = start + size
    return list(items[start:end]), (_cursor(tag, end) if end < len(items) else None)


def _uri(params: Dict[str, Any]) -> str:
    uri = params.get("uri")
    if not isinstance(uri, str) or not uri:
        raise JsonRpcError(INVALID_PARAMS, "invalid params: 'uri' must be a non-empty string")
    return uri


def _resource(f: skillmap.SkillFile, skill: Optional[skillmap.Served] = None) -> Dict[str, Any]:
    d: Dict[str, Any] = {"uri": f.uri, "name": f.name, "mimeType": f.mime, "size": f.size}
    if skill is not None and f.uri == skill.uri:
        d["name"] = str(skill.frontmatter.get("name", f.name))
        d["description"] = clip(skill.frontmatter.get("description", ""), 1024)
    return d


def _not_served(m: skillmap.SkillMap, uri: str) -> JsonRpcError:
    refused = m.refused_at(uri)
    shown = one_line(uri)[:300]
    if refused is not None:
        return JsonRpcError(
            INVALID_PARAMS,
            f"No skill is served at {shown}: {refused.message()}; read it with boost_get_skill "
            f"{refused.tap}:{refused.path}",
        )
    return JsonRpcError(INVALID_PARAMS, f"No skill is served at {shown}")


def install(server: Server, holder: skillmap.Holder) -> None:
    """Add the extension's methods and the resources to ``server``."""

    def skills_list(params: Dict[str, Any], call: Call) -> Dict[str, Any]:
        page, nxt = _page(params, "skills", holder.get().ordered, SKILLS_PAGE)
        view = _trust_view()
        result: Dict[str, Any] = {"skills": [_skill_entry(s, view) for s in page]}
        if nxt:
            result["nextCursor"] = nxt
        return _cacheable(result)

    def skills_get(params: Dict[str, Any], call: Call) -> Dict[str, Any]:
        uri = _uri(params)
        m = holder.get()
        skill = m.skills.get(uri)
        if skill is None:
            raise _not_served(m, uri)
        return _cacheable({"skill": _skill_entry(skill, _trust_view())})

    def resources_list(params: Dict[str, Any], call: Call) -> Dict[str, Any]:
        skills = holder.get().ordered
        page, nxt = _page(params, "resources", skills, RESOURCES_PAGE)
        result: Dict[str, Any] = {"resources": [_resource(s.skill_file, s) for s in page]}
        if nxt:
            result["nextCursor"] = nxt
        return result

    def templates_list(params: Dict[str, Any], call: Call) -> Dict[str, Any]:
        if params.get("cursor") not in (None, ""):
            raise JsonRpcError(INVALID_PARAMS, "invalid params: unknown cursor (there is one page)")
        template = {
            "uriTemplate": TEMPLATE,
            "name": "skill-file",
            "title": "A file of a skill boost serves",
            "description": "Agent Skills from the tapped registries: skill://<tap>/<folder>/SKILL.md "
            "and the files beside it. skills/list and skills/get give every URI with its "
            "sha256 digest and size; a URI outside those is not served.",
        }
        return {"resourceTemplates": [template]}

    def resources_read(params: Dict[str, Any], call: Call) -> Dict[str, Any]:
        uri = _uri(params)
        m = holder.get()
        if uri in m.dirs:
            raise JsonRpcError(
                INVALID_PARAMS,
                f"{one_line(uri)[:300]} is a directory: read it with resources/directory/read",
            )
        if uri not in m.files:
            raise (
                _not_served(m, uri)
                if uri.endswith("/SKILL.md")
                else JsonRpcError(
                    INVALID_PARAMS,
                    f"Resource not found: no skill file is served at {one_line(uri)[:300]}",
                )
            )
        try:
            ref, data = m.read(uri)
        except BoostError as exc:
            raise JsonRpcError(INVALID_PARAMS, one_line(str(exc))) from None
        content: Dict[str, Any] = {"uri": uri, "mimeType": ref.mime}
        text = _text(data)
        if text is None:
            content["blob"] = base64.b64encode(data).decode("ascii")
        else:
            content["text"] = text
        return {"contents": [content]}

    def directory_read(params: Dict[str, Any], call: Call) -> Dict[str, Any]:
        uri = _uri(params)
        m = holder.get()
        children = m.dirs.get(uri)
        if children is None:
            what = "is not a directory resource" if uri in m.files else "is not a served directory"
            raise JsonRpcError(INVALID_PARAMS, f"{one_line(uri)[:300]} {what}")
        rows = []
        for child, ref in sorted(children.items()):
            if ref is None:
                rows.append(
                    {
                        "uri": child,
                        "name": child.rpartition("/")[2],
                        "mimeType": skillmap.DIRECTORY_MIME,
                    }
                )
            else:
                rows.append(_resource(ref))
        page, nxt = _page(params, "dir", rows, RESOURCES_PAGE)
        result: Dict[str, Any] = {"resultType": "complete", "resources": page}
        if nxt:
            result["nextCursor"] = nxt
        return result

    server.add_method("skills/list", skills_list)
    server.add_method("skills/get", skills_get)
    server.add_method("resources/list", resources_list)
    server.add_method("resources/templates/list", templates_list)
    server.add_method("resources/read", resources_read)
    server.add_method("resources/directory/read", directory_read)


def _text(data: bytes) -> Optional[str]:
    """``data`` as text when it is UTF-8 without NUL bytes (a text file), else None: the
    bytes a host hashes must be the bytes it gets, so nothing is replaced or re-encoded."""
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
