#!/usr/bin/env bash
# Prints a digest of the core's whole report for every fixture in tests/fixtures/streams, each in five
# chunkings (1, 1-7, 1-300 B, 1 MB and one event per chunk): 185 lines. Two commits compute the same
# reports when their outputs are the same; a size or speed step must not change one (docs/size.md, docs/core-speed.md).
#
#   bash scripts/report-digests.sh > before.txt; (change, then) bash scripts/report-digests.sh | diff before.txt -
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q --profile wasm --example core_speed
for fixture in $(ls tests/fixtures/streams | grep -v -e README -e manifest); do
  for chunking in 1 7 300 1000000 event; do
    megabytes=0.3
    [ "$chunking" = 1 ] && megabytes=0.05
    echo "$fixture $chunking $(target/wasm/examples/core_speed $megabytes 1 $chunking "$fixture" | sed 's/.*report digest //')"
  done
done
