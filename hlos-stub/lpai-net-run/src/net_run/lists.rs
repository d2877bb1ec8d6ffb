//! The input lists of a run: one per graph that runs (`--graph_name`'s, the first, or one each from qnn-net-run's
//! comma-separated lists), each read and checked against its graph before the first inference runs.

use crate::file_kinds::{self, FileKinds, FileSettings, NativeInputName};
use crate::graph_io;
use crate::input_list::{self, InputList};
use crate::net_run_config::NetRunConfig;
use crate::settings::Settings;
use anyhow::{bail, Context as _, Result};
use lpai_direct_stub::stub::GraphDescription;
use std::path::PathBuf;

/// One graph's checked list.
pub struct GraphList {
    /// The graph's index in the context.
    pub graph_index: usize,
    /// Its list, checked (and cycled to `--num_inferences`).
    pub list: InputList,
    /// How each of its input and output files is kept.
    pub kinds: FileKinds,
}

/// The checked lists of a run.
pub struct Lists {
    /// One per graph that runs, in graph order.
    pub graphs: Vec<GraphList>,
    /// Whether the lists were given per graph (results then go to `Result_<i>/<graph>/`).
    pub per_graph: bool,
}

/// Reads every list the settings give and checks it against its graph of `graphs`: the native inputs named, the
/// entries, the files and their sizes.
pub fn check(
    settings: &Settings,
    graphs: &[GraphDescription],
    config: &NetRunConfig,
    native_inputs: &[NativeInputName],
) -> Result<Lists> {
    let (lists, per_graph) = graph_lists(settings, graphs, config)?;
    let running: Vec<&GraphDescription> = lists.iter().map(|(index, _)| &graphs[*index]).collect();
    if let Some(message) = file_kinds::unknown_native_inputs(native_inputs, &running) {
        bail!(message);
    }
    let file_settings = FileSettings {
        all_inputs_native: settings.use_native_input_files,
        native_inputs,
        output_data_type: settings.output_data_type,
    };
    let mut checked = Vec::new();
    for (graph_index, list_path) in lists {
        let graph = &graphs[graph_index];
        let all_outputs: Vec<usize> = (0..graph.outputs.len()).collect();
        let float_inputs = FileKinds::new(graph, &file_settings, &all_outputs)?.float_inputs;
        let output_names: Vec<&str> = graph.outputs.iter().map(|tensor| tensor.name.as_str()).collect();
        let expected = graph_io::expected_inputs(graph, &float_inputs);
        let mut list = input_list::read(&list_path, &expected, &output_names)?;
        if let Some(count) = settings.num_inferences {
            // qnn-net-run's --num_inferences: the list's lines over and over.
            list.lines = list.lines.iter().cycle().take(count).cloned().collect();
        }
        let kinds = FileKinds::new(graph, &file_settings, &list.outputs)?;
        checked.push(GraphList { graph_index, list, kinds });
    }
    Ok(Lists { graphs: checked, per_graph })
}

/// The input lists of a run: one for the graph chosen (`--graph_name`, else the first), or qnn-net-run's
/// comma-separated list with one entry per graph of the binary, `__` skipping a graph. Answers (graph index, list)
/// pairs in graph order, and whether the lists were given per graph (results then go to `Result_<i>/<graph>/`). A
/// path that exists as it is counts as one list even if it holds a comma.
fn graph_lists(
    settings: &Settings,
    graphs: &[GraphDescription],
    config: &NetRunConfig,
) -> Result<(Vec<(usize, PathBuf)>, bool)> {
    let names: Vec<&str> = graphs.iter().map(|graph| graph.name.as_str()).collect();
    let given = settings.input_list.to_string_lossy().into_owned();
    let entries: Vec<&str> =
        if settings.input_list.exists() { vec![given.as_str()] } else { given.split(',').collect() };
    let chosen: Vec<(usize, PathBuf)> = if entries.len() == 1 {
        let index = match &settings.graph_name {
            Some(name) => names
                .iter()
                .position(|graph| graph == name)
                .with_context(|| format!("the context has no graph '{name}' (graphs: {})", names.join(", ")))?,
            None => 0,
        };
        if index >= graphs.len() {
            bail!("the context binary holds no graph");
        }
        vec![(index, settings.input_list.clone())]
    } else {
        if settings.graph_name.is_some() {
            bail!("--graph_name picks one graph, but --input_list gives {} lists (one per graph)", entries.len());
        }
        if entries.len() != graphs.len() {
            bail!(
                "--input_list gives {} comma-separated lists, but the context has {} graphs ({}); give one list per \
                 graph, `__` for a graph to skip",
                entries.len(),
                graphs.len(),
                names.join(", ")
            );
        }
        entries
            .iter()
            .enumerate()
            .filter(|(_, entry)| entry.trim() != "__")
            .map(|(index, entry)| (index, PathBuf::from(entry.trim())))
            .collect()
    };
    if chosen.is_empty() {
        bail!("--input_list skips every graph (`__` for each)");
    }
    for (index, _) in &chosen {
        if !config.enabled(names[*index]) {
            bail!(
                "graph {} is not in the config file's context_configs.enable_graphs; leave it out (`__` in \
                 --input_list, or another --graph_name)",
                names[*index]
            );
        }
    }
    Ok((chosen, entries.len() > 1))
}
