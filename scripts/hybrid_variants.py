"""The variants scripts/hybrid_eval.py scores: each maps a `Context` to {query id: hits}.

Texts per entry besides the stored entry vector: ``desc`` (name and description alone) and
``body`` (the body excerpt alone), embedded once into --work. ``prf b=B m=M`` is the
hybrid with pseudo-relevance feedback from the first fusion's top M files (the default
engine since issue 19 is ``prf b=0.5 m=1``: `fusion.FEEDBACK`); ``prf1 + bm25 widened``
asks BM25 again with terms from the dense half's nearest files (the default since issue 19);
``exact`` gives every BM25
candidate its true cosine instead of 0; ``F*flat`` weighs dense F times BM25's 10th score
over its best (more when BM25 is unsure)."""

from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence

from boost_cli.core import fusion
from boost_cli.core.models import Hit

K = 100
DEPTH = fusion.DEPTH


@dataclass
class Context:
    np: Any
    queries: Sequence[Dict[str, Any]]
    corpus: Any
    vectors: Any
    lex: Mapping[str, List[Hit]]
    groups: Callable[[Sequence[str]], Mapping[str, str]]
    bm25: Any = None
    memo: Dict[str, Any] = field(default_factory=dict)

    def qvec(self, text: str) -> Any:
        return self.vectors.get([text], "query")[0]

    def matrix(self, name: str) -> Any:
        """Item vectors of another text per entry (cached)."""
        if name not in self.memo:
            texts = [TEXTS[name](e, self.corpus, i) for i, e in enumerate(self.corpus.entries)]
            self.memo[name] = self.vectors.get(texts, "document")
        return self.memo[name]

    def grouped(self, hits: List[Hit]) -> List[Hit]:
        from dataclasses import replace

        hashes = [h.content_hash for h in hits if h.content_hash and h.group is None]
        known = self.groups(hashes) if hashes else {}
        return [
            replace(h, group=known[h.content_hash]) if h.content_hash in known else h for h in hits
        ]


def _desc(entry: Any, corpus: Any, i: int) -> str:
    from boost_cli.core.chunker import context_prefix

    return context_prefix(entry.name, entry.description, ())


def _body(entry: Any, corpus: Any, i: int) -> str:
    import os
    from pathlib import Path

    from boost_cli.core.chunker import clean_score_text
    from boost_cli.core.frontmatter import split
    from boost_cli.core.text import clip_words

    path = Path(os.environ["BOOST_HOME"]) / "repos" / entry.tap / entry.path
    try:
        raw = path.read_bytes()[:1_000_000].decode("utf-8", errors="replace")
    except OSError:
        return _desc(entry, corpus, i)
    _, body, _ = split(raw)
    excerpt = clip_words(clean_score_text(body[:2400]), 800)
    return excerpt or _desc(entry, corpus, i)


_TRIGGER = re.compile(
    r"\b(?:use (?:this (?:skill |agent |command |rule )?)?(?:when|whenever|if|for)"
    r"|triggers? (?:on|when)|when (?:the )?user)\b",
    re.IGNORECASE,
)


def _trigger(entry: Any, corpus: Any, i: int) -> str:
    """The description from its "Use when …" clause on (what a user would say), or ""."""
    found = _TRIGGER.search(entry.description or "")
    return (entry.description[found.start() :][:400]).strip() if found else ""


TEXTS: Dict[str, Callable[[Any, Any, int], str]] = {
    "desc": _desc,
    "body": _body,
    "trigger": _trigger,
}


def strip_stop(text: str) -> str:
    from boost_cli.core.tokenize import QUERY_STOPWORDS

    words = text.split()
    kept = [w for w in words if re.sub(r"\W", "", w.lower()) not in QUERY_STOPWORDS]
    return " ".join(kept) if kept else text


def fuse(
    ctx: Context,
    q: Dict[str, Any],
    scores: Any,
    *,
    wd: float = 0.4,
    depth: int = DEPTH,
    exact: bool = False,
    k: int = K,
    method: str = "scores",
) -> List[Hit]:
    """BM25 + dense (cosines ``scores`` per item) fused like `fusion.fuse`; with ``exact``
    every BM25 candidate gets its true cosine instead of 0 when dense did not list it."""
    kind = q.get("kind")
    depth = max(k, depth)
    lex = ctx.lex[q["id"]][:depth]
    sem = ctx.grouped(ctx.corpus.hits(scores, depth, kind))
    if not exact:
        return fusion.fuse(
            {"bm25": lex, "dense": sem},
            k,
            method,
            weights={"bm25": 1 - wd, "dense": wd},
            depth=depth,
        )
    per = {"bm25": lex, "dense": sem}
    keys = fusion.fusion_keys(per)
    lists = {e: fusion.distinct(h, keys)[:depth] for e, h in per.items()}
    first: Dict[str, Dict[str, float]] = {}
    for e, hits in lists.items():
        out: Dict[str, float] = {}
        for h in hits:
            out.setdefault(keys[h.entry.id], h.score)
        first[e] = out
    row_of = ctx.corpus.row_of
    for h in lists["bm25"]:
        key = keys[h.entry.id]
        if key not in first["dense"] and h.entry.id in row_of:
            first["dense"][key] = float(scores[row_of[h.entry.id]])
    fused = fusion.weighted_scores(
        first, {"bm25": 1 - wd, "dense": wd}, {"bm25": "max", "dense": "max"}
    )
    return fusion.merge_hits(fused[:k], lists, keys)


def each(ctx: Context, fn: Callable[[Dict[str, Any]], List[Hit]]) -> Dict[str, List[Hit]]:
    return {q["id"]: fn(q) for q in ctx.queries}


def cos(ctx: Context, text: str, which: str = "entry") -> Any:
    v = ctx.qvec(text)
    e = ctx.corpus.matrix @ v
    if which == "entry":
        return e
    if which == "trigger-max":
        return _trigger_cos(ctx, v, e)
    d = ctx.matrix("desc") @ v
    if which == "desc":
        return d
    if which == "max":
        return ctx.np.maximum(e, d)
    if which == "mean":
        return (e + d) / 2
    if which == "body-mean":
        return (e + ctx.matrix("body") @ v) / 2
    if which == "body-max":
        return ctx.np.maximum(e, ctx.matrix("body") @ v)
    if which == "three-mean":
        return (e + d + ctx.matrix("body") @ v) / 3
    raise ValueError(which)


def _trigger_cos(ctx: Context, v: Any, e: Any) -> Any:
    """max(entry cosine, "Use when" clause cosine) where an entry has the clause."""
    if "trigger-mask" not in ctx.memo:
        ctx.memo["trigger-mask"] = ctx.np.array(
            [bool(_trigger(x, ctx.corpus, i)) for i, x in enumerate(ctx.corpus.entries)]
        )
    t = ctx.matrix("trigger") @ v
    return ctx.np.where(ctx.memo["trigger-mask"], ctx.np.maximum(e, t), e)


def v_bm25(ctx: Context) -> Dict[str, List[Hit]]:
    return each(ctx, lambda q: ctx.lex[q["id"]][:K])


def v_dense(which: str, clean: Optional[Callable[[str], str]] = None) -> Callable[[Context], Any]:
    def run(ctx: Context) -> Dict[str, List[Hit]]:
        return each(
            ctx,
            lambda q: ctx.corpus.hits(
                cos(ctx, clean(q["query"]) if clean else q["query"], which), K, q.get("kind")
            ),
        )

    return run


def v_hybrid(
    which: str = "entry", clean: Optional[Callable[[str], str]] = None, **kw: Any
) -> Callable[[Context], Any]:
    def run(ctx: Context) -> Dict[str, List[Hit]]:
        return each(
            ctx,
            lambda q: fuse(
                ctx, q, cos(ctx, clean(q["query"]) if clean else q["query"], which), **kw
            ),
        )

    return run


def v_prf(beta: float, m: int = 3, which: str = "entry", **kw: Any) -> Callable[[Context], Any]:
    """Rocchio in embedding space: the query vector moved towards the vectors of the
    baseline hybrid's top ``m`` files, then fused again."""
    kw_base = kw

    def run(ctx: Context) -> Dict[str, List[Hit]]:
        np = ctx.np

        def one(q: Dict[str, Any]) -> List[Hit]:
            kw = dict(kw_base)
            if callable(kw.get("wd")):
                kw["wd"] = kw["wd"](ctx, q)
            v = ctx.qvec(q["query"])
            first = fuse(ctx, q, cos(ctx, q["query"], which), **kw)
            rows = [
                ctx.corpus.row_of[h.entry.id] for h in first[:m] if h.entry.id in ctx.corpus.row_of
            ]
            if rows:
                c = ctx.corpus.matrix[rows].mean(axis=0)
                v2 = v + beta * c
                v2 = v2 / np.linalg.norm(v2)
            else:
                v2 = v
            if which == "entry":
                return fuse(ctx, q, ctx.corpus.matrix @ v2, **kw)
            return fuse(ctx, q, (ctx.corpus.matrix @ v2 + ctx.matrix("body") @ v2) / 2, **kw)

        return each(ctx, one)

    return run


def _moved(ctx: Context, v: Any, first: Sequence[Hit]) -> Any:
    """The query vector ``v`` moved towards the top file of ``first`` (β 0.5, as
    `fusion.FEEDBACK`), renormalised; ``v`` when the store lacks that file."""
    row = ctx.corpus.row_of.get(first[0].entry.id) if first else None
    if row is None:
        return v
    moved = v + 0.5 * ctx.corpus.matrix[row]
    return moved / ctx.np.linalg.norm(moved)


@contextmanager
def _lexical(ctx: Context, q: Dict[str, Any], hits: List[Hit]) -> Iterator[None]:
    """BM25's candidates for ``q`` are ``hits`` while the block runs."""
    saved = ctx.lex[q["id"]]
    ctx.lex[q["id"]] = hits  # type: ignore[index]
    try:
        yield
    finally:
        ctx.lex[q["id"]] = saved  # type: ignore[index]


def v_prf_words(what: str) -> Callable[[Context], Any]:
    """The feedback (top file, beta 0.5) for the dense half, and the top file's name (or
    name and description) as keywords of a second BM25 query."""

    def run(ctx: Context) -> Dict[str, List[Hit]]:
        def one(q: Dict[str, Any]) -> List[Hit]:
            v = ctx.qvec(q["query"])
            first = fuse(ctx, q, ctx.corpus.matrix @ v)
            top = first[0]
            words = [top.entry.name.replace("-", " ")]
            if what == "desc":
                words.append(top.entry.description[:200])
            lex2 = ctx.bm25.query(q["query"], k=K, kind=q.get("kind"), keywords=words).hits
            with _lexical(ctx, q, lex2):
                return fuse(ctx, q, ctx.corpus.matrix @ _moved(ctx, v, first))

        return each(ctx, one)

    return run


_CLAUSE = re.compile(r"\s*(?:[;,.:?!)](?=\s|$)|\(|\s[-\u2013\u2014]\s)\s*")


def clauses(text: str, least: int = 3) -> List[str]:
    """The query's clauses (split at punctuation and dashes) of ``least`` words or more;
    [] when it has fewer than two."""
    parts = [p for p in _CLAUSE.split(text) if len(p.split()) >= least]
    return parts if len(parts) > 1 else []


def clause_vector(ctx: Context, text: str, how: str) -> Any:
    """With ``how`` = ``prefix:P``, the vector of P + the query (the descriptions' own
    phrasing: "Use when ..."); with ``how`` = ``mean:W`` the query vector plus W times
    its clauses' mean vector, renormalised; with ``how`` empty the query vector."""
    if how.startswith("prefix:"):
        return ctx.qvec(how[len("prefix:") :] + text)
    v = ctx.qvec(text)
    parts = clauses(text) if how.startswith("mean:") else []
    if not parts:
        return v
    m = v + sum(ctx.qvec(p) for p in parts) / len(parts) * float(how[len("mean:") :])
    return m / ctx.np.linalg.norm(m)


def v_prf_terms(
    docs: int,
    terms: int,
    weight: float,
    min_terms: int = 0,
    split: str = "",
    wd: Any = 0.4,
    lift: Optional[Sequence[int]] = None,
    lift_first: bool = False,
) -> Callable[[Context], Any]:
    """The feedback (top file, beta 0.5), then BM25 asked again widened by the terms of the
    second dense search's first ``docs`` files (`Related.feedback`, the related-terms
    table's vocabulary): the default hybrid since issue 19 is ``docs 10, terms 10, 0.2,
    min 4``."""

    def run(ctx: Context) -> Dict[str, List[Hit]]:
        from boost_cli.core.tokenize import query_weights, tokenize

        table = ctx.memo["related"]() if ctx.memo.get("related") else None
        if table is None:
            raise SystemExit("no related-terms table in this home: run boost reindex")

        def one(q: Dict[str, Any]) -> List[Hit]:
            w = wd(ctx, q) if callable(wd) else wd
            v = clause_vector(ctx, q["query"], split)
            first = ctx.corpus.matrix @ v
            scores = ctx.corpus.matrix @ _moved(ctx, v, fuse(ctx, q, first))
            if lift and lift_first:  # the first dense search's hits, not the feedback's
                own = ctx.grouped(ctx.corpus.hits(first, lift[1] * 10, q.get("kind")))
                return _lift_own(_final(q, scores, w), own, lift[0], lift[1])
            return _final(q, scores, w)

        def _final(q: Dict[str, Any], scores: Any, w: float) -> List[Hit]:
            task = query_weights(q["query"])
            near = ctx.corpus.hits(scores, docs, q.get("kind"))
            fields = [(h.score, tokenize(f"{h.entry.name} {h.entry.description}")) for h in near]
            extra = table.feedback(fields, task, terms, weight, min_terms)
            if not extra:
                return _lift(fuse(ctx, q, scores, wd=w), None if lift_first else lift)
            lex2 = ctx.bm25.widened(task, extra, k=200, kind=q.get("kind")).hits
            with _lexical(ctx, q, lex2):
                return _lift(fuse(ctx, q, scores, wd=w), None if lift_first else lift)

        return each(ctx, one)

    return run


def _flat(f: float) -> Callable[[Context, Dict[str, Any]], float]:
    """The dense weight f * (BM25's 10th score / its best): more when BM25 is unsure."""

    def wd(ctx: Context, q: Dict[str, Any]) -> float:
        b = [h.score for h in ctx.lex[q["id"]][:10]]
        return f * (b[-1] / b[0]) if b and b[0] > 0 else 0.4

    return wd


def _lift(hits: List[Hit], lift: Optional[Sequence[int]]) -> List[Hit]:
    """``lift`` = (P, M): each of the dense half's first M hits placed at rank P at the
    latest (moved up, the others shifted down) — a slot the fusion keeps for dense."""
    if not lift:
        return hits
    p, m = lift
    out = list(hits)
    for r in range(m, 0, -1):
        at = next((i for i, h in enumerate(out) if h.ranks.get("dense") == r), None)
        if at is not None and at >= p:
            out.insert(p - 1, out.pop(at))
    return out


def _lift_own(hits: List[Hit], own: Sequence[Hit], p: int, m: int) -> List[Hit]:
    """The first dense search's first ``m`` files (``own``, one per group) placed at rank
    ``p`` at the latest: moved up when the fused list has them lower, inserted when not."""
    key = lambda h: h.group or h.content_hash or h.entry.id  # noqa: E731
    seen: List[str] = []
    for h in own:
        if key(h) not in seen:
            seen.append(key(h))
    out = list(hits)
    for r in range(min(m, len(seen)) - 1, -1, -1):
        want = seen[r]
        at = next((i for i, h in enumerate(out) if key(h) == want), None)
        if at is None:
            out.insert(p - 1, next(h for h in own if key(h) == want))
        elif at >= p:
            out.insert(p - 1, out.pop(at))
    return out


def _by_shape(short: float, long: float, cut: int) -> Callable[[Context, Dict[str, Any]], float]:
    """The dense weight by the query's shape: ``short`` for 1-3 content terms (a query
    that names what it wants), ``long`` for ``cut`` or more (a task told in sentences),
    0.4 between. Applied to the final fusion only (the feedback's first fusion keeps 0.4)."""

    def wd(ctx: Context, q: Dict[str, Any]) -> float:
        from boost_cli.core.tokenize import query_weights

        n = len(query_weights(q["query"]))
        return short if n <= 3 else long if n >= cut else 0.4

    return wd


VARIANTS: Dict[str, Callable[[Context], Any]] = {
    "bm25": v_bm25,
    "dense entry": v_dense("entry"),
    "dense desc": v_dense("desc"),
    "dense max(entry,desc)": v_dense("max"),
    "dense mean(entry,desc)": v_dense("mean"),
    "dense entry, stopwords cut": v_dense("entry", strip_stop),
    "hybrid now (0.4, 80)": v_hybrid(),
    "hybrid exact cos": v_hybrid(exact=True),
    "hybrid exact cos 0.5": v_hybrid(exact=True, wd=0.5),
    "hybrid exact cos 0.3": v_hybrid(exact=True, wd=0.3),
    "hybrid max(entry,desc)": v_hybrid("max"),
    "hybrid mean(entry,desc)": v_hybrid("mean"),
    "hybrid mean, exact": v_hybrid("mean", exact=True),
    "hybrid stopwords cut": v_hybrid(clean=strip_stop),
    "hybrid rrf": v_hybrid(method="rrf"),
    "dense trigger-max": v_dense("trigger-max"),
    "hybrid trigger-max": v_hybrid("trigger-max"),
    "hybrid exact cos 0.6": v_hybrid(exact=True, wd=0.6),
    "hybrid 0.3": v_hybrid(wd=0.3),
    "hybrid 0.5": v_hybrid(wd=0.5),
    "dense body-mean": v_dense("body-mean"),
    "hybrid body-mean": v_hybrid("body-mean"),
    "hybrid body-max": v_hybrid("body-max"),
    "hybrid three-mean": v_hybrid("three-mean"),
    "hybrid body-mean exact 0.5": v_hybrid("body-mean", exact=True, wd=0.5),
    **{f"prf b={b} m={m}": v_prf(b, m) for m in (1, 2, 3, 5, 10) for b in (0.25, 0.5, 1.0, 2.0)},
    "prf b=1 m=3 exact": v_prf(1.0, 3, exact=True),
    "prf1 + bm25 with the top name": v_prf_words("name"),
    "prf1 + bm25 with the top name+desc": v_prf_words("desc"),
    **{f"prf1 wd={w}": v_prf(0.5, 1, wd=w) for w in (0.3, 0.35, 0.45, 0.5)},
    **{f"prf1 wd={f}*flat": v_prf(0.5, 1, wd=_flat(f)) for f in (0.4, 0.5, 0.6)},
    **{
        f"prf1 + bm25 widened d={d} t={t} w={w}": v_prf_terms(d, t, w)
        for d in (5, 10, 20)
        for t in (5, 10, 15)
        for w in (0.15, 0.2, 0.3)
    },
    **{f"prf1 + bm25 widened, min {m} terms": v_prf_terms(10, 10, 0.2, m) for m in (3, 4, 5)},
    "prf b=0.5 m=3 body-mean": v_prf(0.5, 3, "body-mean"),
    **{
        f"now + clause vectors (mean, weight {w})": v_prf_terms(10, 10, 0.2, 4, f"mean:{w}")
        for w in (1.0, 0.3)
    },
    **{
        f"now, query embedded as '{p}...'": v_prf_terms(10, 10, 0.2, 4, "prefix:" + p)
        for p in ("Use when ", "Use this skill when ", "Use when the user asks: ", "I need help: ")
    },
    "prf b=1 m=3 body-mean": v_prf(1.0, 3, "body-mean"),
    **{
        f"now, dense weight by shape s={s} l={long} cut={c}": v_prf_terms(
            10, 10, 0.2, 4, wd=_by_shape(s, long, c)
        )
        for s in (0.2, 0.3, 0.4)
        for long in (0.4, 0.5, 0.6)
        for c in (6, 9, 12)
        if not (long == 0.4 and c != 6)
    },
    **{
        f"now, dense's first {m} lifted to rank {p}": v_prf_terms(10, 10, 0.2, 4, lift=(p, m))
        for p in (1, 2, 3, 5)
        for m in (1, 2)
    },
    **{
        f"now, the first dense search's first {m} lifted to rank {p}": v_prf_terms(
            10, 10, 0.2, 4, lift=(p, m), lift_first=True
        )
        for p in (1, 2, 3, 5)
        for m in (1, 2)
    },
}


def signals(ctx: Context, q: Dict[str, Any]) -> Dict[str, float]:
    """Per-query features a fusion rule could use (no judgments)."""
    lex = ctx.lex[q["id"]]
    c = cos(ctx, q["query"])
    sem = ctx.corpus.hits(c, 20, q.get("kind"))
    b = [h.score for h in lex[:10]]
    d = [h.score for h in sem[:10]]
    lex_keys = {h.content_hash for h in lex[:100]}
    top10 = {h.content_hash for h in lex[:10]}
    return {
        "b10/b1": (b[-1] / b[0]) if b else 0.0,
        "b2/b1": (b[1] / b[0]) if len(b) > 1 else 0.0,
        "d1": d[0] if d else 0.0,
        "d1-d10": (d[0] - d[-1]) if d else 0.0,
        "dense10 in bm25@100": sum(1 for h in sem[:10] if h.content_hash in lex_keys) / 10,
        "dense10 in bm25@10": sum(1 for h in sem[:10] if h.content_hash in top10) / 10,
        "words": float(len(q["query"].split())),
    }
