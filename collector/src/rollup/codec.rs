//! The stored bytes of a [`Rollup`]: compact (LEB128 varints, delta-coded sketch keys) and checked
//! on decode, so a damaged row is an error, never a wrong figure.
//!
//! Layout (version 3): `3`, count, output tokens, stall known, stalled, 3 bands; per metric: the sum
//! (f64 LE), zeros, bucket count, then when non-empty min and max (f64 LE) and the buckets as
//! (key delta zig-zag, count); the joint entries as count, then (TTFT key delta zig-zag, TPOT key
//! zig-zag, count); reached, stopped; the bucket counts of stopped TTFT, stopped TPOT and the 3 bands'
//! TPOT, each as entry count then (key delta zig-zag, count); 3 bands' stall known, 3 stalled;
//! bunch known, bunched. Encode and decode are O(size). Version 1 had no stops and no band figures,
//! version 2 no bunching: a store holding them rebuilds its rollups from its records.

use super::{BucketCounts, Distribution, Rollup};
use llm_ux_meter::metrics::sketch::Sketch;
use std::fmt;

const VERSION: u8 = 3;

/// A stored rollup that cannot be read.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeError(pub &'static str);

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unreadable rollup: {}", self.0)
    }
}

impl std::error::Error for DecodeError {}

pub fn encode(r: &Rollup) -> Vec<u8> {
    let mut out = vec![VERSION];
    for n in [r.count, r.output_tokens, r.stall_known, r.stalled, r.bands[0], r.bands[1], r.bands[2]] {
        put_u64(&mut out, n);
    }
    for d in &r.metrics {
        out.extend(d.sum.to_le_bytes());
        let (zeros, buckets) = d.sketch.buckets();
        put_u64(&mut out, zeros);
        put_u64(&mut out, buckets.len() as u64);
        if let (Some(min), Some(max)) = (d.sketch.min(), d.sketch.max()) {
            out.extend(min.to_le_bytes());
            out.extend(max.to_le_bytes());
        }
        let mut previous = 0i64;
        for &(key, n) in buckets {
            put_i64(&mut out, i64::from(key) - previous);
            put_u64(&mut out, n);
            previous = i64::from(key);
        }
    }
    put_u64(&mut out, r.joint.len() as u64);
    let mut previous = 0i64;
    for &((ttft, tpot), n) in &r.joint {
        put_i64(&mut out, i64::from(ttft) - previous);
        put_i64(&mut out, i64::from(tpot));
        put_u64(&mut out, n);
        previous = i64::from(ttft);
    }
    put_u64(&mut out, r.reached);
    put_u64(&mut out, r.stopped);
    for counts in [&r.stopped_ttft, &r.stopped_tpot].into_iter().chain(&r.band_tpot) {
        put_u64(&mut out, counts.entries().len() as u64);
        let mut previous = 0i64;
        for &(key, n) in counts.entries() {
            put_i64(&mut out, i64::from(key) - previous);
            put_u64(&mut out, n);
            previous = i64::from(key);
        }
    }
    for n in r.band_stall_known.into_iter().chain(r.band_stalled).chain([r.bunch_known, r.bunched]) {
        put_u64(&mut out, n);
    }
    out
}

pub fn decode(bytes: &[u8]) -> Result<Rollup, DecodeError> {
    let mut input = Input(bytes);
    if input.byte()? != VERSION {
        return Err(DecodeError("unknown version"));
    }
    let mut r = Rollup::default();
    for slot in [&mut r.count, &mut r.output_tokens, &mut r.stall_known, &mut r.stalled] {
        *slot = input.u64()?;
    }
    for band in r.bands.iter_mut() {
        *band = input.u64()?;
    }
    for d in r.metrics.iter_mut() {
        let sum = input.f64()?;
        let zeros = input.u64()?;
        let len = input.len()?;
        let empty = zeros == 0 && len == 0;
        let (min, max) = if empty { (0.0, 0.0) } else { (input.f64()?, input.f64()?) };
        let mut buckets = Vec::with_capacity(len);
        let mut key = 0i64;
        for _ in 0..len {
            key += input.i64()?;
            buckets.push((i32::try_from(key).map_err(|_| DecodeError("bucket key out of range"))?, input.u64()?));
        }
        let sketch = Sketch::from_parts(zeros, buckets, min, max).ok_or(DecodeError("inconsistent sketch"))?;
        *d = Distribution { sketch, sum };
    }
    let len = input.len()?;
    let mut ttft = 0i64;
    for _ in 0..len {
        ttft += input.i64()?;
        let tpot = input.i64()?;
        let key = (i32::try_from(ttft).map_err(|_| DecodeError("joint key out of range"))?, i32::try_from(tpot).map_err(|_| DecodeError("joint key out of range"))?);
        if r.joint.last().is_some_and(|&(last, _)| last >= key) {
            return Err(DecodeError("joint keys not in increasing order"));
        }
        r.joint.push((key, input.u64()?));
    }
    r.reached = input.u64()?;
    r.stopped = input.u64()?;
    for counts in [&mut r.stopped_ttft, &mut r.stopped_tpot].into_iter().chain(&mut r.band_tpot) {
        let len = input.len()?;
        let mut entries = Vec::with_capacity(len);
        let mut key = 0i64;
        for _ in 0..len {
            key += input.i64()?;
            entries.push((i32::try_from(key).map_err(|_| DecodeError("bucket key out of range"))?, input.u64()?));
        }
        *counts = BucketCounts::from_entries(entries).ok_or(DecodeError("bucket counts not in increasing order or zero"))?;
    }
    for slot in r.band_stall_known.iter_mut().chain(&mut r.band_stalled).chain([&mut r.bunch_known, &mut r.bunched]) {
        *slot = input.u64()?;
    }
    if !input.0.is_empty() {
        return Err(DecodeError("trailing bytes"));
    }
    if r.joint.iter().map(|&(_, n)| n).sum::<u64>() != r.count {
        return Err(DecodeError("joint counts do not add up to the stream count"));
    }
    Ok(r)
}

fn put_u64(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn put_i64(out: &mut Vec<u8>, n: i64) {
    put_u64(out, ((n << 1) ^ (n >> 63)) as u64);
}

struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn byte(&mut self) -> Result<u8, DecodeError> {
        let (&b, rest) = self.0.split_first().ok_or(DecodeError("truncated"))?;
        self.0 = rest;
        Ok(b)
    }

    fn u64(&mut self) -> Result<u64, DecodeError> {
        let mut n = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            n |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(n);
            }
        }
        Err(DecodeError("varint too long"))
    }

    fn i64(&mut self) -> Result<i64, DecodeError> {
        let n = self.u64()?;
        Ok((n >> 1) as i64 ^ -((n & 1) as i64))
    }

    /// A count of items still to read: each takes at least one byte, so a larger one is damage
    /// (and must not size an allocation).
    fn len(&mut self) -> Result<usize, DecodeError> {
        let n = self.u64()?;
        usize::try_from(n).ok().filter(|&n| n <= self.0.len()).ok_or(DecodeError("length past the end"))
    }

    fn f64(&mut self) -> Result<f64, DecodeError> {
        let (bytes, rest) = self.0.split_first_chunk::<8>().ok_or(DecodeError("truncated"))?;
        self.0 = rest;
        Ok(f64::from_le_bytes(*bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Row, Rollup};
    use super::*;

    fn sample() -> Rollup {
        let mut r = Rollup::default();
        for i in 0..300 {
            r.add(&Row {
                ttft_ms: (i % 7 != 0).then_some(50.0 + i as f64 * 13.3),
                tpot_ms: (i % 4 != 0).then_some((i % 50) as f64 * 0.7),
                gap_p90_ms: Some(i as f64),
                output_tokens: i * 3,
                stall_count: (i % 2 == 0).then_some(i % 3),
                stall_total_ms: Some(0.0),
                reached: i % 5 != 0,
                stopped: i % 3 == 0,
                bunched: (i % 6 != 0).then_some(i % 4 == 0),
                ..Row::default()
            });
        }
        r
    }

    #[test]
    fn round_trips() {
        let r = sample();
        assert!(r.stopped > 0 && r.stopped_ttft.count() > 0 && r.band_tpot.iter().all(|b| b.count() > 0) && r.band_stalled.iter().all(|&n| n > 0) && r.bunched > 0, "every part is exercised");
        assert_eq!(decode(&encode(&r)).unwrap(), r);
        assert_eq!(decode(&encode(&Rollup::default())).unwrap(), Rollup::default());
    }

    #[test]
    fn damage_is_an_error() {
        let bytes = encode(&sample());
        for cut in 0..bytes.len() {
            assert!(decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode(&longer).is_err());
        let mut version = bytes;
        version[0] = 9;
        assert_eq!(decode(&version), Err(DecodeError("unknown version")));
    }
}
