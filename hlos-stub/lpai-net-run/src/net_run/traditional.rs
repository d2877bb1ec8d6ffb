//! The traditional path: one `execute` call per inference, its inputs read and its results written here.

use super::plan::Plan;
use super::readouts::Readouts;
use crate::file_kinds;
use crate::graph_io;
use crate::output;
use crate::settings::Settings;
use crate::times::{monotonic_us, Times};
use crate::whole;
use anyhow::{anyhow, bail, Context as _, Result};
use lpai_direct_stub::stub::{first_contact, flags, Stub};
use std::path::Path;
use std::time::Instant;

/// Reads one input file into its place in the inputs buffer; the file must still have the size the list check
/// saw.
fn read_input(file: &Path, destination: &mut [u8]) -> Result<()> {
    let bytes = std::fs::read(file).with_context(|| format!("cannot read input file {}", file.display()))?;
    if bytes.len() != destination.len() {
        bail!(
            "input file {} now has {} bytes, expected {}: it changed after the input list was checked",
            file.display(),
            bytes.len(),
            destination.len()
        );
    }
    destination.copy_from_slice(&bytes);
    Ok(())
}

/// The traditional loop: one `execute` call per inference, inputs read and results written here; results are
/// numbered from `first_result`, and the profile read after each (once its results are written: a failed read
/// loses nothing) when the run profiles. With a deadline (start, seconds) it stops after the inference that reaches
/// it. Answers how many inferences ran.
pub fn run_traditional(
    stub: &mut Stub,
    plan: &Plan<'_>,
    settings: &Settings,
    first_result: usize,
    deadline: Option<(Instant, f64)>,
    times: &mut Times,
    readouts: &mut Readouts,
) -> Result<usize> {
    let Plan { context, graph_index, graph, list, kinds, .. } = *plan;
    let execute_flags = kinds.execute_flags();
    let (float_in, float_out) = (execute_flags & flags::FLOAT_INPUTS != 0, execute_flags & flags::FLOAT_OUTPUTS != 0);
    let input_sizes = graph_io::wire_sizes(&graph.inputs, float_in);
    let output_sizes = graph_io::wire_sizes(&graph.outputs, float_out);
    let offsets = |sizes: &[usize]| -> Vec<usize> {
        sizes.iter().scan(0, |at, size| Some(std::mem::replace(at, *at + size))).collect()
    };
    let (input_offsets, output_offsets) = (offsets(&input_sizes), offsets(&output_sizes));
    let mut inputs = stub.transport().buffer(input_sizes.iter().sum());
    let mut outputs = stub.transport().buffer(output_sizes.iter().sum());
    let progress = match deadline {
        Some(_) => indicatif::ProgressBar::new_spinner(),
        None => indicatif::ProgressBar::new(list.lines.len() as u64),
    };
    let mut ran = 0;
    for (position, line) in list.lines.iter().enumerate() {
        for (index, file) in line.files.iter().enumerate() {
            let slot = &mut inputs[input_offsets[index]..input_offsets[index] + input_sizes[index]];
            if float_in || !kinds.float_inputs[index] {
                read_input(file, slot)?;
            } else {
                // A float file for a tensor that travels native: converted here, as the skel would.
                let tensor = &graph.inputs[index];
                let mut float_bytes = vec![0u8; graph_io::wire_bytes(true, tensor)];
                read_input(file, &mut float_bytes)?;
                file_kinds::quantize_input(tensor, &float_bytes, slot)
                    .with_context(|| format!("input list line {}", line.number))?;
            }
        }
        let started = Instant::now();
        let started_us = monotonic_us();
        let executed = match stub.execute(context, graph_index as u32, execute_flags, &inputs, &mut outputs) {
            Ok(executed) => executed,
            Err(error) if error.code().is_some_and(first_contact::is_pd_restart) => {
                let during = first_result + position;
                let kept = settings.keep_num_outputs.map_or(during, |keep| keep.clamp(first_result, during));
                bail!(
                    "{} (input list line {}; {error})",
                    first_contact::pd_restarted(first_result..kept, Some(during), "written here"),
                    line.number
                )
            }
            Err(error) => return Err(anyhow!("input list line {}: {error}", line.number)),
        };
        times.host_round_trip_us.push(started.elapsed().as_micros() as u64);
        times.dsp_execute_us.push(graph.micros(executed.dsp_ticks));
        let stopped_us = monotonic_us();
        progress.inc(1);
        ran += 1;
        let result_index = first_result + position;
        if !settings.keep_num_outputs.is_some_and(|keep| result_index >= keep) {
            let directory = plan.result_directory(&settings.output_dir, result_index);
            output::create_directory(&directory)?;
            for file in &kinds.outputs {
                let index = file.index as usize;
                let slot = &outputs[output_offsets[index]..output_offsets[index] + output_sizes[index]];
                let path = directory.join(&file.file_name);
                if float_out || !file.float {
                    whole::write(&path, slot)?;
                } else {
                    let bytes = file_kinds::output_file_bytes(&graph.outputs[index], file, slot)?;
                    whole::write(&path, &bytes)?;
                }
            }
        }
        readouts.read(stub, context, format_args!("inference {result_index}"), (started_us, stopped_us));
        if deadline.is_some_and(|(start, seconds)| start.elapsed().as_secs_f64() >= seconds) {
            break;
        }
    }
    progress.finish_and_clear();
    Ok(ran)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_input_file_that_changed_size_is_named_instead_of_panicking() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("grown.raw");
        std::fs::write(&file, [1u8; 6]).unwrap();
        let mut destination = [0u8; 4];
        let message = read_input(&file, &mut destination).unwrap_err().to_string();
        assert!(message.contains("grown.raw") && message.contains("6 bytes, expected 4"), "{message}");
        std::fs::write(&file, [7u8; 4]).unwrap();
        read_input(&file, &mut destination).unwrap();
        assert_eq!(destination, [7; 4]);
    }
}
