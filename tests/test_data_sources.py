"""The corpus sources, each declared once in lenex.data.sources: every declaration is reachable from
the registry, every source a config names is declared, and an unknown name is one error, never a
fall-back to another corpus."""
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from lenex.data import corpus, debian, fetch, sources
from lenex.data.union import union_parts
from test_pipeline import WITH_CORPORA, scratch_config
from test_workflow import REPO

KNOWN = ", ".join(sources.names())


def named_sources(spec: dict) -> list[str]:
    return [part["source"] for part in (union_parts(spec) if spec["source"] == "union" else [spec])]


@pytest.mark.parametrize("spec", [{"source": "debian_austin"}, {"source": "Shakespeare"}, {},
                                  {"source": "union", "sources": [{"source": "sotu"}, {"source": "debian_austin"}]}])
def test_an_unknown_source_is_one_error_naming_it_and_the_known_ones(spec, tmp_path):
    bad = repr(spec.get("source") if spec.get("source") != "union" else "debian_austin")
    message = f"unknown corpus source {bad}; known: {KNOWN}"
    for ask in (lambda: corpus.read_corpus(spec, tmp_path), lambda: corpus.fetched_inputs_of(spec),
                lambda: corpus.fetched_record(spec, tmp_path)):
        with pytest.raises(ValueError) as err:
            ask()
        assert str(err.value) == message


def test_a_mix_is_no_source_and_the_error_says_so(tmp_path):
    with pytest.raises(ValueError, match=r"unknown corpus source 'mix' \(a mix is built from prepared corpora"):
        corpus.read_corpus({"source": "mix", "components": {"pg22": 1.0}}, tmp_path)


def test_an_unknown_debian_stand_in_role_is_one_error():
    with pytest.raises(ValueError, match=r"unknown stand-in role 'austin'; known: austen, code, novels, pydoc, "
                                         r"rnw, rvignettes, sword, techdocs$"):
        debian.role_packages("austin")


def test_every_declared_source_is_reachable_from_the_registry():
    folder = Path(sources.__file__).parent
    assert sources.names() == tuple(sorted(p.stem for p in folder.glob("*.py") if p.stem != "__init__"))
    for name in sources.names():
        declared = sources.source(name)
        assert isinstance(declared, sources.Source), name
        if isinstance(declared, sources.PyPI):
            assert declared.fetch in fetch.PACKAGES, name
        if isinstance(declared, sources.Debian):
            assert declared.packages and len(set(declared.packages)) == len(declared.packages), name
            assert debian.role_packages(name.removeprefix("debian_")) == list(declared.packages)
            assert corpus.fetched_inputs_of({"source": name}) == {"pypi": [], "debian": list(declared.packages)}


def test_every_source_the_configs_name_is_declared():
    named = {}
    for path in sorted((REPO / "config").glob("*.yaml")):
        corpora = (yaml.safe_load(path.read_text()) or {}).get("corpora")
        for role, spec in corpora.items() if isinstance(corpora, dict) else ():  # sweeps.yaml names a file
            for name in named_sources(spec):
                named[name] = f"{path.name}: {role}"
    assert {"shakespeare", "debian_sword", "hub", "mix"} <= set(named)  # config.yaml and corpora-*.yaml
    undeclared = {name: where for name, where in named.items() if name != "mix" and name not in sources.names()}
    assert not undeclared


def test_an_unknown_source_in_a_presets_corpora_file_is_refused_when_the_dag_is_built(tmp_path):
    entry = {"source": "debian_austin", "stands_in_for": "NarrativeQA", "description": "a typo"}
    typo = scratch_config(tmp_path, WITH_CORPORA, yaml.safe_dump({"corpora": {"narrativeqa": entry}}))
    with pytest.raises(ValueError, match=r"config/corpora-p.yaml: corpus 'narrativeqa': unknown corpus source "
                                         r"'debian_austin'; known: chitchat, debian_austen, "):
        typo.paths.corpora("p")


def test_looking_sources_up_imports_only_the_named_ones():
    # What the DAG build does with the default config: no reader of another source, no rdata.
    code = ("import sys, yaml; from lenex.data.corpus import fetched_inputs_of\n"
            "for spec in yaml.safe_load(open('config/config.yaml'))['corpora'].values():\n"
            "    if spec['source'] != 'mix': fetched_inputs_of(spec)\n"
            "print(' '.join(m for m in sys.modules if m.startswith(('lenex.data', 'rdata', 'datasets'))))")
    loaded = set(subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, capture_output=True,
                                text=True).stdout.split())
    assert {"lenex.data.sources.shakespeare", "lenex.data.sources.debian_rnw"} <= loaded
    assert not loaded & {"lenex.data.sources.debian_sword", "lenex.data.sword", "lenex.data.chitchat",
                         "lenex.data.stdlib", "lenex.data.hub", "rdata", "datasets"}
