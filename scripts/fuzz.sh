#!/usr/bin/env bash
# Fuzzes the stream pipeline (framing, detection, decoders, metrics) for a bounded time.
# Not part of CI. Usage: scripts/fuzz.sh [seconds, default 300]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
command -v cargo-fuzz >/dev/null || { echo "fuzz: installing cargo-fuzz"; cargo install cargo-fuzz; }
seconds="${1:-300}"
mkdir -p fuzz/corpus/stream
cp tests/fixtures/streams/*.sse tests/fixtures/streams/*.ndjson tests/fixtures/streams/*.txt fuzz/corpus/stream/ 2>/dev/null || true
# cargo-fuzz passes nightly-only flags; RUSTC_BOOTSTRAP lets the stable toolchain on this machine accept them.
RUSTC_BOOTSTRAP=1 cargo fuzz run stream --fuzz-dir fuzz -- -max_total_time="$seconds" -max_len=4096
