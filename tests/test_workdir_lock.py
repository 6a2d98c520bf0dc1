"""The training lock on a cluster (issue 48): a lock left by a SIGKILLed holder on another host
stops blocking a rerun as soon as SLURM says its job is gone (or it is this job, requeued), and a
live holder keeps it fresh from a heartbeat thread whatever its steps take."""

import json
import os
import subprocess
import time
from types import SimpleNamespace

import pytest

import lenex.training.guards as guards
from lenex.training.guards import WorkdirInUse, WorkdirLock, slurm_job_queued


def _foreign_lock(folder, job="4242"):
    (folder / guards.LOCK_NAME).write_text(json.dumps({"pid": 1, "host": "node-elsewhere", "slurm_job": job}))


def test_a_lock_of_this_very_job_requeued_is_taken_over(tmp_path, caplog):
    _foreign_lock(tmp_path)
    with caplog.at_level("WARNING", logger="lenex.training.train"):
        WorkdirLock(tmp_path, environ={"SLURM_JOB_ID": "4242"}, queued=lambda job: True).acquire().release()
    assert any("SLURM job 4242 is this one, requeued" in r.getMessage() for r in caplog.records)


def test_a_lock_of_a_job_gone_from_the_queue_is_taken_over_at_once(tmp_path, caplog):
    _foreign_lock(tmp_path)
    with caplog.at_level("WARNING", logger="lenex.training.train"):
        lock = WorkdirLock(tmp_path, environ={"SLURM_JOB_ID": "5000"}, queued=lambda job: False).acquire()
    assert json.loads((tmp_path / guards.LOCK_NAME).read_text())["slurm_job"] == "5000"
    lock.release()
    assert any("SLURM job 4242 is no longer in the queue" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("answer", [True, None])
def test_a_fresh_lock_of_a_job_still_queued_or_unknown_is_refused(tmp_path, answer):
    _foreign_lock(tmp_path)
    with pytest.raises(WorkdirInUse, match="pid 1 on host node-elsewhere"):
        WorkdirLock(tmp_path, environ={"SLURM_JOB_ID": "5000"}, queued=lambda job: answer).acquire()


def test_stale_within_minutes_not_a_quarter_hour():
    assert guards.STALE_AFTER_S <= 5 * 60 and guards.STALE_AFTER_S >= 3 * guards.REFRESH_S


def _runner(returncode=0, stdout="", stderr="", error=None):
    def run(args, **kwargs):
        assert args[:3] == ["squeue", "--noheader", "--jobs"]
        if error:
            raise error
        return SimpleNamespace(returncode=returncode, stdout=stdout, stderr=stderr)
    return run


def test_squeue_answers_read():
    assert slurm_job_queued("7", _runner(stdout="RUNNING\n")) is True
    assert slurm_job_queued("7", _runner(stdout="")) is False
    assert slurm_job_queued("7", _runner(1, stderr="slurm_load_jobs error: Invalid job id specified")) is False
    assert slurm_job_queued("7", _runner(1, stderr="Unable to contact slurm controller")) is None
    assert slurm_job_queued("7", _runner(error=subprocess.TimeoutExpired("squeue", 20))) is None


def test_the_heartbeat_refreshes_the_lock_between_steps(tmp_path, monkeypatch):
    monkeypatch.setattr(guards, "REFRESH_S", 0.05)
    lock = WorkdirLock(tmp_path, environ={}).acquire()
    old = time.time() - 3600
    os.utime(lock.path, (old, old))
    lock.refreshed = 0.0
    lock.start_heartbeat()
    deadline = time.time() + 5
    while lock.path.stat().st_mtime < old + 1 and time.time() < deadline:
        time.sleep(0.02)
    assert lock.path.stat().st_mtime > old + 1
    lock.release()
    assert not lock.path.exists()
