#!/usr/bin/env bash
# Seed 004 integration run, end to end:
#   1. an isolated store in a temporary folder,
#   2. import every release bundle (INTEGRATION_BUNDLE_GLOB, default: the two fake releases),
#   3. create the snapshot set Fake_snapshot,
#   4. start `excerpt serve` on that store on a free loopback port (keys file in the store's
#      folder; the HTTP tests add their own keys to it),
#   5. run the seed 004 acceptance suite: in process against the store, and over HTTP against
#      the server (tests/acceptance/test_seed_004_http.py, via EXCERPT_SERVICE_URL),
#   6. leave traces and logs in log/integration/retrieval (INTEGRATION_LOG_DIR), the server's
#      output in serve.log there,
#   7. stop the server and remove the store, also when a step fails.
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
SERVER=""
cleanup() {
    if [[ -n "$SERVER" ]]; then kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
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

KEYS="$WORK/keys.yaml"
"$BIN/excerpt" keys add runner --role admin --keys "$KEYS" > /dev/null  # serve wants one key
PORT="$("$BIN/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$BIN/excerpt" --home "$HOME_DIR" --log-dir "$LOG" serve --port "$PORT" --keys "$KEYS" \
    > "$LOG/serve.log" 2>&1 &
SERVER=$!
URL="http://127.0.0.1:$PORT"
for _ in $(seq 300); do
    if "$BIN/python" -c "import urllib.request as u; u.urlopen('$URL/-/health', timeout=1)" \
        2>/dev/null; then break; fi
    if ! kill -0 "$SERVER" 2>/dev/null; then
        echo "excerpt serve exited:" >&2; cat "$LOG/serve.log" >&2; exit 1
    fi
    sleep 0.2
done
echo "service: $URL (pid $SERVER)"

cd "$ROOT"
EXCERPT_FAKE_HOME="$HOME_DIR" EXCERPT_LOG_DIR="$LOG" \
    EXCERPT_SERVICE_URL="$URL" EXCERPT_SERVICE_KEYS="$KEYS" \
    "$BIN/python" -m pytest -q tests/acceptance/test_seed_004_*.py -p no:cacheprovider \
    --junitxml "$LOG/junit.xml" "$@" 2>&1 | tee "$LOG/pytest.log"
status="${PIPESTATUS[0]}"
echo "traces: $(find "$LOG/pipeline_traces" -name '*.json' 2>/dev/null | wc -l) files in $LOG/pipeline_traces"
exit "$status"
