//! What `lpai-net-run` prints when a run ends: the inferences and their execute times, where the skel ran, the
//! memory, and for a profiled run QNN's profile events and the table of its times.

use crate::profile::{BudgetFit, Stats};
use crate::run_record::{self, RunRecord};
use crate::trace;
use lpai_direct_stub::stub::Named;
use std::path::Path;

/// The closing lines of a run that wrote its outputs to `output_dir`.
pub fn text(record: &RunRecord, output_dir: &Path) -> String {
    let times = &record.times.dsp_execute_us;
    let mean = times.iter().sum::<u64>() / times.len().max(1) as u64;
    let mut text = format!(
        "lpai-net-run: {} inference(s) of graph {} through the {} transport: execute mean {} us, min {} us, max {} us\n",
        times.len(),
        record.graph_names,
        record.transport.name(),
        mean,
        times.iter().min().unwrap_or(&0),
        times.iter().max().unwrap_or(&0)
    );
    if let Some(hidden) = record.times.dsp_file_io_hidden_us {
        let file_io: u64 = record.times.dsp_file_io_us.iter().sum();
        text += &format!("lpai-net-run: DSP file I/O {file_io} us, {hidden} us of it hidden behind execution\n");
    }
    text += &format!("lpai-net-run: the skel ran in {}\n", record.skel_place);
    text += &format!(
        "lpai-net-run: arena high-water mark {} of {} bytes; LPAI scratch {} B ({}), persistent {} B ({})\n",
        record.arena_high_water_bytes,
        record.arena_capacity_bytes,
        record.lpai_memory.scratch_bytes,
        record.lpai_memory.scratch_type.name().unwrap_or("?"),
        record.lpai_memory.persistent_bytes,
        record.lpai_memory.persistent_type.name().unwrap_or("?"),
    );
    for event in record.profile.iter().flat_map(|profile| &profile.events) {
        let indent = "  ".repeat(event.depth as usize + 1);
        text += &format!(
            "profile:{indent}{}: {} {} (event type {})\n",
            event.identifier, event.value, event.unit, event.event_type
        );
    }
    text += &table(record);
    text += &format!("lpai-net-run: outputs in {}\n", output_dir.display());
    text
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
        record.inferences,
        record.mode.name(),
        profile.percentile_method
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
        run_record::FILE_NAME,
        trace::FILE_NAME
    ));
    let files = &record.qnn_profile_files;
    let written: Vec<&str> = [&files.log, &files.csv].into_iter().flatten().map(String::as_str).collect();
    if !written.is_empty() {
        let kept = if files.index > 0 { " (the next free number: earlier runs' files are kept)" } else { "" };
        lines.push(format!("  for qnn-profile-viewer and ORT's tools: {}{kept}", written.join(", ")));
    }
    lines.join("\n") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile;
    use crate::run_record::Mode;
    use crate::times::Times;
    use lpai_direct_stub::stub::{ProfileEvent, TransportKind};

    /// The record of a traditional run with these DSP execute times and host round trips, and a 5 ms load.
    fn traditional(dsp: &[u64], host: &[u64]) -> RunRecord {
        let mut record = RunRecord::new(Mode::Traditional, TransportKind::Local);
        record.inferences = dsp.len();
        record.times = Times {
            dsp_execute_us: dsp.to_vec(),
            host_round_trip_us: host.to_vec(),
            load_us: 5000,
            ..Times::default()
        };
        record
    }

    #[test]
    fn the_table_shows_each_series_and_the_budget() {
        let mut record = traditional(&[9000, 11000, 10000, 8000], &[9500, 12000, 10400, 8100]);
        assert_eq!(table(&record), "");
        record.profile = Some(profile::of(&record.times, Some(100), &[]));
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
        assert_eq!(lines.len(), 11, "no QNN profile files written, no line for them: {text}");
        record.qnn_profile_files = crate::profile_files::Written {
            log: Some("qnn-profiling-data_1.log".into()),
            csv: Some("qnn-profiling-data_1.csv".into()),
            index: 1,
        };
        let text = table(&record);
        assert_eq!(
            text.lines().nth(11),
            Some(
                "  for qnn-profile-viewer and ORT's tools: qnn-profiling-data_1.log, qnn-profiling-data_1.csv (the next \
                 free number: earlier runs' files are kept)"
            )
        );
    }

    #[test]
    fn the_closing_lines_name_the_graph_the_transport_the_memory_and_each_profile_event() {
        let mut record = traditional(&[30, 10, 20], &[40, 20, 30]);
        (record.graph_names, record.skel_place) = ("kws".into(), "this process".into());
        (record.arena_high_water_bytes, record.arena_capacity_bytes) = (100, 400);
        (record.lpai_memory.scratch_bytes, record.lpai_memory.persistent_bytes) = (7, 9);
        record.lpai_memory.scratch_type = lpai_direct::qnn::lpai::MemType::TCM;
        let text = text(&record, Path::new("out"));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "lpai-net-run: 3 inference(s) of graph kws through the local transport: execute mean 20 us, min 10 us, \
                 max 30 us",
                "lpai-net-run: the skel ran in this process",
                "lpai-net-run: arena high-water mark 100 of 400 bytes; LPAI scratch 7 B (tcm), persistent 9 B (ddr)",
                "lpai-net-run: outputs in out",
            ]
        );
        let event = ProfileEvent { event_type: 400, unit: 1, value: 812, depth: 1, identifier: "Execute".into() };
        record.profile = Some(profile::of(&record.times, None, &[event]));
        let text = super::text(&record, Path::new("out"));
        assert_eq!(text.lines().nth(3), Some("profile:    Execute: 812 us (event type 400)"), "{text}");
        assert!(text.contains("\nprofile (3 inference(s), traditional mode"), "{text}");
    }

    #[test]
    fn a_direct_run_s_closing_lines_say_how_much_file_io_execution_hid() {
        let mut record = traditional(&[30, 10, 20], &[]);
        record.times.dsp_file_io_us = vec![5, 6, 7];
        record.times.dsp_file_io_hidden_us = Some(4);
        let text = text(&record, Path::new("out"));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], "lpai-net-run: DSP file I/O 18 us, 4 us of it hidden behind execution", "{text}");
        record.times.dsp_file_io_hidden_us = None;
        assert!(!super::text(&record, Path::new("out")).contains("hidden"));
    }
}
