"""The scale study's and the emergence sweeps' models as models of the pipeline's one training rule
(workflow/rules/train.smk): results/scale-study/models/study/<point>.pt and
results/scale-study/models/sweeps/<sweep>/<point>.pt, each a ModelSpec registered here under its
study's name (lenex.pipeline.specs.STUDIES). So a point trains by the same command, code stamp,
resumable work folder and training curve as a paper's model; the study's own jobs only score it.

Read only when such a model is asked for (`--config scale_study=True` or `sweeps=True`): the
settings of a point come from config/scale-study.yaml or config/sweeps.yaml, not from a preset.
A point trains on one CPU thread, as every point the cost model measured did."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..pipeline.specs import STUDIES, STUDY_RESULTS, ModelSpec, path_fields

TRAINER = "lenex.training.train"


def point_spec(study: str, output: str, point: dict, settings: dict, data: Path, workdir: Path) -> ModelSpec:
    """The spec of one point's model: its configs from the study's settings (lenex.scale_study.study.point_settings)."""
    from .study import point_settings

    model, train = point_settings(point, settings)
    return ModelSpec(paper=study, preset=STUDY_RESULTS, variant=point["phenomenon"], seed=point.get("seed"),
                     corpus=None, output=output, workdir=str(workdir),
                     labels={"paper": study, "preset": STUDY_RESULTS, "model": point["key"]}, train=train,
                     data=str(data), model=model, data_inputs=(str(data / "meta.json"),), threads=1,
                     module=TRAINER)


def study_point_spec(path: str, root: Path) -> ModelSpec:
    """results/scale-study/models/study/<point>.pt: a point of config/scale-study.yaml's grid."""
    from . import study as st
    from .study_rules import OUT, study_config

    settings, out = study_config(root), Path(OUT)
    point = st.find_point(settings, path)
    files = st.point_files(out, point["key"])
    return point_spec("study", str(files.model), point, settings, st.data_folder(out, point["tokenizer"]), files.workdir)


def sweep_point_spec(path: str, root: Path) -> ModelSpec:
    """results/scale-study/models/sweeps/<sweep>/<point>.pt: a point of config/sweeps.yaml."""
    from . import sweeps as sw
    from .sweep_rules import sweeps_config

    fields = path_fields(r"(?P<sweep>[A-Za-z0-9_.-]+)/(?P<point>[A-Za-z0-9_.-]+)", path, "sweeps",
                         "models/sweeps/<sweep>/<point>.pt")
    config = sweeps_config(root)
    point = sw.find_point(config, fields["sweep"], fields["point"])
    files = sw.point_files(point)
    return point_spec("sweeps", str(files.model), point, sw.point_study(config, point, Path(root)),
                      sw.corpus_folder(config, point["corpus"]), files.workdir)


@dataclass(frozen=True)
class Study:
    """A study whose models the training rule trains: `spec` turns a model's path under
    results/scale-study/models/<name>/ (without .pt) into its spec, read from the checkout at a root."""

    name: str
    spec: Callable[[str, Path], ModelSpec]


STUDIES.register(Study("study", study_point_spec))
STUDIES.register(Study("sweeps", sweep_point_spec))
