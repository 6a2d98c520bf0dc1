#!/usr/bin/env bash
# The Debian packages of the loopback SLURM cluster (about 20 s). Daemons are not started
# (start_cluster.sh starts its own), and a package already installed is not fetched again.
#   scripts/slurm/install_packages.sh [--accounting]
set -euo pipefail
packages=(munge slurmctld slurmd slurm-client)
[[ ${1:-} == --accounting ]] && packages+=(slurmdbd mariadb-server)
exec bash "$(dirname "$0")/../apt_install.sh" SLURM "${packages[@]}"
