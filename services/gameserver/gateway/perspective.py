"""The seat's own-perspective state now lives in the core: `renature.perspective`."""

from renature.perspective import HIDDEN, decode_state, encode_state, perspective

__all__ = ["HIDDEN", "decode_state", "encode_state", "perspective"]
