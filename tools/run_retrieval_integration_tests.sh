#!/usr/bin/env bash
# Seed 004 integration run, end to end:
#   1. an isolated store in a temporary folder,
#   2. import every release bundle (INTEGRATION_BUNDLE_GLOB, default: the two fake releases),
#   3. create the snapshot set Fake_snapshot,
#   4. run the seed 004 acceptance suite against that store,
#   5. leave traces and logs in log/integration/retrieval (INTEGRATION_LOG_DIR),
#   6. remove the store, also when a step fails.
# Exit status: the suite's.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="$ROOT/.venv/bin"
DATA="${EXCERPT_DATA:-$ROOT/../shared/data}"
GLOB="${INTEGRATION_BUNDLE_GLOB:-$DATA/fake_enterprise/Release_FAKE_ENTERPRISE_*.zip}"
LOG="${INTEGRATION_LOG_DIR:-$ROOT/log/integration/retrieval}"

if [[ ! -x "$BIN/excerpt" ]]; then
    echo "no $BIN/excerpt: run 'make test' (or make .venv) first" >&2
    exit 1
fi
WORK="$(mktemp -d "${TMPDIR:-/tmp}/excerpt-integration.XXXXXX")"
cleanup() { rm -rf "$WORK"; }
trap cleanup EXIT INT TERM

rm -rf "$LOG"
mkdir -p "$LOG"
HOME_DIR="$WORK/home"
echo "store: $HOME_DIR   logs: $LOG"

shopt -s nullglob
# shellcheck disable=SC2206  # the glob is meant to expand
bundles=($GLOB)
if (( ${#bundles[@]} == 0 )); then
    echo "no bundle matches $GLOB (set EXCERPT_DATA or INTEGRATION_BUNDLE_GLOB)" >&2
    exit 1
fi
ids=()
for bundle in "${bundles[@]}"; do
    out="$("$BIN/excerpt" --home "$HOME_DIR" ingest "$bundle" --collection code \
        --format code-bundle --no-progress --json)"
    id="$(printf '%s' "$out" | "$BIN/python" -c 'import json,sys; print(json.load(sys.stdin)["snapshot_id"])')"
    echo "imported $(basename "$bundle") as snapshot $id"
    ids+=("$id")
done
"$BIN/excerpt" --home "$HOME_DIR" snapshot-set Fake_snapshot "${ids[@]}" --collection code

cd "$ROOT"
EXCERPT_FAKE_HOME="$HOME_DIR" EXCERPT_LOG_DIR="$LOG" \
    "$BIN/python" -m pytest -q tests/acceptance/test_seed_004_*.py -p no:cacheprovider \
    --junitxml "$LOG/junit.xml" "$@" 2>&1 | tee "$LOG/pytest.log"
status="${PIPESTATUS[0]}"
echo "traces: $(find "$LOG/pipeline_traces" -name '*.json' 2>/dev/null | wc -l) files in $LOG/pipeline_traces"
exit "$status"
