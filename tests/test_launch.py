"""lenex.pipeline.launch: a job forked from the fork server behaves as `python -m <module>` would (its
output, exit status, environment, working directory, signals, numbers), and without a server, or
with one that refuses it, it is `python -m <module>` itself."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from lenex.pipeline.launch import SOCKET_ENV, start_server, wait_until_serving
from test_workflow import REPO

PROBE = '''
import os, sys
print(f"cwd={os.getcwd()} probe={os.environ.get('PROBE')} torch={'torch' in sys.modules} args={sys.argv[1:]}")
print("to stderr", file=sys.stderr)
if "--sleep" in sys.argv:
    import time
    time.sleep(60)
if "--fail" in sys.argv:
    raise RuntimeError("the probe failed")
sys.exit(int(sys.argv[-1]) if sys.argv[-1].isdigit() else 0)
'''


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("launch")
    (folder / "probe_module.py").write_text(PROBE)
    process = start_server(folder, cwd=REPO)
    path = Path(wait_until_serving(process, folder, timeout=60))
    yield folder
    process.terminate()
    process.wait(timeout=30)
    assert not path.exists()  # the server removes its socket


def job(folder, *args, server=True, executable=sys.executable, **kwargs):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), str(REPO / "src")]), "PROBE": "p1"}
    env[SOCKET_ENV] = str(folder / "socket") if server else ""
    return subprocess.run([executable, "-m", "lenex.pipeline.launch", "probe_module", *args], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=120, **kwargs)


def test_a_forked_job_gets_its_output_status_environment_and_directory(server):
    done = job(server, "a", "b", "3")
    assert done.returncode == 3
    assert done.stdout.strip() == f"cwd={server} probe=p1 torch=True args=['a', 'b', '3']"  # torch: preloaded
    assert done.stderr.strip() == "to stderr"
    failed = job(server, "--fail")
    assert failed.returncode == 1 and "RuntimeError: the probe failed" in failed.stderr


def test_without_a_server_the_job_is_python_m_itself(server):
    done = job(server, "x", "0", server=False)
    assert done.returncode == 0 and "torch=False" in done.stdout and "probe=p1" in done.stdout
    stale = subprocess.run([sys.executable, "-m", "lenex.pipeline.launch", "probe_module", "4"], cwd=server, timeout=60,
                           env={**os.environ, "PYTHONPATH": f"{server}{os.pathsep}{REPO / 'src'}",
                                SOCKET_ENV: str(server / "no-such-socket")}, capture_output=True, text=True)
    assert stale.returncode == 4 and "torch=False" in stale.stdout


def test_a_server_refuses_another_interpreter_which_then_runs_the_module_itself(server):
    other = shutil.which("python3", path="/usr/bin:/bin")
    if other is None or os.path.realpath(other) == os.path.realpath(sys.executable):
        pytest.skip("no second Python interpreter on this machine")
    done = job(server, "0", executable=other)
    assert done.returncode == 0 and "torch=False" in done.stdout, done.stderr


def test_stopping_the_job_stops_the_forked_child(server):
    waiting = subprocess.Popen([sys.executable, "-m", "lenex.pipeline.launch", "probe_module", "--sleep"], cwd=server,
                               env={**os.environ, "PYTHONPATH": f"{server}{os.pathsep}{REPO / 'src'}",
                                    SOCKET_ENV: str(server / "socket")}, stdout=subprocess.PIPE, text=True)
    first = waiting.stdout.readline()
    assert "torch=True" in first
    children = subprocess.run(["pgrep", "-f", "lenex.pipeline.launch --serve"], capture_output=True, text=True).stdout.split()
    started = time.time()
    waiting.send_signal(signal.SIGTERM)
    assert waiting.wait(timeout=30) != 0 and time.time() - started < 30
    time.sleep(0.5)
    sleepers = subprocess.run(["pgrep", "-f", "--", "probe_module --sleep"], capture_output=True, text=True).stdout.split()
    assert not sleepers, (sleepers, children)


def test_a_training_forked_from_the_server_is_bit_identical_to_one_started_fresh(server, tmp_path):
    from corpus_fixture import make_corpus

    data = make_corpus(tmp_path, n_docs=12, words_per_doc=400)
    model = json.dumps({"n_layer": 1, "d_model": 32, "n_head": 2, "d_ff": 64, "train_length": 32, "position": "alibi"})
    train = json.dumps({"steps": 6, "batch_size": 4, "warmup": 2, "lr": 0.003, "log_every": 3, "checkpoint_every": 6})
    weights = []
    for with_server in (False, True):
        out = tmp_path / f"m{with_server}.pt"
        env = {**os.environ, SOCKET_ENV: str(server / "socket") if with_server else ""}
        done = subprocess.run([sys.executable, "-m", "lenex.pipeline.launch", "lenex.training.train", "--model-config", model,
                               "--train-config", train, "--data", str(data), "--out", str(out),
                               "--workdir", str(tmp_path / f"w{with_server}"), "--threads", "1"],
                              cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        weights.append(torch.load(out, map_location="cpu", weights_only=False))
    assert weights[0]["final_loss"] == weights[1]["final_loss"]
    assert all(torch.equal(weights[0]["model"][k], weights[1]["model"][k]) for k in weights[0]["model"])


def test_a_fork_server_that_does_not_stop_in_time_is_killed_and_the_run_goes_on(tmp_path, monkeypatch):
    from lenex.pipeline import resources

    # A server starved of CPU on a loaded machine (or one that ignores SIGTERM) used to raise
    # TimeoutExpired from onsuccess, failing a run whose every job had succeeded.
    stubborn = subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                                 "print('ready', flush=True); time.sleep(300)"], stdout=subprocess.PIPE, text=True)
    assert stubborn.stdout.readline().strip() == "ready"
    folder = tmp_path / "launch"
    folder.mkdir()
    monkeypatch.setattr(resources, "STOP_GRACE_SECONDS", 0.5)
    monkeypatch.setattr(resources, "FORK_SERVER", {"process": stubborn, "folder": folder})
    resources.stop_fork_server()
    assert stubborn.returncode == -signal.SIGKILL and not folder.exists()
