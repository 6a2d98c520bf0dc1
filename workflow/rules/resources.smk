# How a train or evaluate job of any paper runs: its threads, declared resources and launcher,
# all from the preset's `resources: <stage>:` (as the paper sees it). Functions only; every
# rule of those stages takes them from here, so a new rule cannot drift from the others.
#   paper=None: the paper is the job's {paper} wildcard (the generic train/evaluate rules);
#   a paper's own rules pass their paper.

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
    defaults = STAGE_DEFAULTS[stage]
    return {
        "mem_mb": stage_setting(stage, "mem_mb", defaults["mem_mb"], paper),
        "runtime": stage_setting(stage, "runtime", defaults["runtime"], paper),
        "gpu": stage_setting(stage, "gpus", 0, paper),
    }


def train_gpus(preset_name, paper):
    return rule_resources(preset_name, "train", "gpus", 0, paper)


def process_threads(paper=None):
    """torch CPU threads per training process: the job's cores shared among its processes."""
    return lambda wc, threads: max(
        1, threads // max(1, train_gpus(wc.preset, paper or wc.paper))
    )


def launcher(module, gpus):
    """`python -m module`, or torchrun with one process per GPU (lenex.train's data parallelism)."""
    if gpus > 1:
        return f"torchrun --standalone --nproc_per_node {gpus} -m {module}"
    return f"python -m {module}"


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
