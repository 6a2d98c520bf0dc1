"""The helpers every rule calls, as one object: `Pipeline(config, root)` is made once by
workflow/rules/common.smk (`pipeline`), and the tests make their own without Snakemake."""

from __future__ import annotations

from .corpora import Corpora
from .hf_profile import HFProfile
from .recorded import Recorded
from .resources import Resources
from .settings import Settings
from .targets import Targets


class Pipeline(Settings, Corpora, Resources, Recorded, Targets, HFProfile):
    """The config, presets and experiment files (Settings), the corpora, every job's resources,
    the recorded files and raw results, the whole-paper targets and the report's contents, the HF
    profile's settings; the papers through their registered `Paper` (lenex.pipeline.papers)."""
