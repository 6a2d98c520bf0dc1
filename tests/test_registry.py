"""lenex.registry: one registry for every kind of extension, filled in the tree by the member's own
registration (found by the registry's pattern) and from outside by a module named by a string."""
import sys

import pytest

from lenex.registry import Registry


class Thing:
    def __init__(self, name):
        self.name = name


def test_a_member_registers_itself_and_an_unknown_name_is_one_line_naming_the_known_ones():
    things = Registry("thing")
    one = things.register(Thing("one"))
    assert things["one"] is one and list(things) == ["one"]

    @things.register(name="two")
    def two():
        return 2

    assert things["two"] is two
    with pytest.raises(ValueError, match=r"^unknown thing 'three'; known: one, two$"):
        things["three"]
    assert "three" not in things and things.get("three") is None  # a KeyError to mapping lookups


def test_a_taken_name_is_refused_naming_both():
    things = Registry("thing")
    things.register(Thing("one"))
    things.register(things["one"])  # the same member again: nothing to refuse
    with pytest.raises(ValueError, match=r"^thing 'one' of module 'test_registry' clashes with test_registry.Thing$"):
        things.register(Thing("one"))


def test_a_lazy_registry_lists_its_files_and_imports_only_the_one_asked_for():
    from lenex.data import sources

    listed = sources.SOURCES.names()
    assert "debian_sword" in listed and "shakespeare" in listed
    sources.source("shakespeare")
    assert "lenex.data.sources.shakespeare" in sys.modules


def test_the_tree_pattern_finds_each_packages_module_without_importing_it():
    from lenex.pipeline.papers import PAPERS

    assert PAPERS.in_tree_modules() == {"lex": "lenex.lex.paper", "receptive_field": "lenex.receptive_field.paper",
                                        "segmented": "lenex.segmented.paper"}
    masks = Registry("mask", members="lenex.masks.*")
    assert set(masks.in_tree_modules()) == {"base", "blockwise", "causal", "sliding"}


def test_a_module_from_outside_registers_what_the_registry_collects(tmp_path):
    (tmp_path / "mine.py").write_text("class Mine:\n    name = 'mine'\n")
    things = Registry("thing", collect=lambda module, given: [module.Mine])
    loaded = things.load_module(str(tmp_path / "mine.py"))
    assert things["mine"] is loaded.Mine and things.load_module(str(tmp_path / "mine.py")) is loaded  # once
    with pytest.raises(ValueError, match=r"^thing module 'missing.py' not found"):
        things.load_module("missing.py")
    with pytest.raises(ValueError, match=r"^thing module 'no_such_module_here' cannot be imported"):
        things.load_module("no_such_module_here")
