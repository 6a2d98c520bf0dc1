"""The Debian packages' pins: for each package a stand-in corpus reads, the version and the .deb's
sha256 that the committed runs read, so that a corpus fetched again is the same corpus.

Why pins: ``apt-get download PKG`` takes whatever version the machine's package lists offer that
day. Stable's point releases and security updates move it (the lists of one machine have offered
linux-doc-6.1 at 6.1.176-1 from bookworm one week and 6.1.192-3 from bookworm-security the next),
and a training mix built from another version holds other documents: its models are not the
committed ones. ``lenex.data.debian`` therefore fetches a pinned package as ``PKG=VERSION`` and
refuses a .deb whose sha256 is not the pin's, and a corpus is refused at preparation when a package
it reads sits in ``resources/debian`` at another version than its pin (``check_fetched``). A
package with no pin is fetched at the lists' candidate version, as before, and its corpus records
which one.

The pins are not typed: ``python -m lenex.data.debian_lock --raw results/*/raw/*`` writes
``debian-lock.json`` beside this module from the corpus metas the committed raw results hold (each
records the SOURCE.json of every package it read), and refuses a package recorded at two versions.
"""
from __future__ import annotations

import argparse
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..cli import run_cli
from ..files import atomic_write_text, read_json

#: The pins every fetch reads (package data, written by this module's main).
LOCK = Path(__file__).with_name("debian-lock.json")
#: How lenex.data.debian marks what it fetched (SOURCE.json's ``fetched_with``).
FETCHED_WITH = "apt-get download"


@dataclass(frozen=True)
class Pin:
    """One package's pinned .deb."""

    version: str
    sha256: str

    def spec(self, package: str) -> str:
        """What ``apt-get download`` is given for the pinned version."""
        return f"{package}={self.version}"


def _fetched_entries(node, where: str):
    """(package's SOURCE.json, where) for every Debian package recorded anywhere in ``node``."""
    if isinstance(node, dict):
        if node.get("fetched_with") == FETCHED_WITH and "package" in node:
            yield node, where
            return
        for value in node.values():
            yield from _fetched_entries(value, where)
    elif isinstance(node, list):
        for value in node:
            yield from _fetched_entries(value, where)


def pins_recorded(files: Iterable[tuple[str, object]]) -> dict[str, dict]:
    """package -> {version, sha256, recorded_in: [corpus metas]} over the corpus metas among
    ``files`` ((path, JSON) as raw results give them back; several runs' copies of one path may
    come). A package recorded at two versions or two sha256s is one ValueError naming both and
    where each was recorded."""
    pins: dict[str, dict] = {}
    for path, content in sorted(files, key=lambda item: item[0]):
        if not path.endswith("meta.json") or not isinstance(content, dict):
            continue
        for entry, where in _fetched_entries(content.get("source"), path):
            package = entry["package"]
            found = {"version": entry["version"], "sha256": entry["sha256"]}
            pin = pins.setdefault(package, {**found, "recorded_in": []})
            if {k: pin[k] for k in found} != found:
                raise ValueError(f"Debian package {package} is recorded at two versions: {pin['version']} "
                                 f"(sha256 {pin['sha256'][:12]}, in {pin['recorded_in'][0]}) and "
                                 f"{found['version']} (sha256 {found['sha256'][:12]}, in {where}); "
                                 "one lock cannot pin both")
            if where not in pin["recorded_in"]:
                pin["recorded_in"].append(where)
    return dict(sorted(pins.items()))


def read_lock(path: str | Path = LOCK) -> dict[str, Pin]:
    """package -> Pin from a lock file; a malformed entry is one ValueError naming it."""
    lock = read_json(path)
    packages = lock.get("packages") if isinstance(lock, dict) else None
    if not isinstance(packages, dict):
        raise ValueError(f"{path}: a Debian lock is an object with `packages` (package -> version, sha256)")
    pins = {}
    for package, entry in packages.items():
        version, sha256 = (entry or {}).get("version"), (entry or {}).get("sha256")
        if not isinstance(version, str) or not version or not isinstance(sha256, str) or len(sha256) != 64:
            raise ValueError(f"{path}: the pin of {package} needs a `version` and a 64-digit `sha256`, not {entry!r}")
        pins[package] = Pin(version, sha256)
    return pins


def check_fetched(package: str, fetched: dict | None, pins: dict[str, Pin], where: str) -> None:
    """Refuse a fetched package (its SOURCE.json) that is not its pin's .deb: the corpus read from it
    would not be the committed one. Unpinned packages and packages not fetched pass."""
    pin = pins.get(package)
    if pin is None or fetched is None:
        return
    if (fetched.get("version"), fetched.get("sha256")) != (pin.version, pin.sha256):
        raise ValueError(f"{where} holds Debian package {package} {fetched.get('version')} (sha256 "
                         f"{str(fetched.get('sha256'))[:12]}), but {LOCK.name} pins {pin.version} (sha256 "
                         f"{pin.sha256[:12]}): fetch it again at its pin with `python -m lenex.data.debian "
                         f"--out {Path(where).parent} {package}`")


def lock_text(files: Iterable[tuple[str, object]], sources: list[str]) -> str:
    """The lock file's text: the pins recorded in ``files``, with what it was written from."""
    pins = pins_recorded(files)
    return json.dumps({"written_by": "python -m lenex.data.debian_lock --raw " + " ".join(sources),
                       "packages": pins}, indent=1) + "\n"


def main(argv=None) -> None:
    from ..tables.raw_results import read_raw

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--raw", nargs="+", required=True, help="committed raw results (results/*/raw/*)")
    parser.add_argument("--out", default=str(LOCK), help="the lock file to write")
    args = parser.parse_args(argv)
    sources = sorted(args.raw)
    # one file at a time: a preset's parts each hold their own copy of a corpus meta
    files = [item for raw in sources for item in read_raw([raw]).items()]
    atomic_write_text(args.out, lock_text(files, sources))
    print(f"pinned {len(json.loads(Path(args.out).read_text())['packages'])} Debian packages in {args.out}")


if __name__ == "__main__":
    run_cli(main)
