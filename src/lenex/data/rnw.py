"""Science stand-in (for arXiv, Cohan et al. 2018): the LaTeX/Sweave vignettes of
journal papers shipped in Debian ``r-cran-*`` packages.

Many are Journal of Statistical Software articles (43 of the 101 files use the ``jss``
document class: sandwich, zoo, lme4, partykit, ...); the rest are R News articles,
technical reports and long-form package papers (survival, strucchange, robustbase, mcmc). Unlike Cohan et al.'s arXiv set (plain text with math
replaced by @xmath tokens) this is the raw LaTeX source, R code chunks included.

Layout read (``root`` is the ``--out`` folder of ``python -m lenex.data.debian``)::

    <root>/<debian pkg>/root/usr/lib/R/site-library/<R pkg>/doc/*.Rnw   (and *.tex)
    <root>/<debian pkg>/root/usr/lib/R/library/<R pkg>/doc/*.Rnw        (survival: a
                                                    "recommended" package lives there)

What one Document keeps: the text strictly between ``\\begin{document}`` and
``\\end{document}``, verbatim (LaTeX markup, comments and ``<<>>= ... @`` code chunks
stay). The preamble is dropped because it is package loading, macro definitions and
Sweave/vignette options repeated across files, not prose; for the ``jss`` class this
also drops the title and abstract, which that class takes in the preamble. Text after
``\\end{document}`` is ignored by LaTeX and dropped too. A file without
``\\begin{document}`` (a child file) is kept whole. Bodies shorter than
``MIN_BODY_CHARS`` are stubs (e.g. a vignette that only runs code, or points to a PDF)
and are dropped. A ``.tex`` with the stem of an ``.Rnw`` next to it is Sweave's output,
not a second paper, and is skipped; files with the same bytes as one already read
(in any package) are dropped.

With ``kinds`` including "Rmd" (the workstation set, source ``debian_rvignettes``), R
Markdown vignettes are read too: the file without its YAML header, Markdown and
```{r} chunks kept verbatim.
"""
from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Iterable
from pathlib import Path

from .documents import Document, read_utf8
from .fetch import unpacked_root

log = logging.getLogger(__name__)

# Chosen by downloading 83 of bookworm's r-cran-* packages and measuring the vignettes
# in their doc/ folders: these 39 give 98 papers, ~1.15M GPT-2 tokens. Left out:
# packages whose .Rnw files are stubs pointing to PDFs (r-cran-rcpp, most of
# r-cran-surveillance), changelogs rather than papers (r-cran-spatstat's
# updates/bugfixes), tutorials and big packages with little paper text
# (r-cran-matrix, r-cran-vegan, r-cran-ape, r-cran-sp, r-cran-psych).
RNW_PACKAGES = (
    "r-cran-actuar", "r-cran-aer", "r-cran-bbmle", "r-cran-coin", "r-cran-colorspace",
    "r-cran-desolve", "r-cran-e1071", "r-cran-elliptic", "r-cran-erm", "r-cran-flexmix",
    "r-cran-formula", "r-cran-gsl", "r-cran-gstat", "r-cran-kernlab", "r-cran-ks",
    "r-cran-lme4", "r-cran-lmtest", "r-cran-maxlik", "r-cran-mcmc", "r-cran-mixtools",
    "r-cran-multcomp", "r-cran-mvtnorm", "r-cran-ordinal", "r-cran-partitions",
    "r-cran-party", "r-cran-partykit", "r-cran-pscl", "r-cran-rcppeigen",
    "r-cran-robustbase", "r-cran-sandwich", "r-cran-sets", "r-cran-spacetime",
    "r-cran-strucchange", "r-cran-survival", "r-cran-systemfit", "r-cran-tm",
    "r-cran-vcd", "r-cran-xts", "r-cran-zoo",
)
MIN_BODY_CHARS = 1000
# Papers republished in a second package share one split group so no text leaks
# across splits (measured: share of the smaller paper's 8-word shingles found in the
# other). Every other pair of the 98 papers shares at most 14%.
GROUP_ALIASES = {
    "partykit/ctree": "party/party",  # 83%: ctree re-tells party's conditional trees
    "partykit/mob": "party/MOB",      # 34%: the model-based recursive partitioning paper
}
LAYOUT = "<root>/<r-cran-pkg>/root/usr/lib/R/{site-library,library}/<R pkg>/doc/*.Rnw|*.tex"
_BEGIN = re.compile(r"\\begin\s*\{document\}")
_END = re.compile(r"\\end\s*\{document\}")
_YAML_HEADER = re.compile(r"\A---[ \t]*\n.*?\n---[ \t]*\n", re.DOTALL)
KINDS = ("Rnw", "tex", "Rmd")  # file suffixes a vignette source may have
DEFAULT_KINDS = ("Rnw", "tex")  # the curated set's: LaTeX papers only


def paper_body(source: str) -> str:
    """The text between \\begin{document} and \\end{document} (whole file if there is
    no \\begin{document}; to the end of the file if there is no \\end{document})."""
    begin = _BEGIN.search(source)
    if begin is None:
        return source.strip()
    end = _END.search(source, begin.end())
    return source[begin.end(): end.start() if end else len(source)].strip()


def markdown_body(source: str) -> str:
    """An R Markdown vignette without its YAML header (title, output format, vignette
    engine options: settings, not prose); the rest, chunks included, verbatim."""
    header = _YAML_HEADER.match(source)
    return source[header.end():].strip() if header else source.strip()


def vignette_body(path: Path, source: str) -> str:
    return markdown_body(source) if path.suffix == ".Rmd" else paper_body(source)


def vignette_files(package_root: Path, kinds: tuple[str, ...] = DEFAULT_KINDS) -> list[Path]:
    """Vignette sources of the given kinds under one unpacked package: *.Rnw, *.tex
    without an .Rnw twin (Sweave's output, whether or not .Rnw is read), *.Rmd."""
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown or not kinds:
        raise ValueError(f"vignette kinds must be a non-empty subset of {KINDS}, got {list(kinds)}")
    files = []
    for doc_dir in sorted(package_root.glob("usr/lib/R/*/*/doc")):
        rnw = sorted(doc_dir.glob("*.Rnw"))
        stems = {p.stem for p in rnw}
        files += rnw if "Rnw" in kinds else []
        files += [p for p in sorted(doc_dir.glob("*.tex")) if p.stem not in stems] if "tex" in kinds else []
        files += sorted(doc_dir.glob("*.Rmd")) if "Rmd" in kinds else []
    return [p for p in files if p.is_file()]


def _group(doc_id: str, package_groups: dict[str, str] | None) -> str:
    """Per paper (``GROUP_ALIASES``), or with ``package_groups`` (R package -> the package
    whose group it joins) per R package."""
    if package_groups is None:
        return GROUP_ALIASES.get(doc_id, doc_id)
    package = doc_id.split("/", 1)[0]
    return package_groups.get(package, package)


def read_rnw_vignettes(root: str | Path, packages: Iterable[str] = RNW_PACKAGES,
                       kinds: tuple[str, ...] = DEFAULT_KINDS,
                       package_groups: dict[str, str] | None = None) -> list[Document]:
    """One Document per paper vignette of ``packages`` under ``root``, sorted by doc_id;
    doc_id = group = "<R package>/<vignette stem>" (e.g. "sandwich/sandwich-OOP"),
    except that a republished paper takes its original's group (``GROUP_ALIASES``);
    with ``package_groups`` the group is the R package (``_group``)."""
    root = Path(root)
    packages = list(packages)
    missing = [p for p in packages if not unpacked_root(root, p).is_dir()]
    if len(missing) == len(packages):
        raise FileNotFoundError(f"no unpacked r-cran packages under {root} (expected {LAYOUT}); "
                                f"fetch them with: python -m lenex.data.debian --role rnw --out {root}")
    if missing:
        raise FileNotFoundError(f"{len(missing)} of the science packages are missing under {root}: "
                                f"{missing} (expected {LAYOUT}); fetch them with: python -m lenex.data.debian --role rnw --out {root}")
    found = []
    for package in packages:
        files = vignette_files(unpacked_root(root, package), tuple(kinds))
        if not files:
            log.warning("%s has no vignette sources (expected %s)", package, LAYOUT)
        found += [(f"{path.parent.parent.name}/{path.stem}", path) for path in files]
    if not found:
        raise FileNotFoundError(f"no vignettes under {root} (expected {LAYOUT})")

    ids = [doc_id for doc_id, _ in found]
    clashes = sorted({i for i in ids if ids.count(i) > 1})
    if clashes:
        raise ValueError(f"vignettes with the same <R package>/<stem> under {root}: {clashes}")
    docs, seen = [], {}
    for doc_id, path in sorted(found):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest in seen:
            log.info("skipping %s: same bytes as %s", doc_id, seen[digest])
            continue
        seen[digest] = doc_id
        body = vignette_body(path, read_utf8(path))
        if len(body) < MIN_BODY_CHARS:
            log.info("skipping %s: a %d-character stub, not a paper", doc_id, len(body))
            continue
        docs.append(Document(doc_id, _group(doc_id, package_groups), body))
    if not docs:
        raise FileNotFoundError(f"no vignette under {root} has a paper body of at least "
                                f"{MIN_BODY_CHARS} characters (expected {LAYOUT})")
    return docs
