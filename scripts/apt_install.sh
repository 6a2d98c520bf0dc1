#!/usr/bin/env bash
# Install the Debian packages named that are not installed yet (root; one apt-get update, only
# when something is missing). Shared by the set-up scripts of the SLURM and browser tests.
#   scripts/apt_install.sh LABEL PACKAGE...
set -euo pipefail
label=$1
shift
missing=()
for package in "$@"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[[ ${#missing[@]} == 0 ]] && { echo "$label packages present"; exit 0; }
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
