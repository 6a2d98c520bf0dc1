"""arXiv's workstation stand-in: the R vignettes of 347 Debian packages, read as
``lenex.data.rnw`` reads the default's (``debian_rnw``) 39 hand-picked ones, R Markdown too.

Selection rule, measured on Debian bookworm (snapshot 2025-05-20) by downloading every
``r-cran-*`` and ``r-bioc-*`` package under 20 MB (1,276 packages): keep a package when
its vignette sources (``.Rnw``, ``.tex`` without an ``.Rnw`` twin, ``.Rmd``; bodies as
``lenex.data.rnw`` reads them, byte-identical files once) hold at least 5,000 GPT-2
tokens in documents of at least 2,048 tokens. 347 packages, about 7.0M tokens, 562 MB
of .deb files. Unlike the curated set these include tutorials and package guides besides
journal papers, and R Markdown besides LaTeX.

Split groups are whole R packages: vignettes of one package often share long passages
(measured, 8-word shingles: vioplot's violin and histogram guides 77%, decoupleR's
pathway and TF guides 67%, Matrix's two introductions 68%), so a package never
straddles splits. ``PACKAGE_GROUP_ALIASES`` puts packages that republish each other's
text in one group (largest shared share first: party/partykit 83%, psych/psychTools
58%, spdep/spatialreg 38%, dplyr/tidyr 27%, AnnotationHub/BiocFileCache 22%,
HSAUR3/multcomp 18%; every other pair across packages shares at most 15%).
"""
from __future__ import annotations

from ..rnw import read_rnw_vignettes
from . import SOURCES, Debian

R_VIGNETTE_PACKAGES = (
    "r-bioc-affy", "r-bioc-annotate", "r-bioc-annotationdbi", "r-bioc-annotationhub",
    "r-bioc-ballgown", "r-bioc-basilisk", "r-bioc-beachmat", "r-bioc-biobase",
    "r-bioc-bioccheck", "r-bioc-biocfilecache", "r-bioc-biocparallel", "r-bioc-biocstyle",
    "r-bioc-biomart", "r-bioc-biostrings", "r-bioc-biovizbase", "r-bioc-bluster",
    "r-bioc-bsgenome", "r-bioc-bsseq", "r-bioc-chemminer", "r-bioc-cner", "r-bioc-cummerbund",
    "r-bioc-decoupler", "r-bioc-delayedarray", "r-bioc-demixt", "r-bioc-deseq", "r-bioc-deseq2",
    "r-bioc-destiny", "r-bioc-dexseq", "r-bioc-drimseq", "r-bioc-dss", "r-bioc-dupradar",
    "r-bioc-ebseq", "r-bioc-edaseq", "r-bioc-eir", "r-bioc-ensembldb", "r-bioc-fishpond",
    "r-bioc-genomicalignments", "r-bioc-genomicfiles", "r-bioc-genomicranges", "r-bioc-goseq",
    "r-bioc-graph", "r-bioc-grohmm", "r-bioc-gsva", "r-bioc-gviz", "r-bioc-hilbertvis",
    "r-bioc-ihw", "r-bioc-iranges", "r-bioc-isoformswitchanalyzer", "r-bioc-megadepth",
    "r-bioc-mergeomics", "r-bioc-metagenomeseq", "r-bioc-mofa", "r-bioc-multiassayexperiment",
    "r-bioc-mutationalpatterns", "r-bioc-netsam", "r-bioc-noiseq", "r-bioc-pcamethods",
    "r-bioc-phyloseq", "r-bioc-pwmenrich", "r-bioc-qusage", "r-bioc-qvalue", "r-bioc-rbgl",
    "r-bioc-rcpi", "r-bioc-rgsepd", "r-bioc-rhdf5", "r-bioc-rsamtools", "r-bioc-rtracklayer",
    "r-bioc-s4vectors", "r-bioc-singlecellexperiment", "r-bioc-snpstats",
    "r-bioc-structuralvariantannotation", "r-bioc-summarizedexperiment", "r-bioc-sva",
    "r-bioc-tcgabiolinks", "r-bioc-tfbstools", "r-bioc-titancna", "r-bioc-tximeta",
    "r-bioc-tximport", "r-bioc-variantannotation", "r-cran-actuar", "r-cran-adegraphics",
    "r-cran-adephylo", "r-cran-afex", "r-cran-alakazam", "r-cran-amelia", "r-cran-apcluster",
    "r-cran-ape", "r-cran-arsenal", "r-cran-batchtools", "r-cran-bayesfactor", "r-cran-bayesm",
    "r-cran-bayesplot", "r-cran-bbmle", "r-cran-bdgraph", "r-cran-bit", "r-cran-bms",
    "r-cran-bradleyterry2", "r-cran-brglm2", "r-cran-bridgesampling", "r-cran-brms",
    "r-cran-brobdingnag", "r-cran-calibrate", "r-cran-classint", "r-cran-clock",
    "r-cran-clubsandwich", "r-cran-clue", "r-cran-cmstatr", "r-cran-coin", "r-cran-colorspace",
    "r-cran-corrplot", "r-cran-cpp11", "r-cran-crul", "r-cran-cubature", "r-cran-curl",
    "r-cran-cutpointr", "r-cran-data.table", "r-cran-datawizard", "r-cran-dbi", "r-cran-dbplyr",
    "r-cran-dbscan", "r-cran-dendextend", "r-cran-desolve", "r-cran-dimred", "r-cran-distr",
    "r-cran-dorng", "r-cran-dosefinding", "r-cran-dplyr", "r-cran-dqrng", "r-cran-e1071",
    "r-cran-effects", "r-cran-effectsize", "r-cran-egg", "r-cran-ei", "r-cran-elliptic",
    "r-cran-emmeans", "r-cran-enrichwith", "r-cran-epiestim", "r-cran-epir", "r-cran-erm",
    "r-cran-evd", "r-cran-expint", "r-cran-fitdistrplus", "r-cran-flexmix", "r-cran-foreach",
    "r-cran-forecast", "r-cran-formula", "r-cran-gargle", "r-cran-gbm", "r-cran-gdata",
    "r-cran-genoplotr", "r-cran-geoknife", "r-cran-geosphere", "r-cran-ggalluvial",
    "r-cran-ggfortify", "r-cran-ggplot2", "r-cran-ggraph", "r-cran-ggrastr", "r-cran-ggridges",
    "r-cran-ggsci", "r-cran-ggtext", "r-cran-gitcreds", "r-cran-glmmtmb", "r-cran-glmnet",
    "r-cran-globaloptions", "r-cran-gnm", "r-cran-googlevis", "r-cran-goplot",
    "r-cran-gprofiler2", "r-cran-gridbase", "r-cran-gridsvg", "r-cran-gstat", "r-cran-gsubfn",
    "r-cran-guerry", "r-cran-gwidgets", "r-cran-hardhat", "r-cran-hdf5r", "r-cran-heatmaply",
    "r-cran-hexbin", "r-cran-hsaur3", "r-cran-htmltable", "r-cran-htmlwidgets", "r-cran-httr",
    "r-cran-hypergeo", "r-cran-incidence", "r-cran-interp", "r-cran-ipred", "r-cran-irace",
    "r-cran-irlba", "r-cran-iso", "r-cran-iterators", "r-cran-jsonlite", "r-cran-kedd",
    "r-cran-kernlab", "r-cran-kutils", "r-cran-laeken", "r-cran-lava", "r-cran-lazyeval",
    "r-cran-leiden", "r-cran-lhs", "r-cran-libcoin", "r-cran-lintr", "r-cran-lme4",
    "r-cran-logcondens", "r-cran-logger", "r-cran-loo", "r-cran-magick", "r-cran-magrittr",
    "r-cran-markovchain", "r-cran-matchit", "r-cran-matrix", "r-cran-maxlik", "r-cran-mcmc",
    "r-cran-mediana", "r-cran-mertools", "r-cran-metap", "r-cran-mets", "r-cran-mitml",
    "r-cran-mixtools", "r-cran-mlmrev", "r-cran-mnp", "r-cran-multcomp", "r-cran-natserv",
    "r-cran-ncdfgeom", "r-cran-network", "r-cran-nmf", "r-cran-openmx", "r-cran-openxlsx",
    "r-cran-optimx", "r-cran-ordinal", "r-cran-pander", "r-cran-partitions", "r-cran-party",
    "r-cran-partykit", "r-cran-permute", "r-cran-phangorn", "r-cran-phylobase",
    "r-cran-pkgdown", "r-cran-plm", "r-cran-pls", "r-cran-poissonbinomial", "r-cran-popepi",
    "r-cran-posterior", "r-cran-powerlaw", "r-cran-projpred", "r-cran-promises", "r-cran-proto",
    "r-cran-pscl", "r-cran-psych", "r-cran-psychotree", "r-cran-psychtools", "r-cran-purrr",
    "r-cran-pwr", "r-cran-qtl", "r-cran-rcdk", "r-cran-rcmdr", "r-cran-rcppdist",
    "r-cran-rcppeigen", "r-cran-rdbnomics", "r-cran-rdflib", "r-cran-rdpack", "r-cran-readr",
    "r-cran-readxl", "r-cran-recipes", "r-cran-rentrez", "r-cran-reticulate", "r-cran-rgdal",
    "r-cran-rgenoud", "r-cran-rgl", "r-cran-rhandsontable", "r-cran-rmarkdown", "r-cran-rmpfr",
    "r-cran-rnexml", "r-cran-robustbase", "r-cran-rockchalk", "r-cran-rodbc", "r-cran-rotl",
    "r-cran-roxygen2", "r-cran-rpart", "r-cran-rpf", "r-cran-rrcov", "r-cran-rsample",
    "r-cran-rstan", "r-cran-rstanarm", "r-cran-rstantools", "r-cran-rtdists", "r-cran-rtweet",
    "r-cran-runit", "r-cran-sandwich", "r-cran-sass", "r-cran-scatterd3", "r-cran-seriation",
    "r-cran-seroincidence", "r-cran-sets", "r-cran-sf", "r-cran-shape", "r-cran-shazam",
    "r-cran-shinyjs", "r-cran-sitmo", "r-cran-sjmisc", "r-cran-sjplot", "r-cran-skimr",
    "r-cran-smcfcs", "r-cran-solrium", "r-cran-sp", "r-cran-spacetime", "r-cran-sparsem",
    "r-cran-spatialreg", "r-cran-spatstat", "r-cran-spdep", "r-cran-splines2",
    "r-cran-stanheaders", "r-cran-stars", "r-cran-stringr", "r-cran-strucchange",
    "r-cran-surveillance", "r-cran-survival", "r-cran-susier", "r-cran-svunit",
    "r-cran-systemfit", "r-cran-tcr", "r-cran-testthat", "r-cran-tgp", "r-cran-th.data",
    "r-cran-tibble", "r-cran-tidyr", "r-cran-tidyselect", "r-cran-tikzdevice",
    "r-cran-timeseries", "r-cran-tinytest", "r-cran-tm", "r-cran-treescape", "r-cran-tsp",
    "r-cran-unitizer", "r-cran-units", "r-cran-utf8", "r-cran-vcd", "r-cran-vcdextra",
    "r-cran-vctrs", "r-cran-vegan", "r-cran-vioplot", "r-cran-vipor", "r-cran-vroom",
    "r-cran-wikitaxa", "r-cran-worrms", "r-cran-xtable", "r-cran-xts", "r-cran-zoo"
)
R_VIGNETTE_KINDS = ("Rnw", "tex", "Rmd")
# R package -> the R package whose group it joins (see the docstring for the measurements)
PACKAGE_GROUP_ALIASES = {
    "partykit": "party", "psychTools": "psych", "spatialreg": "spdep", "tidyr": "dplyr",
    "BiocFileCache": "AnnotationHub", "multcomp": "HSAUR3",
}


def read(root, packages, spec):
    return read_rnw_vignettes(root, packages, R_VIGNETTE_KINDS, PACKAGE_GROUP_ALIASES)


SOURCE = SOURCES.register(Debian(read, R_VIGNETTE_PACKAGES), name="debian_rvignettes")
