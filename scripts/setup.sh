#!/usr/bin/env bash
# Installs what the build (and, with --browser, the browser and Prometheus tests) need, when it is missing.
# Says what it does; does nothing when everything is there. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "setup: $*"; }
wasm_bindgen_version=$(sed -n 's/^wasm-bindgen = { version = "=\([0-9.]*\)".*/\1/p' Cargo.toml)

command -v cargo >/dev/null || { echo "setup: cargo is missing: install Rust with rustup (https://rustup.rs) first" >&2; exit 1; }
command -v node >/dev/null || { echo "setup: node is missing: install Node.js 20 or later first" >&2; exit 1; }

if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  say "adding the Rust target wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi

if [ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $wasm_bindgen_version" ]; then
  say "installing wasm-bindgen-cli $wasm_bindgen_version to match the crate (takes about 5 minutes)"
  cargo install wasm-bindgen-cli --version "=$wasm_bindgen_version"
fi

if ! npm ls --depth=0 >/dev/null 2>&1; then
  say "installing npm packages (npm ci)"
  npm ci --no-audit --no-fund
fi

# SciPy and statsmodels, in a private virtualenv, are the independent reference the collector's
# statistics are tested against (statsmodels 0.15, not 0.14: 0.14.6 warns on import with pandas 3).
if ! target/pyenv/bin/python -c 'import scipy, statsmodels' >/dev/null 2>&1; then
  say "installing SciPy and statsmodels into target/pyenv (the reference for the A/B statistics tests)"
  python3 -m venv target/pyenv
  target/pyenv/bin/pip install --quiet --disable-pip-version-check scipy==1.17.1 numpy==2.4.6 statsmodels==0.15.0
fi

# chdb-core is a current ClickHouse (26.x) in-process: the test suite replays every statement the
# collector's ClickHouse store sent to Debian's 18.16 server on it. About 0.9 GB with its
# dependencies (pyarrow, pandas).
if ! target/pyenv/bin/python -c 'import chdb' >/dev/null 2>&1; then
  say "installing chdb-core into target/pyenv (a current ClickHouse engine for the statement check)"
  target/pyenv/bin/pip install --quiet --disable-pip-version-check chdb-core==26.9.0
fi

# geckodriver runs the wasm-bindgen-test suites in Firefox. Built from crates.io (about 2 minutes, once).
geckodriver_version=0.37.1
if [ "${1:-}" = "--browser" ] && [ "$(geckodriver --version 2>/dev/null | head -1 | cut -d' ' -f2)" != "$geckodriver_version" ]; then
  say "installing geckodriver $geckodriver_version from crates.io (takes about 2 minutes)"
  cargo install geckodriver --version "=$geckodriver_version"
fi

# The browser engines of the tests: Chromium (with ChromeDriver, for wasm-bindgen-test), Firefox ESR
# (driven over WebDriver BiDi by puppeteer-core), and WebKitGTK's MiniBrowser with its WebKitWebDriver,
# drawing on Xvfb (MiniBrowser has no headless mode). Debian's packages, never a downloaded browser.
browser_commands="chromium chromedriver firefox-esr WebKitWebDriver Xvfb"
browser_packages="chromium chromium-driver firefox-esr webkit2gtk-driver xvfb"
if [ "${1:-}" = "--browser" ] && ! command -v $browser_commands >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    say "installing Debian's $browser_packages for the browser tests"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $browser_packages >/dev/null
  else
    echo "setup: browsers are missing; run as root or: sudo apt-get install $browser_packages" >&2
    exit 1
  fi
fi

# Debian's Prometheus (2.42, with promtool) scrapes the collector in tests/js/prometheus.test.mjs and
# checks its answers and docs/prometheus/alerts.yml. Only the binaries are used: the test runs its own
# on a free loopback port.
if [ "${1:-}" = "--browser" ] && ! command -v prometheus promtool >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    say "installing Debian's prometheus (and promtool) for the Prometheus scrape test"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
  else
    echo "setup: prometheus is missing; run as root or: sudo apt-get install prometheus" >&2
    exit 1
  fi
fi
