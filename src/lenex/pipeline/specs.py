"""One typed spec per trained model, and what the one training rule reads from it.

A `ModelSpec` says everything about one model a job trains: whose it is (paper, preset, variant,
seed, run), what it trains on (corpus, data folder), what it is (its ModelConfig fields, or the
checkpoint it continues from), how it trains (TrainConfig fields, entry point, backend, GPUs and
nodes), where it goes (checkpoint, resumable work folder) and what it records (its labels). Each
paper makes the specs of its own models from the path of the checkpoint under
results/<preset>/models/<paper>/ (`Paper.model_spec`); `Specs` (the pipeline's `specs` part) lays
over it what the preset decides for every paper alike in one function (`launch`: backend, entry
point, GPUs, nodes), and turns it into the rule's inputs and command. So no paper can lose the
fairseq backend or a multi-node launch: a setting it cannot honour is refused when the DAG is
built, in one line.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass

from ..experiment.preset_spec import PresetView
from ..registry import Registry
from .resources import KEEP_SHELL, STUDY_RESULTS, launcher, quoted_json, train_command
from .user_errors import refuse


@dataclass(frozen=True)
class Backend:
    """A trainer of models from scratch (`train.backend` of a preset): its entry point (`module`),
    and for a trainer that reads its own copy of the corpus, that copy's files (`data_files`:
    (preset, corpus) -> files, an input of the training) and its launcher's own arguments
    (`arguments`). `one_process`: started as one process on one node, which spreads over the
    node's GPUs itself (no torchrun, no srun); `continues`: it can continue a checkpoint."""

    name: str
    module: str
    data_files: Callable[[str, str], list[str]] | None = None
    arguments: Callable[[str, str], str] | None = None
    one_process: bool = False
    continues: bool = False
    #: Its runs' metrics.jsonl is lenex's trainer's, which a training curve reads (lenex.training.curve).
    curves: bool = False


#: The training backends: lenex's own here, another in its package's `backend` module
#: (lenex.fairseq_backend.backend), registered there.
BACKENDS = Registry("training backend", members="lenex.*.backend", known="known")
BACKENDS.register(Backend("lenex", "lenex.training.train", continues=True, curves=True))


#: The studies that train models by their own settings, not a preset's, under
#: results/<STUDY_RESULTS>/models/<study>/, each registered in its package's `studies` module
#: (lenex.scale_study.studies: the scale study's grid and the emergence sweeps).
STUDIES = Registry("study of its own models", members="lenex.*.studies", known="known")


@dataclass(frozen=True)
class Continuation:
    """A training that starts from another checkpoint: `init`, under `method` (full, chunk-α,
    prefix-α) at `extend_by` x its L_t, over `epoch_tokens` tokens (0: the whole train split), the
    checkpoint required to be what `expect` says."""

    init: str
    method: str
    extend_by: int
    epoch_tokens: int
    expect: dict
    module: str  # its trainer's entry point (its paper's: lenex.segmented.continued)


@dataclass(frozen=True)
class ModelSpec:
    """One trained model (see the module's docstring). `model` and `train` are the ModelConfig and
    TrainConfig fields as the paper sets them (a default left to the trainer, so changing a default
    in code does not rewrite every command); a continued run has no `model` (its checkpoint's is kept)."""

    paper: str
    preset: str
    variant: str
    seed: int | None  # the path's seed<s> (1..n); None for a model trained once per preset
    corpus: str | None  # the corpus role it trains on (None, from a paper: its training corpus)
    output: str
    workdir: str
    labels: dict  # what its checkpoint records (`--identity`), lenex.records.provenance
    train: dict
    data: str = ""  # its corpus's prepared folder (Specs.completed, for a model trained from scratch)
    model: dict | None = None
    continued: Continuation | None = None
    data_inputs: tuple[str, ...] = ()  # the files of `data` it reads (meta.json alone for a continued run)
    scheme_files: tuple[str, ...] = ()  # an extra scheme's module file, which the model imports
    run: str | None = None  # the segmented paper's run (pretrained, ootb, da, <method>-x<beta>)
    threads: int | None = None  # torch threads, where fixed; None: the job's cores shared among its GPUs
    # What the preset decides for every paper alike (Specs.launch):
    backend: str = "lenex"
    module: str = ""
    gpus: int = 0  # per node
    nodes: int = 1

    @property
    def trained_from_scratch(self) -> bool:
        return self.continued is None

    @property
    def metrics(self) -> str:
        """The metrics.jsonl its trainer appends to, in its resumable work folder."""
        return f"{self.workdir}/metrics.jsonl"

    @property
    def curve(self) -> str:
        """Its training curve (lenex.training.curve), written by its training job: curve_path of its checkpoint."""
        return curve_path(self.output)

    @property
    def records_curve(self) -> bool:
        """Whether its trainer writes the metrics a curve reads: lenex's own (a continued run always is)."""
        return not self.trained_from_scratch or BACKENDS[self.backend].curves

    def curve_command(self) -> str:
        """What the training job runs after the training: the curve from its metrics and checkpoint, or,
        for a trainer whose metrics are not lenex's, a curve file that says so (the rule's outputs are
        the same for every model; the tables read only the curves of models that record one)."""
        curve = f"{launcher('lenex.training.curve', 1)} {self.metrics} {self.curve}"
        if self.records_curve:
            return f"{curve} --checkpoint {self.output}"
        why = f"trained by the {self.backend} backend, whose metrics are not lenex's trainer's"
        return f"{curve} --none {shlex.quote(why)}"

    def process_threads(self, job_threads: int) -> int:
        """torch CPU threads of each training process: fixed, or the job's cores shared among its GPUs."""
        return self.threads if self.threads is not None else max(1, job_threads // max(1, self.gpus))

    def launcher(self) -> str:
        """The command up to the trainer's own arguments: one process, torchrun with one process per
        GPU, or srun starting one torchrun per node (rendezvous on the allocation's first node)."""
        backend = BACKENDS[self.backend]
        if backend.one_process:
            extra = f" {backend.arguments(self.preset, self.corpus)}" if backend.arguments else ""
            return f"{launcher(self.module, 1)}{extra}"
        if self.nodes > 1:
            return (KEEP_SHELL + "head_node=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n1);"
                    f" srun --nodes {self.nodes} --ntasks-per-node 1 torchrun --nnodes {self.nodes}"
                    f" --nproc_per_node {self.gpus} --rdzv_backend c10d"
                    f" --rdzv_id $SLURM_JOB_ID --rdzv_endpoint $head_node:29500 -m {self.module}")
        return train_command(self.module, self.gpus)

    def command(self, job_threads: int) -> str:
        """The training's whole command, but its log redirection."""
        common = (f"--out {self.output} --workdir {self.workdir} --threads {self.process_threads(job_threads)}"
                  f" --identity {quoted_json(self.labels)}")
        if self.continued is None:
            return (f"{self.launcher()} --model-config {quoted_json(self.model)} --train-config {quoted_json(self.train)}"
                    f" --data {self.data} {common}")
        c = self.continued
        return (f"{self.launcher()} --init {c.init} --method {c.method} --extend {c.extend_by}"
                f" --train-config {quoted_json(self.train)} --data {self.data} --epoch-tokens {c.epoch_tokens}"
                f" {common} --expect {quoted_json(c.expect)}")


def curve_path(checkpoint: str) -> str:
    """<root>/curves/<paper>/<model>/curve.json of <root>/models/<paper>/<model>.pt, the root being
    results/<preset> (or a cross-check's results/<preset>/crosscheck/<backend>/s<seed>)."""
    found = re.fullmatch(r"(?P<root>results/[^/]+(/[^/]+)*?)/models/(?P<paper>[^/]+)/(?P<model>.+)\.pt", checkpoint)
    if not found:
        raise ValueError(f"{checkpoint} is not a model of the pipeline (results/<preset>/models/<paper>/<model>.pt)")
    return "{root}/curves/{paper}/{model}/curve.json".format(**found.groupdict())


def path_fields(pattern: str, path: str, paper: str, layouts: str) -> dict:
    """The fields of a model path under results/<preset>/models/<paper>/ (without .pt) that match
    `pattern` (a regular expression with named groups), or one error naming the paper's layouts."""
    found = re.fullmatch(pattern, path)
    if not found:
        refuse(f"no {paper} model is trained at models/{paper}/{path}.pt; its models lie at {layouts}")
    values = found.groupdict()
    if values.get("seed") is not None:
        values["seed"] = int(values["seed"])
    return values


class Specs:
    """The specs of the models the workflow trains, and the training rule's inputs from them.
    Reads the settings, the corpora's paths, the DAG checks and the code stamps."""

    def __init__(self, settings, paths, checks, code):
        self.settings, self.paths, self.checks, self.code = settings, paths, checks, code

    # -- the spec of one model ----------------------------------------------------------------------
    def of(self, wildcards) -> ModelSpec:
        """The spec of the model the training rule's output names: results/{preset}/models/{paper}/{model}.pt."""
        return self.model(wildcards.preset, wildcards.paper, wildcards.model)

    @functools.cache
    def model(self, preset: str, paper: str, path: str) -> ModelSpec:
        """The spec of results/<preset>/models/<paper>/<path>.pt: its paper's, from the preset as the
        paper sees it (read once, typed), completed and launched from that same view; under
        results/scale-study/models/<study>/, its study's (one CPU thread, lenex's trainer, no preset)."""
        if preset == STUDY_RESULTS:
            return STUDIES[paper].spec(path, self.settings.root)
        view = self.settings.paper_spec(preset, paper)
        spec = self.settings.paper(paper).model_spec(view.view, self.settings.experiment(paper), path)
        return self.launch(self.completed(spec), view)

    def completed(self, spec: ModelSpec) -> ModelSpec:
        """A paper's spec with what the corpora's paths decide: a model trained from scratch reads its
        corpus's prepared files (no corpus named: its paper's training corpus, or the fallback this
        machine can build), its configs checked now as the trainer would (DagChecks.checked_train)."""
        if not spec.trained_from_scratch:
            return spec
        corpus = spec.corpus or self.paths.training_corpus(spec.preset, spec.paper)
        data = self.paths.corpus_folder(spec.preset, corpus)
        self.checks.checked_train(spec.preset, spec.paper, spec.variant, spec.train, data, model=spec.model)
        return dataclasses.replace(spec, corpus=corpus, data=data, data_inputs=tuple(self.paths.data_files(spec.preset, corpus)))

    @staticmethod
    def launch(spec: ModelSpec, view: PresetView) -> ModelSpec:
        """What the preset (`view`: as the spec's paper sees it) decides for a training of any paper:
        the backend (its `train.backend`), the entry point, GPUs per node and nodes (its
        `resources: train:`). A combination no trainer serves is refused here, when the DAG is built."""
        gpus, nodes = view.resource("train", "gpus", 0), view.resource("train", "nodes", 1)
        backend = (spec.train if spec.trained_from_scratch else view.view["train"]).get("backend", "lenex")
        where = f"{view.source}: {spec.paper} {spec.variant}"
        if backend not in BACKENDS:
            refuse(f"{where}: train.backend: {BACKENDS.unknown(backend)}")
        trainer = BACKENDS[backend]
        if not spec.trained_from_scratch and not trainer.continues:
            refuse(f"{where}: train.backend {backend!r} trains models from scratch only; continued pretraining "
                   f"({spec.run}) runs lenex's trainer: set papers.{spec.paper}.train.backend: lenex")
        if trainer.one_process and nodes > 1:
            refuse(f"{where}: train.backend {backend!r} trains on one node (it spreads over the node's GPUs "
                   f"itself); resources.train asks for {nodes} nodes")
        module = spec.continued.module if not spec.trained_from_scratch else trainer.module
        return dataclasses.replace(spec, backend=backend, module=module, gpus=gpus, nodes=nodes)

    # -- what the training rule reads ----------------------------------------------------------------
    def inputs(self, spec: ModelSpec) -> dict:
        """The rule's inputs by name: the corpus files (and fairseq's binarized copy where that
        backend trains), an extra scheme's file, the checkpoint it continues, its code's stamp."""
        data = list(spec.data_inputs) + list(spec.scheme_files)
        backend = BACKENDS[spec.backend]
        if backend.data_files and spec.trained_from_scratch:
            data += backend.data_files(spec.preset, spec.corpus)
        if spec.preset == STUDY_RESULTS:  # its scheme is named by its own config, not by a preset's variant
            stamp = self.code.scheme_stamp(spec.module, (spec.model or {}).get("position"))
        else:
            stamp = self.code.stamp(spec.module, spec.preset, spec.paper, spec.variant)
        named = {"data": data, "code": stamp}
        if spec.continued is not None:
            named["init"] = spec.continued.init
        return named
