#!/usr/bin/env bash
# The first thing to run on a new GPU machine (docs/gpu.md): at most 8 minutes on one GPU, by its
# own timer, needing nothing but this working tree. Writes JSON to ${OUT:-benchmarks/results/gpu-check}:
#   summary.json (each stage's status and seconds), env.json, bench.json, train_eval.json,
#   segmented_memory.json, and check.log (every stage's output, the CUDA tests' included).
#   bash scripts/gpu/check.sh                 # LENEX_CHECK_SECONDS=480 by default
#   LENEX_CHECK_DRY_RUN=1 bash scripts/gpu/check.sh   # on a CPU, toy sizes: the script's own test
#   LENEX_CHECK_STAGES="env bench" bash scripts/gpu/check.sh   # some stages only (default: all)
set -u
cd "$(dirname "$0")/../.." || exit 1
START=$(date +%s)
BUDGET=${LENEX_CHECK_SECONDS:-480}
OUT=${OUT:-benchmarks/results/gpu-check}
mkdir -p "$OUT"
LOG="$OUT/check.log"
: >"$LOG"
STAGES=()

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
# $BOX), its output appended to the log, its status kept for summary.json.
stage() {
    local name=$1 box=$2 command=$3 rc status began
    if [ -n "${LENEX_CHECK_STAGES:-}" ] && [[ " $LENEX_CHECK_STAGES " != *" $name "* ]]; then
        STAGES+=("{\"stage\": \"$name\", \"status\": \"skipped: not in LENEX_CHECK_STAGES\"}")
        return
    fi
    local remaining
    remaining=$(($(left) - 10))
    [ "$box" -gt "$remaining" ] && box=$remaining
    if [ "$box" -lt 20 ]; then
        STAGES+=("{\"stage\": \"$name\", \"status\": \"skipped: the 8-minute budget is spent\"}")
        return
    fi
    echo "=== $name (at most $box s) ===" >>"$LOG"
    began=$(date +%s)
    export BOX=$((box - 15))
    timeout -k 10 "$box" bash -c "$command" >>"$LOG" 2>&1
    rc=$?
    case $rc in
        0) status=passed ;;
        124 | 137) status="stopped at its time box" ;;
        *) status="failed (exit $rc)" ;;
    esac
    STAGES+=("{\"stage\": \"$name\", \"status\": \"$status\", \"exit\": $rc, \"seconds\": $(($(date +%s) - began)), \"box\": $box}")
}

export PY OUT
CHECK='"$PY" scripts/gpu/check.py'
[ "${LENEX_CHECK_DRY_RUN:-0}" = 1 ] && CHECK="$CHECK --dry-run"
stage env 45 "$CHECK env --out \"\$OUT\" --seconds \$BOX"
if [ "${LENEX_CHECK_DRY_RUN:-0}" = 1 ]; then
    STAGES+=("{\"stage\": \"cuda-tests\", \"status\": \"skipped: dry run\"}")
elif [ -f tests/test_fused_attention.py ]; then
    stage cuda-tests 100 '"$PY" -m pytest -m cuda tests/test_fused_attention.py -q -p no:cacheprovider'
else
    STAGES+=("{\"stage\": \"cuda-tests\", \"status\": \"skipped: tests/test_fused_attention.py is not in this tree\"}")
fi
stage bench 150 "$CHECK bench --out \"\$OUT\" --seconds \$BOX"
stage train-eval 100 "$CHECK train-eval --out \"\$OUT\" --seconds \$BOX"
stage segmented-memory 70 "$CHECK segmented-memory --out \"\$OUT\" --seconds \$BOX"

{
    echo "{\"budget_seconds\": $BUDGET, \"seconds\": $(($(date +%s) - START)), \"out\": \"$OUT\", \"stages\": ["
    for i in "${!STAGES[@]}"; do
        [ "$i" -gt 0 ] && echo ","
        echo "  ${STAGES[$i]}"
    done
    echo "]}"
} >"$OUT/summary.json"
cat "$OUT/summary.json"
