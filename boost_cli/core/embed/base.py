"""The contract between boost and an embedding provider, and the values that cross it.

A provider is a `Provider` subclass in a module of its own (`remote`: the HTTP APIs;
`hashing`: the offline hash projection), registered by name in `providers`. Everything
else in the package (`config`, `dispatch`, `cache`) and every caller works with any
registered provider through `EmbedConfig` and this contract, so adding one (an in-process
model, say) is a new module plus one line in `providers`.
"""

from __future__ import annotations

import math
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from boost_cli.core import http

INPUT_TYPES = ("document", "query")

ProgressFn = Callable[[int, int], None]
Vectors = List[List[float]]


@dataclass(frozen=True)
class Limits:
    """What one request may carry. Tokens are estimated as ``len(text) / 3`` (conservative:
    English runs ~4 characters a token), so ``max_tokens`` is a character budget in disguise."""

    max_inputs: int
    max_tokens: int
    max_chars_per_input: int


@dataclass(frozen=True)
class EmbedConfig:
    """Which embedder to use. Holds no secret: the key is read from the environment per call."""

    provider: str
    model: str
    base_url: Optional[str] = None
    dimensions: Optional[int] = None
    timeout: Optional[float] = None  # seconds a request may take; None: the caller's default

    @property
    def spec(self) -> Provider:
        """The registered `Provider` named by ``provider``."""
        return provider_named(self.provider)

    @property
    def endpoint(self) -> str:
        """The base URL requests go to (``{endpoint}/embeddings``); "" in process."""
        return (self.base_url or self.spec.default_base_url).rstrip("/")

    @property
    def label(self) -> str:
        """How failures name the provider: "Voyage", "OpenAI", "openai-compatible at <url>"
        (a user:password in the URL shown as ``***``)."""
        spec = self.spec
        if self.base_url and not spec.in_process and self.endpoint != spec.default_base_url:
            return f"{spec.title} at {http.redact(self.endpoint)}"
        return spec.title

    @property
    def host(self) -> str:
        """Where texts go: the endpoint's host[:port] (no credentials), or "local"."""
        if self.spec.in_process:
            return "local"
        return urllib.parse.urlsplit(self.endpoint).netloc.rpartition("@")[2]

    @property
    def is_remote(self) -> bool:
        """True when embedding sends text off this machine (not in process, not loopback)."""
        if self.spec.in_process:
            return False
        return (urllib.parse.urlsplit(self.endpoint).hostname or "") not in http.LOOPBACK


@dataclass(frozen=True)
class EmbedResult:
    """Vectors in input order, each L2-normalised. ``model`` is what the provider says it
    served; ``sent``/``sent_chars`` count the texts that actually went to the provider."""

    vectors: Vectors
    model: str
    dimensions: int
    sent: int = 0
    sent_chars: int = 0


@dataclass(frozen=True)
class EmbedFailure:
    """A provider problem, as one line that names the provider and never the key."""

    reason: str


EmbedOutcome = Union[EmbedResult, EmbedFailure]


class EmbedInterrupted(KeyboardInterrupt):
    """Ctrl-C during an embedding call, raised once the call stopped between batches;
    ``done`` holds the (index into the call's texts, vector) pairs finished before it, so
    the cache keeps them and the next run does not embed them again."""

    def __init__(self, done: Sequence[Tuple[int, List[float]]]) -> None:
        super().__init__()
        self.done = list(done)


@dataclass(frozen=True)
class EmbedOptions:
    """How one `embed()` call wants its texts embedded. ``tries`` counts the attempts a
    request gets; ``key`` (never shown in a repr) may be None; ``progress(done, total)``
    is called after each batch. ``one_shot``: the process embeds this and exits (a CLI
    query), so a provider with a costly set-up may pick a faster start over faster runs."""

    input_type: str = "document"
    timeout: float = 30
    tries: int = 4
    key: Optional[str] = field(default=None, repr=False)
    progress: Optional[ProgressFn] = None
    one_shot: bool = False


# What a provider returns: (vectors in input order, the model it says it served) or why not.
Embedded = Union[Tuple[Vectors, str], EmbedFailure]


class Provider:
    """One embedding backend. A subclass sets the class attributes and implements
    `embed_texts`; the methods' defaults suit a remote API that names its model."""

    name = ""  # what BOOST_EMBED_PROVIDER says
    title = ""  # how messages name it ("Voyage", "hash embedder")
    default_model = ""
    default_base_url = ""  # "" for a provider with no fixed URL
    in_process = False  # embeds on this machine: no URL, no key, nothing leaves it
    needs_base_url = False
    key_names: Tuple[str, ...] = ()  # variables that may hold its key, the first set wins
    key_required = False
    base_url_var = ""  # a provider's own base-URL variable, used when BOOST_EMBED_BASE_URL is unset
    limits = Limits(max_inputs=4096, max_tokens=10**9, max_chars_per_input=20_000)

    def detect(self, base_url: Optional[str], env: Mapping[str, str]) -> bool:
        """Whether to use this provider when none is named (tried in `providers` order)."""
        return False

    def model_id(self, config: EmbedConfig) -> str:
        """The model identity vectors are stored and compared under."""
        return config.model

    def parity(self, config: EmbedConfig) -> Dict[str, str]:
        """Identity fields beyond provider, model and dimensions that vectors must share to
        be compared (a model file's hash, a tokenizer version): the vector store records
        them, and the cache keys vectors by them."""
        return {}

    def problem(self, config: EmbedConfig) -> Optional[str]:
        """Why ``config`` cannot embed on this machine now (a missing package), checked
        before anything is embedded and without loading anything; None when it can."""
        return None

    def describe(self, config: EmbedConfig) -> Dict[str, Any]:
        """What `boost doctor` shows about this provider beyond its name and model."""
        return {}

    def dimensions(self, config: EmbedConfig) -> Optional[int]:
        """The vector length ``config`` yields, when known before embedding anything."""
        return config.dimensions

    def embed_texts(
        self, texts: Sequence[str], config: EmbedConfig, options: EmbedOptions
    ) -> Embedded:
        """Embed non-empty ``texts`` (unit vectors, in order), batching as the provider
        must. Never raises for a provider problem."""
        raise NotImplementedError


# --------------------------------------------------------------------------- the registry

_REGISTRY: Dict[str, Provider] = {}
# The batch limits in force, by provider; tests shrink them to exercise batching.
LIMITS: Dict[str, Limits] = {}


def register(*providers: Provider) -> Tuple[str, ...]:
    """Make ``providers`` known by name (in this order for auto-detection); their names."""
    for p in providers:
        if p.name in _REGISTRY:
            raise ValueError(f"embedding provider {p.name!r} is registered twice")
        _REGISTRY[p.name] = p
        LIMITS[p.name] = p.limits
    return tuple(p.name for p in providers)


def provider_named(name: str) -> Provider:
    """The registered provider called ``name`` (`KeyError` when there is none)."""
    return _REGISTRY[name]


def registered() -> Tuple[Provider, ...]:
    """Every registered provider, in registration order."""
    return tuple(_REGISTRY.values())


# --------------------------------------------------------------------------- shared helpers


def l2_normalise(vector: Sequence[float]) -> Optional[List[float]]:
    """``vector`` scaled to unit length, or None when it is zero or not finite."""
    norm = math.sqrt(math.fsum(x * x for x in vector))
    if not norm or not math.isfinite(norm):
        return None
    return [x / norm for x in vector]


def _approx_tokens(text: str) -> int:
    return len(text) // 3 + 1


def plan_batches(texts: Sequence[str], config: EmbedConfig) -> List[List[int]]:
    """Indexes of ``texts`` grouped into requests within ``LIMITS[config.provider]``,
    in order (a text over the token budget on its own still gets a request of its own)."""
    limits = LIMITS[config.provider]
    batches: List[List[int]] = []
    current: List[int] = []
    budget = 0
    for i, text in enumerate(texts):
        cost = _approx_tokens(text[: limits.max_chars_per_input])
        if current and (len(current) >= limits.max_inputs or budget + cost > limits.max_tokens):
            batches.append(current)
            current, budget = [], 0
        current.append(i)
        budget += cost
    if current:
        batches.append(current)
    return batches
