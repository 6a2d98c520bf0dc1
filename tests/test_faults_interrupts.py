"""Issue 60, interrupts: every way a user stops a training (SIGTERM: `kill`, `scancel`, SLURM's time
limit; SIGINT: Ctrl-C; SIGHUP: the terminal closed) saves its state after the step in progress and
ends with one line naming the signal, as SIGTERM alone did before (lenex.training.guards)."""

import os
import signal
import subprocess
import time

import pytest
import torch
from corpus_fixture import make_corpus
from test_faults_training import ENV, _metric_steps, _train_command, _wait_for

from lenex.training.guards import STOP_SIGNALS, Termination


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name)
def test_each_stop_signal_only_asks_the_loop_to_stop(signum):
    """Before: SIGINT raised KeyboardInterrupt mid-step and SIGHUP ended the process, each losing
    every step since the last saved state; only SIGTERM was caught."""
    before = signal.getsignal(signum)
    with Termination() as term:
        assert not term.requested
        os.kill(os.getpid(), signum)
        time.sleep(0.05)  # Python runs the handler between bytecodes of the main thread
        assert term.requested and term.signal_name == signal.Signals(signum).name
        assert term.stopped_by == signal.Signals(signum).name
    assert signal.getsignal(signum) is before  # the process's own handling back afterwards


def test_a_ctrl_c_after_a_stop_signal_stops_at_once_and_a_repeated_sigterm_does_not():
    with pytest.raises(KeyboardInterrupt):
        with Termination() as term:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)
            os.kill(os.getpid(), signal.SIGTERM)  # SLURM's kill follows on its own: no need to hurry it
            time.sleep(0.05)
            assert term.signal_name == "SIGTERM"
            os.kill(os.getpid(), signal.SIGINT)  # a Ctrl-C after a signal: the way out of a hung save
            time.sleep(0.05)
    assert set(STOP_SIGNALS) == {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}


def test_an_ignored_sigint_or_sighup_stays_ignored_and_an_ignored_sigterm_is_taken():
    """`nohup` (SIGHUP ignored) means the run should outlive the terminal; a GPU job's shell ignores
    SIGTERM (lenex.pipeline.resources.KEEP_SHELL), which its children inherit, for the trainer to
    handle it."""
    saved = {s: signal.signal(s, signal.SIG_IGN) for s in STOP_SIGNALS}
    try:
        with Termination() as term:
            os.kill(os.getpid(), signal.SIGHUP)
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
            assert not term.requested
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)
            assert term.signal_name == "SIGTERM"
        assert all(signal.getsignal(s) is signal.SIG_IGN for s in STOP_SIGNALS)
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)


def test_a_rank_without_a_signal_names_another_ranks():
    """A rank learns of another's signal from the loss all-reduce only (lenex.training.speed)."""
    assert Termination().stopped_by == "a stop signal to another rank"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return make_corpus(tmp_path_factory.mktemp("c"))


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name)
def test_ctrl_c_or_a_closed_terminal_saves_the_state_of_the_last_step_done(corpus, tmp_path, signum):
    """A training stopped by Ctrl-C (or SIGHUP) mid-run: its state at the last step done is in
    last.pt (no state was due before step 1000), no model is written, and the last line names the
    signal; resuming from it is the SIGTERM test's (test_faults_training)."""
    args = _train_command(corpus, tmp_path, steps=5000)
    metrics = tmp_path / "w" / "metrics.jsonl"
    proc = subprocess.Popen(args, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _wait_for(lambda: len(_metric_steps(metrics)) >= 3, proc)
    assert proc.poll() is None, "the run finished before the signal: raise its steps"
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=120)
    done = _metric_steps(metrics)[-1]
    name = signal.Signals(signum).name
    assert proc.returncode == 2 and not (tmp_path / "m.pt").exists(), err
    assert err.strip().splitlines()[-1] == (f"error: stopped by {name}: state at step {done} saved in "
                                            f"{tmp_path / 'w' / 'last.pt'}; rerun the same command to resume"), err
    assert f"{name}: saving the training state after the step in progress" in err
    assert "KeyboardInterrupt" not in err and "Traceback" not in err
    assert torch.load(tmp_path / "w" / "last.pt", weights_only=False)["step"] == done
