# How a train or evaluate job of any paper runs: its threads, declared resources and launcher,
# all from the preset's `resources: <stage>:` (as the paper sees it). Functions only; every
# rule of those stages takes them from here, so a new rule cannot drift from the others.
#   paper=None: the paper is the job's {paper} wildcard (the generic train/evaluate rules);
#   a paper's own rules pass their paper.
# Below them: the fork server a local run starts its jobs from (lenex.pipeline.launch).
import os

STAGE_DEFAULTS = {
    "train": {"mem_mb": 2000, "runtime": 60},
    "evaluate": {"mem_mb": 2000, "runtime": 30},
}


def stage_setting(stage, key, default, paper=None):
    """Input function: the preset's `resources: <stage>: <key>` for the job's paper."""
    return lambda wc: rule_resources(wc.preset, stage, key, default, paper or wc.paper)


def stage_threads(stage, paper=None):
    return stage_setting(stage, "threads", 1, paper)


def stage_resources(stage, paper=None):
    """resources: of one job (memory, runtime, GPUs), as `resources: **stage_resources(...)`."""
    return {
        key: lambda wc, key=key: stage_resources_at(
            wc.preset, stage, paper or wc.paper
        )[key]
        for key in ("mem_mb", "runtime", "gpu")
    }


def stage_resources_at(preset_name, stage, paper, runs=1):
    """stage_resources of a job whose preset is known when its rule is made (the rules made per
    preset); `runs`: how many of the stage's units of work the job does (the preset's runtime
    bounds one)."""
    defaults = STAGE_DEFAULTS[stage]
    return {
        "mem_mb": rule_resources(
            preset_name, stage, "mem_mb", defaults["mem_mb"], paper
        ),
        "runtime": runs
        * rule_resources(preset_name, stage, "runtime", defaults["runtime"], paper),
        "gpu": rule_resources(preset_name, stage, "gpus", 0, paper),
    }


def train_gpus(preset_name, paper):
    return rule_resources(preset_name, "train", "gpus", 0, paper)


def process_threads(paper=None):
    """torch CPU threads per training process: the job's cores shared among its processes."""
    return lambda wc, threads: max(
        1, threads // max(1, train_gpus(wc.preset, paper or wc.paper))
    )


def launcher(module, gpus):
    """`python -m module` (through lenex.pipeline.launch, which forks it from a local run's fork server),
    or torchrun with one process per GPU (lenex.train's data parallelism)."""
    if gpus > 1:
        return f"torchrun --standalone --nproc_per_node {gpus} -m {module}"
    return f"python -m lenex.pipeline.launch {module}"


def train_launcher_of(module, paper=None):
    """Input function: the launcher of `module` with the preset's training GPUs."""
    return lambda wc: launcher(module, train_gpus(wc.preset, paper or wc.paper))


def multinode_launcher(preset_name, paper):
    """srun starting one torchrun per node; the torchruns meet at the allocation's first node."""
    nodes = rule_resources(preset_name, "train", "nodes", 1, paper)
    return (
        "head_node=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n1);"
        f" srun --nodes {nodes} --ntasks-per-node 1 torchrun --nnodes {nodes}"
        f" --nproc_per_node {train_gpus(preset_name, paper)} --rdzv_backend c10d"
        " --rdzv_id $SLURM_JOB_ID --rdzv_endpoint $head_node:29500 -m lenex.train"
    )


# The fork server of a local run (lenex.pipeline.launch): jobs run `python -m lenex.pipeline.launch <module> ...`,
# which forks from it instead of starting Python and importing torch again.
FORK_SERVER = {}


def start_fork_server(workflow):
    """onstart (Snakefile): a local run starts one fork server and tells its jobs where it is
    (lenex.pipeline.launch.SOCKET_ENV, inherited by every job). A cluster executor starts none (its jobs
    run on other machines, each `python -m lenex.pipeline.launch` then runs the module itself), nor does
    LENEX_FORK_SERVER=off. The server stops with the run (stop_fork_server), or if the run dies.
    """
    import tempfile

    from lenex.pipeline import launch

    python = shutil.which("python")  # the interpreter the jobs' `python` is
    if (
        not local_run(workflow)
        or os.environ.get(launch.SOCKET_ENV) == "off"
        or not python
    ):
        return
    folder = Path(tempfile.mkdtemp(prefix="lenex-launch-"))
    with open(folder / "server.log", "w") as log:
        FORK_SERVER["process"] = launch.start_server(folder, python, log)
    FORK_SERVER["folder"] = folder
    os.environ[launch.SOCKET_ENV] = str(launch.socket_path(folder))


def stop_fork_server():
    """onsuccess / onerror: the run's fork server goes with it (jobs still running are its own)."""
    process = FORK_SERVER.pop("process", None)
    if process is not None:
        process.terminate()
        process.wait(timeout=30)
        shutil.rmtree(FORK_SERVER.pop("folder"), ignore_errors=True)
