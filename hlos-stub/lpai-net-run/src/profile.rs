//! The profile of a run (`--profiling_level`, or the config file's `lpai_profile.level`): the `profile` object of
//! `lpai_net_run.json`, made from the record's own times and QNN's profile events (`lpai-net-run` prints it as a
//! table, [`crate::summary`]).
//!
//! Percentiles are nearest-rank: the p-th percentile of n sorted values is the value at rank ⌈p·n/100⌉ (1-based),
//! so it is always one of the measured values. Means and standard deviations are over the whole population
//! (divided by n) and rounded to a thousandth of a microsecond.

use crate::times::Times;
use lpai_direct::qnn::profile::{ProfileEventType, ProfileEventUnit};
use lpai_direct_stub::stub::ProfileEvent;
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
    /// The budget `fps` sets for a run's times; `None` for no fps or 0 fps.
    pub fn of(times: &Times, fps: Option<u32>) -> Option<Budget> {
        let fps = fps.filter(|&fps| fps > 0)?;
        let budget_us = 1_000_000.0 / f64::from(fps);
        Some(Budget {
            fps,
            budget_us: thousandths(budget_us),
            dsp_execute: BudgetFit::of(&times.dsp_execute_us, budget_us),
            host_round_trip: BudgetFit::of(&times.host_round_trip_us, budget_us),
        })
    }
}

impl Ipc {
    /// Each round trip minus the DSP execute time of the same inference; `None` when the run has no round trips
    /// (direct mode).
    pub fn of(times: &Times) -> Option<Ipc> {
        let pairs = times.host_round_trip_us.iter().zip(&times.dsp_execute_us);
        let per_inference_us: Vec<i64> = pairs
            .map(|(&round_trip, &dsp)| {
                let difference = i128::from(round_trip) - i128::from(dsp);
                i64::try_from(difference).unwrap_or(if difference < 0 { i64::MIN } else { i64::MAX })
            })
            .collect();
        let us = Stats::of(&per_inference_us)?;
        let round_trips: u128 =
            times.host_round_trip_us.iter().take(per_inference_us.len()).map(|&t| u128::from(t)).sum();
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

/// The profile of a run's `times` (as they stand), with the frame budget of `fps` and QNN's `events`.
pub fn of(times: &Times, fps: Option<u32>, events: &[ProfileEvent]) -> Profile {
    Profile {
        percentile_method: PERCENTILE_METHOD,
        dsp_execute_us: Stats::of(&signed(&times.dsp_execute_us)),
        host_round_trip_us: Stats::of(&signed(&times.host_round_trip_us)),
        dsp_in_memory_us: Stats::of(&signed(&times.dsp_in_memory_us)),
        dsp_file_io_us: Stats::of(&signed(&times.dsp_file_io_us)),
        ipc: Ipc::of(times),
        load: Load { host_us: times.load_us, dsp_us: times.dsp_load_us, dsp_finalize_us: times.dsp_finalize_us },
        budget: Budget::of(times, fps),
        events: events.iter().map(Event::of).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The times of a run with these DSP execute times and host round trips, and a 5 ms load.
    fn times(dsp: &[u64], host: &[u64]) -> Times {
        Times { dsp_execute_us: dsp.to_vec(), host_round_trip_us: host.to_vec(), load_us: 5000, ..Times::default() }
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
        let times = times(&[9000, 11000, 10000, 8000], &[9500, 12000, 10400, 8100]);
        let budget = Budget::of(&times, Some(100)).unwrap();
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
        assert_eq!(Budget::of(&times, Some(30)).unwrap().budget_us, 33333.333);
        assert_eq!(Budget::of(&times, None), None);
        assert_eq!(Budget::of(&times, Some(0)), None);
        let direct = Budget::of(&self::times(&[100], &[]), Some(1)).unwrap();
        assert_eq!((direct.dsp_execute.map(|fit| fit.over_budget), direct.host_round_trip), (Some(0), None));
    }

    #[test]
    fn the_ipc_share_is_what_the_round_trips_spent_outside_the_dsp() {
        let times = times(&[100, 200, 300], &[150, 260, 290]);
        let ipc = Ipc::of(&times).unwrap();
        // The third inference's DSP time exceeds its round trip: the difference stays negative, not clamped.
        assert_eq!(ipc.per_inference_us, [50, 60, -10]);
        assert_eq!((ipc.us.min, ipc.us.p50, ipc.us.max, ipc.us.mean), (-10, 50, 60, 33.333));
        // (50 + 60 - 10) / (150 + 260 + 290) = 100 / 700.
        assert_eq!(ipc.share_of_round_trip, 0.142857);
        assert_eq!(Ipc::of(&self::times(&[100, 200], &[])), None);
    }

    #[test]
    fn events_name_their_units_and_types() {
        let events = [
            ProfileEvent { event_type: 400, unit: 1, value: 812, depth: 0, identifier: "Execute".into() },
            ProfileEvent { event_type: 1000, unit: 3, value: 90000, depth: 1, identifier: "cycles".into() },
            ProfileEvent { event_type: 7, unit: 99, value: 1, depth: 1, identifier: "odd".into() },
        ];
        let profile = of(&times(&[1], &[]), None, &events);
        let units: Vec<_> = profile.events.iter().map(|event| (event.unit, event.unit_code)).collect();
        assert_eq!(units, [("us", 1), ("cycles", 3), ("unknown", 99)]);
        let names: Vec<_> = profile.events.iter().map(|event| event.event_type_name).collect();
        assert_eq!(names, [Some("QNN_PROFILE_EVENTTYPE_EXECUTE"), Some("QNN_PROFILE_EVENTTYPE_BACKEND"), None]);
        assert_eq!(profile.events[1].depth, 1);
        assert_eq!([2, 4, 5, 6, 1000].map(unit_name), ["bytes", "count", "object", "none", "backend"]);
    }
}
