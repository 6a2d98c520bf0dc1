"""arXiv's stand-in in the default config: the LaTeX/Sweave vignettes of journal papers in 39
hand-picked Debian ``r-cran-*`` packages (lenex.data.rnw); ``parts:`` picks the vignette kinds."""
from __future__ import annotations

from ..rnw import DEFAULT_KINDS, RNW_PACKAGES, read_rnw_vignettes
from . import SOURCES, Debian


def read(root, packages, spec):
    return read_rnw_vignettes(root, packages, tuple(spec.get("parts") or DEFAULT_KINDS))


SOURCE = SOURCES.register(Debian(read, RNW_PACKAGES), name="debian_rnw")
