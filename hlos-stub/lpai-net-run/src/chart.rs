//! `lpai-net-run chart DIR`: the latency distributions of the runs recorded under DIR, drawn as `DIR/latency.svg`
//! (a hand-written SVG, written whole or not at all).
//!
//! The records drawn: `DIR/lpai_net_run.json` when there is one, and the `lpai_net_run.json` of each immediate
//! subdirectory of DIR that has one, in name order; so DIR is one run's output directory, or a directory holding
//! several (say a direct and a traditional run of one model). Each record gives a line for its DSP execute times
//! and, in traditional mode, a dashed one for its host round trips: the share of inferences that took at most each
//! latency (an empirical CDF, so a percentile is where a line crosses its level: the dotted p50, p90 and p99 lines).
//! Each line is labelled with its run's mode and transport, and with the directory it came from (`.` for DIR) when
//! another record drawn has the same mode and transport. The legend gives each line's nearest-rank percentiles. A
//! record's frame budget (its `profile.budget`, when the run profiled with an fps) is a vertical line, the axis
//! stretched to reach it when it is at most twice the longest time; a budget farther off is named in the legend.

use crate::profile::Stats;
use crate::run_record;
use crate::whole;
use anyhow::{bail, Context, Result};
use serde::Deserialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The chart's file name in DIR.
pub const FILE_NAME: &str = "latency.svg";

/// What the chart reads of a record (the other fields are ignored).
#[derive(Debug, Deserialize)]
struct RecordTimes {
    mode: String,
    transport: String,
    dsp_execute_us: Vec<u64>,
    host_round_trip_us: Vec<u64>,
    #[serde(default)]
    profile: Option<RecordProfile>,
}

#[derive(Debug, Deserialize)]
struct RecordProfile {
    #[serde(default)]
    budget: Option<RecordBudget>,
}

#[derive(Debug, Deserialize)]
struct RecordBudget {
    fps: u32,
    budget_us: f64,
}

/// One line of the chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// What it shows (`direct, local: DSP execute`, ...).
    pub label: String,
    /// Its times in microseconds, ascending.
    pub sorted_us: Vec<u64>,
    /// Host round trips are drawn dashed, DSP execute times solid.
    pub round_trip: bool,
}

/// What the chart draws.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Chart {
    /// The lines, in the order of the records and DSP before host within one.
    pub series: Vec<Series>,
    /// The records' frame budgets (fps, microseconds), each once.
    pub budgets: Vec<(u32, f64)>,
}

/// The records under `dir` that the chart draws (see the module documentation), with the name each is labelled
/// by (`.` for DIR's own).
pub fn records_in(dir: &Path) -> Result<Vec<(String, PathBuf)>> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("cannot read directory {}", dir.display()))?;
    let mut found = Vec::new();
    let own = dir.join(run_record::FILE_NAME);
    if own.is_file() {
        found.push((".".to_string(), own));
    }
    let mut below = Vec::new();
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot read directory {}", dir.display()))?;
        let record = entry.path().join(run_record::FILE_NAME);
        if entry.path().is_dir() && record.is_file() {
            below.push((entry.file_name().to_string_lossy().into_owned(), record));
        }
    }
    below.sort();
    found.extend(below);
    if found.is_empty() {
        bail!(
            "no {} in {} or in its subdirectories: chart a run's output directory (--output_dir), or a directory \
             holding several",
            run_record::FILE_NAME,
            dir.display()
        );
    }
    Ok(found)
}

/// The chart of the records under `dir`.
pub fn read(dir: &Path) -> Result<Chart> {
    let records = records_in(dir)?;
    let mut read = Vec::new();
    for (name, path) in &records {
        let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        let times: RecordTimes = serde_json::from_slice(&bytes)
            .with_context(|| format!("{} is not an lpai-net-run record", path.display()))?;
        read.push((name, times));
    }
    let runs: Vec<String> = read.iter().map(|(_, times)| format!("{}, {}", times.mode, times.transport)).collect();
    let mut chart = Chart::default();
    for ((name, times), run) in read.into_iter().zip(&runs) {
        let shared = runs.iter().filter(|other| *other == run).count() > 1;
        let run = if shared { format!("{name} ({run})") } else { run.clone() };
        for (what, times, round_trip) in
            [("DSP execute", times.dsp_execute_us, false), ("host round trip", times.host_round_trip_us, true)]
        {
            if times.is_empty() {
                continue;
            }
            let mut sorted_us = times;
            sorted_us.sort_unstable();
            chart.series.push(Series { label: format!("{run}: {what}"), sorted_us, round_trip });
        }
        let budget = times.profile.and_then(|profile| profile.budget);
        if let Some(budget) = budget.filter(|budget| budget.budget_us.is_finite() && budget.budget_us > 0.0) {
            if !chart.budgets.contains(&(budget.fps, budget.budget_us)) {
                chart.budgets.push((budget.fps, budget.budget_us));
            }
        }
    }
    if chart.series.is_empty() {
        let names: Vec<String> = records.iter().map(|(_, path)| path.display().to_string()).collect();
        bail!("{} hold(s) no inference times to chart", names.join(", "));
    }
    Ok(chart)
}

/// Reads the records under `dir` and writes `dir/latency.svg`; answers its path.
pub fn render(dir: &Path) -> Result<PathBuf> {
    let chart = read(dir)?;
    let path = dir.join(FILE_NAME);
    whole::write(&path, svg(&chart).as_bytes())?;
    Ok(path)
}

/// `text` with XML's special characters escaped, for element text and attribute values.
pub fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&apos;"),
            other => escaped.push(other),
        }
    }
    escaped
}

/// A round tick step near `raw`: 1, 2 or 5 times a power of ten.
pub fn tick_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let magnitude = 10f64.powi(raw.log10().floor() as i32);
    let mantissa = raw / magnitude;
    let round = if mantissa <= 1.0 {
        1.0
    } else if mantissa <= 2.0 {
        2.0
    } else if mantissa <= 5.0 {
        5.0
    } else {
        10.0
    };
    round * magnitude
}

/// Colours of the lines, in turn.
const COLOURS: [&str; 8] = ["#1f6fb4", "#d2452f", "#2f9e44", "#e8890c", "#7048b0", "#8a5a44", "#c2409a", "#1598a8"];

const WIDTH: f64 = 860.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = WIDTH - 40.0;
const TOP: f64 = 60.0;
const BOTTOM: f64 = 380.0;
const LEGEND_TOP: f64 = 450.0;
const LEGEND_LINE: f64 = 20.0;

/// Formats a number of microseconds without a needless fraction.
fn micros(value: f64) -> String {
    if value.fract() == 0.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.1}")
    }
}

/// The SVG text of `chart`.
pub fn svg(chart: &Chart) -> String {
    let longest = chart.series.iter().filter_map(|series| series.sorted_us.last()).max().copied().unwrap_or(0) as f64;
    let near_budgets = chart.budgets.iter().map(|(_, us)| *us).filter(|us| *us <= 2.0 * longest);
    let axis_end = near_budgets.fold(longest, f64::max);
    let step = tick_step(axis_end / 8.0);
    let x_max = ((axis_end / step).ceil() * step).max(step);
    let x = |us: f64| LEFT + us / x_max * (RIGHT - LEFT);
    let y = |share: f64| BOTTOM - share * (BOTTOM - TOP);
    let budgets_off_axis: Vec<&(u32, f64)> = chart.budgets.iter().filter(|(_, us)| *us > x_max).collect();
    let legend_lines = chart.series.len() + budgets_off_axis.len();
    let height = LEGEND_TOP + LEGEND_LINE * legend_lines as f64 + 20.0;

    let mut out = String::new();
    // Writing to a String cannot fail; the results are ignored below for that reason.
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} \
         {height}\" font-family=\"sans-serif\" font-size=\"12\">"
    );
    let _ = writeln!(out, "<title>lpai-net-run latency distribution</title>");
    let _ = writeln!(out, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>");
    let _ = writeln!(
        out,
        "<text x=\"{LEFT}\" y=\"28\" font-size=\"16\">Latency distribution: share of inferences that took at most \
         each latency</text>"
    );
    let _ = writeln!(
        out,
        "<text x=\"{LEFT}\" y=\"46\" fill=\"#555\">solid: DSP execute (DSP clock); dashed: host round trip; \
         percentiles are nearest-rank</text>"
    );
    // Axes, grid and ticks.
    let _ = writeln!(out, "<g class=\"axes\" stroke=\"#999\" stroke-width=\"1\">");
    let _ = writeln!(out, "<line x1=\"{LEFT}\" y1=\"{BOTTOM}\" x2=\"{RIGHT}\" y2=\"{BOTTOM}\"/>");
    let _ = writeln!(out, "<line x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{BOTTOM}\"/>");
    let _ = writeln!(out, "</g>");
    let ticks = (x_max / step).round() as usize;
    for tick in 0..=ticks {
        let value = tick as f64 * step;
        let at = x(value);
        let _ = writeln!(out, "<line x1=\"{at:.1}\" y1=\"{TOP}\" x2=\"{at:.1}\" y2=\"{BOTTOM}\" stroke=\"#eee\"/>");
        let _ = writeln!(
            out,
            "<text x=\"{at:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            BOTTOM + 16.0,
            micros(value)
        );
    }
    let _ = writeln!(
        out,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">latency (microseconds)</text>",
        (LEFT + RIGHT) / 2.0,
        BOTTOM + 36.0
    );
    for quarter in 0..=4 {
        let share = f64::from(quarter) / 4.0;
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}%</text>",
            LEFT - 6.0,
            y(share) + 4.0,
            quarter * 25
        );
    }
    let _ = writeln!(
        out,
        "<text transform=\"translate(24 {:.1}) rotate(-90)\" text-anchor=\"middle\">share of inferences</text>",
        (TOP + BOTTOM) / 2.0
    );
    for (percent, label) in [(0.5, "p50"), (0.9, "p90"), (0.99, "p99")] {
        let at = y(percent);
        let _ = writeln!(
            out,
            "<line class=\"percentile\" x1=\"{LEFT}\" y1=\"{at:.1}\" x2=\"{RIGHT}\" y2=\"{at:.1}\" stroke=\"#bbb\" \
             stroke-dasharray=\"2 3\"/>"
        );
        let _ = writeln!(out, "<text x=\"{}\" y=\"{:.1}\" fill=\"#777\">{label}</text>", RIGHT + 4.0, at + 4.0);
    }
    for (fps, us) in chart.budgets.iter().filter(|(_, us)| *us <= x_max) {
        let at = x(*us);
        let _ = writeln!(
            out,
            "<line class=\"budget\" x1=\"{at:.1}\" y1=\"{TOP}\" x2=\"{at:.1}\" y2=\"{BOTTOM}\" stroke=\"#000\" \
             stroke-dasharray=\"8 4\"/>"
        );
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"end\">budget {} us ({fps} fps)</text>",
            at - 4.0,
            TOP + 12.0,
            micros(*us)
        );
    }
    // The lines: a step up by 1/n at each sorted time.
    for (index, series) in chart.series.iter().enumerate() {
        let colour = COLOURS[index % COLOURS.len()];
        let count = series.sorted_us.len() as f64;
        let mut path = String::new();
        for (rank, &us) in series.sorted_us.iter().enumerate() {
            let at = x(us as f64);
            if rank == 0 {
                let _ = write!(path, "M{at:.2} {:.2}", y(0.0));
            } else {
                let _ = write!(path, " H{at:.2}");
            }
            let _ = write!(path, " V{:.2}", y((rank + 1) as f64 / count));
        }
        let dash = if series.round_trip { " stroke-dasharray=\"6 3\"" } else { "" };
        let _ = writeln!(
            out,
            "<path class=\"series\" d=\"{path}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\"{dash}>\
             <title>{}</title></path>",
            escape(&series.label)
        );
    }
    // The legend, with each line's percentiles.
    for (index, series) in chart.series.iter().enumerate() {
        let colour = COLOURS[index % COLOURS.len()];
        let top = LEGEND_TOP + LEGEND_LINE * index as f64;
        let dash = if series.round_trip { " stroke-dasharray=\"6 3\"" } else { "" };
        let _ = writeln!(
            out,
            "<line x1=\"{LEFT}\" y1=\"{:.1}\" x2=\"{}\" y2=\"{:.1}\" stroke=\"{colour}\" stroke-width=\"2\"{dash}/>",
            top - 4.0,
            LEFT + 28.0,
            top - 4.0
        );
        let signed: Vec<i64> = series.sorted_us.iter().map(|&us| i64::try_from(us).unwrap_or(i64::MAX)).collect();
        let figures = match Stats::of(&signed) {
            Some(stats) => format!(
                "n {}, p50 {}, p90 {}, p99 {}, max {} us",
                stats.count, stats.p50, stats.p90, stats.p99, stats.max
            ),
            None => "no times".to_string(),
        };
        let _ = writeln!(
            out,
            "<text class=\"legend\" x=\"{}\" y=\"{top:.1}\">{}: {figures}</text>",
            LEFT + 36.0,
            escape(&series.label)
        );
    }
    for (index, (fps, us)) in budgets_off_axis.iter().enumerate() {
        let top = LEGEND_TOP + LEGEND_LINE * (chart.series.len() + index) as f64;
        let _ = writeln!(
            out,
            "<text class=\"legend-budget\" x=\"{}\" y=\"{top:.1}\">budget {} us ({fps} fps): beyond the axis, \
             every time is within it</text>",
            LEFT + 36.0,
            micros(*us)
        );
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_record(dir: &Path, text: &str) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join(run_record::FILE_NAME), text).unwrap();
    }

    fn record(mode: &str, dsp: &[u64], host: &[u64]) -> String {
        serde_json::json!({"mode": mode, "transport": "local", "dsp_execute_us": dsp, "host_round_trip_us": host})
            .to_string()
    }

    #[test]
    fn text_is_escaped_for_xml() {
        assert_eq!(escape(r#"a<b & "c" 'd'>"#), "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;");
        assert_eq!(escape("plain"), "plain");
    }

    #[test]
    fn ticks_are_one_two_or_five_times_a_power_of_ten() {
        assert_eq!(
            [0.7, 1.0, 1.5, 3.0, 7.0, 24.0, 180.0, 4100.0].map(tick_step),
            [1.0, 1.0, 2.0, 5.0, 10.0, 50.0, 200.0, 5000.0]
        );
        assert_eq!(tick_step(0.0), 1.0);
    }

    #[test]
    fn the_directory_or_its_subdirectories_hold_the_records_drawn() {
        let dir = tempfile::tempdir().unwrap();
        // One run's output directory.
        write_record(dir.path(), &record("direct", &[30, 10, 20], &[]));
        let chart = read(dir.path()).unwrap();
        let expected =
            Series { label: "direct, local: DSP execute".into(), sorted_us: vec![10, 20, 30], round_trip: false };
        assert_eq!(chart.series, [expected]);
        // A directory holding several runs: each is labelled with its directory; files there are not runs.
        let both = dir.path().join("both");
        write_record(&both.join("traditional"), &record("traditional", &[11, 12], &[21, 19]));
        write_record(&both.join("direct"), &record("direct", &[9], &[]));
        std::fs::write(both.join("notes.txt"), "not a run").unwrap();
        std::fs::create_dir_all(both.join("empty")).unwrap();
        let labels: Vec<String> = read(&both).unwrap().series.into_iter().map(|series| series.label).collect();
        let expected =
            ["direct, local: DSP execute", "traditional, local: DSP execute", "traditional, local: host round trip"];
        assert_eq!(labels, expected);
        // Two runs of the same mode and transport are told apart by their directories.
        write_record(&both.join("direct-again"), &record("direct", &[8], &[]));
        let labels: Vec<String> = read(&both).unwrap().series.into_iter().map(|series| series.label).collect();
        assert_eq!(labels[..2], ["direct (direct, local): DSP execute", "direct-again (direct, local): DSP execute"]);
        assert_eq!(labels[2], "traditional, local: DSP execute");
        let svg = svg(&read(&both).unwrap());
        assert_eq!(svg.matches("<path class=\"series\"").count(), 4);
        assert_eq!(svg.matches("stroke-dasharray=\"6 3\"").count(), 2, "the round trip's line and legend entry");
    }

    #[test]
    fn missing_and_malformed_records_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let message = format!("{:#}", read(dir.path()).unwrap_err());
        assert!(message.starts_with("no lpai_net_run.json in ") && message.contains(&dir.path().display().to_string()));
        let message = format!("{:#}", read(&dir.path().join("absent")).unwrap_err());
        assert!(message.contains("cannot read directory") && message.contains("absent"), "{message}");
        write_record(&dir.path().join("run"), "{\"mode\": \"direct\"");
        let message = format!("{:#}", render(dir.path()).unwrap_err());
        assert!(message.contains("run/lpai_net_run.json is not an lpai-net-run record"), "{message}");
        assert!(!dir.path().join(FILE_NAME).exists());
        write_record(&dir.path().join("run"), &record("direct", &[], &[]));
        let message = format!("{:#}", render(dir.path()).unwrap_err());
        assert!(message.contains("run/lpai_net_run.json hold(s) no inference times"), "{message}");
    }

    #[test]
    fn each_line_steps_up_at_each_time_and_the_budget_is_drawn_on_the_axis() {
        let mut chart = Chart {
            series: vec![Series { label: "a<b".into(), sorted_us: vec![100, 200], round_trip: false }],
            budgets: vec![(5000, 200.0), (1, 1_000_000.0)],
        };
        let text = svg(&chart);
        // Axis 0..200 us over x 80..820; shares 0, 0.5, 1 over y 380, 220, 60.
        assert!(text.contains("d=\"M450.00 380.00 V220.00 H820.00 V60.00\""), "{text}");
        assert!(text.contains("<title>a&lt;b</title>"), "{text}");
        assert!(text.contains("a&lt;b: n 2, p50 100, p90 200, p99 200, max 200 us"), "{text}");
        assert_eq!(text.matches("class=\"budget\"").count(), 1);
        assert!(text.contains("budget 200 us (5000 fps)</text>"), "{text}");
        assert!(text.contains("budget 1000000 us (1 fps): beyond the axis, every time is within it"), "{text}");
        // A budget up to twice the longest time stretches the axis: 0..400 us now.
        chart.budgets = vec![(2500, 400.0)];
        let text = svg(&chart);
        assert!(text.contains("d=\"M265.00 380.00 V220.00 H450.00 V60.00\""), "{text}");
        assert!(text.contains("<line class=\"budget\" x1=\"820.0\""), "{text}");
    }

    #[test]
    fn render_writes_the_svg_beside_the_record() {
        let dir = tempfile::tempdir().unwrap();
        let mut with_budget: serde_json::Value =
            serde_json::from_str(&record("traditional", &[5, 7], &[9, 8])).unwrap();
        with_budget["profile"] = serde_json::json!({"budget": {"fps": 100000, "budget_us": 10.0}});
        write_record(dir.path(), &with_budget.to_string());
        let path = render(dir.path()).unwrap();
        assert_eq!(path, dir.path().join("latency.svg"));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\"") && text.ends_with("</svg>\n"));
        assert!(text.contains("budget 10 us (100000 fps)"), "{text}");
    }
}
