"""`agxfuzz stats`: shader-db style reports of pipelines that differ in one pass.

`comparisons` (the rows, as data), `metrics` (what one compiled program measures),
`sharing` (many pipelines over one program without repeating shared work), `runner` (the
corpus and the worker processes), `report` (helped/HURT, totals, bootstrap intervals, the
table and CSV), `plot` (the PNG). The command itself is `fuzz.commands.stats`.
"""
