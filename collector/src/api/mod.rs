//! One file per analytics endpoint: each parses its query string (refusing a bad parameter by name)
//! and answers from a [`crate::store::Store`], in the contract shape its module doc gives.

pub mod compare;
pub mod diagnosis;
pub mod streams;
pub mod summary;
pub mod timeseries;
