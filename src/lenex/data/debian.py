"""Fetch Debian packages for the offline stand-in corpora into ``resources/debian/``.

Usage: ``python -m lenex.data.debian --out resources/debian PKG [PKG ...]``
(or ``--role NAME`` for the packages the stand-in ``debian_NAME`` reads, as its
declaration in ``lenex.data.sources`` lists them: ``--role rnw``, ``--role sword``...).

Packages are only *downloaded* (``apt-get download``) and unpacked with
``dpkg-deb -x``; nothing is installed, no maintainer script runs, and R is never
needed. Layout, one folder per package::

    <out>/<pkg>/<pkg>_<version>_<arch>.deb
    <out>/<pkg>/root/...         the unpacked file tree (usr/lib/R/..., usr/share/doc/...)
    <out>/<pkg>/SOURCE.json      written last: its presence certifies the two above

A package is assembled in a hidden temporary folder next to ``<out>/<pkg>`` and
renamed into place only once complete, so an interrupted or failed fetch leaves
nothing that looks like a fetched package. The readers (rnw.py, pydoc.py, austen.py)
take ``<out>`` as their root and find their package's tree with ``fetch.unpacked_root``.

A package pinned in ``lenex.data.debian_lock`` (the version and sha256 the committed runs read)
is downloaded as ``PKG=VERSION`` and kept only when its sha256 is the pin's; one fetched before at
another version is fetched again. A pinned version the machine's package lists do not offer is
one error naming the versions they do offer. Packages with no pin take the lists' candidate.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import logging
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from tqdm import tqdm

from ..cli import run_cli
from ..files import atomic_write_text, read_json
from .debian_lock import FETCHED_WITH, LOCK, Pin, read_lock
from .fetch import SOURCE_FILE, UNPACKED_DIR, sha256_file
from .sources import debian_roles, source

log = logging.getLogger(__name__)

# What apt-get says when the package lists are empty (fresh container) or stale.
_LISTS_MISSING = ("Unable to locate package", "has no installation candidate")
# ... and when the lists lack a version asked for as PKG=VERSION.
_VERSION_MISSING = "was not found"


def have_apt() -> bool:
    """True when this machine can download and unpack Debian packages."""
    return shutil.which("apt-get") is not None and shutil.which("dpkg-deb") is not None


def _cached(pkg_dir: Path, pin: Pin | None = None) -> dict | None:
    """SOURCE.json if it, its .deb (same sha256) and the unpacked tree are all there, and its .deb
    is the pin's where the package has one."""
    try:
        meta = read_json(pkg_dir / SOURCE_FILE)
        deb = pkg_dir / meta["filename"]
        if pin is not None and (meta["version"], meta["sha256"]) != (pin.version, pin.sha256):
            log.info("%s in %s is %s, not its pin %s: fetched again", pkg_dir.name, pkg_dir,
                     meta["version"], pin.version)
            return None
        if (pkg_dir / UNPACKED_DIR).is_dir() and deb.is_file() \
                and sha256_file(deb) == meta["sha256"]:
            return meta
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return None


def _tools(package: str) -> tuple[str, str]:
    apt_get, dpkg_deb = shutil.which("apt-get"), shutil.which("dpkg-deb")
    if apt_get is None or dpkg_deb is None:
        missing = " and ".join(n for n, p in (("apt-get", apt_get), ("dpkg-deb", dpkg_deb)) if p is None)
        raise RuntimeError(
            f"cannot fetch Debian package {package!r}: {missing} not found on this machine; "
            "this offline stand-in corpus needs a Debian machine (apt-get + dpkg-deb)")
    return apt_get, dpkg_deb


def _run(cmd: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess:
    # LC_ALL=C: _LISTS_MISSING matches apt's English messages, not a translation.
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False,
                          env={**os.environ, "LC_ALL": "C"})


def _failure(what: str, cmd: list[str], proc: subprocess.CompletedProcess) -> RuntimeError:
    return RuntimeError(f"{what}\ncommand: {' '.join(cmd)}\nexit code {proc.returncode}\n"
                        f"{(proc.stderr or proc.stdout).strip()[-2000:]}")


class _Apt:
    """apt-get download, running ``apt-get update`` at most once per fetch when the
    package lists turn out to be empty."""

    def __init__(self):
        self.updated = False

    def download(self, apt_get: str, package: str, dest: Path, pin: Pin | None = None) -> None:
        cmd = [apt_get, "download", pin.spec(package) if pin else package]
        proc = _run(cmd, cwd=dest)
        missing = _LISTS_MISSING + ((_VERSION_MISSING,) if pin else ())
        if proc.returncode != 0 and not self.updated and any(m in proc.stderr for m in missing):
            log.info("apt-get cannot find %s; running apt-get update once and retrying", package)
            self.updated = True
            update = _run([apt_get, "update"])
            if update.returncode != 0:
                raise _failure(f"could not download Debian package {package!r}: apt-get update failed "
                               "(offline, or not root?)", [apt_get, "update"], update)
            proc = _run(cmd, cwd=dest)
        if proc.returncode != 0 and pin and _VERSION_MISSING in proc.stderr:
            raise RuntimeError(
                f"Debian package {package} is pinned at {pin.version} ({LOCK.name}: the version the "
                f"committed runs read), which this machine's package lists do not offer (they offer: "
                f"{', '.join(offered_versions(package)) or 'none'}); a corpus read from another version "
                "is another corpus, so the pin is not passed over")
        if proc.returncode != 0:
            raise _failure(f"could not download Debian package {package!r}", cmd, proc)


def offered_versions(package: str) -> list[str]:
    """The versions of ``package`` this machine's package lists offer (apt-cache madison), newest first."""
    apt_cache = shutil.which("apt-cache")
    if apt_cache is None:
        return []
    proc = _run([apt_cache, "madison", package])
    return list(dict.fromkeys(line.split("|")[1].strip() for line in proc.stdout.splitlines()
                              if line.count("|") >= 2))


def _deb_fields(dpkg_deb: str, deb: Path) -> dict[str, str]:
    cmd = [dpkg_deb, "-f", str(deb), "Package", "Version", "Architecture"]
    proc = _run(cmd)
    if proc.returncode != 0:
        raise _failure(f"could not read the control fields of {deb.name}", cmd, proc)
    fields = dict(line.split(": ", 1) for line in proc.stdout.splitlines() if ": " in line)
    return {k.lower(): fields.get(k, "") for k in ("Package", "Version", "Architecture")}


def _fetch_one(package: str, out: Path, apt: _Apt, pin: Pin | None = None) -> dict:
    pkg_dir = out / package
    cached = _cached(pkg_dir, pin)
    if cached is not None:
        log.info("%s %s already in %s (sha256 matches)", package, cached.get("version"), pkg_dir)
        return cached
    apt_get, dpkg_deb = _tools(package)
    out.mkdir(parents=True, exist_ok=True)
    # Assemble next to pkg_dir (same filesystem), rename into place when complete.
    with tempfile.TemporaryDirectory(dir=out, prefix=f".{package}.fetching-") as tmp:
        staging = Path(tmp) / package
        staging.mkdir()
        apt.download(apt_get, package, staging, pin)
        debs = sorted(staging.glob("*.deb"))
        if len(debs) != 1:
            raise RuntimeError(f"apt-get download {package} gave {len(debs)} .deb files: "
                               f"{[d.name for d in debs]}")
        deb = debs[0]
        fields = _deb_fields(dpkg_deb, deb)
        if fields["package"] != package:
            raise RuntimeError(f"apt-get download {package} gave {deb.name}, "
                               f"which is package {fields['package']!r}")
        sha256 = sha256_file(deb)
        if pin is not None and sha256 != pin.sha256:
            raise RuntimeError(f"apt-get download {pin.spec(package)} gave {deb.name} with sha256 "
                               f"{sha256[:12]}, not the pin's {pin.sha256[:12]} ({LOCK.name}): "
                               "another file under the pinned version (another architecture or mirror?)")
        cmd = [dpkg_deb, "-x", str(deb), str(staging / UNPACKED_DIR)]
        proc = _run(cmd)
        if proc.returncode != 0:
            raise _failure(f"could not unpack {deb.name}", cmd, proc)
        meta = {
            "package": package,
            "version": fields["version"],
            "architecture": fields["architecture"],
            "filename": deb.name,
            "sha256": sha256,
            "size_bytes": deb.stat().st_size,
            "fetched_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "fetched_with": FETCHED_WITH,
        }
        atomic_write_text(staging / SOURCE_FILE, json.dumps(meta, indent=2) + "\n")
        if pkg_dir.exists():  # stale or incomplete: replaced as a whole
            shutil.rmtree(pkg_dir)
        os.replace(staging, pkg_dir)
    log.info("fetched %s (%s, %.1f MB) into %s", deb.name, meta["sha256"][:12],
             meta["size_bytes"] / 1e6, pkg_dir)
    return meta


def fetch_debian(packages: list[str], out: str | os.PathLike,
                 pins: dict[str, Pin] | None = None) -> dict[str, dict]:
    """Download and unpack each Debian package into ``out/<pkg>/`` (idempotent), each pinned one
    at its pin (``pins``: the lock's by default).

    Returns {package: SOURCE.json's dict}. Raises RuntimeError naming the package when
    apt-get/dpkg-deb are missing, a download fails or a pin is not met (nothing is left behind for it).
    """
    if not packages:
        raise ValueError("no Debian packages to fetch")
    out, apt = Path(out), _Apt()
    pins = read_lock() if pins is None else pins
    unique = list(dict.fromkeys(packages))
    return {p: _fetch_one(p, out, apt, pins.get(p))
            for p in tqdm(unique, desc="debian packages", unit="pkg", disable=len(unique) < 2)}


def role_packages(role: str) -> list[str]:
    """The Debian packages the stand-in a ``--role`` names reads (its source's declaration)."""
    roles = debian_roles()
    if role not in roles:
        raise ValueError(f"unknown stand-in role {role!r}; known: {', '.join(sorted(roles))}")
    return list(source(roles[role]).packages)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("packages", nargs="*", metavar="PKG", help="Debian package names")
    ap.add_argument("--role", action="append", default=[], choices=sorted(debian_roles()),
                    help="add the packages a stand-in reader needs (repeatable)")
    ap.add_argument("--out", required=True, help="folder that gets one sub-folder per package")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    packages = list(args.packages) + [p for r in args.role for p in role_packages(r)]
    if not packages:
        raise ValueError("name at least one Debian package or --role")
    fetch_debian(packages, args.out)


if __name__ == "__main__":
    run_cli(main)
