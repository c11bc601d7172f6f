"""Vector representations shared by recommendations and vector search (text encoder, ANN helpers)."""

from aisle.vectors.text_encoder import TextEncoder

__all__ = ["TextEncoder"]
