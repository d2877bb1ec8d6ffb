//! Running the checked lists on the loaded context: each graph's performance set (when asked for), its inferences
//! in direct or traditional mode (over and over for `--duration`, the profile read after each call when the run
//! profiles), then the context unloaded.

use super::lists::Lists;
use super::open::Opened;
use super::plan::Plan;
use super::readouts::Readouts;
use super::{direct, traditional};
use crate::lpai_config::LpaiConfig;
use crate::net_run_config::NetRunConfig;
use crate::run_record::{Mode, RunRecord};
use crate::settings::{PerfProfile, Settings};
use crate::times::{monotonic_us, Times};
use anyhow::{anyhow, Result};
use lpai_direct::qnn::lpai;
use lpai_direct_stub::stub::{Stub, StubError, PRIORITY_UNCHANGED};
use std::time::Instant;

/// The skel's message for a failed call, prefixed with what was being done.
pub fn failed(what: String) -> impl FnOnce(StubError) -> anyhow::Error {
    move |error| anyhow!("{what}: {error}")
}

/// Runs every checked list on its graph of the loaded context (its performance set first, when asked for; the
/// profile read into the opened skel's readouts after each call when the run profiles), then unloads the context.
/// The times go into `record`.
pub fn run_lists(
    opened: &mut Opened,
    lists: &Lists,
    settings: &Settings,
    config: &NetRunConfig,
    record: &mut RunRecord,
) -> Result<()> {
    let Opened { stub, context, graphs, readouts, .. } = opened;
    let context = *context;
    for checked in &lists.graphs {
        let (graph_index, graph) = (checked.graph_index, &graphs[checked.graph_index]);
        let priority = config.graph(&graph.name).and_then(|setting| setting.priority);
        let performance = graph_performance(settings, &config.lpai);
        if performance.is_some() || priority.is_some() {
            let (perf, affinity) = performance.unwrap_or((lpai::PerfCfg::default(), lpai::CoreAffinity::DEFAULT));
            let what = format!("setting the performance of graph {}", graph.name);
            let priority = priority.unwrap_or(PRIORITY_UNCHANGED);
            stub.set_performance(context, graph_index as u32, perf, affinity, priority).map_err(failed(what))?;
        }
        let plan = Plan {
            context,
            graph_index,
            graph,
            list: &checked.list,
            kinds: &checked.kinds,
            result_subdir: lists.per_graph.then_some(graph.name.as_str()),
        };
        run_inferences(stub, &plan, settings, record.mode, &mut record.times, readouts)?;
    }
    stub.unload(context).map_err(failed("unloading the context".into()))?;
    Ok(())
}

/// The LPAI performance for a graph: `--perf_profile`'s ftrt_ratio and client type over the config file's, with the
/// config file's fps, affinity and core selection (or LPAI's defaults); `None` when neither asks for any.
fn graph_performance(settings: &Settings, lpai: &LpaiConfig) -> Option<(lpai::PerfCfg, lpai::CoreAffinity)> {
    let from_profile = settings.perf_profile.and_then(PerfProfile::lpai);
    if lpai.perf.is_none() && from_profile.is_none() {
        return None;
    }
    let mut perf = lpai.perf.unwrap_or_default();
    if let Some((ftrt_ratio, real_time)) = from_profile {
        perf.ftrt_ratio = ftrt_ratio;
        perf.client_type =
            if real_time { lpai::ClientPerfType::REAL_TIME } else { lpai::ClientPerfType::NON_REAL_TIME };
    }
    Some((perf, lpai.affinity.unwrap_or(lpai::CoreAffinity::DEFAULT)))
}

/// Runs one graph's inferences (directly on the skel or one call each); with `--duration`, over and over until
/// that many seconds have passed.
fn run_inferences(
    stub: &mut Stub,
    plan: &Plan<'_>,
    settings: &Settings,
    mode: Mode,
    times: &mut Times,
    readouts: &mut Readouts,
) -> Result<()> {
    let started = Instant::now();
    let mut first_result = 0;
    loop {
        let ran = match mode {
            Mode::Direct => {
                let keep = settings.keep_num_outputs;
                let started_us = monotonic_us();
                let ran = direct::run_job(stub, plan, &settings.output_dir, keep, first_result)?.add_to(times);
                let what = format_args!("the direct-mode job from inference {first_result}");
                readouts.read(stub, plan.context, what, (started_us, monotonic_us()));
                ran
            }
            Mode::Traditional => {
                let deadline = settings.duration.map(|seconds| (started, seconds));
                traditional::run_traditional(stub, plan, settings, first_result, deadline, times, readouts)?
            }
        };
        first_result += ran;
        let done = settings.duration.is_none_or(|seconds| started.elapsed().as_secs_f64() >= seconds);
        if done || ran == 0 {
            return Ok(());
        }
    }
}
