//! Single streams as the stores read them for `GET /api/streams` ([`crate::api::streams`]): the columns
//! they are read from, and the orders a store sorts them in (in the database).

use crate::dims::{Dims, Metric};

/// What streams can be sorted by: a column of the records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sort {
    StartedAt,
    /// One of the figures the summary summarizes.
    Metric(Metric),
    TtftArrivalMs,
    TpotArrivalMs,
    OutputTokens,
    DurationMs,
}

impl Sort {
    pub const ALL: [Sort; 10] = [
        Sort::StartedAt,
        Sort::Metric(Metric::TtftMs),
        Sort::TtftArrivalMs,
        Sort::Metric(Metric::TpotMs),
        Sort::TpotArrivalMs,
        Sort::Metric(Metric::GapP90Ms),
        Sort::Metric(Metric::RenderDelayMs),
        Sort::Metric(Metric::StallMs),
        Sort::OutputTokens,
        Sort::DurationMs,
    ];

    /// The name in the API: the summary's metric names, and the record's field names.
    pub fn name(self) -> &'static str {
        match self {
            Sort::StartedAt => "startedAt",
            Sort::Metric(metric) => metric.name(),
            Sort::TtftArrivalMs => "ttftArrivalMs",
            Sort::TpotArrivalMs => "tpotArrivalMs",
            Sort::OutputTokens => "outputTokens",
            Sort::DurationMs => "durationMs",
        }
    }

    /// The records column it sorts by.
    pub fn column(self) -> &'static str {
        match self {
            Sort::StartedAt => "started_at",
            Sort::Metric(metric) => metric.column(),
            Sort::TtftArrivalMs => "ttft_arrival_ms",
            Sort::TpotArrivalMs => "tpot_arrival_ms",
            Sort::OutputTokens => "output_tokens",
            Sort::DurationMs => "duration_ms",
        }
    }

    pub fn from_name(name: &str) -> Option<Sort> {
        Sort::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// Which streams a store returns, and in what order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Order {
    pub sort: Sort,
    pub descending: bool,
    /// How many at most: `GET /api/streams` keeps it within its limit; the stores take it as it is.
    pub limit: usize,
}

impl Order {
    /// `ORDER BY ... LIMIT ...` for a store whose SQL writes "`column` is null" as `is_null(column)`.
    pub fn sql(&self, is_null: impl Fn(&str) -> String) -> String {
        let column = self.sort.column();
        let direction = if self.descending { "DESC" } else { "ASC" };
        format!("ORDER BY {}, {column} {direction}, id LIMIT {}", is_null(column), self.limit)
    }
}

/// The columns a [`Stream`] is read from, in its fields' order.
pub const COLUMNS: &str = "id, started_at, model, scenario, variant, app_version, connection, status, http_status, \
     ttft_ms, ttft_arrival_ms, tpot_ms, tpot_arrival_ms, output_tokens, gap_p90_ms, stall_count, stall_longest_ms, \
     stall_total_ms, render_delay_p50_ms, render_delay_p90_ms, duration_ms, hidden, finish_reason, cadence";

/// One stored stream, as [`COLUMNS`] reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Stream {
    pub id: String,
    pub started_at: f64,
    pub dims: Dims,
    pub status: String,
    pub http_status: Option<i64>,
    pub ttft_ms: Option<f64>,
    pub ttft_arrival_ms: Option<f64>,
    pub tpot_ms: Option<f64>,
    pub tpot_arrival_ms: Option<f64>,
    pub output_tokens: i64,
    pub gap_p90_ms: Option<f64>,
    pub stall_count: Option<i64>,
    pub stall_longest_ms: Option<f64>,
    pub stall_total_ms: Option<f64>,
    pub render_delay_p50_ms: Option<f64>,
    pub render_delay_p90_ms: Option<f64>,
    pub duration_ms: Option<f64>,
    pub hidden: bool,
    pub finish_reason: Option<String>,
    pub cadence: Option<Vec<[u32; 2]>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_sql_puts_nulls_last_and_breaks_ties_by_id() {
        let order = Order { sort: Sort::Metric(Metric::StallMs), descending: true, limit: 7 };
        assert_eq!(order.sql(|c| format!("isNull({c})")), "ORDER BY isNull(stall_total_ms), stall_total_ms DESC, id LIMIT 7");
        assert!(Sort::ALL.iter().all(|s| Sort::from_name(s.name()) == Some(*s)));
    }
}
