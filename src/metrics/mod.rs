//! Metrics: the stream's timeline and its downsampled cadence, the step of the clock it was timed with, the quantile sketch and
//! running figures it folds gaps into, the token estimate, and the report they add up to.

pub mod cadence;
pub mod clock;
pub mod moments;
pub mod pending;
pub mod report;
pub mod sketch;
pub mod stalls;
pub mod timeline;
pub mod token_estimate;
