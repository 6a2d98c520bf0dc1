#!/usr/bin/env bash
# Every table, figure and page of a preset (and its claims, where built) comes back byte-identical
# from its raw results alone (docs/raw-results.md). Run after the pipeline has built the preset:
#   bash scripts/check_rederive.sh tiny
# It checksums the rendered files, moves every other output of the preset aside but its recorded
# sources (raw results; a reference run's record, runs/ and runs.yaml) (evaluations,
# models, training state, data, logs), runs `make tables`, and fails if a rendered file differs or
# is missing, or if any job wrote anything but rendered files (a train/evaluate/prepare job would
# write models/, eval/, data/ ...). The moved outputs are put back at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-tiny}
root=results/$preset
[ -d "$root/raw" ] || { echo "check_rederive: no $root/raw: run the pipeline at preset $preset first" >&2; exit 1; }

rendered() {  # every rendered file of the preset, sorted: tables, figures, claims, pages
    (cd "$root" && find . -type f \( -path './tables/*' -o -path './figures/*' -o -path './diagnostics/*' -o -path './claims/*' \
        -o \( -name '*.md' ! -path './*/*' \) \) | sed 's|^\./||' | LC_ALL=C sort)
}
work=$(mktemp -d)
rendered > "$work/files"
[ -s "$work/files" ] || { echo "check_rederive: nothing rendered under $root" >&2; exit 1; }
(cd "$root" && xargs sha256sum < "$work/files") > "$work/before.sha256"

aside=$(mktemp -d "results/.$preset-aside.XXXX")  # same file system: moves are renames
restore() {
    for item in "$aside"/* "$aside"/.[!.]*; do
        [ -e "$item" ] || continue
        name=$(basename "$item")
        if [ -e "$root/$name" ]; then rm -rf "$item"; else mv "$item" "$root/"; fi
    done
    rmdir "$aside"
}
trap restore EXIT
for item in "$root"/* "$root"/.[!.]*; do
    [ -e "$item" ] || continue
    case "$(basename "$item")" in
        raw | runs | runs.yaml) ;;  # the recorded sources: raw results, a reference run's record
        *) mv "$item" "$aside/" ;;
    esac
done

started=$(date +%s)
# TABLES_CMD: another way to run `make tables` (e.g. with a venv elsewhere)
if ! ${TABLES_CMD:-make tables PRESET=$preset} > "$work/tables.log" 2>&1; then
    tail -40 "$work/tables.log" >&2
    echo "check_rederive: make tables PRESET=$preset failed" >&2
    exit 1
fi
sed -n '/^Job stats/,/^total/p' "$work/tables.log" | head -40  # which rules ran, and how often
echo "check_rederive: make tables PRESET=$preset took $(($(date +%s) - started)) s"

written=$( (cd "$root" && find . -type f ! -path './raw/*' ! -path './runs/*' ! -name runs.yaml ! -path './logs/*' | sed 's|^\./||') | LC_ALL=C sort)
unexpected=$(comm -13 "$work/files" <(echo "$written"))
if [ -n "$unexpected" ]; then
    echo "check_rederive: make tables wrote more than rendered files (did a fetch/prepare/train/evaluate job run?):" >&2
    echo "$unexpected" | head -20 >&2
    exit 1
fi
if ! (cd "$root" && sha256sum --quiet -c "$work/before.sha256"); then
    echo "check_rederive: the files above differ from (or are missing after) the pipeline's run" >&2
    exit 1
fi
echo "check_rederive: $(wc -l < "$work/files") rendered files of $root re-derived byte-identically from $root/raw"
