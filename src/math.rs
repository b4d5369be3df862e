//! Float functions from `libm` rather than std: the wasm build can then go without std (and its panic
//! formatting), and native and wasm runs give bit-identical results. In the npm package's wasm, the
//! exact ones (square root, ceiling, and round's truncation) become wasm instructions, with the same
//! results (scripts/rewrite-wasm.mjs).

pub fn ln(x: f64) -> f64 {
    libm::log(x)
}

pub fn ceil(x: f64) -> f64 {
    libm::ceil(x)
}

pub fn sqrt(x: f64) -> f64 {
    libm::sqrt(x)
}

pub fn exp(x: f64) -> f64 {
    libm::exp(x)
}

pub fn round(x: f64) -> f64 {
    libm::round(x)
}
