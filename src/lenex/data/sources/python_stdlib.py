"""GitHub's stand-in: the Python standard library of the machine that runs the pipeline, or the one
under ``path`` (lenex.data.stdlib); what was read is recorded as the version and a hash of the files."""
from __future__ import annotations

from . import SOURCES, Local


def read(spec, resources_dir):
    from ..stdlib import read_python_stdlib  # here: building the DAG never reads (chitchat.py)

    return read_python_stdlib(spec.get("path"))


def describe(spec):
    from ..stdlib import stdlib_source_record

    return stdlib_source_record(spec.get("path"))


SOURCE = SOURCES.register(Local(read, describe), name="python_stdlib")
