"""The workstation stand-ins read from unpacked Debian trees: source code (GitHub role),
technical documentation (OpenWebText2 role), novels (NarrativeQA role) and the larger R
vignette set (arXiv role), on hand-made trees laid out like the real packages."""
from dataclasses import replace
from pathlib import PurePosixPath

import numpy as np
import pytest

from lenex.data import code, corpus, fetch, novels, rnw, techdocs
from lenex.data import sources
from lenex.data.sources import debian_rvignettes
from test_data_debian import PAPER, lazyload_db, serialize, unpacked

GO = code.SOURCE_TREES["golang-1.19-src"].folder
RUST = code.SOURCE_TREES["rust-src"].folder


# --- source code ----------------------------------------------------------------------

def test_code_keeps_sources_and_groups_by_folder(tmp_path):
    unpacked(tmp_path, "golang-1.19-src", {
        f"{GO}/net/http/server.go": "package http\n",
        f"{GO}/net/http/server_test.go": "package http\n",
        f"{GO}/net/http/testdata/bad.go": "broken(\n",
        f"{GO}/vendor/golang.org/x/net/idna/idna.go": "package idna\n",
        f"{GO}/time/tzdata/zipdata.go": "const zipdata = \"PK\\x03\"\n",
        f"{GO}/fmt/print.go": "package fmt\n",
        f"{GO}/fmt/empty.go": "  \n",
        f"{GO}/README.vendor": "not go\n",
    })
    unpacked(tmp_path, "rust-src", {
        f"{RUST}/core/src/num/mod.rs": "pub mod dec2flt;\n",
        f"{RUST}/core/src/lib.rs": "#![no_std]\n",
        f"{RUST}/core/tests/num.rs": "#[test] fn t() {}\n",
        f"{RUST}/core/benches/b.rs": "fn b() {}\n",
        f"{RUST}/stdarch/crates/core_arch/src/x86/avx.rs": "pub fn _mm256() {}\n",
    })
    docs = code.read_source_trees(tmp_path)
    assert [(d.doc_id, d.group) for d in docs] == [
        ("go/fmt/print.go", "go/fmt"), ("go/net/http/server.go", "go/net/http"),
        ("rust/core/src/lib.rs", "rust/core"), ("rust/core/src/num/mod.rs", "rust/core/num")]
    assert docs[0].text == "package fmt\n"  # code kept byte for byte


def test_code_selection_rule_and_groups():
    go = code.SOURCE_TREES["golang-1.19-src"]
    assert code.is_kept(PurePosixPath("crypto/tls/conn.go"), go)
    assert not code.is_kept(PurePosixPath("crypto/tls/conn_test.go"), go)
    assert not code.is_kept(PurePosixPath("cmd/vendor/x/y.go"), go)
    assert code.file_group("go", PurePosixPath("cmd/compile/internal/ssa/rewrite.go")) == \
        "go/cmd/compile/internal/ssa"
    assert code.file_group("rust", PurePosixPath("lib.rs")) == "rust/lib"


def test_code_errors(tmp_path):
    with pytest.raises(ValueError, match="no source layout known for Debian package 'gcc-12'"):
        code.read_source_trees(tmp_path, ["gcc-12"])
    with pytest.raises(FileNotFoundError, match="--out .* rust-src"):
        code.read_source_trees(tmp_path, ["rust-src"])
    unpacked(tmp_path, "rust-src", {f"{RUST}/core/src/lib.rs": b"// caf\xe9\n"})
    with pytest.raises(ValueError, match="lib.rs is not valid UTF-8"):
        code.read_source_trees(tmp_path, ["rust-src"])


# --- technical documentation ------------------------------------------------------------

LINUX = techdocs.DOC_TREES["linux-doc-6.1"].folder
PAGE = "Memory management\n=================\n\n" + "The page allocator hands out pages. " * 40


def test_techdocs_pages_without_translations_or_stubs(tmp_path):
    unpacked(tmp_path, "linux-doc-6.1", {
        f"{LINUX}/mm/page_alloc.rst.txt": PAGE,
        f"{LINUX}/translations/zh_CN/mm/page_alloc.rst.txt": PAGE,
        f"{LINUX}/index.rst.txt": ".. toctree::\n   mm/index\n",
        f"{LINUX}/mm/notes.txt": PAGE,
    })
    unpacked(tmp_path, "perl-doc", {f"{techdocs.DOC_TREES['perl-doc'].folder}/perlintro.pod": PAGE})
    docs = techdocs.read_doc_trees(tmp_path, ["linux-doc-6.1", "perl-doc"])
    assert [(d.doc_id, d.group) for d in docs] == [("linux/mm/page_alloc", "linux/mm/page_alloc"),
                                                   ("perl/perlintro", "perl/perlintro")]
    assert docs[0].text == PAGE.strip()


def test_techdocs_errors(tmp_path):
    with pytest.raises(ValueError, match="no documentation layout known"):
        techdocs.read_doc_trees(tmp_path, ["gcc-doc"])
    with pytest.raises(FileNotFoundError, match="no \\*.pod pages under .*perl-doc"):
        techdocs.read_doc_trees(tmp_path, ["perl-doc"])


# --- novels: Austen and Moby-Dick -------------------------------------------------------

MOBY = ("\ufeffThe Project Gutenberg EBook of Moby Dick\r\n\r\n*** START OF THIS PROJECT GUTENBERG "
        "EBOOK MOBY DICK ***\r\n\r\nCall me Ishmael.\r\n\r\n*** END OF THIS PROJECT GUTENBERG EBOOK ***\r\nlicence")


def moby_db(tmp_path, value):
    data_dir = lazyload_db(tmp_path, {"mobydick": serialize(tmp_path, value)})
    target = fetch.unpacked_root(tmp_path, novels.MOBY_DICK_PACKAGE) / novels.MOBY_DICK_DATA
    target.parent.mkdir(parents=True)
    data_dir.rename(target)


def test_moby_dick_without_gutenberg_licence(tmp_path):
    moby_db(tmp_path, np.array([MOBY]))
    docs = novels.read_novels(tmp_path, [novels.MOBY_DICK_PACKAGE])
    assert [(d.doc_id, d.group, d.text) for d in docs] == [("mobydick", "mobydick", "Call me Ishmael.")]


def test_novels_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="--role novels"):
        novels.read_moby_dick(tmp_path)
    with pytest.raises(ValueError, match="should be one string, found 2 values"):
        novels.gutenberg_string(np.array(["a", "b"]), "x")
    with pytest.raises(ValueError, match="novel packages must be among"):
        novels.read_novels(tmp_path, ["r-cran-harrypotter"])


# --- R vignettes: R Markdown and per-package groups ---------------------------------------

RMD = ("---\ntitle: \"Quick start\"\noutput: rmarkdown::html_vignette\n---\n\n# Intro\n\n"
       + "We fit a mixed model. " * 60 + "\n```{r}\nfit <- lmer(y ~ x + (1 | g))\n```\n")


def test_markdown_body_drops_the_yaml_header_only():
    assert rnw.markdown_body(RMD).startswith("# Intro\n\nWe fit")
    assert rnw.markdown_body("no header\n---\n") == "no header\n---"


def test_rvignettes_read_rmd_and_group_by_package(tmp_path):
    doc = "usr/lib/R/site-library/{}/doc/{}"
    unpacked(tmp_path, "r-cran-party", {doc.format("party", "party.Rnw"): PAPER})
    unpacked(tmp_path, "r-cran-partykit", {doc.format("partykit", "ctree.Rnw"): PAPER.replace("Intro", "Trees"),
                                           doc.format("partykit", "guide.Rmd"): RMD})
    packages = ["r-cran-party", "r-cran-partykit"]
    docs = rnw.read_rnw_vignettes(tmp_path, packages, debian_rvignettes.R_VIGNETTE_KINDS,
                                  debian_rvignettes.PACKAGE_GROUP_ALIASES)
    assert [(d.doc_id, d.group) for d in docs] == [("party/party", "party"), ("partykit/ctree", "party"),
                                                   ("partykit/guide", "party")]
    assert docs[2].text == rnw.markdown_body(RMD)
    # the default kinds and groups (the tiny preset's arxiv) are unchanged: no Rmd, per paper
    assert [(d.doc_id, d.group) for d in rnw.read_rnw_vignettes(tmp_path, packages)] == [
        ("party/party", "party/party"), ("partykit/ctree", "party/party")]
    with pytest.raises(ValueError, match="vignette kinds must be a non-empty subset"):
        rnw.vignette_files(tmp_path, ("md",))


def test_rvignettes_source_reads_its_package_list(tmp_path, monkeypatch):
    declared = debian_rvignettes.SOURCE
    assert declared.packages == debian_rvignettes.R_VIGNETTE_PACKAGES
    assert len(set(declared.packages)) == len(declared.packages) == 347
    monkeypatch.setitem(sources.SOURCES, "debian_rvignettes", replace(declared, packages=("r-cran-party",)))
    unpacked(tmp_path, "r-cran-party", {"usr/lib/R/site-library/party/doc/party.Rnw": PAPER})
    docs = corpus.read_corpus({"source": "debian_rvignettes", "path": str(tmp_path)})
    assert [(d.doc_id, d.group) for d in docs] == [("party/party", "party")]
