#!/usr/bin/env bash
# Stop the daemons scripts/slurm/start_cluster.sh started (the pids it recorded under
# STATE_DIR/pids/), newest first, and nothing else: a SLURM or munge already running on the
# machine is left alone. Waits (bounded) until each has exited; kills it if it will not.
#
#   scripts/slurm/stop_cluster.sh STATE_DIR
set -uo pipefail

state=${1:?usage: stop_cluster.sh STATE_DIR}
pids=$state/pids
[[ -d $pids ]] || { echo "no daemons recorded under $pids"; exit 0; }
status=0
for name in slurmd slurmctld slurmdbd mariadbd munged; do
    file=$pids/$name.pid
    [[ -s $file ]] || continue
    pid=$(<"$file")
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid"
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$pid" 2>/dev/null; then
            echo "$name ($pid) ignored SIGTERM for 10 s: killing it" >&2
            kill -KILL "$pid" 2>/dev/null
            status=1
        fi
    fi
    rm -f "$file"
    echo "stopped $name ($pid)"
done
# slurmd (configless) links /run/slurm/conf to its cache under STATE_DIR.
[[ -L /run/slurm/conf && $(readlink /run/slurm/conf) == "$state"/* ]] && rm -f /run/slurm/conf
runtime_file=$state/runtime_dir
if [[ -s $runtime_file ]]; then
    runtime=$(<"$runtime_file")
    [[ $runtime == /tmp/lenex-slurm-run.* ]] && rm -rf "$runtime"
    rm -f "$runtime_file"
fi
exit $status
