"""Several sources pooled before the split (lenex.data.union): ``sources:``, a list of corpus specs,
each read, fetched and recorded through its own source."""
from __future__ import annotations

from ..union import read_union, union_parts
from . import SOURCES, Source, no_needs, source_of


class Union(Source):
    def read(self, spec, resources_dir):
        for part in union_parts(spec):
            source_of(part)  # a part no source declares is an error before any part is read
        return read_union(spec, resources_dir, lambda part, where: source_of(part).read(part, where))

    def needs(self, spec):
        needs = no_needs()
        for part in union_parts(spec):
            for kind, names in source_of(part).needs(part).items():
                needs[kind] += names
        return needs

    def record(self, spec, resources_dir):
        """Each part's record, keyed "<index>:<source>" (two parts may name one source)."""
        return {f"{i}:{part['source']}": source_of(part).record(part, resources_dir)
                for i, part in enumerate(union_parts(spec))}


SOURCE = SOURCES.register(Union(), name="union")
