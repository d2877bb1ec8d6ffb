//! The profile of a run (`--profiling_level`, or the config file's `lpai_profile.level`): the `profile` object of
//! `lpai_net_run.json`, made from the record's own times and QNN's profile events, and the short table
//! `lpai-net-run` prints at the end of such a run.
//!
//! Percentiles are nearest-rank: the p-th percentile of n sorted values is the value at rank ⌈p·n/100⌉ (1-based),
//! so it is always one of the measured values. Means and standard deviations are over the whole population
//! (divided by n) and rounded to a thousandth of a microsecond.

use crate::run_record::RunRecord;
use crate::stub::ProfileEvent;
use lpai_direct::qnn::profile::{ProfileEventType, ProfileEventUnit};
use serde::Serialize;

/// How the percentiles are taken, as the record states it.
pub const PERCENTILE_METHOD: &str = "nearest-rank";

/// The `profile` object of the record: present only when profiling was asked for.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Profile {
    /// [`PERCENTILE_METHOD`].
    pub percentile_method: &'static str,
    /// The DSP execute times' distribution; absent when no inference completed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dsp_execute_us: Option<Stats>,
    /// Traditional mode: the host round trips' distribution; absent in direct mode (no host call per inference).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_round_trip_us: Option<Stats>,
    /// Direct mode: the in-memory spans' distribution (input conversion, execute, output conversion); absent in
    /// traditional mode and from a skel that records no spans.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dsp_in_memory_us: Option<Stats>,
    /// Direct mode: the file I/O times' distribution (reading inputs, writing results), absent as
    /// `dsp_in_memory_us`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dsp_file_io_us: Option<Stats>,
    /// Traditional mode: what the round trips spent outside the DSP's execute.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ipc: Option<Ipc>,
    /// The load, as the host and (direct mode) the DSP saw it.
    pub load: Load,
    /// The times against the frame budget, when the config file set an fps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    /// QNN's profile events, in the order QNN lists them.
    pub events: Vec<Event>,
}

/// A distribution of times, in microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Stats {
    /// Values.
    pub count: usize,
    /// The smallest.
    pub min: i64,
    /// Nearest-rank 50th percentile.
    pub p50: i64,
    /// Nearest-rank 90th percentile.
    pub p90: i64,
    /// Nearest-rank 99th percentile.
    pub p99: i64,
    /// The largest.
    pub max: i64,
    /// The mean.
    pub mean: f64,
    /// The population standard deviation.
    pub std_dev: f64,
}

/// The inter-process share of the traditional round trips: each round trip minus its DSP execute time.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Ipc {
    /// Round trip minus DSP execute time, per inference, in microseconds (negative if the clocks disagree).
    pub per_inference_us: Vec<i64>,
    /// Their distribution.
    pub us: Stats,
    /// The sum of the differences over the sum of the round trips (0 to 1).
    pub share_of_round_trip: f64,
}

/// The load's times, in microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Load {
    /// The load call as the host saw it.
    pub host_us: u64,
    /// Direct mode: the load on the DSP clock.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dsp_us: Option<u64>,
    /// Direct mode: graphFinalize on the DSP clock (part of the load).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dsp_finalize_us: Option<u64>,
}

/// The frame budget an fps sets, and how a series of times keeps to it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Budget {
    /// `lpai_graph.execute.fps` of the config file (its default 1 when the section leaves it out).
    pub fps: u32,
    /// One frame's time: 1,000,000 / fps microseconds.
    pub budget_us: f64,
    /// The DSP execute times against it; absent when no inference completed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dsp_execute: Option<BudgetFit>,
    /// Traditional mode: the host round trips against it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_round_trip: Option<BudgetFit>,
}

/// How one series of times keeps to the budget.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct BudgetFit {
    /// Inferences that took longer than the budget.
    pub over_budget: usize,
    /// Their share of the inferences (0 to 1).
    pub over_budget_share: f64,
    /// The jitter: the population standard deviation of the times, in microseconds.
    pub jitter_us: f64,
    /// The jitter as a share of the budget.
    pub jitter_share_of_budget: f64,
    /// The budget minus the longest time (negative when one went over), in microseconds.
    pub worst_headroom_us: f64,
}

/// One QNN profile event, its unit named.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Event {
    /// The backend's name for it.
    pub identifier: String,
    /// The value, in `unit`.
    pub value: u64,
    /// The unit's name ([`unit_name`]).
    pub unit: &'static str,
    /// QNN's unit number (`QnnProfile_EventUnit_t`).
    pub unit_code: u32,
    /// QNN's event type number (`QnnProfile_EventType_t`).
    pub event_type: u32,
    /// The event type's C name, when it is one QNN defines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_type_name: Option<&'static str>,
    /// 0 for a top-level event, 1 for a sub-event.
    pub depth: u32,
}

/// The name of a QNN profile unit: `us`, `bytes`, `cycles`, `count`, `object`, `none`, `backend`, else `unknown`.
pub fn unit_name(unit: u32) -> &'static str {
    match ProfileEventUnit(unit) {
        ProfileEventUnit::MICROSEC => "us",
        ProfileEventUnit::BYTES => "bytes",
        ProfileEventUnit::CYCLES => "cycles",
        ProfileEventUnit::COUNT => "count",
        ProfileEventUnit::OBJECT => "object",
        ProfileEventUnit::NONE => "none",
        ProfileEventUnit::BACKEND => "backend",
        _ => "unknown",
    }
}

/// The nearest-rank `percent`-th percentile of `sorted` (ascending) times: see [`nearest_rank_of`].
pub fn nearest_rank(sorted: &[i64], percent: u32) -> Option<i64> {
    nearest_rank_of(sorted, percent)
}

/// The nearest-rank `percent`-th percentile of `sorted` (ascending, any values): the value at rank
/// ⌈percent·n/100⌉, at least the first; `None` for no values.
pub fn nearest_rank_of<T: Copy>(sorted: &[T], percent: u32) -> Option<T> {
    let count = sorted.len();
    let rank = (percent.min(100) as usize * count).div_ceil(100).max(1);
    sorted.get(rank.min(count).checked_sub(1)?).copied()
}

/// Rounds to a thousandth (of a microsecond, or of a share).
fn thousandths(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

/// Rounds a share to a millionth.
fn millionths(value: f64) -> f64 {
    (value * 1_000_000.0).round() / 1_000_000.0
}

/// The times as signed numbers (saturating; no time comes near `i64::MAX` microseconds).
fn signed(times: &[u64]) -> Vec<i64> {
    times.iter().map(|&time| i64::try_from(time).unwrap_or(i64::MAX)).collect()
}

impl Stats {
    /// The distribution of `values`; `None` for no values.
    pub fn of(values: &[i64]) -> Option<Stats> {
        let mut sorted = values.to_vec();
        sorted.sort_unstable();
        let count = sorted.len();
        let (min, max) = (*sorted.first()?, *sorted.last()?);
        let mean = sorted.iter().map(|&value| value as f64).sum::<f64>() / count as f64;
        let variance = sorted.iter().map(|&value| (value as f64 - mean).powi(2)).sum::<f64>() / count as f64;
        Some(Stats {
            count,
            min,
            p50: nearest_rank(&sorted, 50)?,
            p90: nearest_rank(&sorted, 90)?,
            p99: nearest_rank(&sorted, 99)?,
            max,
            mean: thousandths(mean),
            std_dev: thousandths(variance.sqrt()),
        })
    }
}

impl BudgetFit {
    /// How `times` keep to a budget of `budget_us`; `None` for no times.
    pub fn of(times: &[u64], budget_us: f64) -> Option<BudgetFit> {
        let stats = Stats::of(&signed(times))?;
        let over_budget = times.iter().filter(|&&time| time as f64 > budget_us).count();
        let jitter = {
            let mean = times.iter().map(|&time| time as f64).sum::<f64>() / times.len() as f64;
            (times.iter().map(|&time| (time as f64 - mean).powi(2)).sum::<f64>() / times.len() as f64).sqrt()
        };
        Some(BudgetFit {
            over_budget,
            over_budget_share: millionths(over_budget as f64 / stats.count as f64),
            jitter_us: thousandths(jitter),
            jitter_share_of_budget: millionths(jitter / budget_us),
            worst_headroom_us: thousandths(budget_us - stats.max as f64),
        })
    }
}

impl Budget {
    /// The budget `fps` sets for the record's times; `None` for no fps or 0 fps.
    pub fn of(record: &RunRecord, fps: Option<u32>) -> Option<Budget> {
        let fps = fps.filter(|&fps| fps > 0)?;
        let budget_us = 1_000_000.0 / f64::from(fps);
        Some(Budget {
            fps,
            budget_us: thousandths(budget_us),
            dsp_execute: BudgetFit::of(&record.dsp_execute_us, budget_us),
            host_round_trip: BudgetFit::of(&record.host_round_trip_us, budget_us),
        })
    }
}

impl Ipc {
    /// Each round trip minus the DSP execute time of the same inference; `None` when the record has no round
    /// trips (direct mode).
    pub fn of(record: &RunRecord) -> Option<Ipc> {
        let pairs = record.host_round_trip_us.iter().zip(&record.dsp_execute_us);
        let per_inference_us: Vec<i64> = pairs
            .map(|(&round_trip, &dsp)| {
                let difference = i128::from(round_trip) - i128::from(dsp);
                i64::try_from(difference).unwrap_or(if difference < 0 { i64::MIN } else { i64::MAX })
            })
            .collect();
        let us = Stats::of(&per_inference_us)?;
        let round_trips: u128 =
            record.host_round_trip_us.iter().take(per_inference_us.len()).map(|&t| u128::from(t)).sum();
        let differences: i128 = per_inference_us.iter().map(|&difference| i128::from(difference)).sum();
        let share = if round_trips == 0 { 0.0 } else { differences as f64 / round_trips as f64 };
        Some(Ipc { per_inference_us, us, share_of_round_trip: millionths(share) })
    }
}

impl Event {
    /// The record's form of a QNN profile event.
    pub fn of(event: &ProfileEvent) -> Event {
        Event {
            identifier: event.identifier.clone(),
            value: event.value,
            unit: unit_name(event.unit),
            unit_code: event.unit,
            event_type: event.event_type,
            event_type_name: ProfileEventType(event.event_type).c_name(),
            depth: event.depth,
        }
    }
}

/// The profile of `record` (its times as they stand), with the frame budget of `fps` and QNN's `events`.
pub fn of(record: &RunRecord, fps: Option<u32>, events: &[ProfileEvent]) -> Profile {
    Profile {
        percentile_method: PERCENTILE_METHOD,
        dsp_execute_us: Stats::of(&signed(&record.dsp_execute_us)),
        host_round_trip_us: Stats::of(&signed(&record.host_round_trip_us)),
        dsp_in_memory_us: Stats::of(&signed(&record.dsp_in_memory_us)),
        dsp_file_io_us: Stats::of(&signed(&record.dsp_file_io_us)),
        ipc: Ipc::of(record),
        load: Load { host_us: record.load_us, dsp_us: record.dsp_load_us, dsp_finalize_us: record.dsp_finalize_us },
        budget: Budget::of(record, fps),
        events: events.iter().map(Event::of).collect(),
    }
}

/// Adds the profile ([`of`]) to `record`: called by a run that profiles, once its times are complete.
pub fn complete(record: &mut RunRecord, fps: Option<u32>, events: &[ProfileEvent]) {
    record.profile = Some(of(record, fps, events));
}

/// A percentage with one decimal.
fn percent(share: f64) -> String {
    format!("{:.1}%", share * 100.0)
}

/// The table printed at the end of a profiled run; empty when the record has no profile.
pub fn table(record: &RunRecord) -> String {
    let Some(profile) = &record.profile else {
        return String::new();
    };
    let mut lines = vec![format!(
        "profile ({} inference(s), {} mode, microseconds, {} percentiles):",
        record.inferences, record.mode, profile.percentile_method
    )];
    lines.push(format!(
        "  {:<24} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>11} {:>9}",
        "", "count", "min", "p50", "p90", "p99", "max", "mean", "std dev"
    ));
    let row = |name: &str, stats: &Stats| {
        format!(
            "  {:<24} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>11.1} {:>9.1}",
            name, stats.count, stats.min, stats.p50, stats.p90, stats.p99, stats.max, stats.mean, stats.std_dev
        )
    };
    if let Some(stats) = &profile.dsp_execute_us {
        lines.push(row("DSP execute", stats));
    }
    if let Some(stats) = &profile.host_round_trip_us {
        lines.push(row("host round trip", stats));
    }
    if let Some(stats) = &profile.dsp_in_memory_us {
        lines.push(row("DSP in-memory span", stats));
    }
    if let Some(stats) = &profile.dsp_file_io_us {
        lines.push(row("DSP file I/O", stats));
    }
    if let Some(ipc) = &profile.ipc {
        lines.push(row("IPC (round trip - DSP)", &ipc.us));
        lines.push(format!("  IPC share of the round trips: {}", percent(ipc.share_of_round_trip)));
    }
    let mut load = format!("  load: {} us on the host", profile.load.host_us);
    if let Some(dsp) = profile.load.dsp_us {
        load += &format!(", {dsp} us on the DSP");
    }
    if let Some(finalize) = profile.load.dsp_finalize_us {
        load += &format!(" (graphFinalize {finalize} us)");
    }
    lines.push(load);
    if let Some(budget) = &profile.budget {
        lines.push(format!("  budget: {:.1} us a frame at {} fps", budget.budget_us, budget.fps));
        let fit = |name: &str, fit: &BudgetFit| {
            format!(
                "    {name}: {} over budget ({}), jitter {:.1} us ({} of the budget), worst headroom {:.1} us",
                fit.over_budget,
                percent(fit.over_budget_share),
                fit.jitter_us,
                percent(fit.jitter_share_of_budget),
                fit.worst_headroom_us
            )
        };
        if let Some(dsp) = &budget.dsp_execute {
            lines.push(fit("DSP execute", dsp));
        }
        if let Some(host) = &budget.host_round_trip {
            lines.push(fit("host round trip", host));
        }
    }
    lines.push(format!(
        "  {} QNN profile event(s); the whole profile is in {}, the Chrome trace in {}",
        profile.events.len(),
        crate::run_record::FILE_NAME,
        crate::trace::FILE_NAME
    ));
    lines.join("\n") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(mode: &'static str, dsp: &[u64], host: &[u64]) -> RunRecord {
        RunRecord {
            mode,
            transport: "local".into(),
            inferences: dsp.len(),
            dsp_execute_us: dsp.to_vec(),
            host_round_trip_us: host.to_vec(),
            load_us: 5000,
            ..RunRecord::default()
        }
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let hundred: Vec<i64> = (1..=100).collect();
        assert_eq!(nearest_rank(&hundred, 50), Some(50));
        assert_eq!(nearest_rank(&hundred, 90), Some(90));
        assert_eq!(nearest_rank(&hundred, 99), Some(99));
        assert_eq!(nearest_rank(&hundred, 100), Some(100));
        assert_eq!(nearest_rank(&hundred, 0), Some(1));
        // Ranks ⌈0.5·5⌉ = 3, ⌈0.9·5⌉ = 5, ⌈0.99·5⌉ = 5.
        let five = [10, 20, 30, 40, 50];
        assert_eq!([50, 90, 99].map(|p| nearest_rank(&five, p)), [Some(30), Some(50), Some(50)]);
        // Four values: the median is the second (rank 2), not an average of two.
        assert_eq!(nearest_rank(&[1, 2, 3, 4], 50), Some(2));
        assert_eq!(nearest_rank(&[7], 99), Some(7));
        assert_eq!(nearest_rank(&[], 50), None);
    }

    #[test]
    fn stats_sort_their_values_and_use_the_population_deviation() {
        let stats = Stats::of(&[40, 10, 30, 20]).unwrap();
        // The deviation is sqrt(125) = 11.1803..., rounded to thousandths.
        assert_eq!(stats, Stats { count: 4, min: 10, p50: 20, p90: 40, p99: 40, max: 40, mean: 25.0, std_dev: 11.18 });
        assert_eq!(Stats::of(&[2, 4, 4, 4, 5, 5, 7, 9]).unwrap().std_dev, 2.0);
        assert_eq!(Stats::of(&[]), None);
    }

    #[test]
    fn the_budget_counts_what_goes_over_and_measures_the_jitter() {
        // 100 fps: 10,000 us a frame.
        let record = record("traditional", &[9000, 11000, 10000, 8000], &[9500, 12000, 10400, 8100]);
        let budget = Budget::of(&record, Some(100)).unwrap();
        assert_eq!(budget.budget_us, 10000.0);
        let dsp = budget.dsp_execute.unwrap();
        // Only 11000 is over (10000 is on the budget, not over it).
        assert_eq!((dsp.over_budget, dsp.over_budget_share), (1, 0.25));
        // Mean 9500, deviations ±500 and ±1500: sqrt((0.25 + 2.25 + 0.25 + 2.25) / 4) * 1000 = 1118.034 us.
        assert_eq!(dsp.jitter_us, 1118.034);
        assert_eq!(dsp.jitter_share_of_budget, 0.111803);
        assert_eq!(dsp.worst_headroom_us, -1000.0);
        let host = budget.host_round_trip.unwrap();
        assert_eq!((host.over_budget, host.over_budget_share, host.worst_headroom_us), (2, 0.5, -2000.0));
        // 30 fps: a budget that is not a whole number of microseconds.
        assert_eq!(Budget::of(&record, Some(30)).unwrap().budget_us, 33333.333);
        assert_eq!(Budget::of(&record, None), None);
        assert_eq!(Budget::of(&record, Some(0)), None);
        let direct = Budget::of(&self::record("direct", &[100], &[]), Some(1)).unwrap();
        assert_eq!((direct.dsp_execute.map(|fit| fit.over_budget), direct.host_round_trip), (Some(0), None));
    }

    #[test]
    fn the_ipc_share_is_what_the_round_trips_spent_outside_the_dsp() {
        let record = record("traditional", &[100, 200, 300], &[150, 260, 290]);
        let ipc = Ipc::of(&record).unwrap();
        // The third inference's DSP time exceeds its round trip: the difference stays negative, not clamped.
        assert_eq!(ipc.per_inference_us, [50, 60, -10]);
        assert_eq!((ipc.us.min, ipc.us.p50, ipc.us.max, ipc.us.mean), (-10, 50, 60, 33.333));
        // (50 + 60 - 10) / (150 + 260 + 290) = 100 / 700.
        assert_eq!(ipc.share_of_round_trip, 0.142857);
        assert_eq!(Ipc::of(&self::record("direct", &[100, 200], &[])), None);
    }

    #[test]
    fn events_name_their_units_and_types() {
        let events = [
            ProfileEvent { event_type: 400, unit: 1, value: 812, depth: 0, identifier: "Execute".into() },
            ProfileEvent { event_type: 1000, unit: 3, value: 90000, depth: 1, identifier: "cycles".into() },
            ProfileEvent { event_type: 7, unit: 99, value: 1, depth: 1, identifier: "odd".into() },
        ];
        let profile = of(&record("direct", &[1], &[]), None, &events);
        let units: Vec<_> = profile.events.iter().map(|event| (event.unit, event.unit_code)).collect();
        assert_eq!(units, [("us", 1), ("cycles", 3), ("unknown", 99)]);
        let names: Vec<_> = profile.events.iter().map(|event| event.event_type_name).collect();
        assert_eq!(names, [Some("QNN_PROFILE_EVENTTYPE_EXECUTE"), Some("QNN_PROFILE_EVENTTYPE_BACKEND"), None]);
        assert_eq!(profile.events[1].depth, 1);
        assert_eq!([2, 4, 5, 6, 1000].map(unit_name), ["bytes", "count", "object", "none", "backend"]);
    }

    #[test]
    fn complete_adds_a_profile_that_serializes_without_the_absent_parts() {
        let mut record = record("direct", &[120, 100, 110], &[]);
        record.dsp_load_us = Some(4000);
        record.dsp_finalize_us = Some(1500);
        complete(&mut record, None, &[]);
        let profile = record.profile.as_ref().unwrap();
        assert_eq!(profile.dsp_execute_us.map(|stats| (stats.p50, stats.max)), Some((110, 120)));
        assert_eq!(profile.load, Load { host_us: 5000, dsp_us: Some(4000), dsp_finalize_us: Some(1500) });
        let json = serde_json::to_value(&record).unwrap();
        // (serde_json's map lists keys sorted.)
        let keys: Vec<&String> = json["profile"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["dsp_execute_us", "events", "load", "percentile_method"]);
        assert_eq!(json["profile"]["percentile_method"], "nearest-rank");
        // No profile asked for: no `profile` key at all.
        let plain = serde_json::to_value(self::record("direct", &[1], &[])).unwrap();
        assert!(plain.get("profile").is_none(), "{plain}");
    }

    #[test]
    fn the_table_shows_each_series_and_the_budget() {
        let mut record = record("traditional", &[9000, 11000, 10000, 8000], &[9500, 12000, 10400, 8100]);
        assert_eq!(table(&record), "");
        complete(&mut record, Some(100), &[]);
        let text = table(&record);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "profile (4 inference(s), traditional mode, microseconds, nearest-rank percentiles):");
        let dsp: Vec<&str> = lines[2].split_whitespace().collect();
        assert_eq!(dsp, ["DSP", "execute", "4", "8000", "9000", "11000", "11000", "11000", "9500.0", "1118.0"]);
        assert!(lines[3].starts_with("  host round trip "), "{text}");
        assert!(lines[4].starts_with("  IPC (round trip - DSP) "), "{text}");
        assert_eq!(lines[5], "  IPC share of the round trips: 5.0%");
        assert_eq!(lines[6], "  load: 5000 us on the host");
        assert_eq!(lines[7], "  budget: 10000.0 us a frame at 100 fps");
        assert_eq!(
            lines[8],
            "    DSP execute: 1 over budget (25.0%), jitter 1118.0 us (11.2% of the budget), worst headroom -1000.0 us"
        );
        assert!(lines[9].starts_with("    host round trip: 2 over budget (50.0%)"), "{text}");
        assert!(lines[10].contains("lpai_net_run.json") && lines[10].contains("profile.trace.json"), "{text}");
    }
}
