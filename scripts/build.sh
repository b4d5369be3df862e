#!/usr/bin/env bash
# Builds the npm package into dist/: the wasm core (cargo, wasm-opt), embedded in the JS API
# (scripts/embed-wasm.mjs), bundled and minified into one module, dist/index.js, for browsers and Node.
# The embedded module is kept as target/npm-stage/<out>/llm_ux_meter.wasm for the size test and the bench.
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

# The linker keeps its relocations for scripts/rewrite-wasm.mjs, which finds the data in use with them.
# Two LLVM options, measured to make the module smaller (a profile cannot carry them): SimplifyCFG does
# not sink the instructions branches share into their join, GVN's sinking pass runs instead: 213 B
# brotli off the common use; natively (x86, the same options) the core's instructions per byte stay
# within 0.3% (docs/size.md, "First pass").
# The static data goes first, at 1 KiB, then a 32 KiB stack (scripts/wasm-layout.env; Rust's default puts a 1 MiB stack first):
# the data's addresses, constants all over the code, take two LEB128 bytes instead of three (85 B brotli),
# and the module starts with one page of memory instead of 17. The core never recurses (but Framer::push's
# one replay) nor calls indirectly, so its stack use is bounded by its code: tests/js/wasm-stack.test.mjs
# checks that the deepest call path stays within a quarter of the stack.
source scripts/wasm-layout.env
# The rewrites below find functions by rustc's mangled names: checked with the toolchain this file names.
# With another, they may no longer match (costing size, not behaviour): tests/js/wasm-rewrites.test.mjs
# fails then, and this says why.
if [ "$(rustc --version)" != "$(cat scripts/rewrite-wasm.toolchain)" ]; then
  echo "build: $(rustc --version), but the wasm rewrites were checked with $(cat scripts/rewrite-wasm.toolchain): tests/js/wasm-rewrites.test.mjs tells whether they still apply (then update scripts/rewrite-wasm.toolchain)" >&2
fi
cargo rustc --profile wasm --lib --target wasm32-unknown-unknown --features "$features" -- -C link-arg=--emit-relocs \
  -C link-arg=--no-stack-first -C link-arg=-zstack-size="$STACK_BYTES" \
  -C llvm-args=-simplifycfg-sink-common=false -C llvm-args=-enable-gvn-sink
stage="target/npm-stage/$out"
rm -rf "$stage" "$out"
mkdir -p "$stage" "$out"
cp -r js/. "$stage/"
mkdir -p "$stage/wasm"
# Panic paths trap at once and libm's exact functions become wasm instructions (scripts/rewrite-wasm.mjs
# says why). The pre-optimisation module stays beside the shipped one: it has names for the bench's profiles.
node scripts/rewrite-wasm.mjs target/wasm32-unknown-unknown/wasm/llm_ux_meter.wasm "$stage/wasm/llm_ux_meter.pre-opt.wasm"
# --low-memory-unused lets wasm-opt fold an added constant (< 1 KiB) into a load's or store's offset,
# which differs from the add only for a pointer within 1 KiB below 4 GiB, never a real one here: 67 B brotli.
node_modules/.bin/wasm-opt -Oz --converge --low-memory-unused --strip-debug --strip-producers --strip-target-features \
  "$stage/wasm/llm_ux_meter.pre-opt.wasm" -o "$stage/llm_ux_meter.wasm"
node scripts/embed-wasm.mjs "$stage/llm_ux_meter.wasm" "$stage/wasm/module.js"
# What pages download is part of the size budget (tests/js/size.test.mjs): bundle and minify. Beacon
# delivery, OTLP, the experiment unit's hash and paint times from the DOM, imported dynamically when
# configured (an endpoint, the OTLP format, an experimentUnit, a container), are bundles of their own at
# the paths the import names; what the beacons share with index.js (the random id) the loader hands
# them, so no code comes twice. ES2021, the level the code already needs (`replaceAll`): its syntax
# (`??=`) stays as written.
esbuild=(node_modules/.bin/esbuild --bundle --minify --format=esm --target=es2021 --platform=neutral --charset=ascii --log-level=warning)
"${esbuild[@]}" "$stage/index.js" --external:./beacons/beacons.js --external:./beacons/otlp.js --external:./beacons/experiment-unit.js --external:./lib/dom-render.js --outdir="$out"
"${esbuild[@]}" "$stage/lib/beacons/beacons.js" "$stage/lib/beacons/otlp.js" "$stage/lib/beacons/experiment-unit.js" --outdir="$out/beacons"
"${esbuild[@]}" "$stage/lib/dom-render.js" --outdir="$out/lib"
# Then terser over each bundle: its compressor folds what esbuild's leaves and its mangler names the
# variables anew; with function declarations hoisted (as JavaScript hoists them anyway) the code comes
# together ahead of the embedded wasm string: 264 B brotli off index.js and 84 B off beacons.js
# (docs/size.md, "Sixth pass"). Not `reduce_funcs`: it writes a function called once into its caller as a
# function expression, made anew on every call, and the chunk's conversion to bytes, so made per chunk,
# cost 50 to 85 ns per event in Chromium (50 B).
for bundle in "$out"/index.js "$out"/beacons/*.js "$out"/lib/*.js; do
  node_modules/.bin/terser "$bundle" --module --ecma 2021 --compress passes=3,hoist_funs=true,reduce_funcs=false --mangle --format ascii_only=true -o "$bundle"
done
cp js/index.d.ts "$out/"
install -D -m 644 -t www/dashboard/vendor node_modules/uplot/dist/uPlot.esm.js node_modules/uplot/dist/uPlot.min.css # the dashboard's charts, served as they are
echo "build: $out/ ready (index.js $(wc -c < "$out/index.js") bytes with $(wc -c < "$stage/llm_ux_meter.wasm") bytes of wasm in it; beacons/ $(cat "$out"/beacons/*.js | wc -c) bytes)"
