//! ClickHouse's `RowBinary` format, both ways: values travel as their bytes, so a string needs no
//! escaping (any byte is safe) and a `Float64` comes back bit for bit.
//!
//! Per type: `String` is a LEB128 length and the bytes; `Float64`, `Int64`, `UInt64`, `UInt32`
//! (`DateTime`: seconds) are little-endian; `UInt8` one byte; `Nullable(T)` one byte (1: null, and no
//! value follows; 0: a `T` follows); `Array(T)` a LEB128 length and the elements; a `Tuple` its
//! elements in turn. Unchanged from ClickHouse 18 to today.

use std::io::{self, BufRead, Read};

/// A `RowBinary` body being written, value by value in column order.
#[derive(Default)]
pub struct Writer(Vec<u8>);

impl Writer {
    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }

    pub fn string(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }

    pub fn bytes(&mut self, b: &[u8]) {
        self.len(b.len());
        self.0.extend_from_slice(b);
    }

    pub fn i64_array(&mut self, values: &[i64]) {
        self.len(values.len());
        values.iter().for_each(|&v| self.i64(v));
    }

    /// A LEB128 length (of a string or an array).
    fn len(&mut self, len: usize) {
        let mut n = len as u64;
        loop {
            let low = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                self.0.push(low);
                break;
            }
            self.0.push(low | 0x80);
        }
    }

    pub fn f64(&mut self, v: f64) {
        self.0.extend(v.to_le_bytes());
    }

    pub fn i64(&mut self, v: i64) {
        self.0.extend(v.to_le_bytes());
    }

    pub fn u64(&mut self, v: u64) {
        self.0.extend(v.to_le_bytes());
    }

    pub fn u32(&mut self, v: u32) {
        self.0.extend(v.to_le_bytes());
    }

    pub fn u8(&mut self, v: u8) {
        self.0.push(v);
    }

    pub fn opt_string(&mut self, v: Option<&str>) {
        self.nullable(v, Writer::string);
    }

    pub fn opt_f64(&mut self, v: Option<f64>) {
        self.nullable(v, Writer::f64);
    }

    pub fn opt_i64(&mut self, v: Option<i64>) {
        self.nullable(v, Writer::i64);
    }

    fn nullable<T>(&mut self, v: Option<T>, write: fn(&mut Writer, T)) {
        match v {
            None => self.0.push(1),
            Some(v) => {
                self.0.push(0);
                write(self, v);
            }
        }
    }
}

/// Why a `RowBinary` answer could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// It ends before its last value, or holds a string that is not UTF-8 or a bad null marker.
    Malformed,
    /// The connection failed while it arrived.
    Io(io::Error),
}

impl From<io::Error> for ReadError {
    fn from(e: io::Error) -> ReadError {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            ReadError::Malformed
        } else {
            ReadError::Io(e)
        }
    }
}

/// A `RowBinary` answer being read, value by value in column order, from a slice or as it arrives
/// (any [`BufRead`]): memory O(the value being read).
pub struct Reader<R> {
    input: R,
}

impl<R: BufRead> Reader<R> {
    pub fn new(input: R) -> Reader<R> {
        Reader { input }
    }

    /// Whether every row has been read (waiting for more of the answer if none is buffered).
    pub fn is_empty(&mut self) -> Result<bool, ReadError> {
        Ok(self.input.fill_buf()?.is_empty())
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], ReadError> {
        let mut out = [0; N];
        self.input.read_exact(&mut out)?;
        Ok(out)
    }

    /// A LEB128 length (of a string or an array).
    fn len(&mut self) -> Result<u64, ReadError> {
        let mut len: u64 = 0;
        for shift in (0..64).step_by(7) {
            let [byte] = self.array()?;
            len |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(len);
            }
        }
        Err(ReadError::Malformed)
    }

    pub fn bytes(&mut self) -> Result<Vec<u8>, ReadError> {
        let len = self.len()?;
        // Read, not preallocated: a damaged length cannot size an allocation.
        let mut out = Vec::new();
        (&mut self.input).take(len).read_to_end(&mut out)?;
        if out.len() as u64 == len {
            Ok(out)
        } else {
            Err(ReadError::Malformed)
        }
    }

    /// An `Array(T)` whose elements `read` reads. Grown as read: a damaged length cannot size an
    /// allocation, only fail when the answer ends.
    pub fn vec<T>(&mut self, read: fn(&mut Reader<R>) -> Result<T, ReadError>) -> Result<Vec<T>, ReadError> {
        let len = self.len()?;
        let mut out = Vec::new();
        for _ in 0..len {
            out.push(read(self)?);
        }
        Ok(out)
    }

    pub fn string(&mut self) -> Result<String, ReadError> {
        String::from_utf8(self.bytes()?).map_err(|_| ReadError::Malformed)
    }

    pub fn f64(&mut self) -> Result<f64, ReadError> {
        Ok(f64::from_le_bytes(self.array()?))
    }

    pub fn i64(&mut self) -> Result<i64, ReadError> {
        Ok(i64::from_le_bytes(self.array()?))
    }

    pub fn u64(&mut self) -> Result<u64, ReadError> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    pub fn u8(&mut self) -> Result<u8, ReadError> {
        let [byte] = self.array()?;
        Ok(byte)
    }

    pub fn opt_string(&mut self) -> Result<Option<String>, ReadError> {
        self.nullable(Reader::string)
    }

    pub fn opt_f64(&mut self) -> Result<Option<f64>, ReadError> {
        self.nullable(Reader::f64)
    }

    pub fn opt_i64(&mut self) -> Result<Option<i64>, ReadError> {
        self.nullable(Reader::i64)
    }

    fn nullable<T>(&mut self, read: fn(&mut Reader<R>) -> Result<T, ReadError>) -> Result<Option<T>, ReadError> {
        match self.array()? {
            [0] => read(self).map(Some),
            [1] => Ok(None),
            _ => Err(ReadError::Malformed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_reads_back_as_written() {
        let long = "é".repeat(200); // 400 bytes: a two-byte length
        let mut w = Writer::default();
        w.string("");
        w.string(&long);
        w.bytes(&[0, 0xff, b'\n', b'\'']);
        w.f64(-0.1);
        w.i64(i64::MIN);
        w.u64(u64::MAX);
        w.opt_string(None);
        w.opt_string(Some("x\ty"));
        w.opt_f64(Some(f64::MAX));
        w.opt_f64(None);
        w.opt_i64(Some(-7));
        w.i64_array(&[-1, i64::MAX]);
        w.i64_array(&[]);
        let bytes = w.into_bytes();
        let mut r = Reader::new(&bytes[..]);
        assert_eq!(r.string().unwrap(), "");
        assert_eq!(r.string().unwrap(), long);
        assert_eq!(r.bytes().unwrap(), &[0, 0xff, b'\n', b'\'']);
        assert_eq!(r.f64().unwrap().to_bits(), (-0.1f64).to_bits());
        assert_eq!(r.i64().unwrap(), i64::MIN);
        assert_eq!(r.u64().unwrap(), u64::MAX);
        assert_eq!(r.opt_string().unwrap(), None);
        assert_eq!(r.opt_string().unwrap().as_deref(), Some("x\ty"));
        assert_eq!(r.opt_f64().unwrap(), Some(f64::MAX));
        assert_eq!(r.opt_f64().unwrap(), None);
        assert_eq!(r.opt_i64().unwrap(), Some(-7));
        assert_eq!(r.vec(Reader::i64).unwrap(), vec![-1, i64::MAX]);
        assert_eq!(r.vec(Reader::u64).unwrap(), Vec::<u64>::new());
        assert!(r.is_empty().unwrap());
    }

    #[test]
    fn the_layout_is_clickhouses() {
        let mut w = Writer::default();
        w.opt_string(None);
        w.opt_string(Some("abc"));
        w.u32(16);
        w.u8(1);
        w.bytes(&[7; 300]);
        let bytes = w.into_bytes();
        // What ClickHouse 18.16 sends for (NULL, 'abc', toDateTime(16), 1) and a 300-byte string.
        assert_eq!(&bytes[..11], &[1, 0, 3, b'a', b'b', b'c', 16, 0, 0, 0, 1]);
        assert_eq!(&bytes[11..13], &[0xac, 0x02]);
    }

    #[test]
    fn a_short_or_damaged_answer_is_an_error() {
        fn malformed<T>(r: Result<T, ReadError>) -> bool {
            matches!(r, Err(ReadError::Malformed))
        }
        assert!(malformed(Reader::new(&[3, b'a'][..]).string()));
        assert!(malformed(Reader::new(&[1, 2, 3][..]).f64()));
        assert!(malformed(Reader::new(&[2][..]).opt_f64()));
        assert!(malformed(Reader::new(&[2, 0xff, 0xfe][..]).string()));
        assert!(malformed(Reader::new(&[0xff; 11][..]).bytes()));
        assert!(malformed(Reader::new(&[0xff, 0xff, 0xff, 0xff, 0x0f, 1][..]).bytes()), "a length of 4 GiB over a byte");
    }
}
