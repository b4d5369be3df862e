//! The machinery the analytics endpoints ([`crate::api`]) share: their common parameters
//! ([`params`]), reading a window the cheap way and choosing its groups ([`window`]), a window's
//! merged figures per group ([`tally`]), and the statistics ([`stats`], and [`experiment`] for A/B
//! tests over units).

pub mod experiment;
pub mod params;
pub mod stats;
pub mod tally;
pub mod window;
