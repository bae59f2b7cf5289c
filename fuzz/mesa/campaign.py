"""`agxfuzz run --mesa [DIR]`: a campaign over Mesa's real backend passes.

`mesa_units(directory)` points this process and its workers at the Mesa tree
(`AGXFUZZ_MESA_SRC`, inherited by the workers, each of which starts its own bridge), builds
the bridge (or finds it in the cache) before the campaign starts, and returns the passes
under test and the pipelines: each Mesa pass alone after `lower-cf`, `mesa:dce -> mesa:ra ->
mesa:lower-copies -> mesa:lower-pseudo` (agx_ra wants DCE first), then Mesa's own order,
`mesa:backend`. The campaign draws its
programs from `fuzz.mesa.translatable` (`CampaignConfig.mesa_translatable`).
"""

from __future__ import annotations

import os

from fuzz.mesa.build import build_bridge
from fuzz.mesa.fixes import ENV
from fuzz.mesa.passes import MESA_PIPELINES, mesa_prefix
from fuzz.passes_under_test import registered


def mesa_units(directory: str | None, *, with_fixes: bool = False) -> tuple[list, list[list]]:
    """(passes under test, pipelines); raises MesaBuildError (one line) when the tree
    cannot be built. `with_fixes`: the bridge is built with every patch of fuzz/mesa/fixes
    (AGXFUZZ_MESA_FIXES=1, inherited by the workers as the tree is)."""
    if directory:
        os.environ["AGXFUZZ_MESA_SRC"] = os.path.abspath(directory)
    if with_fixes:
        os.environ[ENV] = "1"
    build_bridge()  # now, so a bad tree is a usage error and the workers find it cached
    pipelines_names: list[list[str]] = []
    for pipeline in MESA_PIPELINES:
        names = mesa_prefix(pipeline[0])[:-1] + list(pipeline)
        if names not in pipelines_names:
            pipelines_names.append(names)
    units = {name: registered(name) for names in pipelines_names for name in names}
    pipelines = [[units[name] for name in names] for names in pipelines_names]
    return list(units.values()), pipelines
