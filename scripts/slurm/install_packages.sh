#!/usr/bin/env bash
# The Debian packages of the loopback SLURM cluster (about 20 s). Daemons are not started
# (start_cluster.sh starts its own), and a package already installed is not fetched again.
#   scripts/slurm/install_packages.sh [--accounting]
set -euo pipefail
packages=(munge slurmctld slurmd slurm-client)
[[ ${1:-} == --accounting ]] && packages+=(slurmdbd mariadb-server)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[[ ${#missing[@]} == 0 ]] && { echo "SLURM packages present"; exit 0; }
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
