#!/usr/bin/env bash
# The demo: installs what is missing, builds the package, then runs the collector (SQLite, data/beacons.db),
# the scripted LLM API and the chat page www/chat/ until Ctrl-C (scripts/demo.mjs).
# Ports: CHAT_PORT (8080), LLM_PORT (8081), COLLECTOR_PORT (8787); the database: DB.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

bash scripts/setup.sh
bash scripts/build.sh
# exec: Ctrl-C reaches node (which stops its servers and the collector) with nothing left behind.
exec node scripts/demo.mjs \
  --chat-port "${CHAT_PORT:-${PORT:-8080}}" \
  --llm-port "${LLM_PORT:-8081}" \
  --collector-port "${COLLECTOR_PORT:-8787}" \
  --db "${DB:-data/beacons.db}"
