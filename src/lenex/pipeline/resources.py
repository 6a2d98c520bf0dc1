"""How a train or evaluate job of any paper runs: its threads, declared resources and launcher,
all from the preset's `resources: <stage>:` (as the job's paper sees it). Every rule of those
stages takes them from here, so a new rule cannot drift from the others, and a cluster profile
needs no rule's name to reach it: what a job asks SLURM for (GPUs, CPUs per GPU, memory, time,
nodes) is declared by the rule itself.

`Resources` is a part of `lenex.pipeline.workflow.Pipeline` (`pipeline.resources`, reading the
settings' `rule_resources`); its input functions take the job's {paper} wildcard unless a paper's
own rule passes its paper.
Below it: the fork server a local run starts its jobs from (lenex.pipeline.launch), and the
local run's job rate limit.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

#: A job's memory (MB) and time limit (minutes) where the preset's stage names none. `data`: the
#: corpus jobs (tokenizer, prepare, retokenize), which hold a corpus's text in memory.
STAGE_DEFAULTS = {"train": {"mem_mb": 2000, "runtime": 60}, "evaluate": {"mem_mb": 2000, "runtime": 30},
                  "data": {"mem_mb": 4000, "runtime": 120}}
#: Seconds before its time limit a training job is sent SIGTERM (sbatch --signal=TERM@N) unless the
#: preset says: the trainer then saves its state after the step in progress (lenex.training.guards),
#: and a paper-scale state (4.2 GB for LEX's 354M model with AdamW) must be written before the kill.
SIGNAL_LEAD_S = 300
#: The folder under results/ of the models a study trains by its own settings (lenex.pipeline.specs.STUDIES):
#: no preset's, so its trainings take STAGE_DEFAULTS and one thread, as its cost model measured them.
STUDY_RESULTS = "scale-study"
#: The module every job starts through (lenex.pipeline.launch).
LAUNCH = "lenex.pipeline.launch"


def quoted_json(value) -> str:
    """A value as one shell word of JSON (keys sorted: the same value is the same command)."""
    return shlex.quote(json.dumps(value, sort_keys=True))


#: What a GPU training's shell runs first: it ignores SIGTERM, which the trainer handles (it saves its
#: state and stops). SLURM's --signal reaches every process of the job step, and a shell ended by it
#: (bash exits at once, its child still writing) would end the job while the trainer saves. CPU
#: presets keep their commands as they were (a changed command reruns every training of theirs).
KEEP_SHELL = "trap '' TERM; "


def train_command(module: str, gpus: int) -> str:
    """A training's launcher (`launcher`), after KEEP_SHELL where it runs on GPUs."""
    return (KEEP_SHELL if gpus else "") + launcher(module, gpus)


def launcher(module: str, gpus: int) -> str:
    """`python -m module` (through lenex.pipeline.launch, which forks it from a local run's fork
    server), or torchrun with one process per GPU (lenex.training.train's data parallelism)."""
    if gpus > 1:
        return f"torchrun --standalone --nproc_per_node {gpus} -m {module}"
    return f"python -m {LAUNCH} {module}"


class Resources:
    """Every train and evaluate job's threads, resources and launcher, from the settings' presets."""

    def __init__(self, settings):
        self.settings = settings

    def _resource(self, preset_name: str, stage: str, key: str, default, paper: str | None = None):
        """The preset's `resources: <stage>: <key>` as `paper` sees it; a study's model: `default`."""
        if preset_name == STUDY_RESULTS:
            return default
        return self.settings.rule_resources(preset_name, stage, key, default, paper)

    def stage_setting(self, stage: str, key: str, default=None, paper: str | None = None):
        """Input function: the preset's `resources: <stage>: <key>` for the job's paper (default:
        `default`, else the stage's STAGE_DEFAULTS)."""
        default = STAGE_DEFAULTS[stage].get(key) if default is None else default
        return lambda wc: self._resource(wc.preset, stage, key, default, paper or wc.paper)

    def stage_threads(self, stage: str, paper: str | None = None):
        return self.stage_setting(stage, "threads", 1, paper)

    def stage_resources(self, stage: str, paper: str | None = None) -> dict:
        """resources: of one job (memory, runtime, GPUs, CPUs per GPU), as
        `resources: **pipeline.stage_resources(...)`."""
        keys = ("mem_mb", "runtime", "gpu", "cpus_per_gpu", "nodes") + (("slurm_extra",) if stage == "train" else ())
        return {key: (lambda wc, key=key: self.stage_resources_at(wc.preset, stage, paper or wc.paper)[key])
                for key in keys}

    def data_resources(self) -> dict:
        """resources: of a corpus job (memory, runtime) from the preset's `resources: data:`."""
        return {key: (lambda wc, key=key: self._resource(wc.preset, "data", key, STAGE_DEFAULTS["data"][key]))
                for key in ("mem_mb", "runtime")}

    def stage_resources_at(self, preset_name: str, stage: str, paper: str, runs: int = 1) -> dict:
        """stage_resources of a job whose preset is known when its rule is made (the rules made per
        preset); `runs`: how many of the stage's units of work the job does (the preset's runtime
        bounds one). GPUs are asked for in one form by every rule: `gpu`, the job's GPUs in all
        (SLURM's --gpus; a local run's `--resources gpu=N` bounds them), which for a training on
        several nodes is `nodes` x the preset's GPUs per node, each node's share fixed by
        --gpus-per-node in `slurm_extra`. `cpus_per_gpu`: the stage's threads (per node) shared
        among its GPUs (0 for a CPU job, which SLURM gives `threads` CPUs per task instead).
        `nodes`: the training's nodes (`resources: train: nodes`), else 1: a one-node launch is
        `torchrun --standalone`, and a job spread over nodes with fewer GPUs would give ranks
        devices that do not exist. `slurm_extra` (train): `train_slurm_extra`."""
        defaults = STAGE_DEFAULTS[stage]
        gpus = self._resource(preset_name, stage, "gpus", 0, paper)
        threads = self._resource(preset_name, stage, "threads", 1, paper)
        nodes = self._resource(preset_name, stage, "nodes", 1, paper) if stage == "train" else 1
        declared = {
            "mem_mb": self._resource(preset_name, stage, "mem_mb", defaults["mem_mb"], paper),
            "runtime": runs * self._resource(preset_name, stage, "runtime", defaults["runtime"], paper),
            "gpu": gpus * nodes,
            "cpus_per_gpu": max(1, threads // gpus) if gpus else 0,
            "nodes": nodes,
        }
        if stage == "train":
            declared["slurm_extra"] = self.train_slurm_extra(preset_name, paper)
        return declared

    def train_slurm_extra(self, preset_name: str, paper: str) -> str:
        """What a training job asks SLURM for beyond counts, from the preset (it knows the job):
        SIGTERM `signal_lead_s` before the time limit, so the state is saved before the kill
        (not `B:`, which would signal only the batch shell: the SLURM executor runs the job in an
        srun step, whose processes `--signal` reaches), and the nodes whole where it says `exclusive`."""
        lead = self._resource(preset_name, "train", "signal_lead_s", SIGNAL_LEAD_S, paper)
        exclusive = self._resource(preset_name, "train", "exclusive", False, paper)
        nodes = self._resource(preset_name, "train", "nodes", 1, paper)
        per_node = f"--gpus-per-node={self.train_gpus(preset_name, paper)} " if nodes > 1 else ""
        return ("--exclusive " if exclusive else "") + per_node + f"--signal=TERM@{lead}"

    def multinode_resources(self) -> dict:
        """resources: of a training on several nodes: the train stage's, and one task per node,
        which SLURM's executor must not wrap in an srun of its own (`mpi`): the launcher's srun
        starts one torchrun per node (lenex.pipeline.specs.ModelSpec.launcher)."""
        nodes = self.stage_setting("train", "nodes", 1)
        return {**self.stage_resources("train"), "tasks": nodes, "tasks_per_gpu": 0, "mpi": "srun"}

    def cost_model_file(self, preset_name: str) -> list[str]:
        """The cost model's measurement of a preset on this machine (benchmarks.preset_cost), where
        there is one: a CPU preset's plan estimates its trainings' CPU-hours from it."""
        path = self.settings.root / "benchmarks" / "results" / "cpu" / f"preset_cost_{preset_name}.json"
        return [os.path.relpath(path)] if path.is_file() else []

    def presets_by_nodes(self, one_node: bool) -> str:
        """The training rule's `preset` constraint that sends each (preset, paper) to the rule of its
        node count (train, or train_multinode): a paper may train on one node at a preset whose
        other papers span several (its `papers.<paper>.resources.train.nodes`). A constraint sees
        only its own wildcard, so each preset's name carries a lookahead for the papers it takes:
        `paper(?=/(?:models|curves)/lex/)` matches results/paper/models/lex/... (and the curve the
        same job writes) and no other paper's. A paper's models that are fetched at a preset, not trained (Paper.fetched_models:
        the segmented paper's released checkpoints) are left to the rule that fetches them. "-"
        matches no preset."""
        choices = []
        for name in self.settings.preset_names:
            for paper in self.settings.config["papers"]:
                if (self._resource(name, "train", "nodes", 1, paper) == 1) != one_node:
                    continue
                fetched = self.settings.paper(paper).fetched_models(self.settings, name)
                choices.append(f"{name}(?=/(?:models|curves)/{re.escape(paper)}/{f'(?!{fetched})' if fetched else ''})")
        if one_node and (self.settings.scale_study or self.settings.sweeps):
            # results/scale-study/models/<study>/...: a study's models (lenex.pipeline.specs.STUDIES
            # names the known ones), on one node, only while its rules are defined
            choices.append(f"{STUDY_RESULTS}(?=/(?:models|curves)/)")
        return "|".join(choices) or "-"

    def train_gpus(self, preset_name: str, paper: str) -> int:
        return self._resource(preset_name, "train", "gpus", 0, paper)

    def gpu_stage(self, preset_name: str, stage: str, paper: str) -> bool:
        """Whether the preset runs the stage's jobs on GPUs (a cluster or a GPU workstation)."""
        return self._resource(preset_name, stage, "gpus", 0, paper) > 0



def local_run(workflow) -> bool:
    """Whether this run's jobs run on this machine (the local executor), once jobs are starting."""
    return getattr(getattr(workflow, "executor_plugin", None), "name", None) == "local"


def drop_local_rate_limit(workflow) -> None:
    """Run once jobs are about to start (onstart, Snakefile): a local run keeps no job rate limit.
    Snakemake 9 re-arms a one-second re-scheduling timer on every scheduling round while a rate
    limit is set (the CLI's default 100/1s), so rounds multiply with the jobs already done
    (snakemake/snakemake#3804, #3744); each round re-reads every ready job's inputs. On the tiny
    DAG that was most of the scheduler's CPU, taken from the two cores the jobs run on. A local run
    starts at most --cores jobs at once anyway; a cluster executor keeps its limit."""
    scheduler = getattr(workflow, "scheduler", None)
    if local_run(workflow) and hasattr(scheduler, "job_rate_limiter"):
        scheduler.job_rate_limiter = None


#: The fork server of this run (lenex.pipeline.launch): its process and folder, while it runs.
FORK_SERVER: dict = {}
#: How long a stopped fork server may take to exit before it is killed.
STOP_GRACE_SECONDS = 30.0


def start_fork_server(workflow) -> None:
    """onstart (Snakefile): a local run starts one fork server and tells its jobs where it is
    (lenex.pipeline.launch.SOCKET_ENV, inherited by every job). A cluster executor starts none (its
    jobs run on other machines, each `python -m lenex.pipeline.launch` then runs the module itself),
    nor does LENEX_FORK_SERVER=off. The server stops with the run (stop_fork_server), or if the run dies."""
    from . import launch

    python = shutil.which("python")  # the interpreter the jobs' `python` is
    if not local_run(workflow) or os.environ.get(launch.SOCKET_ENV) == "off" or not python:
        return
    folder = Path(tempfile.mkdtemp(prefix="lenex-launch-"))
    with open(folder / "server.log", "w") as log:
        FORK_SERVER["process"] = launch.start_server(folder, python, log)
    FORK_SERVER["folder"] = folder
    os.environ[launch.SOCKET_ENV] = str(launch.socket_path(folder))


def stop_fork_server() -> None:
    """onsuccess / onerror: the run's fork server goes with it (jobs still running are its own)."""
    process = FORK_SERVER.pop("process", None)
    if process is not None:
        process.terminate()
        try:
            process.wait(timeout=STOP_GRACE_SECONDS)
        except subprocess.TimeoutExpired:  # starved on a loaded machine: a run that succeeded still succeeds
            process.kill()
            process.wait()
        shutil.rmtree(FORK_SERVER.pop("folder"), ignore_errors=True)
