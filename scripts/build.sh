#!/usr/bin/env bash
# Builds the npm package into dist/: the wasm core (cargo, wasm-bindgen, wasm-opt) and the JS API,
# bundled and minified into one module per entry (browser: index.js, Node: node.js).
# With --fault-injection, builds a test-only package into dist-fault/ whose core traps on a marker.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

features=slim
out=dist
if [ "${1:-}" = "--fault-injection" ]; then
  features=slim,fault-injection
  out=dist-fault
fi

cargo build --profile wasm --lib --target wasm32-unknown-unknown --features "$features"
stage="target/npm-stage/$out"
rm -rf "$stage" "$out"
mkdir -p "$stage" "$out/wasm"
cp -r js/. "$stage/"
wasm-bindgen --target web --no-typescript --out-dir "$stage/wasm" --out-name llm_ux_meter \
  target/wasm32-unknown-unknown/wasm/llm_ux_meter.wasm
node_modules/.bin/wasm-opt -Oz --converge --strip-debug --strip-producers \
  "$stage/wasm/llm_ux_meter_bg.wasm" -o "$out/wasm/llm_ux_meter_bg.wasm"
# What pages download is part of the size budget (tests/js/size.test.mjs): bundle and minify.
node_modules/.bin/esbuild "$stage/index.js" "$stage/node.js" --bundle --minify --format=esm --target=es2020 \
  --platform=neutral --external:'node:*' --outdir="$out" --log-level=warning
cp js/index.d.ts "$out/"
install -D -m 644 -t www/dashboard/vendor node_modules/uplot/dist/uPlot.esm.js node_modules/uplot/dist/uPlot.min.css # the dashboard's charts, served as they are
echo "build: $out/ ready ($(wc -c < "$out/wasm/llm_ux_meter_bg.wasm") bytes of wasm, $(wc -c < "$out/index.js") bytes of JS)"
