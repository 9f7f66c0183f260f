"""The team page's HTML: pure functions from the records the services produce to text.

Registry and model text is hostile by assumption. Every value that reaches the page goes
through `esc` (one line: `printable`, then HTML escaping with quotes, so the same string
is safe as element text and inside a double-quoted attribute) or `esc_block` (a file's
text, newlines kept); every link boost builds is a fixed path plus a query made by
`urllib.parse.urlencode`, and a registry's own link is shown only when its scheme is
``http``/``https``. There are no inline scripts, styles or event handlers: the page's
script and stylesheet are `web_assets`, served from ``/static/`` under a CSP that allows
only the page's own origin.
"""

from __future__ import annotations

import html
import shlex
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence
from urllib.parse import urlencode, urlsplit

from boost_cli.core.text import printable

KIND_CHOICES = ("skill", "rule", "workflow")


def esc(value: object) -> str:
    """One line of text for HTML text or a double-quoted attribute."""
    return html.escape(printable("" if value is None else value), quote=True)


def esc_block(value: object) -> str:
    """A file's text for ``<pre>``: newlines kept, everything else as `esc`."""
    return html.escape(printable(value, keep_newlines=True), quote=True)


def href(path: str, **params: Optional[str]) -> str:
    """A link to one of boost's own pages, escaped for an attribute."""
    query = urlencode([(k, v) for k, v in params.items() if v])
    return esc(f"{path}?{query}" if query else path)


def safe_url(url: object) -> Optional[str]:
    """``url`` when it is an absolute http(s) link (a registry's browse link), else None."""
    text = str(url or "")
    try:
        parts = urlsplit(text)
    except ValueError:
        return None
    if parts.scheme.lower() in ("http", "https") and parts.netloc and text.isprintable():
        return text
    return None


def layout(title: str, main: str, *, signout: Optional[str] = None, nav: str = "") -> str:
    """The whole page. ``signout``: the sign-out form's CSRF value (signed in), or None."""
    out = ""
    if signout is not None:
        out = (
            '<form method="post" action="/signout" class="signout">'
            f'<input type="hidden" name="csrf" value="{esc(signout)}">'
            '<button type="submit">Sign out</button></form>'
        )
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)} · boost</title>"
        '<link rel="stylesheet" href="/static/boost.css">'
        '<script src="/static/boost.js" defer></script></head>\n<body>'
        '<a class="skip" href="#main">Skip to content</a>'
        '<header><nav aria-label="Site"><a class="brand" href="/">boost</a>'
        '<a href="/">Search</a><a href="/taps">Taps</a>'
        f"{nav}</nav>{out}</header>\n"
        f'<main id="main">\n{main}\n</main>\n'
        "<footer>Text from registries is shown as data: boost escapes it and runs none of it."
        " JSON for scripts: add <code>format=json</code> to any page's query.</footer>"
        "</body></html>\n"
    )


def _options(choices: Iterable[str], chosen: str, any_label: str) -> str:
    opts = [f'<option value="">{esc(any_label)}</option>']
    for c in choices:
        sel = " selected" if c == chosen else ""
        opts.append(f'<option value="{esc(c)}"{sel}>{esc(c)}</option>')
    return "".join(opts)


def search_form(query: str, kind: str, tap: str, taps: Sequence[str]) -> str:
    return (
        '<form role="search" class="search" id="search-form" action="/" method="get">'
        '<div class="field grow"><label for="q">What should the agent do?</label>'
        f'<input id="q" name="q" type="search" value="{esc(query)}" maxlength="2000" '
        'autocomplete="off" placeholder="e.g. fill in a PDF form" '
        'aria-describedby="q-help"></div>'
        f'<div class="field"><label for="kind">Kind</label><select id="kind" name="kind">'
        f"{_options(KIND_CHOICES, kind, 'any kind')}</select></div>"
        f'<div class="field"><label for="tap">Tap</label><select id="tap" name="tap">'
        f"{_options(taps, tap, 'every tap')}</select></div>"
        '<div class="field"><button type="submit">Search</button></div></form>'
        '<p id="q-help" class="note">Press <kbd>/</kbd> to search, arrows to move through '
        "the results, Enter to open one.</p>"
    )


def _flag(marker: str) -> str:
    if not marker:
        return ""
    worst = marker[3:].split(":", 1)[0] if marker.startswith("[! ") else "medium"
    return f' <span class="flag sev-{esc(worst)}">{esc(marker)}</span>'


def hit_item(rank: int, r: Mapping[str, Any]) -> str:
    """One search result (an MCP record plus its ``marker``)."""
    why = r.get("why") or r.get("description") or ""
    who = (
        "reason written by a model (unverified)"
        if r.get("why_source") == "llm"
        else "reason from the skill's own text"
    )
    similar = list(r.get("similar") or [])
    same = [x for x in r.get("also_in") or [] if x not in similar]
    also = []
    if same:
        also.append("Same file also in: " + ", ".join(same))
    if similar:
        also.append("Similar copies: " + ", ".join(similar))
    also_html = f'<p class="also wrap">{esc(" · ".join(also))}</p>' if also else ""
    return (
        f'<li class="hit"><a class="hit-link wrap" href="{href("/skill", id=r["id"])}">'
        f'{esc(r["id"])}</a> <span class="kind">{esc(r["kind"])}</span>'
        f"{_flag(str(r.get('marker') or ''))}"
        f'<p class="why wrap">{esc(why)}</p>'
        f'<p class="meta">#{rank} · match {float(r.get("score") or 0):.3f} · {esc(who)} · '
        f"tap {esc(r['tap'])}</p>{also_html}</li>"
    )


def search_page(data: Mapping[str, Any], taps: Sequence[str]) -> str:
    """``data``: the JSON view of the search page (query, kind, tap, engine, notes, results)."""
    query, kind, tap = data.get("query") or "", data.get("kind") or "", data.get("tap") or ""
    results = data.get("results") or []
    parts = ["<h1>Find a skill</h1>", search_form(query, kind, tap, taps)]
    heading = f"{len(results)} result{'s' if len(results) != 1 else ''}" if query else "Results"
    parts.append(f'<section aria-labelledby="results-h"><h2 id="results-h">{esc(heading)}</h2>')
    for note in data.get("notes") or []:
        parts.append(f'<p class="note">{esc(note)}</p>')
    if query and not results:
        parts.append(f"<p>No matches for “{esc(query)}”.</p>")
    if not query:
        parts.append("<p>Describe a task in plain words; boost ranks the team's skills for it.</p>")
    items = "".join(hit_item(i, r) for i, r in enumerate(results, start=1))
    parts.append(f'<ol class="results" id="results">{items}</ol></section>')
    return "\n".join(parts)


def _copy_line(text: str) -> str:
    return (
        f'<li><code class="wrap">{esc(text)}</code> '
        f'<button type="button" class="copy" data-copy="{esc(text)}" hidden>Copy</button>'
        '<span class="copied" aria-live="polite"></span></li>'
    )


def install_lines(item_id: str, kind: str, layouts: Mapping[str, Mapping[str, str]]) -> List[str]:
    """``boost install ID --agent A`` for each agent whose layout takes ``kind``; the id is
    shell-quoted, so a pasted line cannot run anything else."""
    return [
        f"boost install {shlex.quote(item_id)} --agent {agent}"
        for agent, kinds in layouts.items()
        if kind in kinds
    ]


def findings_block(findings: Sequence[Mapping[str, Any]]) -> str:
    if not findings:
        return (
            '<section class="ok" aria-labelledby="trust-h"><h2 id="trust-h">Trust check</h2>'
            "<p>boost's trust rules found nothing in this file.</p></section>"
        )
    rows = "".join(
        f"<tr><td>{esc(f['severity'])}</td><td>{esc(f['kind'])}</td>"
        f'<td class="wrap">{esc(f["file"])}{":" + str(int(f["line"])) if f.get("line") else ""}</td>'
        f'<td class="wrap">{esc(f["detail"])}'
        f"{'<br><code>' + esc(f['excerpt']) + '</code>' if f.get('excerpt') else ''}</td></tr>"
        for f in findings
    )
    return (
        '<section class="findings" aria-labelledby="trust-h">'
        f'<h2 id="trust-h">Trust check: {len(findings)} finding'
        f"{'s' if len(findings) != 1 else ''}</h2>"
        "<p>Read these before an agent follows this text.</p>"
        '<table><caption class="note">What boost found, worst first</caption><thead><tr>'
        '<th scope="col">Severity</th><th scope="col">Kind</th><th scope="col">Where</th>'
        f'<th scope="col">What</th></tr></thead><tbody>{rows}</tbody></table></section>'
    )


def skill_page(data: Mapping[str, Any]) -> str:
    """``data``: the JSON view of the skill page."""
    item_id, kind = data["id"], data["kind"]
    parts = [
        f'<h1 class="wrap">{esc(data["name"])} <span class="kind">{esc(kind)}</span></h1>',
        f'<p class="wrap">{esc(data.get("description") or "")}</p>',
        findings_block(data.get("findings") or []),
    ]
    lines = data.get("install") or []
    if lines:
        parts.append(
            '<section aria-labelledby="install-h"><h2 id="install-h">Install</h2>'
            '<ul class="install">' + "".join(_copy_line(x) for x in lines) + "</ul></section>"
        )
    facts = [f'<dt>Id</dt><dd class="wrap"><code>{esc(item_id)}</code></dd>']
    facts.append(f"<dt>Tap</dt><dd>{esc(data['tap'])}</dd>")
    facts.append(f'<dt>File</dt><dd class="wrap"><code>{esc(data["path"])}</code></dd>')
    if data.get("uri"):
        facts.append(
            f'<dt>MCP skill URI</dt><dd class="wrap"><ul class="install">'
            f"{_copy_line(str(data['uri']))}</ul></dd>"
        )
    elif data.get("not_served"):
        facts.append(f"<dt>MCP skill URI</dt><dd>not served: {esc(data['not_served'])}</dd>")
    link = safe_url(data.get("url"))
    if link:
        facts.append(
            f'<dt>Source</dt><dd class="wrap"><a href="{esc(link)}" rel="noreferrer noopener">'
            f"{esc(link)}</a></dd>"
        )
    parts.append(
        f'<section aria-labelledby="about-h"><h2 id="about-h">About</h2><dl>{"".join(facts)}</dl></section>'
    )
    files = data.get("files") or []
    if len(files) > 1:
        shown = data.get("file") or ""
        items = []
        for f in files:
            current = ' aria-current="page"' if f == shown else ""
            items.append(
                f'<li><a class="wrap" href="{href("/skill", id=item_id, file=f)}"{current}>'
                f"{esc(f)}</a></li>"
            )
        more = data.get("files_total", len(files)) - len(files)
        extra = f'<p class="note">… and {more} more</p>' if more > 0 else ""
        parts.append(
            '<section aria-labelledby="files-h"><h2 id="files-h">Files in this skill</h2>'
            f"<ul>{''.join(items)}</ul>{extra}</section>"
        )
    label = data.get("file") or data["path"]
    parts.append(
        f'<section aria-labelledby="text-h"><h2 id="text-h" class="wrap">Text of {esc(label)}</h2>'
        f'<pre tabindex="0" aria-labelledby="text-h"><code>{esc_block(data["text"])}</code></pre></section>'
    )
    return "\n".join(parts)


def taps_page(data: Mapping[str, Any]) -> str:
    rows = []
    for t in data.get("taps") or []:
        counts = t.get("counts") or {}
        warn = list(t.get("warnings") or [])
        if not t.get("clone", True):
            warn.append("its clone is missing")
        if t.get("index") not in ("indexed",):
            warn.append(f"search index: {t.get('index')}")
        link = safe_url(t.get("url"))
        source = (
            f'<a href="{esc(link)}" rel="noreferrer noopener">{esc(t.get("source"))}</a>'
            if link
            else esc(t.get("source"))
        )
        rows.append(
            f'<tr><th scope="row">{esc(t["name"])}</th><td class="wrap">{source}</td>'
            f"<td><code>{esc(str(t.get('commit') or '')[:10])}</code></td>"
            f"<td>{int(counts.get('skill', 0))}</td><td>{int(counts.get('rule', 0))}</td>"
            f"<td>{int(counts.get('workflow', 0))}</td><td>{esc(t.get('age') or '')}</td>"
            f'<td class="wrap">{esc("; ".join(str(w) for w in warn)) or "none"}</td></tr>'
        )
    body = (
        "".join(rows)
        or '<tr><td colspan="8">No taps yet: run <code>boost tap --defaults</code>.</td></tr>'
    )
    return (
        '<h1>Taps</h1><table><caption class="note">The registries this server searches'
        '</caption><thead><tr><th scope="col">Tap</th><th scope="col">Source</th>'
        '<th scope="col">Commit</th><th scope="col">Skills</th><th scope="col">Rules</th>'
        '<th scope="col">Workflows</th><th scope="col">Updated</th>'
        f'<th scope="col">Warnings</th></tr></thead><tbody>{body}</tbody></table>'
    )


def signin_page(csrf: str, problem: str = "") -> str:
    shown = f'<p class="error" role="alert">{esc(problem)}</p>' if problem else ""
    return (
        f"<h1>Sign in</h1>{shown}"
        "<p>This team server needs its token. boost keeps you signed in with a cookie for "
        "8 hours; the token is never put in a link or a page.</p>"
        '<form method="post" action="/signin">'
        f'<input type="hidden" name="csrf" value="{esc(csrf)}">'
        '<div class="field"><label for="token">Token</label> '
        '<input id="token" name="token" type="password" autocomplete="current-password" '
        'required></div><p><button type="submit">Sign in</button></p></form>'
    )


def error_page(message: str) -> str:
    return f'<h1>Not shown</h1><p class="error wrap" role="alert">{esc(message)}</p>'


def as_dict(rows: Iterable[Any]) -> List[Dict[str, Any]]:
    return [r.to_dict() if hasattr(r, "to_dict") else dict(r) for r in rows]
