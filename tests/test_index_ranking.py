"""Format 2 of the index: the entry field score, weighted queries, near-duplicate groups,
and the pruned top-k against an exhaustive reference.

Taps are hand-made in tmp_path (`test_index.make_tap`); the autouse fixture points
BOOST_HOME at tmp_path.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Set, Tuple

import pytest

from boost_cli.core import bm25, index
from boost_cli.core.errors import IndexUnavailable, UsageError
from boost_cli.core.index import neardup, ranking
from boost_cli.core.index.generation import Generation
from boost_cli.core.index.layout import DEAD
from boost_cli.core.index.reader import IndexReader, acceptor
from boost_cli.core.models import Hit
from boost_cli.core.paths import index_dir
from boost_cli.core.tokenize import tokenize
from tests.test_index import data_files, make_tap, manifest_without_time, query

NO_PREFIX = dict(use_prefix=False)


def open_reader() -> IndexReader:
    reader = index.open_index()
    assert reader is not None
    return reader


def generation(reader: IndexReader) -> Generation:
    gen = reader._current()
    assert gen is not None
    return gen


# --------------------------------------------------------------------------- the field score


def test_field_score_is_weighted_bm25_of_name_and_description(tmp_path: Path) -> None:
    files = {"kafka/SKILL.md": "streams of events\n", "misc/SKILL.md": "nothing to see\n"}
    desc = {"kafka/SKILL.md": "Kafka consumer groups", "misc/SKILL.md": "Plain text"}
    index.build([make_tap(tmp_path, "t", files, descriptions=desc)], **NO_PREFIX)
    # The chunk does not hold "consumer": the whole score is the field's. Field documents:
    # "kafka. Kafka consumer groups" (4 terms) and "misc. Plain text" (3): avgdl 3.5.
    (hit,) = query("consumer")
    field = bm25.idf(1, 2) * bm25.term_weight(1, 4, 3.5, k1=2.0, b=0.75)
    assert hit.entry.name == "kafka" and hit.score == pytest.approx(0.3 * field)
    assert hit.snippet == "streams of events"  # a content whose chunks did not match
    # Both parts: the chunk score of "streams" plus the field score of "kafka" (tf 2).
    (hit,) = query("streams kafka")
    chunk = bm25.idf(1, 2) * bm25.term_weight(1, 3, 3.0)
    field = bm25.idf(1, 2) * bm25.term_weight(2, 4, 3.5, k1=2.0, b=0.75)
    assert hit.score == pytest.approx(chunk + 0.3 * field)
    assert query("consumer", field_weight=0.0) == []
    reader = open_reader()
    assert reader.params["field_weight"] == 0.3 and reader.params["field_k1"] == 2.0


def test_weights_multiply_idf_and_text_alone_uses_the_query_stoplist(tmp_path: Path) -> None:
    files = {"a/SKILL.md": "deploy the cluster\n", "b/SKILL.md": "really fast builds\n"}
    index.build([make_tap(tmp_path, "t", files)], **NO_PREFIX)
    reader = open_reader()
    (deploy,) = tokenize("deploy")
    one = reader.query(weights={deploy: 1.0})[0].score
    assert reader.query(weights={deploy: 0.7})[0].score == pytest.approx(0.7 * one)
    assert reader.query(weights={deploy: 0.0}) == []
    # "really" is on the query stoplist: it weighs 0.25 next to a real word, 1 alone.
    mixed = {h.entry.name: h.score for h in reader.query("really deploy")}
    alone = reader.query("really")[0].score
    assert mixed["b"] == pytest.approx(0.25 * alone)
    assert mixed["a"] == pytest.approx(one)


def test_field_params_are_validated(tmp_path: Path) -> None:
    tap = make_tap(tmp_path, "t", {"a/SKILL.md": "x y\n"})
    with pytest.raises(UsageError, match="bad field params"):
        index.build([tap], params=index.IndexParams(field_b=2.0))


def test_a_content_matched_only_past_the_prefix_cut_is_found(tmp_path: Path) -> None:
    # The context prefix holds the first 300 characters of the description; the field
    # holds all of it. "zeppelin" is only past the cut, so no chunk of "long" matches:
    # with no chunk score at all the cut-off is -inf from the start, and the content must
    # still be ranked (by its field score alone), also when other contents match chunks.
    long_desc = "Helps with airships. " + "Lots of filler words here. " * 15 + "Zeppelin."
    files = {"long/SKILL.md": "about airships\n", "near/SKILL.md": "a zeppelin story\n"}
    desc = {"long/SKILL.md": long_desc, "near/SKILL.md": "Stories"}
    index.build([make_tap(tmp_path, "t", files, descriptions=desc)])
    names = [h.entry.name for h in query("zeppelin")]
    assert sorted(names) == ["long", "near"]
    (hit,) = query("zeppelin", kind="skill", k=1)
    assert hit.entry.name in ("long", "near")
    reader = open_reader()
    gen = generation(reader)
    scores = ranking.accumulate(gen, {"zeppelin": 1.0}, 1.2, 0.75, (0.3, 2.0, 0.75))
    assert scores is not None
    long_id = next(j for j in range(2) if gen.segment(0).record(j)["entries"][0]["name"] == "long")
    first, end = gen.chunk_range(long_id)
    assert all(scores.acc[c] == 0.0 for c in range(first, end)) and scores.field[long_id] > 0


# --------------------------------------------------------------------------- exact top k


def by_group(
    gen: Generation, level: str, ranked: List[Tuple[float, Optional[int]]]
) -> List[Tuple[float, Optional[int]]]:
    """(score, content) pairs with each content as its group at ``level`` (itself for
    "none"): what a query ranks."""
    groups = gen.groups(level)
    return [(s, c if groups is None or c is None else groups[c]) for s, c in ranked]


def reference(
    gen: Generation,
    weights: Dict[str, float],
    k: int,
    kind: Optional[str],
    wanted: Optional[Set[int]],
    how: str,
    level: str,
) -> List[Tuple[float, int]]:
    """Every touched content scored, grouped and sorted: what the pruned ranking must give."""
    p = gen.params
    scores = ranking.accumulate(gen, weights, p.k1, p.b, (p.field_weight, p.field_k1, p.field_b))
    if scores is None:
        return []
    touched = {gen.chunk_content[c] for c, s in enumerate(scores.acc) if s > 0.0}
    touched.discard(DEAD)
    touched |= set(scores.field)
    accept = acceptor(gen, kind, wanted)
    best: Dict[int, Tuple[float, int]] = {}
    for j in sorted(touched):
        if accept is not None and not accept(j):
            continue
        first, end = gen.chunk_range(j)
        chunk = max(range(first, end), key=scores.acc.__getitem__, default=-1)
        s = ranking.content_score(gen, scores.acc, j, chunk, how) + scores.field.get(j, 0.0)
        group = gen.groups(level)
        g = group[j] if group is not None else j
        if g not in best or (s, -j) > (best[g][0], -best[g][1]):
            best[g] = (s, j)
    return sorted(best.values(), key=lambda x: (-x[0], x[1]))[:k]


def query_checked(
    reader: IndexReader,
    weights: Dict[str, float],
    k: int,
    kind: Optional[str],
    taps: Optional[Sequence[str]],
    how: str,
    level: str,
) -> List[Hit]:
    """``reader``'s top ``k`` for ``weights``, asserted equal to `reference`'s. Ranked are
    groups; a hit shows its group's origin copy (`origin`), so contents are compared by
    their group."""
    gen = generation(reader)
    hits = reader.query(
        weights=weights,
        k=k,
        kind=kind,
        taps=taps,
        aggregation=how,
        collapse=level,
        snippets=False,
    )
    wanted = None if taps is None else {gen.tap_index[t] for t in taps}
    want = reference(gen, weights, k, kind, wanted, how, level)
    got = by_group(gen, level, [(h.score, gen.content_of(h.content_hash or "")) for h in hits])
    assert got == by_group(gen, level, want), (weights, k, kind, taps, how, level)
    return hits


WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "omega",
    "sigma",
    "kappa",
    "lambda",
    "theta",
    "zeta",
    "iota",
    "rho",
]


def random_corpus(tmp_path: Path, rng: random.Random) -> list:
    """Three taps of files with 1-4 chunks each: byte-identical copies across taps,
    near-duplicates (same name and description, or the same body under a related name),
    files with the same terms under unrelated names (ties), long descriptions whose
    words only the field holds, and all three kinds."""
    bodies = []
    for i in range(60):
        parts = []
        for p in range(1 + i % 4):
            words = [rng.choice(WORDS) for _ in range(rng.randint(3, 40))]
            parts.append(f"## Part {p}\n\n" + " ".join(words) + " filler text " * 40)
        bodies.append("\n\n".join(parts) + "\n")
    taps = []
    for t, tap in enumerate(("a", "b", "c")):
        files: Dict[str, str] = {}
        desc: Dict[str, str] = {}
        for i in range(50):
            ext = ("SKILL.md", "rule.mdc", "flow.md")[(i + t) % 3]
            if i % 5 == 0:  # in every tap, edited: one group (by key or by body + name)
                n, folder = i % 60, f"shared{i}"
                ext = "SKILL.md" if i % 10 == 0 else ext  # i % 10 == 0: the same name too
                body = bodies[n] + (f"\nedit {tap}\n" if t else "")
                text = f"Shared helper {i}" if i % 10 == 0 else f"{rng.choice(WORDS)} {tap}"
            else:  # some byte-identical across taps, some the same terms (ties)
                n, folder = (i * 7 + t * 13) % 60, f"{tap}{i}"
                body = bodies[n] if i % 9 else bodies[n] + f"\nedit {tap}{i}\n"
                if i % 4 == 1:
                    text = "Long. " + "padding " * 50 + " ".join(rng.sample(WORDS, 2))
                else:
                    text = f"{rng.choice(WORDS)} {tap}{i}"
            rel = f"{folder}/{ext}" if ext == "SKILL.md" else f"{folder}-{ext}"
            files[rel] = body
            desc[rel] = text
        for k in range(3):  # ties: the same terms (one-letter words are not indexed)
            tie = f"tie{tap}{k}x"  # names that share no word and no query term
            files[f"{tie}/SKILL.md"] = bodies[t] + f"\n<!-- {'xyz'[k]} -->\n"
            desc[f"{tie}/SKILL.md"] = ""
        taps.append(make_tap(tmp_path, tap, files, descriptions=desc))
    return taps


KINDS = (None, None, "skill", "rule", "workflow")


def random_check(
    reader: IndexReader,
    rng: random.Random,
    extra: List[str],
    n_words: int,
    ks: Tuple[int, ...],
    kinds: Tuple[Optional[str], ...],
) -> Tuple[Optional[str], Optional[Tuple[str, ...]], str, List[Hit]]:
    """One random weighted query (``n_words`` of WORDS + ``extra``, a k of ``ks``, a kind
    of ``kinds``, a tap filter, an aggregation, a collapse level) through the reader,
    checked against `reference`: (kind, taps, level, hits)."""
    weights = {
        term: rng.choice((1.0, 2.0, 0.7, 0.25))
        for term in tokenize(" ".join(rng.sample(WORDS + extra, n_words)))
    }
    k = rng.choice(ks)
    kind = rng.choice(kinds)
    taps = rng.choice((None, None, ("a",), ("b", "c")))
    how = rng.choice(index.AGGREGATIONS)
    level = rng.choice(index.COLLAPSE)
    hits = query_checked(reader, weights, k, kind, taps, how, level)
    return kind, taps, level, hits


@pytest.mark.parametrize("seed", [1, 2])
def test_pruned_top_k_equals_exhaustive_scoring(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    index.build(random_corpus(tmp_path, rng))
    reader = open_reader()
    gen = generation(reader)
    assert len(gen.tap_names) == 3
    for level in ("key", "near"):  # there are groups, more of them by body overlap
        group = gen.groups(level)
        assert group is not None and any(len(gen.members(level, g)) > 1 for g in set(group))
    assert len(set(gen.groups("near") or ())) < len(set(gen.groups("key") or ()))
    checked = ties = 0
    for _ in range(60):
        kind, taps, level, hits = random_check(
            reader, rng, ["shared", "padding", "edit"], 3, (1, 3, 10, 25), KINDS
        )
        for h in hits:
            assert kind is None or h.entry.kind == kind
            assert taps is None or h.entry.tap in taps
        scores = [h.score for h in hits]
        ties += len(scores) - len(set(scores))
        if level != "none":
            assert len({h.group for h in hits}) == len(hits)
        checked += len(hits)
    assert checked > 300 and ties > 10


def test_ties_are_broken_by_content_order(tmp_path: Path) -> None:
    # Four files with the same terms and unrelated names: equal scores, distinct groups.
    body = "tie breaker words\n"
    files = {f"{name}/SKILL.md": body + f"<!-- {name} -->\n" for name in "dcba"}
    index.build([make_tap(tmp_path, "t", files)], **NO_PREFIX)
    hits = query("breaker", k=2)
    assert [h.entry.name for h in hits] == ["a", "b"]
    assert hits[0].score == hits[1].score
    assert [h.entry.name for h in query("breaker", k=4)] == ["a", "b", "c", "d"]


def test_a_tie_with_a_looser_bound_is_not_skipped(tmp_path: Path) -> None:
    # "b-one" (1 chunk) and "k-two" (3 chunks, the first the same as b-one's) score the
    # same, but k-two's bound is higher (its lse slack: T ln 3), so it is scored first and
    # sets the k-th score; b-one's bound equals that score, and it must still be scored:
    # equal scores rank the smaller content id first.
    one = "## Part\n\nzebra crossing rules. " + "plain words here. " * 45 + "\n"
    two = one + "\n## Other\n\n" + "unrelated filler words here. " * 60
    files = {"b-one/SKILL.md": one, "k-two/SKILL.md": two}
    index.build([make_tap(tmp_path, "t", files)], **NO_PREFIX)
    reader = open_reader()
    gen = generation(reader)
    assert [len(range(*gen.chunk_range(j))) for j in range(2)] == [1, 3]
    full = reader.query("zebra", k=2, snippets=False)
    assert full[0].score == full[1].score
    (top,) = reader.query("zebra", k=1, snippets=False)
    assert top.entry.name == "b-one"


# --------------------------------------------------------------------------- near-duplicates


def long_body(seed: int, n: int = 200) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) + str(rng.randint(0, 50)) for _ in range(n)) + "\n"


def test_same_name_and_description_is_one_hit(tmp_path: Path) -> None:
    a = make_tap(
        tmp_path,
        "a",
        {"pdf/SKILL.md": "Extract pdf tables.\n"},
        descriptions={"pdf/SKILL.md": "PDF tools!"},
    )
    b = make_tap(
        tmp_path,
        "b",
        {"x/pdf/SKILL.md": "Merge pdf pages.\n"},
        descriptions={"x/pdf/SKILL.md": "pdf  Tools"},
    )
    index.build([a, b])
    (hit,) = query("pdf tables pages")
    assert hit.entry.tap == "a" and hit.also_in == ("b:pdf",)  # a's copy matches better
    (hit,) = query("merge pages")
    # b's copy ranks the group, a's is shown: the origin order (`origin`), here a tie in
    # size broken by name; b's passage is not a's, so a's description is the snippet.
    assert hit.entry.tap == "a" and hit.also_in == ("b:pdf",) and hit.similar == ("b:pdf",)
    assert hit.snippet == "PDF tools!"
    assert len(query("pdf", collapse="none")) == 2
    # The filters apply to the member shown.
    (hit,) = query("pdf tables pages", taps=["b"])
    assert hit.entry.tap == "b"


def test_body_overlap_with_related_names_is_one_hit(tmp_path: Path) -> None:
    body = long_body(1)
    edited = body.replace("alpha", "ALPHA", 3) + "one more line\n"
    a = make_tap(tmp_path, "a", {"fastapi-pro/SKILL.md": body})
    b = make_tap(
        tmp_path, "b", {"agents/api-fastapi-pro.md": edited, "other/SKILL.md": body + "misc\n"}
    )
    index.build([a, b], params=index.IndexParams(collapse="near"))
    assert len(query("alpha0 beta1 gamma2 delta3", collapse="key")) == 3
    hits = query("alpha0 beta1 gamma2 delta3")
    names = {h.entry.qualified_name: h.also_in for h in hits}
    # fastapi-pro ⊂ api-fastapi-pro: one group; "other" shares the body but not the name.
    assert set(names) == {"a:fastapi-pro", "b:other"} or set(names) == {
        "b:api-fastapi-pro",
        "b:other",
    }
    shown = next(h for h in hits if h.entry.name != "other")
    assert len(shown.also_in) == 1


def test_sketch_estimates_jaccard() -> None:
    rng = random.Random(3)
    base = [rng.choice(WORDS) + str(rng.randint(0, 99)) for _ in range(600)]
    same = neardup.sketch(tokenize(" ".join(base)))
    assert neardup.similarity(same, same) == 1.0
    edited = base[:]
    for i in range(0, 600, 40):
        edited[i] = "changed"
    est = neardup.similarity(same, neardup.sketch(tokenize(" ".join(edited))))
    a = set(neardup.shingle_hashes(tokenize(" ".join(base))))
    b = set(neardup.shingle_hashes(tokenize(" ".join(edited))))
    assert abs(est - len(a & b) / len(a | b)) < 0.1
    other = neardup.sketch(tokenize(" ".join(rng.choice(WORDS) + "x" for _ in range(600))))
    assert neardup.similarity(same, other) < 0.1
    assert neardup.sketch(["few", "terms"]) == neardup.NO_SKETCH


def test_related_names() -> None:
    w = neardup._words
    assert neardup.related(
        w(neardup.names_of("fastapi-pro", "a/SKILL.md")), w("api-fastapi-pro\tx")
    )
    assert neardup.related(w("Performance rules\tp"), w("performance-rule\tq"))  # plural
    assert neardup.related(
        w(neardup.names_of("plugin-a-mobile-developer", "p/a/agents/mobile-developer.md")),
        w(neardup.names_of("plugin-b-mobile-developer", "p/b/agents/mobile-developer.md")),
    )
    assert not neardup.related(
        w("LLM Output Testing\tllm-output"), w("LLM Security Testing\tllm-sec")
    )
    assert not neardup.related(w("\t"), w("\t"))


def test_groups_span_taps_and_incremental_builds_stay_byte_identical(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = long_body(5)
    d = {"k/SKILL.md": "Kafka helper"}
    a = make_tap(tmp_path, "a", {"k/SKILL.md": body, "z/SKILL.md": long_body(6)}, descriptions=d)
    b = make_tap(tmp_path, "b", {"k/SKILL.md": body + "edit\n"}, descriptions=d)
    c = make_tap(tmp_path, "c", {"kafka/k/SKILL.md": body + "other edit\n"})
    near = dict(params=index.IndexParams(collapse="near"))
    index.build([a, b], **near)
    index.build([a, b, c], **near)
    index.build([b, c], **near)  # a removed: the group's first member is now b's
    incremental = data_files(index_dir())
    inc_manifest = manifest_without_time(index_dir())
    (hit,) = query("alpha1 beta2 gamma3 kappa4")
    assert hit.entry.tap in ("b", "c") and len(hit.also_in) == 1
    monkeypatch.setenv("BOOST_HOME", str(tmp_path / "scratch-home"))
    index.build([b, c], **near)
    assert data_files(index_dir()) == incremental
    assert manifest_without_time(index_dir()) == inc_manifest


def test_group_keys_map_file_hashes_to_groups(tmp_path: Path) -> None:
    d = {"p/SKILL.md": "Same"}
    a = make_tap(tmp_path, "a", {"p/SKILL.md": "one body\n"}, descriptions=d)
    b = make_tap(
        tmp_path, "b", {"p/SKILL.md": "another body\n", "q/SKILL.md": "one body\n"}, descriptions=d
    )
    index.build([a, b])
    reader = open_reader()
    (grouped,) = reader.query("body", k=10)  # a:p and b:p (same name and description)
    files = reader.query("body", k=10, collapse="none")  # b:q is a byte-identical copy of a:p
    assert len(files) == 2 and all(h.group is None for h in files)
    keys = reader.group_keys([h.content_hash or "" for h in files] + ["0" * 64])
    assert len(keys) == 2 and set(keys.values()) == {grouped.group}
    assert grouped.group == grouped.content_hash  # named by its first file, a:p
    assert sorted(grouped.also_in) == ["b:p", "b:q"]


def test_old_format_says_run_reindex(tmp_path: Path) -> None:
    index.build([make_tap(tmp_path, "t", {"a/SKILL.md": "x y z\n"})])
    path = index_dir() / index.MANIFEST
    path.write_text(path.read_text().replace('"version": 4', '"version": 3'))
    with pytest.raises(IndexUnavailable) as exc:
        index.open_index()
    assert exc.value.message == "the search index has format version 3, this boost reads version 4"
    assert exc.value.fix == "run 'boost reindex'"
    # `boost reindex` over the old format builds the new one from scratch.
    report = index.build([make_tap(tmp_path, "t", {"a/SKILL.md": "zeppelin ballast\n"})])
    assert report.built == ("t",)
    reader = index.open_index()
    assert reader is not None and [h.entry.name for h in reader.query("zeppelin")] == ["a"]
