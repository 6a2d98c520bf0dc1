#!/usr/bin/env bash
# The GPU check rehearsed on a CPU under the GPU machine's own versions (docs/gpu.md): builds
# .venv-rehearse (git-ignored) with Python 3.12, torch 2.11.0 (PyPI's CUDA build, which runs on
# the CPU), transformers 5.17.0, numpy 2.5.2, pyyaml, tqdm and pytest, and no snakemake; runs
# the whole check (scripts/gpu/check.sh, LENEX_CHECK_DRY_RUN=1: toy sizes) with it; then
# verifies that every stage wrote its JSON, complete and with no row error.
#   bash scripts/gpu/rehearse.sh                          # writes /tmp/lenex-rehearse/*.json
#   REHEARSE_OUT=DIR REHEARSE_PYTHON=python3.12 bash scripts/gpu/rehearse.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
VENV=.venv-rehearse
OUT=${REHEARSE_OUT:-/tmp/lenex-rehearse}
PYTHON312=${REHEARSE_PYTHON:-}
if [ -z "$PYTHON312" ]; then
    for candidate in python3.12 "$(pyenv root 2>/dev/null)/versions/3.12.1/bin/python3.12"; do
        if "$candidate" -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null; then
            PYTHON312=$candidate
            break
        fi
    done
fi
[ -n "$PYTHON312" ] || { echo "rehearse.sh: no Python 3.12 found (the GPU machine's); set REHEARSE_PYTHON" >&2; exit 1; }
if ! "$VENV/bin/python" -c 'import torch, transformers, numpy, yaml, tqdm, pytest' 2>/dev/null; then
    "$PYTHON312" -m venv "$VENV" &&
        "$VENV/bin/python" -m pip install -q "torch==2.11.0" "transformers==5.17.0" "numpy==2.5.2" pyyaml tqdm pytest ||
        { echo "rehearse.sh: building $VENV failed (above)" >&2; exit 1; }
fi
"$VENV/bin/python" - <<'PY' || exit 1
import importlib.util, sys
import numpy, torch, transformers
want = {"torch": "2.11.0", "transformers": "5.17.0", "numpy": "2.5."}
got = {"torch": torch.__version__, "transformers": transformers.__version__, "numpy": numpy.__version__}
wrong = [f"{k} {got[k]} (want {v}...)" for k, v in want.items() if not got[k].startswith(v)]
if importlib.util.find_spec("snakemake"):
    wrong.append("snakemake is installed (the GPU machine has none)")
if sys.version_info[:2] != (3, 12):
    wrong.append(f"Python {sys.version.split()[0]} (want 3.12)")
print("rehearsal under", sys.version.split()[0], got)
sys.exit(f"rehearse.sh: {'; '.join(wrong)}: remove .venv-rehearse and rerun" if wrong else 0)
PY
rm -rf "$OUT"
began=$(date +%s)
OUT=$OUT LENEX_CHECK_DRY_RUN=1 PYTHON="$VENV/bin/python" bash scripts/gpu/check.sh >/dev/null
rc=$?
echo "check.sh (dry) exit $rc in $(($(date +%s) - began)) s; its log: $OUT/check.log"
"$VENV/bin/python" - "$OUT" <<'PY'
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
summary = json.loads((out / "summary.json").read_text())
bad = []
for stage in summary["stages"]:
    name = stage["stage"]
    path = out / f"{name.replace('-', '_')}.json"
    data = json.loads(path.read_text()) if path.is_file() else {}
    errors = [k for k, r in data.get("rows", {}).items() if "error" in r]
    print(f"{name:17} {stage['status']:8} rows {len(data.get('rows', {})):3} errors {len(errors)}"
          f" json {data.get('status', 'missing')}")
    if stage["status"] != "passed" or data.get("status") != "complete" or errors:
        bad.append(name)
print("rehearsal", "FAILED: " + ", ".join(bad) if bad else "passed: every stage wrote its JSON, no row error")
sys.exit(1 if bad else 0)
PY
