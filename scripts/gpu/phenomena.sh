#!/usr/bin/env bash
# The papers' phenomena in minutes on one GPU (docs/gpu-phenomena.md): trains Sinusoidal, ALiBi,
# RoPE, xPos and ALiBi with the Delta = 6 shifted slopes at one shape fixed in advance, scores each
# at 1, 2, 4 and 8 x L_tr on the carried corpus and renders a LEX-Table-2-like page with its
# claims judged as the presets' are. lenex's own modules, no Snakemake. Writes to
# ${OUT:-benchmarks/results/gpu-phenomena}: results.json (rewritten after every model),
# table1.cells.json, table2.cells.json, phenomena.md, phenomena.log.
#   bash scripts/gpu/phenomena.sh                              # on the GPU machine, about 3 minutes
#   LENEX_PHENOMENA_DRY_RUN=1 bash scripts/gpu/phenomena.sh    # on a CPU, toy sizes, seconds
# The whole run is boxed at LENEX_PHENOMENA_SECONDS (default 420 s); each model also has its own
# wall-clock guard (scripts/gpu/phenomena.py PLAN.guard_s), recorded "stopped at guard" if hit.
set -u
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-benchmarks/results/gpu-phenomena}
BOX=${LENEX_PHENOMENA_SECONDS:-420}
mkdir -p "$OUT"
LOG="$OUT/phenomena.log"
PY=${PYTHON:-python3}
# The GPU machine's python3 has torch, numpy, scipy, pandas, yaml and tqdm (not jsonschema: the claims
# are then judged afterwards by `phenomena.py render`); here, lenex's own venv.
if [ -z "${PYTHON:-}" ] && ! "$PY" -c "import torch, yaml, scipy" 2>/dev/null && [ -x .venv/bin/python ]; then
    PY=.venv/bin/python
fi
export PYTHONPATH="$PWD/src:$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
# The configuration the recorded H100 rates were measured with: eager, reference attention.
export LENEX_COMPILE=${LENEX_COMPILE:-0} LENEX_ATTENTION_KERNEL=${LENEX_ATTENTION_KERNEL:-reference}
ARGS=(run --out "$OUT")
[ "${LENEX_PHENOMENA_DRY_RUN:-0}" = 1 ] && ARGS+=(--dry-run)
# The carried corpus is unpacked and checked against its SHA256SUMS by phenomena.py before any
# training (a mismatch stops the run with one line).
began=$(date +%s)
timeout -k 10 "$BOX" "$PY" scripts/gpu/phenomena.py "${ARGS[@]}" >>"$LOG" 2>&1
rc=$?
case $rc in
    0) status=finished ;;
    124 | 137) status="stopped at its ${BOX} s box (results.json holds the models that finished)" ;;
    *) status="failed (exit $rc, see $LOG)" ;;
esac
echo "{\"status\": \"$status\", \"exit\": $rc, \"seconds\": $(($(date +%s) - began)), \"out\": \"$OUT\"}" | tee "$OUT/summary.json"
[ -f "$OUT/phenomena.md" ] && [ "$rc" = 0 ] && grep -A8 '^| claim |' "$OUT/phenomena.md" | head -5
exit $rc
