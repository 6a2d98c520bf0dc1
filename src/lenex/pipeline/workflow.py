"""The helpers every rule calls, as one object: `Pipeline(config, root)` is made once by
workflow/rules/common.smk (`pipeline`), and the tests make their own without Snakemake."""

from __future__ import annotations

from .code import CodeInputs
from .corpora import Corpora
from .dag_checks import DagChecks
from .hf_profile import HFProfile
from .identities import Identities
from .recorded import Recorded
from .resources import Resources
from .settings import Settings
from .targets import Targets


class Pipeline(Settings, Corpora, Resources, Recorded, Targets, HFProfile, Identities, DagChecks, CodeInputs):
    """The config, presets and experiment files (Settings), the corpora, every job's resources,
    the recorded files and raw results, the whole-paper targets and the report's contents, the HF
    profile's settings; what each job is told about its model (Identities), the checks made when
    the DAG is built (DagChecks) and the code each job runs (CodeInputs); the papers through their
    registered `Paper` (lenex.pipeline.papers)."""
