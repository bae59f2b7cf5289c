"""The bridge's wire form, front door: `encode` a `Function` (exec or machine level) as the
numeric lines the C side (`fuzz/mesa/c/wire.c`) turns into Mesa's `agx_context`, and
`decode` Mesa's answer back as a `Function`, by the one opcode table
(`fuzz/mesa/opcodes.py`).

All parsing of the project's text stays in Python; the C side only reads numbers. The
vocabulary both directions share is `fuzz/mesa/wire_format.py`; the directions are
`wire_encode.py` and `wire_decode.py`.
"""

from __future__ import annotations

from fuzz.mesa.wire_decode import decode
from fuzz.mesa.wire_encode import encode
from fuzz.mesa.wire_format import Liveness, Names, Untranslatable, WireError

__all__ = ["Liveness", "Names", "Untranslatable", "WireError", "decode", "encode"]
