#![cfg(not(target_arch = "wasm32"))]
//! Native tests of `TokenEstimate`: accuracy against stored `o200k_base` counts
//! of the corpus in tests/fixtures/corpus, and its streaming guarantees.
//!
//! `TOKEN_ESTIMATE_JSON=1 cargo test --test token_estimate estimates_match_tiktoken -- --nocapture`
//! also prints `TOKEN_ESTIMATE_JSON {"<id>": estimate, ...}` for
//! scripts/measure-token-estimate.mjs, which regenerates the stored counts.

use llm_ux_meter::metrics::token_estimate::TokenEstimate;
use std::collections::BTreeMap;
use std::path::PathBuf;

const GROUPS: [&str; 4] = ["en", "zh", "code", "mixed"];
const MAX_MEDIAN_ERROR: f64 = 0.10;

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus")
}

/// (id, text) of every sample, ids `<group>/<index>`.
fn corpus() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for g in GROUPS {
        let path = corpus_dir().join(format!("{g}.json"));
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let Json::Arr(items) = Json::parse(&text) else {
            panic!("{g}.json is not an array")
        };
        for (i, item) in items.into_iter().enumerate() {
            let Json::Str(s) = item else {
                panic!("{g}/{i} is not a string")
            };
            out.push((format!("{g}/{i}"), s));
        }
    }
    out
}

fn reference_counts() -> BTreeMap<String, u64> {
    let path = corpus_dir().join("tiktoken-counts.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let Json::Obj(fields) = Json::parse(&text) else {
        panic!("tiktoken-counts.json is not an object")
    };
    fields
        .into_iter()
        .map(|(k, v)| match v {
            Json::Num(n) => (k, n),
            _ => panic!("count of {k} is not a number"),
        })
        .collect()
}

fn estimate(s: &str) -> u64 {
    let mut e = TokenEstimate::new();
    e.push_str(s);
    e.tokens()
}

/// Median (mean of the two middle values for an even count) and nearest-rank p90
/// of sorted values; the same definitions as scripts/measure-token-estimate.mjs.
fn median_p90(sorted: &[f64]) -> (f64, f64) {
    let n = sorted.len();
    let median = if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    };
    let rank = (9 * n).div_ceil(10);
    (median, sorted[rank - 1])
}

#[test]
fn estimates_match_tiktoken() {
    let corpus = corpus();
    let counts = reference_counts();
    let mut estimates = BTreeMap::new();
    let mut errors: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for (id, text) in &corpus {
        let reference = *counts.get(id).unwrap_or_else(|| {
            panic!("no stored count for {id}; run scripts/measure-token-estimate.mjs")
        });
        let est = estimate(text);
        estimates.insert(id.clone(), est);
        let err = (est as f64 - reference as f64).abs() / reference as f64;
        let group = id.split('/').next().unwrap();
        errors
            .entry(GROUPS.iter().find(|g| **g == group).unwrap())
            .or_default()
            .push(err);
        errors.entry("all").or_default().push(err);
    }
    if std::env::var_os("TOKEN_ESTIMATE_JSON").is_some() {
        let body: Vec<String> = estimates
            .iter()
            .map(|(id, n)| format!("\"{id}\":{n}"))
            .collect();
        println!("TOKEN_ESTIMATE_JSON {{{}}}", body.join(","));
    }
    let mut failed = Vec::new();
    for g in GROUPS.iter().chain(&["all"]) {
        let errs = errors.get_mut(g).unwrap();
        errs.sort_by(f64::total_cmp);
        let (median, p90) = median_p90(errs);
        println!(
            "{g:6} n={:3}  median |err| {:5.1}%  p90 |err| {:5.1}%",
            errs.len(),
            median * 100.0,
            p90 * 100.0
        );
        if median >= MAX_MEDIAN_ERROR {
            failed.push(*g);
        }
    }
    assert!(
        failed.is_empty(),
        "median relative error >= 10% for {failed:?}"
    );
}

#[test]
fn corpus_is_well_formed() {
    let corpus = corpus();
    let counts = reference_counts();
    assert_eq!(
        counts.len(),
        corpus.len(),
        "tiktoken-counts.json does not match the corpus"
    );
    for g in GROUPS {
        let n = corpus
            .iter()
            .filter(|(id, _)| id.starts_with(&format!("{g}/")))
            .count();
        assert!(n >= 40, "{g}: only {n} samples");
    }
    for (id, _) in &corpus {
        let n = counts[id];
        assert!((30..=600).contains(&n), "{id}: {n} tokens");
    }
    let bytes: u64 = std::fs::read_dir(corpus_dir())
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    assert!(bytes < 300 * 1024, "corpus is {bytes} bytes");
}

#[test]
fn empty_text_is_zero() {
    assert_eq!(TokenEstimate::new().tokens(), 0);
    assert_eq!(TokenEstimate::default().tokens(), 0);
    assert_eq!(estimate(""), 0);
    const E: TokenEstimate = TokenEstimate::new();
    assert_eq!(E.tokens(), 0);
}

#[test]
fn small_examples() {
    // o200k_base: "Hello" " world"
    assert_eq!(estimate("Hello world"), 2);
    // "123" "456" "7"
    assert_eq!(estimate("1234567"), 3);
    // "   " " foo" "();\n"
    assert_eq!(estimate("    foo();\n"), 3);
    // "x" " =" " " "42" ";\n"
    assert_eq!(estimate("x = 42;\n"), 5);
    // "你好" "，" "世界"
    assert!((3..=4).contains(&estimate("你好，世界")));
    // "don't" " we'll" " it" "’s"
    assert!((3..=5).contains(&estimate("don't we'll it’s")));
}

#[test]
fn independent_of_split_points() {
    for (id, text) in corpus() {
        let whole = estimate(&text);
        let chars: Vec<char> = text.chars().collect();
        for k in [1, 2, 3, 5, 7, 16, 61] {
            let mut by_str = TokenEstimate::new();
            let mut by_char = TokenEstimate::new();
            for chunk in chars.chunks(k) {
                let s: String = chunk.iter().collect();
                by_str.push_str(&s);
                // A clone taken mid-stream continues identically.
                by_char = by_char.clone();
                for &c in chunk {
                    by_char.push_char(c);
                }
            }
            assert_eq!(
                by_str.tokens(),
                whole,
                "{id} split every {k} chars (push_str)"
            );
            assert_eq!(
                by_char.tokens(),
                whole,
                "{id} split every {k} chars (push_char)"
            );
        }
    }
}

#[test]
fn never_decreases_as_text_grows() {
    let mut all = String::new();
    for (id, text) in corpus() {
        let mut e = TokenEstimate::new();
        let mut last = 0;
        for c in text.chars() {
            e.push_char(c);
            let now = e.tokens();
            assert!(
                now >= last,
                "{id}: estimate fell from {last} to {now} at {c:?}"
            );
            assert_eq!(e.tokens(), now, "tokens() changed state");
            last = now;
        }
        all.push_str(&text);
    }
    assert!(estimate(&all) > 10_000);
}

#[test]
fn odd_input_does_not_panic() {
    let odd = [
        "\u{0}\u{1}\u{7}\u{8}\u{b}\u{c}\u{1b}[31m\u{7f}\u{85}\u{9f}",
        "\u{301}\u{302}\u{303}e\u{301}\u{20dd}",
        "\u{fffd}\u{fffd}\u{feff}\u{200b}\u{200d}\u{2028}\u{2029}\u{3000}",
        "😀👍🏽👨‍👩‍👧‍👦🇺🇸 ✓ → ★ © \u{10ffff}\u{e000}",
        "\r\n\r\n\t\t  \t\n\n\n\n",
        "Grüße, naïve café. Привет! مرحبا שלום नमस्ते ไทย",
        "カタカナ ひらがな 한국어 漢字 𠀀𪚥",
    ];
    for s in odd {
        let whole = estimate(s);
        let mut e = TokenEstimate::new();
        for c in s.chars() {
            e.push_char(c);
        }
        assert_eq!(e.tokens(), whole);
        assert!(whole <= 4 * s.chars().count() as u64 + 1, "{s:?}: {whole}");
    }
    // Every scalar value once.
    let mut e = TokenEstimate::new();
    for c in (0..=0x10FFFF).filter_map(char::from_u32) {
        e.push_char(c);
    }
    assert!(e.tokens() > 0);
}

#[test]
fn very_long_runs_do_not_overflow() {
    const MB: usize = 1 << 20;
    for (c, lo, hi) in [
        ('a', MB / 100, MB),
        ('1', MB / 3, MB / 3 + 1),
        (' ', 0, 1),
        ('\n', 1, 1),
        ('.', MB / 100, MB),
        ('中', MB / 10, MB),
    ] {
        let mut e = TokenEstimate::new();
        for _ in 0..MB {
            e.push_char(c);
        }
        let n = e.tokens() as usize;
        assert!((lo..=hi).contains(&n), "1 MiB of {c:?}: {n}");
        let s: String = std::iter::repeat(c).take(MB).collect();
        assert_eq!(estimate(&s) as usize, n);
    }
}

/// Just enough JSON for the fixtures: strings, non-negative integers, arrays, objects.
enum Json {
    Str(String),
    Num(u64),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    fn parse(text: &str) -> Json {
        let mut p = Parser {
            s: text.as_bytes(),
            i: 0,
        };
        let v = p.value();
        p.ws();
        assert_eq!(p.i, p.s.len(), "trailing data in JSON");
        v
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn eat(&mut self, b: u8) -> bool {
        self.ws();
        let hit = self.s.get(self.i) == Some(&b);
        self.i += usize::from(hit);
        hit
    }
    fn value(&mut self) -> Json {
        self.ws();
        match self.s[self.i] {
            b'"' => Json::Str(self.string()),
            b'[' => {
                self.i += 1;
                let mut v = Vec::new();
                if !self.eat(b']') {
                    loop {
                        v.push(self.value());
                        if self.eat(b']') {
                            break;
                        }
                        assert!(self.eat(b','), "expected , at byte {}", self.i);
                    }
                }
                Json::Arr(v)
            }
            b'{' => {
                self.i += 1;
                let mut v = Vec::new();
                if !self.eat(b'}') {
                    loop {
                        self.ws();
                        let k = self.string();
                        assert!(self.eat(b':'), "expected : at byte {}", self.i);
                        v.push((k, self.value()));
                        if self.eat(b'}') {
                            break;
                        }
                        assert!(self.eat(b','), "expected , at byte {}", self.i);
                    }
                }
                Json::Obj(v)
            }
            _ => {
                let start = self.i;
                while self.i < self.s.len() && self.s[self.i].is_ascii_digit() {
                    self.i += 1;
                }
                let digits = std::str::from_utf8(&self.s[start..self.i]).unwrap();
                Json::Num(
                    digits
                        .parse()
                        .unwrap_or_else(|_| panic!("bad JSON value at byte {start}")),
                )
            }
        }
    }
    fn string(&mut self) -> String {
        assert_eq!(self.s[self.i], b'"', "expected string at byte {}", self.i);
        self.i += 1;
        let mut out = String::new();
        loop {
            let start = self.i;
            while self.s[self.i] != b'"' && self.s[self.i] != b'\\' {
                self.i += 1;
            }
            out.push_str(std::str::from_utf8(&self.s[start..self.i]).unwrap());
            self.i += 1;
            if self.s[self.i - 1] == b'"' {
                return out;
            }
            let esc = self.s[self.i];
            self.i += 1;
            let c = match esc {
                b'n' => '\n',
                b't' => '\t',
                b'r' => '\r',
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'u' => {
                    let mut cp = self.hex4();
                    if (0xD800..0xDC00).contains(&cp) && self.s[self.i..].starts_with(b"\\u") {
                        self.i += 2;
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (self.hex4() - 0xDC00);
                    }
                    char::from_u32(cp).expect("bad \\u escape")
                }
                other => char::from(other),
            };
            out.push(c);
        }
    }
    fn hex4(&mut self) -> u32 {
        let h = std::str::from_utf8(&self.s[self.i..self.i + 4]).unwrap();
        self.i += 4;
        u32::from_str_radix(h, 16).expect("bad \\u escape")
    }
}
