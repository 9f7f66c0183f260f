"""The embedding providers boost knows, registered once, in the order auto-detection tries
them (`resolve_config`, when no provider is named). A new provider is a module with a
`base.Provider` subclass plus its instance on the `register` line below."""

from __future__ import annotations

from boost_cli.core.embed.base import register
from boost_cli.core.embed.hashing import HashEmbedder
from boost_cli.core.embed.local import LocalProvider
from boost_cli.core.embed.remote import OpenAI, OpenAICompatible, Voyage

PROVIDERS = register(Voyage(), OpenAI(), OpenAICompatible(), LocalProvider(), HashEmbedder())
