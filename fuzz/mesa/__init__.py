"""Mesa's real AGX backend under test: a C bridge (`c/`) built from a Mesa tree
(`build`), the wire form between the model's IR and Mesa's (`wire`, by the opcode table in
`opcodes`), a client for the persistent bridge process (`client`), Mesa's passes as passes
under test (`passes`), translatable programs (`translatable`) and `run --mesa` (`campaign`).
See docs/mesa.md.
"""
