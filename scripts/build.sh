#!/usr/bin/env bash
# Builds the npm package into dist/: the wasm core (cargo, wasm-bindgen, wasm-opt) and the JS API.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

cargo build --release --lib --target wasm32-unknown-unknown --features slim
rm -rf dist
mkdir -p dist/wasm
wasm-bindgen --target web --no-typescript --out-dir dist/wasm --out-name llm_ux_meter \
  target/wasm32-unknown-unknown/release/llm_ux_meter.wasm
node_modules/.bin/wasm-opt -Oz --converge --strip-debug --strip-producers \
  dist/wasm/llm_ux_meter_bg.wasm -o dist/wasm/llm_ux_meter_bg.wasm
cp js/*.d.ts dist/
# Minified JS: what pages download is part of the size budget (tests/js/size.test.mjs).
node_modules/.bin/esbuild js/*.js --minify --format=esm --target=es2020 --outdir=dist --log-level=warning
node_modules/.bin/esbuild dist/wasm/llm_ux_meter.js --minify --format=esm --target=es2020 --outfile=dist/wasm/llm_ux_meter.js --allow-overwrite --log-level=warning
echo "build: dist/ ready ($(wc -c < dist/wasm/llm_ux_meter_bg.wasm) bytes of wasm)"
