#!/usr/bin/env bash
# Fuzzes, each for a bounded time: the stream pipeline (framing, detection, decoders, metrics), the
# collector's analytics query parameters and its ingest body. Not part of CI. Usage: scripts/fuzz.sh [seconds per target, default 300]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
command -v cargo-fuzz >/dev/null || { echo "fuzz: installing cargo-fuzz"; cargo install cargo-fuzz; }
seconds="${1:-300}"
mkdir -p fuzz/corpus/stream
cp tests/fixtures/streams/*.sse tests/fixtures/streams/*.ndjson tests/fixtures/streams/*.txt fuzz/corpus/stream/ 2>/dev/null || true
# cargo-fuzz passes nightly-only flags; RUSTC_BOOTSTRAP lets the stable toolchain on this machine accept them.
RUSTC_BOOTSTRAP=1 cargo fuzz run stream --fuzz-dir fuzz -- -max_total_time="$seconds" -max_len=4096
mkdir -p fuzz/corpus/query_params
printf 'groupBy=model&from=0&to=253402300800000' > fuzz/corpus/query_params/window
printf 'metric=ttftMs&q=0.9&bucket=1m&groupBy=variant' > fuzz/corpus/query_params/timeseries
printf 'a=A&b=B&metric=tpotMs&slo.ttftMs=500' > fuzz/corpus/query_params/compare
printf 'sort=tpotMs&order=asc&limit=500&model=m-a' > fuzz/corpus/query_params/streams
RUSTC_BOOTSTRAP=1 cargo fuzz run query_params --fuzz-dir fuzz -- -max_total_time="$seconds" -max_len=512
mkdir -p fuzz/corpus/ingest_body
# A valid envelope, behind the target's clock prefix (`~` and 8 bytes) set to now, so its times are in the window.
node -e "import('./tests/js/beacon-records.mjs').then(({ envelope, validRecord }) => { const clock = Buffer.alloc(8); clock.writeBigInt64LE(BigInt(Date.now())); process.stdout.write(Buffer.concat([Buffer.from('~'), clock, Buffer.from(JSON.stringify(envelope([validRecord('r-1')], 'b-1')))])); })" > fuzz/corpus/ingest_body/valid
RUSTC_BOOTSTRAP=1 cargo fuzz run ingest_body --fuzz-dir fuzz -- -max_total_time="$seconds" -max_len=65536
