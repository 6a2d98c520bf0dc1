"""What the rules read: the workflow's config (config/config.yaml, checked against its schema),
the presets and each paper's experiment file, each checked when first read, and the papers.

`Settings` holds them for one run of the workflow: the first part of `lenex.pipeline.workflow.Pipeline`
(`pipeline.settings`), which every other part reads. Nothing here imports Snakemake but its schema
validator.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
import sys
from pathlib import Path

from ..files import read_yaml
from ..experiment.preset_spec import Preset, PresetView, position_blocks, read_preset
from ..experiment.presets import eval_length, scale_budget
from ..experiment.schemes import module_files, resolve_entries, table_extra, with_extra_schemes
from .memo import remembered
from .resources import quoted_json  # noqa: F401 - the rules' and papers' shell words
from .papers import Paper, paper_named, rule_file
from .schema_errors import key_path, schema_message
from .user_errors import known, quiet_refusals, refuse
from .variants import check_variants_once, registry_files



#: What a preset (or experiment) is named by: the name of its file in config/presets/, never a path.
NAME = re.compile(r"[A-Za-z0-9_-]+")
#: Where the workflow's config comes from, merged before lenex sees it.
CONFIG_SOURCES = "config/config.yaml, config/schemes.yaml, a --configfile or --config"


def validate(values: dict, schema: Path, source: str | Path | None = None) -> None:
    """Snakemake's JSON-schema validation (it fills in the schema's defaults), outside a Snakefile
    too; given the file the values came from, an error is one line in its terms (schema_errors).
    An integer of the schema must be written as one: JSON Schema takes 1234.0 for an integer,
    which then fails inside a job (a seed, a count) instead of here."""
    from jsonschema.exceptions import ValidationError
    from snakemake.exceptions import WorkflowError
    from snakemake.utils import validate as snakemake_validate

    try:
        snakemake_validate(values, str(schema))
    except WorkflowError as err:
        cause = err.__context__  # Snakemake raises its WorkflowError while handling jsonschema's error
        if source is None or not isinstance(cause, ValidationError):
            raise
        refuse(schema_message(cause, os.path.relpath(source)))
    loose = _loose_integer(values, schema)
    if loose:
        where, value = loose
        label = os.path.relpath(source) if source is not None else f"config (from {CONFIG_SOURCES})"
        refuse(f"{label}: {where}: {value!r} (must be an integer: write {int(value)})")


def _integral_floats(value) -> bool:
    if isinstance(value, float):
        return value.is_integer()
    if isinstance(value, dict):
        return any(_integral_floats(v) for v in value.values())
    if isinstance(value, list):
        return any(_integral_floats(v) for v in value)
    return False


def _loose_integer(values, schema_path: Path) -> tuple[str, float] | None:
    """(key path, value) of the first float written where `schema_path` asks for an integer; None
    if there is none. Only files holding a whole float at all are validated again."""
    if not _integral_floats(values):
        return None
    from urllib.parse import urlparse
    from urllib.request import url2pathname

    from jsonschema import Draft202012Validator, validators
    from referencing import Registry, Resource

    schema = {**read_yaml(schema_path), "$id": Path(schema_path).resolve().as_uri()}
    registry = Registry(retrieve=lambda uri: Resource.from_contents(read_yaml(url2pathname(urlparse(uri).path))))
    registry = registry.with_resource(schema["$id"], Resource.from_contents(schema))
    strict = Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda _, value: isinstance(value, int) and not isinstance(value, bool))
    validator = validators.extend(Draft202012Validator, type_checker=strict)(schema, registry=registry)
    pending = list(validator.iter_errors(values))
    while pending:
        error = pending.pop(0)
        if error.validator == "type" and isinstance(error.instance, float) and error.instance.is_integer():
            return key_path(error.absolute_path), error.instance
        pending += error.context or []
    return None


def _validated(values: dict, schema: Path) -> dict:
    """The workflow's config, validated (a copy: validation fills in defaults). Its values are merged
    from several files and the command line, so an error names the key, not a file."""
    from jsonschema.exceptions import ValidationError
    from snakemake.exceptions import WorkflowError

    values = json.loads(json.dumps(values))
    try:
        validate(values, schema)
    except WorkflowError as err:
        cause = err.__context__
        if not isinstance(cause, ValidationError):
            raise
        refuse(config_message(cause))
    return values


def config_message(error) -> str:
    """One line for a schema error of the merged config: an unknown key with the known ones (not
    jsonschema's dump of the whole schema), anything else as schema_errors says it."""
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = error.schema.get("properties", {})
        unknown = sorted(key for key in error.instance if key not in allowed)
        if unknown:
            inside = key_path(error.absolute_path)
            name = unknown[0] if inside == key_path([]) else f"{inside}.{unknown[0]}"
            return f"unknown config key {name!r} (from {CONFIG_SOURCES}); known: {known(allowed)}"
    return schema_message(error, f"config (from {CONFIG_SOURCES})")


def validated_yaml(path: Path, schema: Path) -> dict:
    """A YAML file's values, validated against `schema` (defaults filled in); an error names the file."""
    values = read_yaml(path)  # a syntax error names the file and line
    if not isinstance(values, dict):
        needed = ", ".join(read_yaml(schema).get("required", [])) or "its settings"
        held = "is empty" if values is None else f"holds a {type(values).__name__}"
        refuse(f"{os.path.relpath(path)}: the file {held}; it must be a mapping of keys ({needed})")
    validate(values, schema, path)
    return values


class Settings:
    """The config, presets and experiment files of one workflow rooted at `root` (the Snakefile's
    folder: config/ and workflow/schemas/ below it). `stamps`: where a variant check that passed
    leaves its stamp (lenex.pipeline.variants.check_variants_once)."""

    def __init__(self, config: dict, root: str | Path, stamps: str | Path = Path(".snakemake") / "lenex"):
        self.root = Path(root)
        self.config_dir = self.root / "config"
        self.schemas = self.root / "workflow" / "schemas"
        self.stamps = Path(stamps)
        # Validated once per content (defaults filled in, as Snakemake's validate does in place).
        config.update(remembered(self.stamps, "valid-config", [self.schemas / "config.schema.yaml"],
                                 lambda: _validated(config, self.schemas / "config.schema.yaml"),
                                 extra=json.dumps(config, sort_keys=True, default=str)))
        self.config = config
        self._check_preset_name(config["preset"], "config preset")
        # Your own position schemes (config/schemes.yaml), checked against the registry now.
        try:
            self.extra_schemes = resolve_entries(config.get("extra_schemes") or {})
        except ValueError as err:
            refuse(f"{self._schemes_source(str(err))}: {err}")
        # Raw results (docs/raw-results.md): with `--config from_raw=True` (make tables) every
        # render job reads its recorded inputs from results/<preset>/raw/<paper>.jsonl instead of
        # the evaluation outputs and corpus metas: no fetch, prepare, train or evaluate job.
        self.from_raw = bool(config.get("from_raw", False))
        # The emergence sweeps' rules (workflow/rules/sweeps.smk) only with `--config sweeps=True`,
        # never under from_raw: otherwise a claims page, which reads a sweep's committed records,
        # would link them to the rules that made them and a fresh checkout would rerun the sweep.
        self.sweeps = bool(config.get("sweeps", False)) and not self.from_raw
        # The scale study's rules (workflow/rules/scale_study.smk) only with `--config scale_study=True`,
        # for the same reason: the claims read its committed results/scale-study/points.jsonl.
        self.scale_study = bool(config.get("scale_study", False)) and not self.from_raw
        # Which of its pending points the gather asks for: those whose key contains `scale_study_only`
        # (every one by default); with `scale_study_train=False` none, so points.jsonl and the pages are
        # rendered again from the committed records alone.
        self.scale_study_only = str(config.get("scale_study_only", ""))
        self.scale_study_train = bool(config.get("scale_study_train", True))
        for name in config["papers"]:
            paper_named(name)  # a configured paper that no package declares: one error now

    def _schemes_source(self, message: str) -> str:
        """Where the extra scheme an error names was configured: config/schemes.yaml if it holds it."""
        path = self.config_dir / "schemes.yaml"
        entry = message.split(":", 1)[0].removeprefix("extra_schemes.")
        try:
            with quiet_refusals():
                written = (read_yaml(path) or {}).get("extra_schemes") or {} if path.is_file() else {}
        except (ValueError, AttributeError):
            written = {}
        return os.path.relpath(path) if entry in written else f"config (from {CONFIG_SOURCES})"

    def _check_preset_name(self, name, what: str) -> None:
        """A preset is named by its file's name in config/presets/; a path (`../../x`) would read a
        file elsewhere."""
        if not isinstance(name, str) or not NAME.fullmatch(name):
            presets = (p.stem for p in (self.config_dir / "presets").glob("*.yaml"))
            refuse(f"{what}: {name!r} is not a preset name: a preset is config/presets/<name>.yaml, named by "
                   f"<name> alone (letters, digits, '_' and '-'); known: {known(presets)}")

    # -- papers ------------------------------------------------------------------------------
    def paper(self, name: str) -> Paper:
        return paper_named(name)

    def papers(self) -> list[Paper]:
        """The configured papers (config `papers`), in the config's order."""
        return [paper_named(name) for name in self.config["papers"]]

    def paper_rule_files(self) -> list[str]:
        """What the Snakefile includes for the configured papers: each one's own rule file
        (lenex.pipeline.papers.rule_file), relative to the Snakefile, in the config's order. A paper
        whose models, evaluations and tables the generic rules make has none."""
        return [rule_file(paper.name) for paper in self.papers() if (self.root / rule_file(paper.name)).is_file()]

    # -- presets ------------------------------------------------------------------------------
    @property
    def preset_names(self) -> list[str]:
        """Every preset file (config/presets/): rules whose outputs differ per preset are made for
        each. Only the preset in use (config `preset`) must be valid: a sibling that is not is
        left out, named in a warning once, and fails only a run that asks for it."""
        names = []
        for name in sorted(p.stem for p in (self.config_dir / "presets").glob("*.yaml")):
            if name != self.config.get("preset") and self._sibling_problem(name):
                continue
            names.append(name)
        return names

    def _sibling_problem(self, name: str) -> str | None:
        problems = self.__dict__.setdefault("_sibling_problems", {})
        if name not in problems:
            try:
                with quiet_refusals():
                    self.preset(name)
                problems[name] = None
            except (ValueError, KeyError) as err:
                problems[name] = str(err)
                print(f"lenex: warning: preset {name!r} left out ({problems[name]}); only the preset in use, "
                      f"{self.config.get('preset')!r}, must be valid", file=sys.stderr)
        return problems[name]

    def preset_file(self, preset: str) -> str:
        """The preset's file, relative to the working directory (the checkout): a path in a job's
        command or inputs never names where the checkout lies, so a moved one reruns nothing."""
        return os.path.relpath(self.config_dir / "presets" / f"{preset}.yaml")

    def experiment_file(self, paper: str) -> str:
        return os.path.relpath(self.config_dir / "experiments" / f"{paper}.yaml")

    def _load_yaml(self, kind: str, name: str, schema: str) -> dict:
        path = self.config_dir / kind / f"{name}.yaml"
        if not isinstance(name, str) or not NAME.fullmatch(name):
            refuse(f"{kind[:-1]} {name!r} is not a name of config/{kind}/<name>.yaml; "
                   f"known: {known(p.stem for p in (self.config_dir / kind).glob('*.yaml'))}")
        if not path.exists():
            refuse(f"unknown {kind[:-1]} {name!r}; known: {known(p.stem for p in path.parent.glob('*.yaml'))}")
        # Parsed and validated once per content of the file and its schema (lenex.pipeline.memo).
        return remembered(self.stamps, f"valid-{kind}", [path, self.schemas / schema],
                          lambda: validated_yaml(path, self.schemas / schema))

    @functools.cache
    def preset_spec(self, preset: str) -> Preset:
        """The preset read once: its file's values (schema-checked, defaults filled in) typed
        (lenex.experiment.preset_spec.Preset: its sections, bounds checked, and every configured
        paper's view with the options it derives), the schemes and options of its `positions`
        checked against the registry."""
        values = self._load_yaml("presets", preset, "preset.schema.yaml")
        source = self.preset_file(preset)
        if values["name"] != preset:
            refuse(f"{source}: name: {values['name']!r}; a preset's name is its file's, {preset!r}")
        for paper in values.get("papers") or {}:
            paper_named(paper)  # a block for no paper would change nothing: one error instead
        papers = list(dict.fromkeys([*self.config["papers"], *(values.get("papers") or {})]))
        try:
            spec = read_preset(values, source, papers)
            blocks = position_blocks(values)
        except ValueError as err:
            refuse(str(err))
        # The schemes and options of its `positions` exist (derived ones written out): checked now,
        # as the variants are.
        if blocks:
            check_variants_once(blocks, source, self.stamps, "scheme options")
        return spec

    def preset(self, preset: str) -> dict:
        """The preset file's values as written (schema-checked, defaults filled in)."""
        return self.preset_spec(preset).values

    def paper_spec(self, preset: str, paper: str | None) -> PresetView:
        """One paper's typed view of a preset (None: the shared sections); a paper the config does
        not run is typed when first asked for."""
        spec = self.preset_spec(preset)
        try:
            return spec.view_of(paper)
        except ValueError as err:
            refuse(str(err))

    def paper_preset(self, preset: str, paper: str) -> dict:
        """The preset as one paper sees it (lenex.experiment.preset_spec.derived_view): its
        `papers.<paper>` block merged over the shared sections, derived options written out; the
        dict the typed view was built from."""
        return self.paper_spec(preset, paper).view

    def rule_resources(self, preset: str, stage: str, key: str, default, paper: str | None = None):
        """The preset's `resources: <stage>: <key>` (as `paper` sees it, or the shared one)."""
        return self.paper_spec(preset, paper).resource(stage, key, default)

    def scheme_defaults(self, scheme: str) -> dict:
        """A built-in position scheme's option defaults, as its Options dataclass declares them:
        read once per content of the scheme registry's code (lenex.pipeline.memo), so the DAG
        build imports the registry (and torch) only when that code changed."""
        return remembered(self.stamps, "scheme-defaults", registry_files(), lambda: _scheme_defaults(scheme),
                          extra=scheme)

    # -- experiments --------------------------------------------------------------------------
    @functools.cache
    def experiment(self, paper: str) -> dict:
        """A paper's experiment file, with each extra scheme as a variant and as rows of the tables
        that compare schemes (lenex.experiment.schemes)."""
        loaded = self._load_yaml("experiments", paper, "experiment.schema.yaml")
        # Schemes, masks and their options exist: checked now, not when (after its old output is
        # gone) a job runs; a stamp skips the check (and its torch import) when nothing changed.
        self._check_corpora(paper, loaded)
        check_variants_once(loaded["variants"], self.config_dir / "experiments" / f"{paper}.yaml", self.stamps)
        return with_extra_schemes(loaded, self.extra_schemes)

    def _check_corpora(self, paper: str, experiment: dict) -> None:
        """Every corpus an experiment names is a corpus role of the config (config/config.yaml
        `corpora`; a preset's corpora file replaces roles, adds none): a typo is one line naming
        the entry now, not a traceback from the first rule that looks the corpus up."""
        roles = self.config["corpora"]
        for where, name in corpus_references(experiment):
            if name not in roles:
                refuse(f"{self.experiment_file(paper)}: {where}: unknown corpus {name!r}; known: {known(roles)} "
                       "(config/config.yaml corpora)")

    def table_spec(self, paper: str, table) -> dict:
        tables = self.experiment(paper)["tables"]
        if f"table{table}" not in tables:
            refuse(f"paper {paper!r} has no table {table}; known: {known(tables)} ({self.experiment_file(paper)})")
        return tables[f"table{table}"]

    def figure_title(self, paper: str, figure) -> str:
        """One figure's title from the experiment file, as one shell word."""
        return shlex.quote(self.experiment(paper)["figures"][f"figure{figure}"]["title"])

    def scheme_files(self, paper: str, variant: str) -> list[str]:
        """The scheme file an extra scheme's model imports (none for the papers' own variants)."""
        return module_files(self.experiment(paper)["variants"].get(variant, {}))

    def table_schemes(self, paper: str, table) -> str:
        """JSON of the extra schemes one table (or figure from it) shows; {} where it compares none."""
        return quoted_json(table_extra(self.experiment(paper), f"table{table}", self.extra_schemes))

    def model_config(self, preset: str, paper: str, variant: str) -> dict:
        """ModelConfig fields of one variant's model at a preset, as its paper builds them."""
        variants = self.experiment(paper)["variants"]
        if variant not in variants:
            refuse(f"unknown variant {variant!r} for paper {paper!r}; known: {', '.join(variants)}")
        view = self.paper_preset(preset, paper)
        return self.paper(paper).model_config(view, self.experiment(paper), variant)

    def train_length(self, preset: str, paper: str) -> int:
        return self.paper_spec(preset, paper).model.train_length

    def eval_length(self, preset: str, multiple, paper: str) -> int:
        """multiple x the paper's L_tr at a preset, in tokens (lenex.experiment.presets.eval_length)."""
        return eval_length(multiple, self.train_length(preset, paper))

    def claims_budget(self, preset: str, paper: str) -> dict:
        """What a paper's claims compare with the scale study (lenex.experiment.presets.scale_budget), for the
        variants the claims name (`scale: variants`) and only those: adding a scheme leaves the
        claims job's command as it was. A name that is no variant is left out: the claims job fails
        naming it (lenex.claims.scale)."""
        path = self.config_dir / "claims" / f"{paper}.yaml"
        claims = remembered(self.stamps, "yaml", [path], lambda: read_yaml(path))["claims"]
        named = {v for c in claims for v in (c.get("scale") or {}).get("variants", [])}
        variants = self.experiment(paper)["variants"]
        models = {v: self.model_config(preset, paper, v) for v in sorted(named & set(variants))}
        return scale_budget(self.paper_preset(preset, paper), variants, named, models)


def _scheme_defaults(scheme: str) -> dict:
    import dataclasses

    from ..positions import POSITIONS

    if scheme not in POSITIONS:
        refuse(f"unknown position scheme {scheme!r}; known: {known(POSITIONS)}")
    return dataclasses.asdict(POSITIONS[scheme].Options())


def corpus_references(experiment: dict) -> list[tuple[str, str]]:
    """(key path, corpus) of every corpus an experiment file names: its training corpus (and
    fallback), each figure's, each table section's (a section may name none)."""
    found = [(key, experiment[key]) for key in ("train_corpus", "train_corpus_fallback") if experiment.get(key)]
    for key, figure in (experiment.get("figures") or {}).items():
        if figure.get("corpus"):
            found.append((f"figures.{key}.corpus", figure["corpus"]))
    for key, table in (experiment.get("tables") or {}).items():
        for part, spec in (("", table), ("compares_schemes.", table.get("compares_schemes") or {})):
            for i, section in enumerate(spec.get("sections") or []):
                if section.get("corpus"):
                    found.append((f"tables.{key}.{part}sections[{i}].corpus", section["corpus"]))
    return found
