"""The kinds of phi the program builder creates before it fills a block's body.

The builder (`fuzz.generate.program`) pre-creates each block's phis and tags each with
its kind; the shape modules read the tags (the exec-compare shapes turn a data or
loop-carried phi into a pending compare). A module of its own so that both can import it
without importing each other.
"""

from __future__ import annotations

# A plain data phi; one carried around a loop; a loop's counter; a guarded region's
# counter; a member of pressure_shapes' rotating groups; a join phi of an entry value.
DATA, CARRIED, COUNTER, GUARD_COUNTER, ROTATED, ENTRY = range(6)
