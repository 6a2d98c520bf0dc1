"""The helpers every rule calls, as named parts of one object: `Pipeline(config, root)` is made
once by workflow/rules/common.smk (`pipeline`), and the tests make their own without Snakemake.
A rule calls `pipeline.<part>.<method>(...)`; each part is a small class in its own module, built
from the settings and the parts it reads, so what a rule asks for is found by its part's name."""

from __future__ import annotations

from pathlib import Path

from .code import CodeInputs
from .dag_checks import DagChecks
from .evaluation import Evaluation
from .hf_profile import HFProfile
from .identities import Identities
from .paths import Paths
from .recorded import Recorded
from .report import Report
from .resources import Resources
from .settings import Settings
from .specs import Specs
from .targets import Targets


class Pipeline:
    """The workflow's parts, each reading only the parts it is given:

    | part | module | what it holds |
    |---|---|---|
    | `settings` | settings | the config, presets, experiment files, each paper's model configs; the papers (registry) |
    | `paths` | paths | a preset's corpora: which build here, their fetched and prepared files, the tokenizer |
    | `resources` | resources | every train and evaluate job's threads, resources and launcher |
    | `specs` | specs | one typed spec per trained model (ModelSpec), and the training rule's inputs and command |
    | `evaluation` | evaluation | the cells a paper's tables read (CellSpec), their jobs at each preset, the rules that score them |
    | `identities` | identities | what a job is told about its model (`--identity`, `--expect`) |
    | `checks` | dag_checks | the checks made when the DAG is built (trainings, claims) |
    | `code` | code | the code stamp each job reads as an input |
    | `recorded` | recorded | each paper's recorded files, training curves and raw results (`from_raw`) |
    | `targets` | targets | whole-paper targets and rule all's inputs |
    | `report` | report | what the Snakemake report shows and how it labels it |
    | `hf` | hf_profile | the Hugging Face profile's models and scales |

    A paper (lenex.pipeline.papers.Paper) is given `paths` for its file lists and `settings` for
    its models, never the whole pipeline."""

    def __init__(self, config: dict, root: str | Path, stamps: str | Path = Path(".snakemake") / "lenex"):
        self.settings = Settings(config, root, stamps)
        self.paths = Paths(self.settings)
        self.resources = Resources(self.settings)
        self.identities = Identities(self.settings)
        self.code = CodeInputs(self.settings)
        self.evaluation = Evaluation(self.settings, self.resources, self.paths, self.identities, self.code)
        self.checks = DagChecks(self.settings, self.paths)
        self.specs = Specs(self.settings, self.paths, self.checks, self.code)
        self.recorded = Recorded(self.settings, self.paths, self.specs)
        self.targets = Targets(self.settings, self.paths, self.recorded)
        self.report = Report(self.settings, self.paths)
        self.hf = HFProfile(self.settings)
