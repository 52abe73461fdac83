//! Benchmark: a highway's speed events (one per sensor and second) stored seven ways,
//! ingested, checked, and read back one segment-hour at a time.
//!
//! ```sh
//! # the embedded secantus-mdb server (nothing to install; the first release build is slow)
//! cargo run --release --ignore-rust-version -p pattern-examples --example bucket_bench
//! # another size: N events for K segments (arguments, or BENCH_N / BENCH_K)
//! cargo run --release --ignore-rust-version -p pattern-examples --example bucket_bench -- 200000 20
//! # a real server
//! MONGODB_URI=mongodb://localhost:27017 \
//!     cargo run --release --ignore-rust-version -p pattern-examples --example bucket_bench
//! ```
//!
//! The data: `N` events `{segId, ts, speed}` (default 100 000) of `K` road segments (default 10),
//! one per segment per second, on the second, in time order with the segments interleaved,
//! starting at 2024-01-01T00:00Z. Seven layouts, each in a database of its own that is dropped
//! first:
//!
//! - **(a)** one document per event in `speed_events`, with the index `{segId: 1, ts: 1}`;
//!   `insertMany` in batches; the hour read is `find({segId, ts: {$gte, $lt}}).sort({ts: 1})`.
//! - **(b)** `#[bucket(rollup, span = "1m")]`: `{segId, ts, speed_num, speed_sum, speed_min,
//!   speed_max}` per minute; its "hour read" is [`Series::summary`], checked against the events'
//!   count and sum.
//! - **(c)** `#[bucket(slots = "1s", span = "1m")]`: `speed: {"0": .., "59": ..}` per minute.
//! - **(d)** `#[bucket(slots = "1s", span = "1h")]`: 3 600 keys per hour.
//! - **(e)** `#[bucket(slots = "1s", nest = "1m", span = "1h")]`: 60 maps of 60 per hour.
//! - **(f)** array buckets, `#[bucket(max_count = 200, span = "1h")]`.
//! - **(g)** a native time-series collection, `#[bucket(native, granularity = "seconds")]`.
//!
//! (b) to (g) are written with [`Series::insert_many`] in the same batches, indexes by
//! `pattern_runtime::sync(&db)`, and read with [`Series::range`] (all but (b)).
//!
//! For each layout: documents stored (`countDocuments`; for (g) the server's bucket count from
//! `collStats` as well), data size (`collStats.size`), storage size, total index size, batched
//! ingest throughput (wall clock over every batch), single-insert throughput (the first
//! `BENCH_SINGLE` events, one `insert` each, in a separate database), the documents one
//! segment-hour read fetches, and the latency of that read: median and p95 over `BENCH_READS`
//! reads of a random (seeded) segment and full hour, the same ones for every layout, after a
//! warm-up. Every read is checked against the events sent (all of them, in order, with their
//! values; (b): count and sum), and after ingest every segment is read back whole and summarised
//! (count, min, max, sum) on every layout: on any mismatch the table is still printed, then the
//! program exits with status 1.
//!
//! Settings (a command-line argument wins over its variable):
//!
//! | argument | variable | default | meaning |
//! | --- | --- | --- | --- |
//! | 1st | `BENCH_N` | 100000 | events |
//! | 2nd | `BENCH_K` | 10 | segments |
//! | | `BENCH_BATCH` | 1000 | events per `insert_many` |
//! | | `BENCH_READS` | 50 | timed hour reads (after 5 warm-up reads) |
//! | | `BENCH_SINGLE` | 2000 | events inserted one at a time (0: skip) |
//! | | `BENCH_SEED` | 42 | the seed of the segment-hours read |
//! | | `BENCH_ONLY` | unset | letters of the layouts to run besides (a), e.g. `bd` |
//! | | `BENCH_BREAKDOWN` | unset | `1` prints where a read's time goes (below) |
//! | | `BENCH_KEEP` | unset | `1` keeps the databases (`bucket_bench_*`) after the run |
//! | | `MONGODB_URI` | unset | the server; the embedded one when unset |
//!
//! # Results
//!
//! 2026-11-23, 2 cores (linux/x86_64), the embedded secantus-mdb 0.5.3-beta.196 (`buildInfo`
//! 8.2.11), N = 100 000, K = 10, batches of 1000, 50 timed reads, 2000 single inserts, release
//! build:
//!
//! | layout | documents stored | data size | storage size | index size | batched ingest (events/s) | single inserts (events/s, first 2000) | documents per hour read | hour read median | hour read p95 | events returned |
//! | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
//! | (a) one document per event | 100000 | 6.29 MiB | 6.29 MiB | 4.49 MiB | 34115 | 2348 | 3600 | 36.76 ms | 41.79 ms | 3600 ✓ |
//! | (b) rollup per minute | 1670 | 187.5 KiB | 187.5 KiB | 76.9 KiB | 84406 | 1514 | 60 | 1.21 ms | 1.54 ms | 3600 ✓ |
//! | (c) slots, a minute of seconds | 1670 | 874.2 KiB | 874.2 KiB | 76.9 KiB | 45490 | 1341 | 60 | 7.40 ms | 8.49 ms | 3600 ✓ |
//! | (d) slots, an hour of seconds | 30 | 946.0 KiB | 946.0 KiB | 1.4 KiB | 13267 | 1147 | 1 | 3.80 ms | 4.84 ms | 3600 ✓ |
//! | (e) slots, an hour of 60 x 60 | 30 | 781.3 KiB | 781.3 KiB | 1.4 KiB | 13455 | 1300 | 1 | 7.11 ms | 7.88 ms | 3600 ✓ |
//! | (f) array buckets, 200 per hour | 500 | 3.18 MiB | 3.18 MiB | 23.3 KiB | 45437 | 668 | 18 | 7.47 ms | 8.00 ms | 3600 ✓ |
//! | (g) native time series | 100000 (100 buckets) | 2.88 MiB | 2.88 MiB | 3.25 MiB | 19392 | 1761 | 3600 | 95.23 ms | 113.46 ms | 3600 ✓ |
//!
//! | ratio to (a) | documents | data size | storage size | index size | batched ingest | single inserts | documents per hour read | read median | read p95 |
//! | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
//! | (b) rollup per minute | 0.02× | 0.03× | 0.03× | 0.02× | 2.47× | 0.64× | 0.02× | 0.03× | 0.04× |
//! | (c) slots, a minute of seconds | 0.02× | 0.14× | 0.14× | 0.02× | 1.33× | 0.57× | 0.02× | 0.20× | 0.20× |
//! | (d) slots, an hour of seconds | 0.00× | 0.15× | 0.15× | 0.00× | 0.39× | 0.49× | 0.00× | 0.10× | 0.12× |
//! | (e) slots, an hour of 60 x 60 | 0.00× | 0.12× | 0.12× | 0.00× | 0.39× | 0.55× | 0.00× | 0.19× | 0.19× |
//! | (f) array buckets, 200 per hour | 0.01× | 0.51× | 0.51× | 0.01× | 1.33× | 0.28× | 0.01× | 0.20× | 0.19× |
//! | (g) native time series | 1.00× | 0.46× | 0.46× | 0.72× | 0.57× | 0.75× | 1.00× | 2.59× | 2.71× |
//!
//! Every aggregated layout read a segment-hour at least 5 times faster than (a) in this run
//! (timings move by up to ±40 % between runs on this machine; sizes repeat exactly). Where the
//! time goes, from `BENCH_BREAKDOWN=1` in the same run (medians):
//!
//! | layout | `find` of the hour's documents, raw | the whole read | deserializing its 3 600 events alone |
//! | --- | ---: | ---: | ---: |
//! | (b) | 0.96 ms (6.9 KB) | 1.08 ms | n/a |
//! | (c) | 1.79 ms (32 KB) | 6.97 ms | 3.05 ms |
//! | (d) | 1.49 ms (35 KB) | 6.07 ms | 2.96 ms |
//! | (e) | 1.02 ms (29 KB) | 4.32 ms | 1.88 ms |
//! | (f) | 1.80 ms (120 KB) | 7.77 ms | 3.05 ms |
//!
//! So a layout that returns the events is bound by turning 3 600 of them into structs (a
//! `perf` profile of the reads puts most of that in `bson`'s `DateTime` deserializer, which
//! goes through its extended-JSON visitor), not by the server. What the embedded server does
//! not show: it reports `storageSize` equal to `size` (no block compression); an update costs
//! it 2 to 4 ms where an insert costs 0.5 ms, so single inserts into windows trail; and it
//! applied a `{_id: 0}` projection to a 3 600-key window in 4 ms, which is why the reads ask
//! for no projection. Run it against a real `mongod` (`MONGODB_URI`) before drawing conclusions
//! about MongoDB.

use std::error::Error;
use std::fmt::Write as _;
use std::future::Future;
use std::time::{Duration, Instant};

use bson::{doc, Bson, DateTime, Document};
use futures_util::TryStreamExt;
use mongodb::{Client, Collection, Database, IndexModel};
use pattern_runtime::{bucket::Storage, Measurement, Series};
use serde::{Deserialize, Serialize};

type BoxError = Box<dyn Error + Send + Sync>;

/// 2024-01-01T00:00:00Z: the first reading, on an hour boundary.
const T0: i64 = 1_704_067_200_000;
const HOUR_MS: i64 = 3_600_000;
const SECONDS_PER_HOUR: u64 = 3600;
const WARM_UP_READS: usize = 5;

/// (a) One document per event: `{segId: "I80_mile23", speed: 63, ts: ISODate(..)}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Event {
    seg_id: String,
    ts: DateTime,
    speed: i32,
}

/// One speed event, declared once per layout: the same fields, another `#[bucket(...)]`.
macro_rules! layout {
    ($(#[$doc:meta])* $name:ident, $($options:tt)*) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Serialize, Deserialize, Measurement)]
        #[serde(rename_all = "camelCase")]
        #[bucket(key = seg_id, time = ts, summary(speed(min, max, sum)), $($options)*)]
        struct $name {
            seg_id: String,
            ts: DateTime,
            speed: i32,
        }

        impl From<&Event> for $name {
            fn from(e: &Event) -> Self {
                $name { seg_id: e.seg_id.clone(), ts: e.ts, speed: e.speed }
            }
        }
    };
}

layout!(
    /// (b) One document per segment and minute holding only counts and sums.
    MinuteRollup, rollup, collection = "speed_minute_rollup", span = "1m"
);
layout!(
    /// (c) One document per segment and minute, the seconds as keys.
    MinuteSlots, slots = "1s", collection = "speed_minute_slots", span = "1m"
);
layout!(
    /// (d) One document per segment and hour, 3 600 keys.
    HourSlots, slots = "1s", collection = "speed_hour_slots", span = "1h"
);
layout!(
    /// (e) One document per segment and hour, 60 minutes of 60 seconds.
    HourNested, slots = "1s", nest = "1m", collection = "speed_hour_nested", span = "1h"
);
layout!(
    /// (f) Array buckets: one document per segment and hour, at most 200 events each.
    ArrayBuckets, collection = "speed_buckets", max_count = 200, span = "1h"
);
layout!(
    /// (g) A native time-series collection, the segment as its `metaField`.
    NativeSeries, native, collection = "speed_ts", granularity = "seconds"
);

/// An answer to an hour read, whatever the layout: the events (time, speed) of the segment, or
/// (rollup) the hour's count and sum.
#[derive(Debug, PartialEq)]
enum Answer {
    Events(Vec<(String, i64, i32)>),
    Sums { count: u64, sum: i64 },
}

/// A summary's min, max and sum of `speed`.
type Sums = (Option<i32>, Option<i32>, Option<i32>);

/// A layout as the benchmark drives it.
trait Layout: Measurement<Key = String> + for<'a> From<&'a Event> {
    /// What `read` returns for a sensor-hour: events, or the hour's sums.
    const KEEPS: bool;
    /// The summary's `speed` min, max and sum (each model's own typed name).
    fn speed(s: &pattern_runtime::bucket::Summary) -> pattern_runtime::Result<Sums>;
    fn read(
        series: &Series<Self>,
        seg: String,
        from: DateTime,
        to: DateTime,
    ) -> impl Future<Output = Result<Answer, BoxError>> + Send;
}

macro_rules! keeps {
    ($($t:ty),*) => {$(
        impl Layout for $t {
            const KEEPS: bool = true;
            fn speed(s: &pattern_runtime::bucket::Summary) -> pattern_runtime::Result<Sums> {
                let f = <$t>::FIELDS.speed;
                Ok((s.min(f)?, s.max(f)?, s.sum(f)?))
            }
            async fn read(series: &Series<Self>, seg: String, from: DateTime, to: DateTime) -> Result<Answer, BoxError> {
                let found: Vec<$t> = series.range(seg, from, to).await?.try_collect().await?;
                Ok(Answer::Events(found.into_iter().map(|e| (e.seg_id, e.ts.timestamp_millis(), e.speed)).collect()))
            }
        }
    )*};
}
keeps!(
    MinuteSlots,
    HourSlots,
    HourNested,
    ArrayBuckets,
    NativeSeries
);

impl Layout for MinuteRollup {
    const KEEPS: bool = false;
    fn speed(s: &pattern_runtime::bucket::Summary) -> pattern_runtime::Result<Sums> {
        let f = MinuteRollup::FIELDS.speed;
        Ok((s.min(f)?, s.max(f)?, s.sum(f)?))
    }
    async fn read(
        series: &Series<Self>,
        seg: String,
        from: DateTime,
        to: DateTime,
    ) -> Result<Answer, BoxError> {
        let s = series.summary(seg, from, to).await?;
        Ok(Answer::Sums {
            count: s.count(),
            sum: s.sum(MinuteRollup::FIELDS.speed)?.map_or(0, i64::from),
        })
    }
}

/// The run's settings.
#[derive(Debug, Clone)]
struct Config {
    n: usize,
    k: usize,
    batch: usize,
    reads: usize,
    single: usize,
    seed: u64,
    keep: bool,
}

impl Config {
    fn from_env_and_args() -> Result<Config, BoxError> {
        let args: Vec<String> = std::env::args().skip(1).collect();
        if args.iter().any(|a| a == "-h" || a == "--help") {
            println!("usage: bucket_bench [N readings] [K sensors]  (see the module docs for BENCH_* variables)");
            std::process::exit(0);
        }
        if args.len() > 2 {
            return Err(format!("at most two arguments (N, K), got {args:?}").into());
        }
        let config = Config {
            n: setting("BENCH_N", args.first(), 100_000)?,
            k: setting("BENCH_K", args.get(1), 10)?,
            batch: setting("BENCH_BATCH", None, 1000)?,
            reads: setting("BENCH_READS", None, 50)?,
            single: setting("BENCH_SINGLE", None, 2000)?,
            seed: setting("BENCH_SEED", None, 42)? as u64,
            keep: std::env::var("BENCH_KEEP").is_ok_and(|v| v == "1"),
        };
        if config.k == 0 || config.n < config.k || config.batch == 0 || config.reads == 0 {
            return Err("need K >= 1, N >= K, BENCH_BATCH >= 1 and BENCH_READS >= 1".into());
        }
        Ok(config)
    }

    /// How many readings sensor `s` has: `ceil((N - s) / K)`.
    fn readings_of(&self, sensor: usize) -> u64 {
        ((self.n - sensor).div_ceil(self.k)) as u64
    }

    /// The hours that can be read: the full ones of every sensor, else the first.
    fn hours(&self) -> u64 {
        (self.readings_of(self.k - 1) / SECONDS_PER_HOUR).max(1)
    }
}

/// A number from the command line (first), the environment, or the default; `_` allowed.
fn setting(var: &str, arg: Option<&String>, default: usize) -> Result<usize, BoxError> {
    let text = match arg {
        Some(a) => a.clone(),
        None => match std::env::var(var) {
            Ok(v) if !v.trim().is_empty() => v,
            _ => return Ok(default),
        },
    };
    text.trim()
        .replace('_', "")
        .parse()
        .map_err(|e| format!("{var} = {text:?}: {e}").into())
}

fn sensor_name(sensor: usize) -> String {
    format!("I80_mile{sensor}")
}

/// The events, in time order with the segments interleaved: one per segment per second, on the
/// second (the slot layouts keep one value per second).
fn generate(config: &Config) -> Vec<Event> {
    (0..config.n)
        .map(|i| {
            let sensor = i % config.k;
            let second = (i / config.k) as i64;
            Event {
                seg_id: sensor_name(sensor),
                ts: DateTime::from_millis(T0 + second * 1000),
                speed: 40 + ((i * 37) % 41) as i32,
            }
        })
        .collect()
}

/// The events of each segment, in time order, as `(segment, time, speed)`.
fn by_segment(config: &Config, data: &[Event]) -> Vec<Vec<(String, i64, i32)>> {
    let mut out = vec![Vec::new(); config.k];
    for (i, e) in data.iter().enumerate() {
        out[i % config.k].push((e.seg_id.clone(), e.ts.timestamp_millis(), e.speed));
    }
    out
}

/// What a read of `[from, to)` of `sensor` must return.
fn expected_answer(
    expected: &[Vec<(String, i64, i32)>],
    sensor: usize,
    from: i64,
    to: i64,
    keeps: bool,
) -> Answer {
    let events: Vec<(String, i64, i32)> = expected[sensor]
        .iter()
        .filter(|e| e.1 >= from && e.1 < to)
        .cloned()
        .collect();
    if keeps {
        Answer::Events(events)
    } else {
        Answer::Sums {
            count: events.len() as u64,
            sum: events.iter().map(|e| i64::from(e.2)).sum(),
        }
    }
}

/// splitmix64: a seeded, dependency-free choice of sensor-hours.
fn read_plan(config: &Config, count: usize) -> Vec<(usize, u64)> {
    let mut state = config.seed;
    let mut next = move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    (0..count)
        .map(|_| {
            let sensor = (next() % config.k as u64) as usize;
            let hour = next() % config.hours();
            (sensor, hour)
        })
        .collect()
}

/// `collStats` (or the `$collStats` stage where the command is missing): what a layout costs.
#[derive(Debug, Default, Clone)]
struct Stats {
    size: Option<u64>,
    storage: Option<u64>,
    index: Option<u64>,
    buckets: Option<u64>,
}

fn number(doc: &Document, key: &str) -> Option<u64> {
    match doc.get(key)? {
        Bson::Int32(n) => u64::try_from(*n).ok(),
        Bson::Int64(n) => u64::try_from(*n).ok(),
        Bson::Double(n) if *n >= 0.0 => Some(*n as u64),
        _ => None,
    }
}

async fn coll_stats(db: &Database, collection: &str) -> Stats {
    let raw = match db.run_command(doc! { "collStats": collection }).await {
        Ok(d) => Some(d),
        Err(_) => {
            let pipeline = vec![doc! { "$collStats": { "storageStats": {} } }];
            match db
                .collection::<Document>(collection)
                .aggregate(pipeline)
                .await
            {
                Ok(cursor) => cursor
                    .try_collect::<Vec<_>>()
                    .await
                    .ok()
                    .and_then(|v| v.into_iter().next())
                    .and_then(|d| d.get_document("storageStats").ok().cloned()),
                Err(_) => None,
            }
        }
    };
    let Some(raw) = raw else {
        return Stats::default();
    };
    Stats {
        size: number(&raw, "size"),
        storage: number(&raw, "storageSize"),
        index: number(&raw, "totalIndexSize"),
        buckets: raw
            .get_document("timeseries")
            .ok()
            .and_then(|t| number(t, "bucketCount")),
    }
}

/// One layout's measurements.
#[derive(Debug, Default)]
struct Outcome {
    name: &'static str,
    documents: u64,
    stored_readings: u64,
    stats: Stats,
    ingest: Duration,
    single: Option<(usize, Duration)>,
    /// The documents one sensor-hour read fetches (the first sensor's first hour).
    hour_documents: Option<u64>,
    reads: Vec<Duration>,
    returned: Vec<usize>,
    expected: Vec<usize>,
    problems: Vec<String>,
}

impl Outcome {
    fn new(name: &'static str) -> Self {
        Outcome {
            name,
            ..Outcome::default()
        }
    }

    fn ingest_rate(&self, n: usize) -> f64 {
        n as f64 / self.ingest.as_secs_f64()
    }

    fn single_rate(&self) -> Option<f64> {
        self.single.map(|(n, d)| n as f64 / d.as_secs_f64())
    }

    fn median(&self) -> Duration {
        percentile(&self.reads, 0.5)
    }

    fn p95(&self) -> Duration {
        percentile(&self.reads, 0.95)
    }
}

/// The nearest-rank percentile.
fn percentile(samples: &[Duration], p: f64) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort();
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// Reads the planned sensor-hours, timing the timed ones, and checks every answer.
async fn time_reads<F, Fut>(
    plan: &[(usize, u64)],
    expected: &[Vec<(String, i64, i32)>],
    keeps: bool,
    outcome: &mut Outcome,
    mut read: F,
) -> Result<(), BoxError>
where
    F: FnMut(String, DateTime, DateTime) -> Fut,
    Fut: Future<Output = Result<Answer, BoxError>>,
{
    for (i, &(sensor, hour)) in plan.iter().enumerate() {
        let device = sensor_name(sensor);
        let (from, to) = (T0 + hour as i64 * HOUR_MS, T0 + (hour as i64 + 1) * HOUR_MS);
        let started = Instant::now();
        let got = read(
            device.clone(),
            DateTime::from_millis(from),
            DateTime::from_millis(to),
        )
        .await?;
        let elapsed = started.elapsed();

        let want = expected_answer(expected, sensor, from, to, keeps);
        let size = |a: &Answer| match a {
            Answer::Events(e) => e.len(),
            Answer::Sums { count, .. } => *count as usize,
        };
        if got != want {
            outcome.problems.push(format!(
                "{}: {device} hour {hour}: {} events (or counted) where {} were stored, or other values",
                outcome.name,
                size(&got),
                size(&want)
            ));
        }
        if i >= WARM_UP_READS {
            outcome.reads.push(elapsed);
            outcome.returned.push(size(&got));
            outcome.expected.push(size(&want));
        }
    }
    Ok(())
}

/// A fresh database.
async fn fresh_db(client: &Client, name: &str) -> mongodb::error::Result<Database> {
    let db = client.database(name);
    db.drop().await?;
    Ok(db)
}

fn check_stored(config: &Config, outcome: &mut Outcome) {
    if outcome.stored_readings != config.n as u64 {
        outcome.problems.push(format!(
            "{}: {} readings stored, expected {}",
            outcome.name, outcome.stored_readings, config.n
        ));
    }
}

/// (a) One document per event.
async fn run_documents(
    client: &Client,
    config: &Config,
    data: &[Event],
    plan: &[(usize, u64)],
    expected: &[Vec<(String, i64, i32)>],
) -> Result<Outcome, BoxError> {
    let mut outcome = Outcome::new("(a) one document per event");
    let index = IndexModel::builder()
        .keys(doc! { "segId": 1, "ts": 1 })
        .build();

    if config.single > 0 {
        let db = fresh_db(client, "bucket_bench_documents_single").await?;
        let events: Collection<Event> = db.collection("speed_events");
        events.create_index(index.clone()).await?;
        let slice = &data[..config.single.min(data.len())];
        let started = Instant::now();
        for e in slice {
            events.insert_one(e).await?;
        }
        outcome.single = Some((slice.len(), started.elapsed()));
    }

    let db = fresh_db(client, "bucket_bench_documents").await?;
    let events: Collection<Event> = db.collection("speed_events");
    events.create_index(index).await?;
    let started = Instant::now();
    for chunk in data.chunks(config.batch) {
        events.insert_many(chunk).await?;
    }
    outcome.ingest = started.elapsed();

    outcome.documents = events.count_documents(doc! {}).await?;
    outcome.stored_readings = outcome.documents;
    check_stored(config, &mut outcome);
    outcome.stats = coll_stats(&db, "speed_events").await;
    outcome.hour_documents = Some(
        events
            .count_documents(doc! { "segId": sensor_name(0), "ts": { "$gte": DateTime::from_millis(T0), "$lt": DateTime::from_millis(T0 + HOUR_MS) } })
            .await?,
    );

    time_reads(plan, expected, true, &mut outcome, |device, from, to| {
        let events = events.clone();
        async move {
            let found: Vec<Event> = events
                .find(doc! { "segId": device, "ts": { "$gte": from, "$lt": to } })
                .sort(doc! { "ts": 1 })
                .await?
                .try_collect()
                .await?;
            Ok(Answer::Events(
                found
                    .into_iter()
                    .map(|e| (e.seg_id, e.ts.timestamp_millis(), e.speed))
                    .collect(),
            ))
        }
    })
    .await?;
    Ok(outcome)
}

/// (b) to (g): a [`Series`] of one layout.
async fn run_series<M: Layout>(
    client: &Client,
    config: &Config,
    data: &[Event],
    plan: &[(usize, u64)],
    expected: &[Vec<(String, i64, i32)>],
    name: &'static str,
    db_name: &str,
) -> Result<Outcome, BoxError> {
    let mut outcome = Outcome::new(name);
    let measurements: Vec<M> = data.iter().map(M::from).collect();
    let collection = <M as Measurement>::SCHEMA.collection();

    if config.single > 0 {
        let db = fresh_db(client, &format!("{db_name}_single")).await?;
        pattern_runtime::sync(&db).await?;
        let series: Series<M> = M::series(&db);
        let slice = &measurements[..config.single.min(measurements.len())];
        let started = Instant::now();
        for m in slice {
            series.insert(m).await?;
        }
        outcome.single = Some((slice.len(), started.elapsed()));
    }

    let db = fresh_db(client, db_name).await?;
    // Every registered measurement's collection and indexes are created in this database (the
    // other layouts' collections stay empty); the figures below are of `collection` only.
    pattern_runtime::sync(&db).await?;
    let declared: Vec<&str> = <M as Measurement>::SCHEMA
        .indexes()
        .iter()
        .map(|i| i.name())
        .collect();
    println!("{name}: `{collection}`, indexes {declared:?}");

    let series: Series<M> = M::series(&db);
    let started = Instant::now();
    for chunk in measurements.chunks(config.batch) {
        series.insert_many(chunk).await?;
    }
    outcome.ingest = started.elapsed();

    let raw = series.collection();
    outcome.documents = raw.count_documents(doc! {}).await?;
    outcome.stats = coll_stats(&db, collection).await;

    // Everything back, segment by segment: the same events (or sums) as stored, and the same
    // summary, on every layout.
    let seconds = config.n.div_ceil(config.k) as i64;
    let all_to = T0 + ((seconds * 1000 + HOUR_MS - 1) / HOUR_MS) * HOUR_MS;
    let (from, to) = (DateTime::from_millis(T0), DateTime::from_millis(all_to));
    let mut stored = 0;
    for (sensor, events) in expected.iter().enumerate() {
        let seg = sensor_name(sensor);
        let got = M::read(&series, seg.clone(), from, to).await?;
        let want = expected_answer(expected, sensor, T0, all_to, M::KEEPS);
        if got != want {
            outcome.problems.push(format!(
                "{name}: {seg}: the whole range differs from what was stored"
            ));
        }
        stored += match got {
            Answer::Events(e) => e.len() as u64,
            Answer::Sums { count, .. } => count,
        };
        let summary = series.summary(seg.clone(), from, to).await?;
        let (min, max, sum) = M::speed(&summary)?;
        let got = (summary.count(), min, max, sum.map(i64::from));
        let want = (
            events.len() as u64,
            events.iter().map(|e| e.2).min(),
            events.iter().map(|e| e.2).max(),
            Some(events.iter().map(|e| i64::from(e.2)).sum::<i64>()),
        );
        if got != want {
            outcome
                .problems
                .push(format!("{name}: {seg}: summary {got:?}, expected {want:?}"));
        }
    }
    outcome.stored_readings = stored;
    check_stored(config, &mut outcome);

    // The documents a sensor-hour read returns (the measurements, in native mode).
    let time = M::SERIES.time();
    let field = if matches!(M::SERIES.storage(), Storage::Buckets { .. }) {
        "start"
    } else {
        time
    };
    outcome.hour_documents = Some(
        raw.count_documents(doc! { M::SERIES.keys()[0]: sensor_name(0), field: { "$gte": DateTime::from_millis(T0), "$lt": DateTime::from_millis(T0 + HOUR_MS) } })
            .await?,
    );

    time_reads(
        plan,
        expected,
        M::KEEPS,
        &mut outcome,
        |device, from, to| {
            let series = series.clone();
            async move { M::read(&series, device, from, to).await }
        },
    )
    .await?;
    if std::env::var("BENCH_BREAKDOWN").is_ok_and(|v| v == "1") {
        breakdown::<M>(&series, plan).await?;
    }
    Ok(outcome)
}

/// `BENCH_BREAKDOWN=1`: where a sensor-hour read's time goes, by phase: the same `find` of the
/// documents the read fetches, kept as raw BSON (server and transfer), then parsed into
/// `Document`s, against the whole read (`range` or `summary`). Medians over the timed reads.
async fn breakdown<M: Layout>(series: &Series<M>, plan: &[(usize, u64)]) -> Result<(), BoxError> {
    let spec = M::SERIES;
    let field = if matches!(spec.storage(), Storage::Buckets { .. }) {
        "start"
    } else {
        spec.time()
    };
    let raw_coll = series
        .collection()
        .clone_with_type::<bson::RawDocumentBuf>();
    if spec.is_native() {
        // Its `find` on the measurements is not the read's query (the server rewrites that one
        // for its buckets): no comparable phases.
        return Ok(());
    }
    let (mut raw, mut parsed, mut whole, mut decode) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut bytes_read = 0usize;
    for &(sensor, hour) in &plan[WARM_UP_READS..] {
        let from = DateTime::from_millis(T0 + hour as i64 * HOUR_MS);
        let to = DateTime::from_millis(T0 + (hour as i64 + 1) * HOUR_MS);
        let filter =
            doc! { spec.keys()[0]: sensor_name(sensor), field: { "$gte": from, "$lt": to } };
        let started = Instant::now();
        let docs: Vec<bson::RawDocumentBuf> = raw_coll
            .find(filter.clone())
            .sort(doc! { field: 1 })
            .await?
            .try_collect()
            .await?;
        raw.push(started.elapsed());
        bytes_read = docs.iter().map(|d| d.as_bytes().len()).sum();
        let started = Instant::now();
        let docs: Vec<Document> = series
            .collection()
            .find(filter)
            .await?
            .try_collect()
            .await?;
        parsed.push(started.elapsed());
        std::hint::black_box(docs);
        let started = Instant::now();
        let answer = M::read(series, sensor_name(sensor), from, to).await?;
        whole.push(started.elapsed());
        // The same events as raw documents, deserialized alone: what any layout pays per event.
        if let Answer::Events(events) = answer {
            let docs = events
                .into_iter()
                .map(|(seg_id, ts, speed)| {
                    bson::serialize_to_raw_document_buf(&Event {
                        seg_id,
                        ts: DateTime::from_millis(ts),
                        speed,
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            let started = Instant::now();
            for d in &docs {
                std::hint::black_box(bson::deserialize_from_slice::<M>(d.as_bytes())?);
            }
            decode.push(started.elapsed());
        }
    }
    println!(
        "  breakdown of {}: find as raw BSON {} ({} bytes), find as Document {}, the read {}, \
         deserializing its events alone {}",
        spec.collection(),
        millis(percentile(&raw, 0.5)),
        bytes_read,
        millis(percentile(&parsed, 0.5)),
        millis(percentile(&whole, 0.5)),
        if decode.is_empty() {
            "n/a".to_owned()
        } else {
            millis(percentile(&decode, 0.5))
        },
    );
    Ok(())
}

fn bytes(n: Option<u64>) -> String {
    match n {
        None => "n/a".to_owned(),
        Some(n) if n < 1 << 20 => format!("{:.1} KiB", n as f64 / 1024.0),
        Some(n) => format!("{:.2} MiB", n as f64 / (1024.0 * 1024.0)),
    }
}

fn millis(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn rate(r: Option<f64>) -> String {
    r.map_or_else(|| "n/a".to_owned(), |r| format!("{r:.0}"))
}

fn ratio(x: Option<f64>, base: Option<f64>) -> String {
    match (x, base) {
        (Some(x), Some(b)) if b > 0.0 => format!("{:.2}×", x / b),
        _ => "n/a".to_owned(),
    }
}

fn table(config: &Config, outcomes: &[Outcome]) -> String {
    let mut out = String::new();
    let single = config.single.min(config.n);
    let _ = writeln!(
        out,
        "| layout | documents stored | data size | storage size | index size | batched ingest (events/s) | single inserts (events/s, first {single}) | documents per hour read | hour read median | hour read p95 | events returned |"
    );
    let _ = writeln!(
        out,
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for o in outcomes {
        let documents = match o.stats.buckets {
            Some(b) => format!("{} ({b} buckets)", o.documents),
            None => o.documents.to_string(),
        };
        let returned = if o.returned == o.expected {
            let min = o.returned.iter().min().copied().unwrap_or(0);
            let max = o.returned.iter().max().copied().unwrap_or(0);
            if min == max {
                format!("{min} ✓")
            } else {
                format!("{min}–{max} ✓")
            }
        } else {
            let bad = o.returned.iter().zip(&o.expected).filter(|(r, e)| r != e);
            format!("✗ {} of {} reads wrong", bad.count(), o.reads.len())
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            o.name,
            documents,
            bytes(o.stats.size),
            bytes(o.stats.storage),
            bytes(o.stats.index),
            rate(Some(o.ingest_rate(config.n))),
            rate(o.single_rate()),
            o.hour_documents
                .map_or_else(|| "n/a".to_owned(), |n| n.to_string()),
            millis(o.median()),
            millis(o.p95()),
            returned,
        );
    }
    out
}

fn ratios(config: &Config, outcomes: &[Outcome]) -> String {
    let mut out = String::new();
    let Some(base) = outcomes.first() else {
        return out;
    };
    let f = |n: Option<u64>| n.map(|n| n as f64);
    let _ = writeln!(
        out,
        "| ratio to (a) | documents | data size | storage size | index size | batched ingest | single inserts | documents per hour read | read median | read p95 |"
    );
    let _ = writeln!(
        out,
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for o in &outcomes[1..] {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            o.name,
            ratio(Some(o.documents as f64), Some(base.documents as f64)),
            ratio(f(o.stats.size), f(base.stats.size)),
            ratio(f(o.stats.storage), f(base.stats.storage)),
            ratio(f(o.stats.index), f(base.stats.index)),
            ratio(
                Some(o.ingest_rate(config.n)),
                Some(base.ingest_rate(config.n))
            ),
            ratio(o.single_rate(), base.single_rate()),
            ratio(f(o.hour_documents), f(base.hour_documents)),
            ratio(
                Some(o.median().as_secs_f64()),
                Some(base.median().as_secs_f64())
            ),
            ratio(Some(o.p95().as_secs_f64()), Some(base.p95().as_secs_f64())),
        );
    }
    out
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let config = Config::from_env_and_args()?;
    let server = pattern_testkit::server();
    let client = pattern_testkit::client().await;
    let version = client
        .database("admin")
        .run_command(doc! { "buildInfo": 1 })
        .await
        .ok()
        .and_then(|d| d.get_str("version").ok().map(str::to_owned))
        .unwrap_or_else(|| "unknown".to_owned());
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let date = DateTime::now()
        .try_to_rfc3339_string()
        .unwrap_or_else(|_| "?".to_owned());

    println!("bucket_bench, {date}");
    println!(
        "server: {} (buildInfo version {version}); client: {} CPUs, {}/{}",
        server.describe(),
        cpus,
        std::env::consts::OS,
        std::env::consts::ARCH
    );
    println!(
        "N = {} readings, K = {} sensors ({} per sensor, {} readable hours), batches of {}, \
         {} timed hour reads after {WARM_UP_READS} warm-up reads, {} single inserts\n",
        config.n,
        config.k,
        config.n / config.k,
        config.hours(),
        config.batch,
        config.reads,
        config.single.min(config.n),
    );

    let data = generate(&config);
    let expected = by_segment(&config, &data);
    let plan = read_plan(&config, WARM_UP_READS + config.reads);

    let mut outcomes = Vec::new();
    let started = Instant::now();
    outcomes.push(run_documents(&client, &config, &data, &plan, &expected).await?);
    println!("(a) done in {:.1} s", started.elapsed().as_secs_f64());
    // `BENCH_ONLY=bd` runs (a), (b) and (d) only.
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    macro_rules! run {
        ($($t:ty => $name:literal, $db:literal;)*) => {$(
            if only.is_empty() || only.contains(&$name[1..2]) {
                let started = Instant::now();
                outcomes.push(run_series::<$t>(&client, &config, &data, &plan, &expected, $name, $db).await?);
                println!("{} done in {:.1} s", $name, started.elapsed().as_secs_f64());
            }
        )*};
    }
    run! {
        MinuteRollup => "(b) rollup per minute", "bucket_bench_rollup";
        MinuteSlots => "(c) slots, a minute of seconds", "bucket_bench_minute_slots";
        HourSlots => "(d) slots, an hour of seconds", "bucket_bench_hour_slots";
        HourNested => "(e) slots, an hour of 60 x 60", "bucket_bench_hour_nested";
        ArrayBuckets => "(f) array buckets, 200 per hour", "bucket_bench_buckets";
        NativeSeries => "(g) native time series", "bucket_bench_native";
    }
    println!();

    println!("{}", table(&config, &outcomes));
    println!("{}", ratios(&config, &outcomes));
    println!(
        "Throughput ratios above 1× mean faster than (a); size and latency ratios below 1× mean \
         smaller or faster."
    );

    if !config.keep {
        for name in [
            "bucket_bench_documents",
            "bucket_bench_rollup",
            "bucket_bench_minute_slots",
            "bucket_bench_hour_slots",
            "bucket_bench_hour_nested",
            "bucket_bench_buckets",
            "bucket_bench_native",
        ] {
            client.database(name).drop().await?;
            client.database(&format!("{name}_single")).drop().await?;
        }
    }

    let problems: Vec<&String> = outcomes.iter().flat_map(|o| &o.problems).collect();
    if !problems.is_empty() {
        eprintln!("\nWRONG RESULTS ({}):", problems.len());
        for p in problems.iter().take(20) {
            eprintln!("  {p}");
        }
        std::process::exit(1);
    }
    Ok(())
}
