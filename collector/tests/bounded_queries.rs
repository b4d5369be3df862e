//! The analytics' caps over real HTTP: a summary answers at most 1,000 groups and a timeseries at
//! most 100,000 points, the busiest groups (ties by key, null first), saying `truncated` and the
//! total; windows outside 1970 to the year 10000 are refused naming the parameter (a 1 ms window
//! at i64::MIN once answered every record).

mod common;

use common::{envelope, record, Server};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::time::{SystemTime, UNIX_EPOCH};

const MINUTE: i64 = 60_000;
const HOUR: i64 = 3_600_000;

/// An hour boundary about three hours ago: recent, as a collector may require of `startedAt`.
fn base() -> i64 {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64;
    now / HOUR * HOUR - 3 * HOUR
}

/// Stores the records in batches sent now.
fn ingest(server: &Server, records: Vec<Value>) {
    for (n, chunk) in records.chunks(250).enumerate() {
        let mut env = envelope(chunk.to_vec());
        env["batchId"] = json!(format!("b-{n}"));
        env["sentAt"] = json!(SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as f64);
        let resp = server.post_json("/v1/beacons", &env);
        assert_eq!(resp.status, 200, "{}", resp.text());
    }
}

/// The 1,061 models, busiest first, then by key (null first): 10 busy ones ("busy-0".."busy-9", 3
/// streams each), a null model and 1,050 others ("m-0000".."m-1049") of one stream each.
fn models() -> Vec<Option<String>> {
    let mut models: Vec<Option<String>> = (0..10).map(|i| Some(format!("busy-{i}"))).collect();
    models.push(None);
    models.extend((0..1050).map(|i| Some(format!("m-{i:04}"))));
    models
}

/// The streams of [`models`] in the half hour from `base`.
fn many_groups(base: i64) -> Vec<Value> {
    let streams = models().into_iter().flat_map(|m| {
        let n = if m.as_deref().is_some_and(|m| m.starts_with("busy-")) { 3 } else { 1 };
        std::iter::repeat_n(m, n)
    });
    streams
        .enumerate()
        .map(|(i, model)| {
            let mut r = record(&format!("g-{i}"));
            r["model"] = json!(model);
            r["startedAt"] = json!((base + (i as i64 * 1_697) % (30 * MINUTE)) as f64 + 0.5);
            r
        })
        .collect()
}

/// The models of the `kept` busiest groups.
fn busiest_models(kept: usize) -> BTreeSet<Option<String>> {
    models().into_iter().take(kept).collect()
}

/// The models of an answer's groups or series, in the answer's order.
fn models_of(groups: &[Value]) -> Vec<Option<String>> {
    groups.iter().map(|g| g["key"]["model"].as_str().map(str::to_owned)).collect()
}

fn get(server: &Server, path: &str) -> Value {
    let resp = server.get(path);
    assert_eq!(resp.status, 200, "{path}: {}", resp.text());
    resp.json()
}

#[test]
fn a_summary_keeps_the_1000_busiest_groups_and_says_it_was_truncated() {
    let server = Server::start(&[]);
    let base = base();
    ingest(&server, many_groups(base));
    let window = format!("from={base}&to={}", base + HOUR);
    // From base + 1 ms, the first minute is read from the records (busy-0's first one is left out).
    for (from, group_by) in [(base, "model"), (base, "model,scenario,variant,appVersion,connection"), (base + 1, "model")] {
        let body = get(&server, &format!("/api/summary?from={from}&to={}&groupBy={group_by}", base + HOUR));
        assert_eq!((body["truncated"].clone(), body["totalGroups"].clone()), (json!(true), json!(1061)), "{group_by}");
        let groups = body["groups"].as_array().unwrap();
        let models = models_of(groups);
        assert_eq!(models.iter().cloned().collect::<BTreeSet<_>>(), busiest_models(1000), "{group_by}: the busiest, ties by key");
        assert!(models.windows(2).all(|w| w[0] < w[1]), "{group_by}: listed by key, null first");
        let busy: Vec<Value> = groups.iter().filter(|g| g["key"]["model"].as_str().is_some_and(|m| m.starts_with("busy-"))).map(|g| g["count"].clone()).collect();
        let want: Vec<Value> = (0..10).map(|i| json!(if i == 0 && from > base { 2 } else { 3 })).collect();
        assert_eq!(busy, want, "{group_by} from {from}: the busy groups whole");
    }
    // Within the cap: every group, not truncated; without groupBy, one group of every stream.
    let body = get(&server, &format!("/api/summary?{window}&groupBy=model&model=busy-1&model=m-1049"));
    assert_eq!((body["truncated"].clone(), body["totalGroups"].clone(), body["groups"].as_array().unwrap().len()), (json!(false), json!(2), 2));
    let body = get(&server, &format!("/api/summary?{window}"));
    assert_eq!((body["truncated"].clone(), body["totalGroups"].clone(), body["groups"][0]["count"].clone()), (json!(false), json!(1), json!(1081)));
    let body = get(&server, &format!("/api/summary?{window}&model=nobody"));
    assert_eq!((body["truncated"].clone(), body["totalGroups"].clone(), body["groups"].clone()), (json!(false), json!(0), json!([])));
}

#[test]
fn a_timeseries_holds_at_most_100000_points_of_the_busiest_series() {
    let server = Server::start(&[]);
    let base = base();
    ingest(&server, many_groups(base));
    // A day at 1m: 1,440 points, so 69 series (100,000 / 1,440). From a partial minute: records are
    // read too.
    let (from, to) = (base - 23 * HOUR + 30_000, base + HOUR);
    let body = get(&server, &format!("/api/timeseries?metric=count&bucket=1m&from={from}&to={to}&groupBy=model"));
    assert_eq!((body["truncated"].clone(), body["totalGroups"].clone()), (json!(true), json!(1061)));
    let series = body["series"].as_array().unwrap();
    assert_eq!(models_of(series).into_iter().collect::<BTreeSet<_>>(), busiest_models(69));
    for s in series {
        let points = s["points"].as_array().unwrap();
        assert_eq!(points.len(), 1440);
        let total: f64 = points.iter().map(|p| p[1].as_f64().unwrap()).sum();
        let want = if s["key"]["model"].as_str().is_some_and(|m| m.starts_with("busy-")) { 3.0 } else { 1.0 };
        assert_eq!(total, want, "{}", s["key"]);
    }
    // An hour at 1m: 60 points, so up to 1,000 series.
    let body = get(&server, &format!("/api/timeseries?metric=count&bucket=1m&from={base}&to={}&groupBy=model", base + HOUR));
    assert_eq!((body["truncated"].clone(), body["totalGroups"].clone(), body["series"].as_array().unwrap().len()), (json!(true), json!(1061), 1000));
    let body = get(&server, &format!("/api/timeseries?metric=count&bucket=1h&from={base}&to={}&groupBy=model&model=busy-0", base + HOUR));
    assert_eq!((body["truncated"].clone(), body["totalGroups"].clone(), body["series"][0]["points"].clone()), (json!(false), json!(1), json!([[base, 3.0]])));
}

#[test]
fn windows_outside_1970_to_the_year_10000_get_400_naming_the_parameter() {
    let server = Server::start(&[]);
    let base = base();
    ingest(&server, many_groups(base)[..20].to_vec());
    for endpoint in ["summary?", "timeseries?", "compare?a=A&b=B&"] {
        for (window, field) in [
            ("from=-9223372036854775808&to=-9223372036854775807", "from"),
            ("from=9223372036854775806&to=9223372036854775807", "from"),
            ("from=0&to=253402300800001", "to"),
            ("from=-1&to=1", "from"),
            ("from=5&to=5", "from"),
        ] {
            let resp = server.get(&format!("/api/{endpoint}{window}"));
            assert_eq!((resp.status, resp.json()["field"].clone()), (400, json!(field)), "{endpoint}{window}: {}", resp.text());
        }
    }
    // The widest window reads every record, no more.
    let body = get(&server, "/api/summary?from=0&to=253402300800000");
    assert_eq!(body["groups"][0]["count"], json!(20));
}
