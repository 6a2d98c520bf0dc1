"""Issue 36, files and keys: stale temporary files of killed writes go, a full disk names the
file, a YAML key given twice is refused with file and line wherever lenex or the Snakefile reads
YAML, and the Snakefile run from another folder says so in one line."""

import errno
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import lenex.files
from lenex.claims.evaluate import load_claims
from lenex.files import atomic_write, atomic_write_text, read_yaml
from lenex.scale_study.study import load_study
from lenex.tables.render import load_experiment
from subprocess_env import env_with_venv

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"


def _dead_pid() -> int:
    return int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True).stdout)


def test_stale_temporaries_go_when_the_next_write_of_the_target_succeeds(tmp_path):
    """A write killed mid-way leaves `.m.pt.<...>.tmp` (up to 136 MB in a `tiny` run) that today
    nothing removes; the next successful write of m.pt removes the ones whose writer is gone."""
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        stale_old = tmp_path / ".m.pt.k3j4h5g6.tmp"  # named before the pid was part of the name
        stale_dead = tmp_path / f".m.pt.{_dead_pid()}-a1b2c3d4.tmp"
        in_progress = tmp_path / f".m.pt.{live.pid}-d4e5f6g7.tmp"
        other_target = tmp_path / ".m.pt.json.k3j4h5g6.tmp"
        for path in (stale_old, stale_dead, in_progress, other_target):
            path.write_bytes(b"half a checkpoint")
        atomic_write_text(tmp_path / "m.pt", "whole")
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["m.pt", in_progress.name, other_target.name])
    finally:
        live.kill()
        live.wait()


def test_a_full_disk_names_the_file(tmp_path):
    """/dev/full fails every write with ENOSPC: Python names no file, today's message neither."""
    target = tmp_path / "m.pt"
    with pytest.raises(OSError) as full:
        atomic_write(target, lambda tmp: Path("/dev/full").write_bytes(b"x" * 65536))
    assert full.value.errno == errno.ENOSPC and str(target) in str(full.value) and "disk full" in str(full.value)
    assert list(tmp_path.iterdir()) == []


def test_torch_on_a_full_disk_names_the_file(tmp_path, monkeypatch):
    """torch.save says only "[enforce fail at inline_container.cc:672] . unexpected pos"; with no
    free space left on the target's file system that is a full disk, named with the file."""
    target = tmp_path / "m.pt"
    save = lambda tmp: torch.save({"w": torch.zeros(1000)}, "/dev/full")  # torch's own error text
    with pytest.raises(RuntimeError, match="inline_container"):  # space left: torch's error, unchanged
        atomic_write(target, save)
    monkeypatch.setattr(lenex.files.shutil, "disk_usage", lambda p: shutil._ntuple_diskusage(10**9, 10**9, 0))
    with pytest.raises(OSError, match=rf"disk full: could not write {re.escape(str(target))} \(0 bytes free.*"
                                      r"inline_container"):
        atomic_write(target, save)


def _with_duplicate(source: Path, target: Path) -> tuple[str, int, int]:
    """Copy `source` with its first top-level key repeated at the end: (key, first line, its line)."""
    lines = source.read_text().splitlines()
    first = next(i for i, line in enumerate(lines) if re.match(r"^[a-z_]+:", line))
    target.write_text("\n".join(lines + [lines[first]]) + "\n")
    return lines[first].split(":")[0], first + 1, len(lines) + 1


@pytest.mark.parametrize("source, read", [
    ("config/presets/tiny.yaml", read_yaml),
    ("config/experiments/lex.yaml", load_experiment),
    ("config/claims/lex.yaml", load_claims),
    ("config/scale-study.yaml", load_study),
])
def test_a_duplicate_yaml_key_is_refused_with_file_line_and_key(tmp_path, source, read):
    """PyYAML keeps the last of two equal keys silently (`steps:` twice in a preset trains the
    second value); every YAML the library reads refuses it."""
    copy = tmp_path / Path(source).name
    key, first, line = _with_duplicate(REPO / source, copy)
    with pytest.raises(ValueError, match=re.escape(f"{copy}: line {line}: duplicate key {key!r} (first at line {first})")):
        read(copy)


def test_a_nested_duplicate_is_refused_and_merge_keys_still_override(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("base: &b {lr: 1, steps: 2}\nrun:\n  <<: *b\n  lr: 3\ntrain:\n  steps: 10\n  lr: 1\n  steps: 20\n")
    with pytest.raises(ValueError, match=re.escape(f"{path}: line 8: duplicate key 'steps' (first at line 6)")):
        read_yaml(path)
    path.write_text("base: &b {lr: 1, steps: 2}\nrun:\n  <<: *b\n  lr: 3\n")
    assert read_yaml(path)["run"] == {"lr": 3, "steps": 2}


def _scratch_workflow(path: Path) -> Path:
    path.mkdir()
    for name in ("Snakefile", "workflow"):
        (path / name).symlink_to(REPO / name)
    shutil.copytree(REPO / "config", path / "config")
    return path


def _snakemake(cwd, *args):
    env = env_with_venv(PYTHONPATH=str(SRC))
    return subprocess.run([sys.executable, "-m", "snakemake", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


@pytest.mark.parametrize("where", ["config.yaml", "presets/tiny.yaml", "--configfile"])
def test_a_duplicate_config_key_fails_the_dry_run(tmp_path, where):
    """config/config.yaml and a --configfile are loaded by Snakemake, a preset by the rules; each
    duplicate is one error with file and line, before any job."""
    work = _scratch_workflow(tmp_path / "w")
    if where == "--configfile":
        broken, args = tmp_path / "mine.yaml", ["--configfile", str(tmp_path / "mine.yaml")]
        broken.write_text("preset: tiny\nfrom_raw: false\npreset: tiny\n")
        key, line = "preset", 3
    else:
        broken, args = work / "config" / where, []
        key, _, line = _with_duplicate(REPO / "config" / where, broken)
    run = _snakemake(work, "-n", "results/tiny/tables/lex/table2.md", *args)  # --configfile takes several
    said = run.stdout + run.stderr
    assert run.returncode != 0
    assert re.search(rf"(^|\s|/){re.escape(str(broken.relative_to(work)) if where == 'config.yaml' else broken.name)}: "
                     rf"line {line}: duplicate key '{key}'", said, re.M), said


def test_the_snakefile_run_from_another_folder_says_so_in_one_line(tmp_path):
    run = _snakemake(tmp_path, "-s", str(REPO / "Snakefile"), "-n")
    assert run.returncode == 1
    lines = (run.stdout + run.stderr).strip().splitlines()
    assert lines == [f"error: {tmp_path} is not a lenex checkout (no config/config.yaml): the workflow reads config/ "
                     f"and writes results/ in its working directory; run it from {REPO} or add --directory {REPO}"]
