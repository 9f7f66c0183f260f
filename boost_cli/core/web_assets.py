"""The team page's own stylesheet and script, served from ``/static/`` (CSP ``'self'``).

Constants only: the page works without the script (a plain GET form and links); the
script adds results as you type, keyboard navigation and copy buttons. It builds every
node with ``textContent`` and ``setAttribute`` on fixed attribute names, never
``innerHTML``, so registry text it receives as JSON stays text.
"""

from __future__ import annotations

CSS = """
:root{--fg:#1a1a1a;--bg:#fff;--muted:#4a4a4a;--line:#c8c8c8;--link:#0b4fa8;--hi:#8a1c00;
--med:#6b4a00;--low:#33475b;--code:#f4f4f4;--focus:#0b4fa8}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);
background:var(--bg)}
a{color:var(--link)}
a:focus,button:focus,input:focus,select:focus{outline:3px solid var(--focus);outline-offset:2px}
.skip{position:absolute;left:-999px;top:0;background:#fff;padding:.5em}
.skip:focus{left:.5em}
header{border-bottom:1px solid var(--line);padding:.5em 1em;display:flex;gap:1em;
align-items:center;flex-wrap:wrap}
header nav{display:flex;gap:1em;align-items:center;flex-wrap:wrap}
header .brand{font-weight:700;text-decoration:none;color:var(--fg)}
main{max-width:60em;margin:0 auto;padding:1em}
footer{max-width:60em;margin:0 auto;padding:1em;color:var(--muted);font-size:.875em}
form.search{display:flex;flex-wrap:wrap;gap:.5em 1em;align-items:flex-end}
form.search .field{display:flex;flex-direction:column}
form.search .grow{flex:1 1 18em}
input,select,button{font:inherit;padding:.35em .5em;border:1px solid #767676;border-radius:4px}
button{background:#f0f0f0;color:var(--fg);cursor:pointer}
ol.results{padding-left:1.5em}
ol.results li{margin:.75em 0;padding:.25em 0;border-bottom:1px solid var(--line)}
.kind,.tag{display:inline-block;font-size:.8em;border:1px solid var(--line);border-radius:3px;
padding:0 .35em;color:var(--muted)}
.flag{display:inline-block;font-size:.8em;font-weight:700;border-radius:3px;padding:0 .35em}
.sev-high,.sev-critical{color:var(--hi);border:1px solid var(--hi)}
.sev-medium{color:var(--med);border:1px solid var(--med)}
.sev-low,.sev-info{color:var(--low);border:1px solid var(--low)}
.meta,.also,.note{color:var(--muted);font-size:.9em;margin:.2em 0}
.why{margin:.2em 0}
pre{background:var(--code);padding:.75em;overflow:auto;white-space:pre-wrap;
overflow-wrap:anywhere;border:1px solid var(--line)}
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.9em}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;border-bottom:1px solid var(--line);padding:.3em .5em;vertical-align:top}
.install li{margin:.3em 0}
.findings{border:2px solid var(--hi);padding:.5em 1em;margin:1em 0}
.ok{border:1px solid var(--line);padding:.5em 1em;margin:1em 0}
.error{border:2px solid var(--hi);padding:.5em 1em}
.copied{color:var(--muted);font-size:.85em;margin-left:.5em}
.wrap{overflow-wrap:anywhere}
@media (max-width:40em){main{padding:.5em}form.search .grow{flex-basis:100%}}
"""

JS = r"""
(function () {
  "use strict";
  var form = document.getElementById("search-form");
  var box = document.getElementById("q");
  var list = document.getElementById("results");
  var heading = document.getElementById("results-h");

  function el(tag, cls, text) {
    var n = document.createElement(tag);
    if (cls) { n.setAttribute("class", cls); }
    if (text !== undefined && text !== null) { n.textContent = shown(text); }
    return n;
  }

  // As the server's `printable`: controls and invisible or bidirectional characters
  // become visible escapes, so a name cannot pass for another.
  var HIDDEN = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/g;
  function shown(value) {
    return String(value).replace(HIDDEN, function (c) {
      var h = c.charCodeAt(0).toString(16);
      return c.charCodeAt(0) < 256 ? "\\x" + ("0" + h).slice(-2) : "\\u" + ("000" + h).slice(-4);
    });
  }

  function skillHref(id) { return "/skill?id=" + encodeURIComponent(id); }

  function render(data) {
    if (!list || !heading) { return; }
    while (list.firstChild) { list.removeChild(list.firstChild); }
    var results = data.results || [];
    heading.textContent = data.query ? (results.length + " result" + (results.length === 1 ? "" : "s")) : "Results";
    results.forEach(function (r, i) {
      var li = el("li", "hit");
      var a = el("a", "hit-link", r.id);
      a.setAttribute("href", skillHref(r.id));
      li.appendChild(a);
      li.appendChild(document.createTextNode(" "));
      li.appendChild(el("span", "kind", r.kind));
      if (r.marker) {
        var worst = (r.marker.match(/^\[! (\w+)/) || ["", "medium"])[1];
        li.appendChild(document.createTextNode(" "));
        li.appendChild(el("span", "flag sev-" + worst, r.marker));
      }
      li.appendChild(el("p", "why", r.why || r.description));
      var who = r.why_source === "llm" ? "reason written by a model (unverified)" : "reason from the skill's own text";
      li.appendChild(el("p", "meta", "#" + (i + 1) + " · match " + Number(r.score).toFixed(3) + " · " + who + " · tap " + r.tap));
      var same = (r.also_in || []).filter(function (x) { return (r.similar || []).indexOf(x) < 0; });
      var parts = [];
      if (same.length) { parts.push("Same file also in: " + same.join(", ")); }
      if ((r.similar || []).length) { parts.push("Similar copies: " + r.similar.join(", ")); }
      if (parts.length) { li.appendChild(el("p", "also", parts.join(" · "))); }
      list.appendChild(li);
    });
  }

  var timer = null, seq = 0;
  function live() {
    if (!form || !box) { return; }
    var params = new URLSearchParams(new FormData(form));
    var shown = "/?" + params.toString();
    params.set("format", "json");
    var mine = ++seq;
    fetch("/?" + params.toString(), {credentials: "same-origin", headers: {"Accept": "application/json"}})
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) {
        if (data && mine === seq) { render(data); history.replaceState(null, "", shown); }
      })
      .catch(function () { /* the form still works without the script */ });
  }
  if (form && box) {
    box.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(live, 200); });
    ["kind", "tap"].forEach(function (id) {
      var s = document.getElementById(id);
      if (s) { s.addEventListener("change", live); }
    });
  }

  document.addEventListener("keydown", function (ev) {
    var t = ev.target, tag = t && t.tagName;
    var typing = tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA";
    if (ev.key === "/" && !typing && box) { ev.preventDefault(); box.focus(); box.select(); return; }
    if (ev.key !== "ArrowDown" && ev.key !== "ArrowUp") { return; }
    if (typing && t !== box) { return; }
    var links = Array.prototype.slice.call(document.querySelectorAll("a.hit-link"));
    if (!links.length) { return; }
    var at = links.indexOf(document.activeElement);
    var next = ev.key === "ArrowDown" ? at + 1 : at - 1;
    if (at < 0 && ev.key === "ArrowUp") { return; }
    ev.preventDefault();
    if (next < 0) { if (box) { box.focus(); } return; }
    links[Math.min(next, links.length - 1)].focus();
  });

  Array.prototype.forEach.call(document.querySelectorAll("button.copy"), function (b) {
    b.hidden = false;
    b.addEventListener("click", function () {
      var text = b.getAttribute("data-copy") || "";
      var done = function () {
        var s = b.parentNode.querySelector(".copied");
        if (s) { s.textContent = "copied"; }
      };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(done, function () {});
      }
    });
  });
})();
"""
