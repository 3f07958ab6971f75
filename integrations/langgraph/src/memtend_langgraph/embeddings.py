"""A LangGraph ``IndexConfig["embed"]`` (LangChain ``Embeddings``, a function, or ``"provider:model"``) as the
embedding function of a ``Memory``, so memtend embeds (store items, and memories) with the caller's model.

chromadb is imported on first use only, like the core does.
"""

from __future__ import annotations

from functools import cache
from typing import Any


@cache
def _function_class() -> type:
    import numpy as np
    from chromadb.api.types import Documents, EmbeddingFunction
    from langgraph.store.base.embed import ensure_embeddings

    class LangChainEmbeddingFunction(EmbeddingFunction[Documents]):
        """Chroma's embedding-function interface over a LangChain ``Embeddings`` (or what LangGraph accepts)."""

        def __init__(self, embed: Any) -> None:
            self.source = embed
            self.embeddings = ensure_embeddings(embed)

        def __call__(self, input: Documents) -> list[Any]:
            return [np.asarray(v, dtype=np.float32) for v in self.embeddings.embed_documents(list(input))]

        def embed_query(self, input: Documents) -> list[Any]:
            return [np.asarray(self.embeddings.embed_query(text), dtype=np.float32) for text in input]

        @staticmethod
        def name() -> str:
            return "memtend-langgraph-embeddings"

        def get_config(self) -> dict[str, Any]:
            return {}

        @staticmethod
        def build_from_config(config: dict[str, Any]) -> Any:
            raise NotImplementedError(
                "a LangChain embedding model cannot be rebuilt from Chroma's config: pass "
                "Memory(embedding_function=embedding_function(your_embeddings)) when opening the Memory"
            )

    return LangChainEmbeddingFunction


def embedding_function(embed: Any) -> Any:
    """``Memory(embedding_function=embedding_function(my_embeddings))``: memtend embeds with ``my_embeddings``
    (a LangChain ``Embeddings``, a sync function of a list of texts, or a ``"provider:model"`` string)."""
    return _function_class()(embed)


def embeds_with(memory: Any, embed: Any) -> bool:
    """True when ``memory`` embeds with ``embed`` (itself, or the object given to :func:`embedding_function`)."""
    function = getattr(memory, "embedding_function", None)
    return function is embed or getattr(function, "source", None) is embed
