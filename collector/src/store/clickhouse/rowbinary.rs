//! ClickHouse's `RowBinary` format, both ways: values travel as their bytes, so a string needs no
//! escaping (any byte is safe) and a `Float64` comes back bit for bit.
//!
//! Per type: `String` is a LEB128 length and the bytes; `Float64`, `Int64`, `UInt64`, `UInt32`
//! (`DateTime`: seconds) are little-endian; `UInt8` one byte; `Nullable(T)` one byte (1: null, and no
//! value follows; 0: a `T` follows). Unchanged from ClickHouse 18 to today.

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
        let mut n = b.len() as u64;
        loop {
            let low = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                self.0.push(low);
                break;
            }
            self.0.push(low | 0x80);
        }
        self.0.extend_from_slice(b);
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

/// An answer in `RowBinary` that ends before its last value, or holds a string that is not UTF-8.
#[derive(Debug, PartialEq)]
pub struct Malformed;

/// A `RowBinary` answer being read, value by value in column order.
pub struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { rest: bytes }
    }

    /// Whether every row has been read.
    pub fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], Malformed> {
        if self.rest.len() < n {
            return Err(Malformed);
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], Malformed> {
        Ok(self.take(N)?.try_into().expect("take returns N bytes"))
    }

    pub fn bytes(&mut self) -> Result<&'a [u8], Malformed> {
        let mut len: u64 = 0;
        for shift in (0..64).step_by(7) {
            let byte = self.take(1)?[0];
            len |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return self.take(usize::try_from(len).map_err(|_| Malformed)?);
            }
        }
        Err(Malformed)
    }

    pub fn string(&mut self) -> Result<String, Malformed> {
        std::str::from_utf8(self.bytes()?).map(str::to_owned).map_err(|_| Malformed)
    }

    pub fn f64(&mut self) -> Result<f64, Malformed> {
        Ok(f64::from_le_bytes(self.array()?))
    }

    pub fn i64(&mut self) -> Result<i64, Malformed> {
        Ok(i64::from_le_bytes(self.array()?))
    }

    pub fn u64(&mut self) -> Result<u64, Malformed> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    pub fn opt_string(&mut self) -> Result<Option<String>, Malformed> {
        self.nullable(Reader::string)
    }

    pub fn opt_f64(&mut self) -> Result<Option<f64>, Malformed> {
        self.nullable(Reader::f64)
    }

    pub fn opt_i64(&mut self) -> Result<Option<i64>, Malformed> {
        self.nullable(Reader::i64)
    }

    fn nullable<T>(&mut self, read: fn(&mut Reader<'a>) -> Result<T, Malformed>) -> Result<Option<T>, Malformed> {
        match self.take(1)?[0] {
            0 => read(self).map(Some),
            1 => Ok(None),
            _ => Err(Malformed),
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
        let bytes = w.into_bytes();
        let mut r = Reader::new(&bytes);
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
        assert!(r.is_empty());
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
        assert_eq!(Reader::new(&[3, b'a']).string(), Err(Malformed));
        assert_eq!(Reader::new(&[1, 2, 3]).f64(), Err(Malformed));
        assert_eq!(Reader::new(&[2]).opt_f64(), Err(Malformed));
        assert_eq!(Reader::new(&[2, 0xff, 0xfe]).string(), Err(Malformed));
        assert_eq!(Reader::new(&[0xff; 11]).bytes(), Err(Malformed));
    }
}
