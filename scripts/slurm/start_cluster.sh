#!/usr/bin/env bash
# Bring up a single-node SLURM cluster on loopback, for the test suite and CI.
#
#   scripts/slurm/start_cluster.sh STATE_DIR [--accounting]
#   export SLURM_CONF=STATE_DIR/slurm.conf     # then sbatch/squeue/snakemake --executor slurm work
#   scripts/slurm/stop_cluster.sh STATE_DIR    # stops exactly the daemons started here
#
# Needs root and the Debian packages `munge slurmctld slurmd slurm-client` (plus `slurmdbd
# mariadb-server` for --accounting); `scripts/slurm/install_packages.sh` installs them.
# Daemons do not auto-start after the install in this sandbox, so each is started by hand and
# its pid recorded in STATE_DIR/pids/<name>.pid: stop_cluster.sh ends those pids and no other.
# Without --accounting `sacct` has nothing to ask, so the SLURM profile must say
# `slurm-status-command: squeue` (profiles/slurm-ci does); MinJobAge=300 keeps finished jobs
# visible to squeue long enough for their state to be read.
set -euo pipefail

state=${1:?usage: start_cluster.sh STATE_DIR [--accounting]}
accounting=${2:-}
[[ $(id -u) == 0 ]] || { echo "error: start_cluster.sh must run as root" >&2; exit 2; }
for binary in munged slurmctld slurmd sbatch; do
    command -v "$binary" >/dev/null || { echo "error: $binary not found: run scripts/slurm/install_packages.sh" >&2; exit 2; }
done
if [[ -n $accounting ]]; then
    [[ $accounting == --accounting ]] || { echo "error: unknown option $accounting" >&2; exit 2; }
    command -v slurmdbd >/dev/null && command -v mariadbd >/dev/null \
        || { echo "error: --accounting needs slurmdbd and mariadb-server" >&2; exit 2; }
fi

mkdir -p "$state"
state=$(cd "$state" && pwd)
pids=$state/pids
mkdir -p "$pids" "$state/ctld" "$state/d"
# munged and mariadbd run as their own users, who cannot enter a private STATE_DIR (pytest's
# are 0700): their files go to a directory of their own, removed by stop_cluster.sh.
runtime=$(mktemp -d /tmp/lenex-slurm-run.XXXXXX)
chmod 755 "$runtime"
echo "$runtime" >"$state/runtime_dir"
mkdir -p "$runtime/munge"
started=$(date +%s%N)

# Wait (bounded) until a command succeeds.
wait_for() {
    local what=$1 seconds=$2; shift 2
    for _ in $(seq $((seconds * 5))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
    echo "error: $what not ready after ${seconds}s (logs in $state)" >&2
    return 1
}
# The pid a daemon wrote to its pid file, recorded under pids/ (once it appears).
record_pid() {
    local name=$1 pidfile=$2
    wait_for "$name pid file" 20 test -s "$pidfile"
    cp "$pidfile" "$pids/$name.pid"
}

# munge on its default socket (commands inside jobs, and slurmd before it has fetched its
# configuration, look there). A munged already answering is used, not replaced.
[[ -s /etc/munge/munge.key ]] || { mungekey --create --keyfile /etc/munge/munge.key 2>/dev/null \
    || dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null; }
chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    echo "using the munged already running"
else
    mkdir -p /run/munge && chown munge:munge /run/munge && chmod 755 /run/munge
    chown munge:munge "$runtime/munge"
    runuser -u munge -- munged --pid-file="$runtime/munge/munged.pid" \
        --log-file="$runtime/munge/munged.log" --seed-file="$runtime/munge/munged.seed"
    record_pid munged "$runtime/munge/munged.pid"
fi

# The node line from the hardware slurmd sees, with RealMemory cut to ~85% (the rest is the
# OS's) and the node on loopback.
node=$(slurmd -C | head -n1)
memory=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$node")
node=$(sed "s/RealMemory=[0-9]*/RealMemory=$((memory * 85 / 100))/" <<<"$node")
nodename=$(sed -n 's/^NodeName=\([^ ]*\).*/\1/p' <<<"$node")

if [[ -n $accounting ]]; then
    accounting_lines="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=6819
JobAcctGatherType=jobacct_gather/linux"
else
    accounting_lines="AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none"
fi
cat >"$state/slurm.conf" <<EOF
# written by scripts/slurm/start_cluster.sh
ClusterName=lenex
SlurmctldHost=$nodename(127.0.0.1)
SlurmUser=root
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/munge
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/d
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
MinJobAge=300
# Configless: slurmd fetches this file from slurmctld and caches it, so commands inside a job
# find it without SLURM_CONF (the SLURM executor's job step drops SLURM_* variables).
SlurmctldParameters=enable_configless
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
$accounting_lines
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$state/slurm.conf

if [[ -n $accounting ]]; then
    # MariaDB on a socket only (--skip-networking), its data under STATE_DIR.
    mkdir -p "$runtime/mysql" && chown mysql:mysql "$runtime/mysql"
    [[ -d $runtime/mysql/mysql ]] || mariadb-install-db --user=mysql --datadir="$runtime/mysql" --auth-root-authentication-method=socket >"$runtime/mysql-install.log" 2>&1
    runuser -u mysql -- mariadbd --datadir="$runtime/mysql" --socket="$runtime/mysql/mysql.sock" \
        --pid-file="$runtime/mysql/mariadbd.pid" --skip-networking --log-error="$runtime/mysql/error.log" &
    record_pid mariadbd "$runtime/mysql/mariadbd.pid"
    wait_for "mariadb" 30 mariadb --socket="$runtime/mysql/mysql.sock" -e "select 1"
    mariadb --socket="$runtime/mysql/mysql.sock" -e "CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'lenex';
        GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';"
    cat >"$state/slurmdbd.conf" <<EOF
AuthType=auth/munge
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=6819
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageLoc=slurm_acct_db
StorageUser=slurm
StoragePass=lenex
StoragePort=3306
PidFile=$state/slurmdbd.pid
LogFile=$state/slurmdbd.log
EOF
    # MariaDB listens on the socket only; the client library reads it from MYSQL_UNIX_PORT.
    chmod 600 "$state/slurmdbd.conf"
    MYSQL_UNIX_PORT=$runtime/mysql/mysql.sock SLURM_CONF=$state/slurm.conf slurmdbd -f "$state/slurmdbd.conf"
    record_pid slurmdbd "$state/slurmdbd.pid"
    wait_for "slurmdbd" 30 sacctmgr -i show cluster
fi

slurmctld -f "$state/slurm.conf"
record_pid slurmctld "$state/slurmctld.pid"
if [[ -n $accounting ]]; then
    sacctmgr -i add cluster lenex >/dev/null 2>&1 || true
    sacctmgr -i add account lenex Description=lenex Organization=lenex >/dev/null 2>&1 || true
    sacctmgr -i add user "$(id -un)" Account=lenex >/dev/null 2>&1 || true
fi
slurmd --conf-server 127.0.0.1:6817
record_pid slurmd "$state/slurmd.pid"
wait_for "node $nodename idle" 30 bash -c "sinfo -h -n '$nodename' -o %t | grep -qx idle"
elapsed_ms=$((($(date +%s%N) - started) / 1000000))
echo "cluster up in $((elapsed_ms / 1000)).$((elapsed_ms % 1000 / 100)) s: $(sinfo -h -o '%P %D %t %c cpus %m MB')"
