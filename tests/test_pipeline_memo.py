"""What the DAG build keeps between runs (lenex.pipeline.memo): a result is reused only for the same
files' bytes, computed anew after any edit, never kept when it failed, and a cut file is recomputed."""

import pytest

from lenex.pipeline.memo import files_digest, remembered


def test_a_result_is_reused_for_the_same_bytes_and_computed_anew_after_an_edit(tmp_path):
    source, calls = tmp_path / "a.yaml", []
    source.write_text("x: 1\n")

    def parse():
        calls.append(1)
        return source.read_text()

    assert remembered(tmp_path / "stamps", "parse", [source], parse) == "x: 1\n"
    assert remembered(tmp_path / "stamps", "parse", [source], parse) == "x: 1\n" and len(calls) == 1
    source.write_text("x: 2\n")  # same size, same second: only the bytes tell
    assert remembered(tmp_path / "stamps", "parse", [source], parse) == "x: 2\n" and len(calls) == 2
    assert remembered(tmp_path / "stamps", "other kind", [source], parse) == "x: 2\n" and len(calls) == 3
    assert remembered(tmp_path / "stamps", "parse", [source], parse, extra="another input") and len(calls) == 4


def test_a_failure_is_never_kept(tmp_path):
    source = tmp_path / "claims.yaml"
    source.write_text("bad\n")

    def check():
        raise ValueError("claims.yaml: bad")

    for _ in range(2):  # the second run checks again, and fails again
        with pytest.raises(ValueError, match="claims.yaml: bad"):
            remembered(tmp_path, "check", [source], check)
    assert not list(tmp_path.glob("memo/*"))


def test_a_kept_result_cut_short_is_computed_again(tmp_path):
    source = tmp_path / "a"
    source.write_text("a")
    remembered(tmp_path / "s", "k", [source], lambda: {"value": 1})
    (kept,) = (tmp_path / "s" / "memo").glob("*.pickle")
    kept.write_bytes(kept.read_bytes()[:3])
    assert remembered(tmp_path / "s", "k", [source], lambda: {"value": 2}) == {"value": 2}


def test_the_digest_names_a_missing_file_apart_from_an_empty_one(tmp_path):
    empty = tmp_path / "empty"
    empty.write_text("")
    assert files_digest("k", [empty]) != files_digest("k", [tmp_path / "missing"])
    assert files_digest("k", [empty]) == files_digest("k", [empty]) != files_digest("k2", [empty])
