#!/usr/bin/env bash
# Every test: native Rust, wasm in headless Chromium and Firefox, and the built package in Node and in
# Chromium, Firefox and WebKit.
# Installs what is missing first (scripts/setup.sh says what it does).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

bash scripts/setup.sh --browser

echo "== native tests: cargo test"
cargo test --workspace

echo "== collector tests on ClickHouse (a private clickhouse-server in target/clickhouse-test)"
rm -rf target/clickhouse-test
trap 'bash scripts/clickhouse.sh stop target/clickhouse-test' EXIT
clickhouse_url=$(bash scripts/clickhouse.sh start target/clickhouse-test)
LLM_UX_TEST_CLICKHOUSE=$clickhouse_url cargo test -p llm-ux-collector --tests
bash scripts/clickhouse.sh stop target/clickhouse-test
trap - EXIT

echo "== build the package (and the fault-injection test build)"
bash scripts/build.sh
bash scripts/build.sh --fault-injection

wasm_tests="--test fixtures --test report --test web"
echo "== wasm tests in headless Chromium: wasm-bindgen-test"
CHROMEDRIVER="${CHROMEDRIVER:-/usr/bin/chromedriver}" cargo test --target wasm32-unknown-unknown $wasm_tests
echo "== wasm tests in headless Firefox: wasm-bindgen-test (geckodriver)"
GECKODRIVER="${GECKODRIVER:-$(command -v geckodriver)}" cargo test --target wasm32-unknown-unknown $wasm_tests
echo "   (not in WebKit: wasm-bindgen-test's runner drives Safari through safaridriver, macOS only; the"
echo "   package tests below run the same wasm core in WebKitGTK)"

echo "== package tests: node --test (Node, and browsers: Chromium, Firefox, WebKit)"
# A test that fails may leave a server or browser open; --test-force-exit ends the run anyway (without it
# one failure hangs until CI's limit), and --test-timeout fails a test stuck past 15 minutes (the
# longest, the simulated diagnosis, takes about 6).
node --test --test-concurrency=1 --test-force-exit --test-timeout=900000 tests/js/
