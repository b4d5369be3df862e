//! The time buckets rollups are kept in ([`Grain`]: a minute, an hour, a day) and which rollup a
//! key names ([`RollupKey`]).

use crate::dims::Dims;

/// How long a rollup's time bucket is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Grain {
    Minute,
    Hour,
    Day,
}

impl Grain {
    pub const ALL: [Grain; 3] = [Grain::Minute, Grain::Hour, Grain::Day];

    /// The bucket length in milliseconds.
    pub fn ms(self) -> i64 {
        match self {
            Grain::Minute => 60_000,
            Grain::Hour => 3_600_000,
            Grain::Day => 86_400_000,
        }
    }

    /// The one-letter code the stores keep.
    pub fn code(self) -> &'static str {
        match self {
            Grain::Minute => "m",
            Grain::Hour => "h",
            Grain::Day => "d",
        }
    }

    pub fn from_code(code: &str) -> Option<Grain> {
        Grain::ALL.into_iter().find(|g| g.code() == code)
    }

    /// The start (epoch ms) of the bucket holding `at`. Exact for any time a record can have; the
    /// product is taken in `f64` and saturates into `i64`, so no `at` can overflow it.
    pub fn bucket_of(self, at: f64) -> i64 {
        ((at / self.ms() as f64).floor() * self.ms() as f64) as i64
    }
}

/// Which rollup: grain, bucket start (epoch ms) and the five dimension values.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RollupKey {
    pub grain: Grain,
    pub bucket: i64,
    pub dims: Dims,
}
