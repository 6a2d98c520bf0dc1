#!/usr/bin/env bash
# The first thing to run on a new GPU machine (docs/gpu.md): at most 8 minutes on one GPU, by its
# own timer, needing nothing but this working tree. Writes JSON to ${OUT:-benchmarks/results/gpu-check}:
#   summary.json (each stage's verdict: passed only with exit 0 and no row error in its JSON),
#   env.json, cuda_tests.json (+ cuda_tests.xml), bench.json, train_eval.json,
#   segmented_memory.json, each rewritten after every row and on SIGTERM; check.log (all output).
#   bash scripts/gpu/check.sh                 # LENEX_CHECK_SECONDS=480 by default
#   LENEX_CHECK_DRY_RUN=1 bash scripts/gpu/check.sh   # on a CPU, toy sizes (scripts/gpu/rehearse.sh)
#   LENEX_CHECK_STAGES="env bench" bash scripts/gpu/check.sh   # some stages only (default: all)
# Exit status: 0 when every stage that ran passed, 1 otherwise.
set -u
cd "$(dirname "$0")/../.." || exit 1
START=$(date +%s)
BUDGET=${LENEX_CHECK_SECONDS:-480}
OUT=${OUT:-benchmarks/results/gpu-check}
mkdir -p "$OUT"
LOG="$OUT/check.log"
: >"$LOG"
: >"$OUT/stages.jsonl"
export LENEX_CHECK_STARTED=$START

left() { echo $((BUDGET - ($(date +%s) - START))); }

# A Python with torch (CUDA), transformers, numpy, yaml and tqdm: the machine's own python3 if it
# has them, else a venv made here (pip install torch gets a CUDA build on a GPU machine).
PY=${PYTHON:-python3}
if ! "$PY" -c "import torch, transformers, numpy, yaml, tqdm" 2>>"$LOG"; then
    if [ ! -x .venv-gpu/bin/python ]; then
        python3 -m venv --system-site-packages .venv-gpu >>"$LOG" 2>&1 &&
            .venv-gpu/bin/pip install -q torch transformers numpy pyyaml tqdm >>"$LOG" 2>&1
    fi
    PY=.venv-gpu/bin/python
fi
export PYTHONPATH="$PWD/src:$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1

# stage NAME BOX COMMAND: run the shell COMMAND for at most BOX seconds (less if the budget is
# nearly spent, skipped under 20 s; COMMAND reads its own box, less 15 s to write its JSON, as
# $BOX), its output appended to the log, its exit and seconds kept in stages.jsonl for summary.json.
stage() {
    local name=$1 box=$2 command=$3 rc began
    if [ -n "${LENEX_CHECK_STAGES:-}" ] && [[ " $LENEX_CHECK_STAGES " != *" $name "* ]]; then
        echo "{\"stage\": \"$name\", \"status\": \"skipped: not in LENEX_CHECK_STAGES\"}" >>"$OUT/stages.jsonl"
        return
    fi
    local remaining
    remaining=$(($(left) - 10))
    [ "$box" -gt "$remaining" ] && box=$remaining
    if [ "$box" -lt 20 ]; then
        echo "{\"stage\": \"$name\", \"status\": \"skipped: the 8-minute budget is spent\"}" >>"$OUT/stages.jsonl"
        return
    fi
    echo "=== $name (at most $box s) ===" >>"$LOG"
    began=$(date +%s)
    export BOX=$((box - 15))
    # SIGTERM at the box: the stage writes what it has, marked interrupted (check.py); SIGKILL 10 s later.
    timeout -k 10 "$box" bash -c "exec $command" >>"$LOG" 2>&1
    rc=$?
    echo "{\"stage\": \"$name\", \"exit\": $rc, \"seconds\": $(($(date +%s) - began)), \"box\": $box}" >>"$OUT/stages.jsonl"
}

export PY OUT
CHECK='"$PY" scripts/gpu/check.py'
[ "${LENEX_CHECK_DRY_RUN:-0}" = 1 ] && CHECK="$CHECK --dry-run"
# Boxes (480 s in all): the CUDA tests' ~17 cold FlexAttention compiles of 30-60 s each run on
# pytest-xdist workers where it is installed (the H200 image has it); the bench's first compiled
# row pays its cold compile; each Python stage skips a row predicted to outlast its box.
stage env 25 "$CHECK env --out \"\$OUT\" --seconds \$BOX"
if [ -f tests/test_fused_attention.py ]; then
    stage cuda-tests 165 "$CHECK cuda-tests --out \"\$OUT\" --seconds \$BOX"
else
    echo '{"stage": "cuda-tests", "status": "skipped: tests/test_fused_attention.py is not in this tree"}' >>"$OUT/stages.jsonl"
fi
stage bench 150 "$CHECK bench --out \"\$OUT\" --seconds \$BOX"
stage train-eval 70 "$CHECK train-eval --out \"\$OUT\" --seconds \$BOX"
stage segmented-memory 60 "$CHECK segmented-memory --out \"\$OUT\" --seconds \$BOX"

# summary.json: each stage judged from its exit and its JSON (check.py summary); the exit says
# whether all passed.
"$PY" scripts/gpu/check.py summary --out "$OUT" --budget "$BUDGET" >>"$LOG" 2>&1
rc=$?
if [ -f "$OUT/summary.json" ]; then
    cat "$OUT/summary.json"
else
    echo "check.py summary wrote no summary.json (exit $rc): see $LOG; stages.jsonl:" >&2
    cat "$OUT/stages.jsonl"
    rc=1
fi
exit $rc
