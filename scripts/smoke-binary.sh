#!/usr/bin/env bash
# Builds the single binary of the sandbox and smoke-tests it from an empty temporary directory:
# start, /healthz, the printed key scores a fixture, /docs assets load, the CLI (pt-api cli …)
# lists the demo tenant and its key, stop (exit 0).
set -euo pipefail
cd "$(dirname "$0")/.."
bun build --compile --minify src/index.ts src/db/sqlite-background.ts src/features/invoice/decode-worker.ts --outfile dist/pt-api >/dev/null
WORK=$(mktemp -d)
cp dist/pt-api "$WORK/"
cd "$WORK"
PORT=$((20000 + RANDOM % 20000))
env -i PATH=/usr/bin:/bin HOME="$WORK" PORT=$PORT LOG_LEVEL=warn ./pt-api >out.log 2>err.log &
PID=$!
trap 'kill $PID 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fs "http://127.0.0.1:$PORT/healthz" | grep -q '"ok"'
KEY=$(grep -o 'sk_test_[0-9a-f]\{28\}' out.log | head -1)
[ -n "$KEY" ] || { echo "no key printed"; cat out.log err.log; exit 1; }
BODY=$(curl -fs -X POST "http://127.0.0.1:$PORT/v1/score" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' -d '{"nif":"599000015"}')
echo "$BODY" | grep -q '"tier":"A"' || { echo "unexpected score: $BODY"; exit 1; }
curl -fs "http://127.0.0.1:$PORT/docs/assets/swagger-ui-bundle.js" -o /dev/null
curl -fs "http://127.0.0.1:$PORT/openapi.json" | grep -q '"openapi":"3.1.0"'
ls -la "$WORK/data" >&2
# the binary is also the operator CLI, on the same database as the running sandbox
TENANT=$(env -i PATH=/usr/bin:/bin HOME="$WORK" ./pt-api cli tenant list --json 2>cli.err | grep -o '"tenant_id":"[^"]*"' | head -1 | cut -d'"' -f4)
[ -n "$TENANT" ] || { echo "pt-api cli tenant list failed"; cat cli.err; exit 1; }
grep -q "database: SQLite $WORK/data/service.sqlite" cli.err || { echo "the CLI did not name its database"; cat cli.err; exit 1; }
env -i PATH=/usr/bin:/bin HOME="$WORK" ./pt-api cli key list --tenant "$TENANT" 2>/dev/null | grep -q "${KEY:0:12}" || { echo "pt-api cli key list failed"; exit 1; }
kill -TERM $PID
wait $PID
echo "binary smoke test passed ($(du -h pt-api | cut -f1))"
