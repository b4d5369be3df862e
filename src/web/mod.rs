//! The WebAssembly interface: a handle table of [`Stream`](crate::stream::Stream)s behind a few flat
//! functions (wasm32 only).
//!
//! Only numbers cross the boundary, as plain wasm exports (no wasm-bindgen glue; bytes go through a
//! buffer the module lends; building the report object from wasm, with serde-wasm-bindgen or js-sys,
//! measured larger and slower: docs/packages.md). `close` returns the address of the report's numbers
//! in the order of [`report_layout`], from which the JavaScript that rebuilds the object is generated.
//! An unknown handle is ignored.

#[cfg(all(target_arch = "wasm32", feature = "slim"))]
mod allocator;
#[cfg(target_arch = "wasm32")]
mod exports;
pub mod report_layout;

#[cfg(target_arch = "wasm32")]
pub use exports::*;

#[cfg(all(target_arch = "wasm32", feature = "slim"))]
#[global_allocator]
static ALLOCATOR: allocator::SizeClasses = allocator::SizeClasses::new();
