//! The vocabulary of the analytics, which every layer below the HTTP one shares: the metric
//! definition version, the time range a window may take, the dimensions records are grouped and
//! filtered by (and their filters and group keys), the per-stream metrics that are summarized, and
//! the units an experiment assigns.

/// The metric definition version the analytics read (`def` of the records and of every answer).
pub const DEF: i64 = 1;

/// The earliest `from` or `to`: 1970-01-01, as for `startedAt`.
pub const EARLIEST_MS: i64 = 0;
/// The latest `from` or `to`: 10000-01-01 UTC, so `to=9999999999999` still means "until the end".
pub const LATEST_MS: i64 = 253_402_300_800_000;

/// A dimension records are grouped and filtered by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dim {
    Model,
    Scenario,
    Variant,
    AppVersion,
    Connection,
}

/// One record's dimension values, in [`Dim::ALL`] order (`None`: the beacon had none).
pub type Dims = [Option<String>; 5];

/// Dimension filters: each dimension at most once, matching any of its values (never a null).
pub type Filters = [(Dim, Vec<String>)];

/// A group: the values of the grouping dimensions, in the query's `groupBy` order (`None`: no value).
pub type GroupKey = Vec<Option<String>>;


impl Dim {
    pub const ALL: [Dim; 5] = [Dim::Model, Dim::Scenario, Dim::Variant, Dim::AppVersion, Dim::Connection];

    /// The name in the API (query parameters and group keys).
    pub fn name(self) -> &'static str {
        match self {
            Dim::Model => "model",
            Dim::Scenario => "scenario",
            Dim::Variant => "variant",
            Dim::AppVersion => "appVersion",
            Dim::Connection => "connection",
        }
    }

    /// The column in the stores.
    pub fn column(self) -> &'static str {
        match self {
            Dim::Model => "model",
            Dim::Scenario => "scenario",
            Dim::Variant => "variant",
            Dim::AppVersion => "app_version",
            Dim::Connection => "connection",
        }
    }

    /// The position in [`Dims`].
    pub fn index(self) -> usize {
        self as usize
    }

    pub fn from_name(name: &str) -> Option<Dim> {
        Dim::ALL.into_iter().find(|d| d.name() == name)
    }

    /// `model, scenario, ...`: for error messages.
    pub fn names() -> String {
        Dim::ALL.map(Dim::name).join(", ")
    }
}

/// The unit an experiment assigns its arms to, and so the unit its analysis counts and resamples:
/// the streams of one unit move together (one device, one network, one person), so they are one
/// sample, not many.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// The meter's session (`sessionId` of the envelope).
    Session,
    /// The app's own unit, a user say (`experimentUnit` of the envelope: `createMeter({ experimentUnit })`,
    /// hashed by the meter). Streams without one have no unit.
    User,
}

impl Unit {
    pub const ALL: [Unit; 2] = [Unit::Session, Unit::User];

    /// The name in the API (`unit=`).
    pub fn name(self) -> &'static str {
        match self {
            Unit::Session => "session",
            Unit::User => "user",
        }
    }

    /// The SQL (the same for both stores) giving a stream's unit: '' when it has none.
    pub fn column(self) -> &'static str {
        match self {
            Unit::Session => "session_id",
            Unit::User => "coalesce(experiment_unit, '')",
        }
    }

    /// The plural people read (in verdicts).
    pub fn plural(self) -> &'static str {
        match self {
            Unit::Session => "sessions",
            Unit::User => "users",
        }
    }

    pub fn from_name(name: &str) -> Option<Unit> {
        Unit::ALL.into_iter().find(|u| u.name() == name)
    }
}

/// A per-stream metric the analytics summarize (the contract's definitions, milliseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Metric {
    /// Render TTFT.
    TtftMs,
    /// Render TPOT.
    TpotMs,
    /// The stream's render-gap p90.
    GapP90Ms,
    /// The stream's render delay p50 (arrival to paint).
    RenderDelayMs,
    /// The stream's summed stall time.
    StallMs,
}

impl Metric {
    pub const ALL: [Metric; 5] = [Metric::TtftMs, Metric::TpotMs, Metric::GapP90Ms, Metric::RenderDelayMs, Metric::StallMs];

    /// The name in the API (`metric=` and the summary's fields).
    pub fn name(self) -> &'static str {
        match self {
            Metric::TtftMs => "ttftMs",
            Metric::TpotMs => "tpotMs",
            Metric::GapP90Ms => "gapP90Ms",
            Metric::RenderDelayMs => "renderDelayMs",
            Metric::StallMs => "stallMs",
        }
    }

    /// The name people read (in verdicts).
    pub fn label(self) -> &'static str {
        match self {
            Metric::TtftMs => "TTFT",
            Metric::TpotMs => "TPOT",
            Metric::GapP90Ms => "gap p90",
            Metric::RenderDelayMs => "render delay",
            Metric::StallMs => "stall time",
        }
    }

    /// The records column it is read from.
    pub fn column(self) -> &'static str {
        match self {
            Metric::TtftMs => "ttft_ms",
            Metric::TpotMs => "tpot_ms",
            Metric::GapP90Ms => "gap_p90_ms",
            Metric::RenderDelayMs => "render_delay_p50_ms",
            Metric::StallMs => "stall_total_ms",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn from_name(name: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.name() == name)
    }

    pub fn names() -> String {
        Metric::ALL.map(Metric::name).join(", ")
    }
}
