"""The SLURM profile against a real SLURM cluster: a single-node cluster on loopback
(scripts/slurm/start_cluster.sh), one tiny training + one evaluation run through
`--profile profiles/slurm-ci` to the same numbers as the same jobs run locally, and a rule
that fails reported as failed. Every wait is bounded: a hang fails the test.

Skipped on a machine without root or the Debian packages (munge slurmctld slurmd
slurm-client) unless LENEX_REQUIRE_SLURM=1, which CI (.ci/run) sets after installing them.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest
import torch

from test_workflow import REPO, scratch_workflow, short_tiny_trainings
from subprocess_env import env_with_venv

SCRIPTS = REPO / "scripts" / "slurm"
GOOD = "results/tiny/eval/lex/xpos/seed1/pg22/causal/L64.json"
MODEL = "results/tiny/models/lex/xpos/seed1.pt"
# Blockwise attention at a length that is not a multiple of its block (L_tr/2 = 32): the
# evaluation job starts and exits 2 with "length 40 is not divisible by the block size 32".
BAD = "results/tiny/eval/lex/xpos/seed1/pg22/blockwise/L40.json"
# Bounds for a loaded 2-core machine; the whole test takes ~80 s on a quiet one (20-step trainings).
LOCAL_TIMEOUT, SLURM_TIMEOUT = 400, 400


def _missing_reason():
    if os.geteuid() != 0:
        return "the loopback SLURM cluster needs root"
    missing = [b for b in ("munged", "slurmctld", "slurmd", "sbatch", "squeue") if shutil.which(b) is None]
    if missing:
        return f"{', '.join(missing)} not installed (scripts/slurm/install_packages.sh installs them)"
    return None


def _run(args, cwd, env, timeout):
    """Run in its own process group, so a timeout kills snakemake and everything it started."""
    proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail(f"{' '.join(map(str, args[:4]))} ... did not finish in {timeout} s:\n{out[-4000:]}")
    return proc.returncode, out


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    reason = _missing_reason()
    if reason:
        if os.environ.get("LENEX_REQUIRE_SLURM") == "1":
            pytest.fail(f"LENEX_REQUIRE_SLURM=1 but {reason}")
        pytest.skip(reason)
    state = tmp_path_factory.mktemp("slurm")
    env = env_with_venv(SLURM_CONF=str(state / "slurm.conf"))
    try:
        code, out = _run(["bash", str(SCRIPTS / "start_cluster.sh"), str(state)], REPO, env, 90)
        assert code == 0, f"cluster did not start:\n{out}"
        yield env
    finally:
        if (state / "slurm.conf").exists():
            subprocess.run(["scancel", "--user", "root"], env=env, capture_output=True, timeout=30)
        stop = subprocess.run(["bash", str(SCRIPTS / "stop_cluster.sh"), str(state)], capture_output=True, text=True,
                              timeout=120)
        assert stop.returncode == 0, stop.stderr
        left = list((state / "pids").glob("*.pid"))
        assert not left, f"daemons left behind: {left}"


def _snakemake(workdir, env, *args, timeout):
    # 20-step trainings on the PG22 stand-in (no Debian fetches): the jobs, not the models, are tested.
    short_tiny_trainings(scratch_workflow(workdir), lex_train_corpus="pg22")
    return _run([sys.executable, "-m", "snakemake", *args], workdir, env, timeout)


def _numbers(workdir):
    evaluation = json.loads((workdir / GOOD).read_text())
    model = torch.load(workdir / MODEL, map_location="cpu", weights_only=False)
    return evaluation, model["final_loss"], model["valid_loss"], model["model"]


@pytest.mark.slow
def test_tiny_jobs_through_slurm_match_the_local_run(cluster, tmp_path):
    env = cluster
    started = time.time()
    local_code, local_out = _snakemake(tmp_path, env, GOOD, "--cores", "2", timeout=LOCAL_TIMEOUT)
    assert local_code == 0, local_out[-4000:]
    print(f"local run: {time.time() - started:.0f} s")
    started = time.time()
    local = _numbers(tmp_path)
    shutil.copytree(tmp_path / "results/tiny/eval", tmp_path / "local-eval")
    # Train and evaluate again from scratch, now as SLURM jobs (data stays as prepared).
    shutil.rmtree(tmp_path / "results/tiny/train")
    # Targets first: --forcerun takes every word after it.
    code, out = _snakemake(tmp_path, env, GOOD, BAD, "--profile", str(REPO / "profiles/slurm-ci"), "--forcerun", "train",
                           timeout=SLURM_TIMEOUT)
    print(f"SLURM run: {time.time() - started:.0f} s")
    # The good jobs ran on the cluster ...
    submitted = re.findall(r"submitted with SLURM jobid (\d+) \(log: \S+/slurm_logs/(rule_\w+)/", out)
    rules = sorted(rule for _, rule in submitted)
    # GOOD comes with the other PG22 cells of its model (one job per model and corpus); BAD is a
    # cell no table reads, its measure's rule's job alone.
    assert rules == ["rule_evaluate", "rule_lex_eval__tiny_xpos_s1_pg22", "rule_train"], out[-4000:]
    assert (tmp_path / MODEL).exists(), out[-6000:]
    slurm = _numbers(tmp_path)
    assert slurm[1:3] == local[1:3]  # final and validation loss, bit for bit (CPU, one thread)
    assert all(torch.equal(slurm[3][k], local[3][k]) for k in local[3])
    assert (slurm[0]["nll"], slurm[0]["ppl"], slurm[0]["tokens"]) == (local[0]["nll"], local[0]["ppl"], local[0]["tokens"])
    # ... and the failing one is reported as failed, by snakemake and by SLURM.
    assert code != 0, out[-4000:]
    assert "Error in rule evaluate" in out and "L40" in out, out[-4000:]
    assert not (tmp_path / BAD).exists()
    jobs = subprocess.run(["squeue", "--states=all", "-h", "-o", "%i %T %j"], env=env, capture_output=True,
                          text=True, timeout=30).stdout
    states = [line.split()[1] for line in jobs.splitlines()]
    assert "FAILED" in states and states.count("COMPLETED") >= 2, jobs
