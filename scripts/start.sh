#!/usr/bin/env bash
# The demo: builds the package, then serves the replay page on http://127.0.0.1:${PORT:-8080}/www/
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
bash scripts/build.sh
echo "start: open http://127.0.0.1:${PORT:-8080}/www/ (Ctrl-C to stop)"
exec node scripts/serve.mjs --root . --port "${PORT:-8080}"
