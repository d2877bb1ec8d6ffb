//! Which files of a run hold float32 and which the tensors' native bytes, per tensor: qnn-net-run's
//! `--use_native_input_files`, `--native_input_tensor_names`, `--use_native_output_files` and `--output_data_type`.
//!
//! When one `execute` call cannot carry the mix (some inputs float and some native, or outputs wanted both ways),
//! the HLOS side sends and receives native bytes and converts the float files itself with the shared core's
//! [`lpai_direct::quantize`], the very code the skel converts with, so the files are the same either way.

use crate::output;
use anyhow::{bail, Result};
use lpai_direct::job::OutputFile;
use lpai_direct::qnn::{DataType, ScaleOffset};
use lpai_direct::quantize::{self, Encoding};
use lpai_direct::wire::{EXECUTE_FLOAT_INPUTS, EXECUTE_FLOAT_OUTPUTS};
use lpai_direct_stub::stub::{GraphDescription, TensorDescription};

/// qnn-net-run's `--output_data_type`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OutputDataType {
    /// Every output as float32, in `<name>.raw`.
    #[default]
    FloatOnly,
    /// Every output in its native type, in `<name>.raw`.
    NativeOnly,
    /// Float32 in `<name>.raw` and native in `<name>_native.raw`; a float32 tensor is written once, as `<name>.raw`.
    FloatAndNative,
}

/// One entry of `--native_input_tensor_names`: a tensor, for one graph or for every graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NativeInputName {
    /// The graph it applies to (`None`: every graph).
    pub graph: Option<String>,
    /// The input tensor's name.
    pub tensor: String,
}

/// Parses `--native_input_tensor_names`: comma-separated tensor names, or `graph:t1,t2` groups separated by `;`
/// (a group without `graph:` applies to every graph).
pub fn parse_native_input_names(text: &str) -> Result<Vec<NativeInputName>> {
    let mut names = Vec::new();
    for group in text.split(';').filter(|group| !group.trim().is_empty()) {
        let (graph, tensors) = match group.split_once(':') {
            Some((graph, tensors)) => (Some(graph.trim().to_string()), tensors),
            None => (None, group),
        };
        if graph.as_deref() == Some("") {
            bail!("--native_input_tensor_names: `{group}` has an empty graph name before `:`");
        }
        for tensor in tensors.split(',').map(str::trim) {
            if tensor.is_empty() {
                bail!("--native_input_tensor_names: `{group}` has an empty tensor name");
            }
            names.push(NativeInputName { graph: graph.clone(), tensor: tensor.to_string() });
        }
    }
    if names.is_empty() {
        bail!("--native_input_tensor_names names no tensor");
    }
    Ok(names)
}

/// The names of `--native_input_tensor_names` that match no input of the graphs that run, if any, as one message.
pub fn unknown_native_inputs(names: &[NativeInputName], graphs: &[&GraphDescription]) -> Option<String> {
    let unknown: Vec<String> = names
        .iter()
        .filter(|name| {
            !graphs.iter().any(|graph| {
                name.graph.as_ref().is_none_or(|wanted| *wanted == graph.name)
                    && graph.inputs.iter().any(|input| input.name == name.tensor)
            })
        })
        .map(|name| match &name.graph {
            Some(graph) => format!("{graph}:{}", name.tensor),
            None => name.tensor.clone(),
        })
        .collect();
    (!unknown.is_empty()).then(|| {
        let inputs: Vec<String> = graphs
            .iter()
            .flat_map(|graph| graph.inputs.iter().map(move |input| format!("{}:{}", graph.name, input.name)))
            .collect();
        format!(
            "--native_input_tensor_names names {}, which no graph that runs has as an input (inputs: {})",
            unknown.join(", "),
            inputs.join(", ")
        )
    })
}

/// How each input file and each output file of one graph's run is kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileKinds {
    /// Per graph input: its files hold float32 (else native bytes).
    pub float_inputs: Vec<bool>,
    /// The files each inference writes, in graph output order.
    pub outputs: Vec<OutputFile<String>>,
}

/// What the settings say about files, for one graph.
#[derive(Clone, Copy, Debug)]
pub struct FileSettings<'s> {
    /// `--use_native_input_files`.
    pub all_inputs_native: bool,
    /// `--native_input_tensor_names`.
    pub native_inputs: &'s [NativeInputName],
    /// `--output_data_type` (`--use_native_output_files` is `native_only`).
    pub output_data_type: OutputDataType,
}

impl FileKinds {
    /// The kinds for `graph`, writing the outputs at `selected` (indices in graph output order); refuses float files
    /// for tensors the skel cannot convert, naming the tensor and the flag that avoids it.
    pub fn new(graph: &GraphDescription, settings: &FileSettings<'_>, selected: &[usize]) -> Result<FileKinds> {
        let float_inputs: Vec<bool> = graph
            .inputs
            .iter()
            .map(|input| {
                !settings.all_inputs_native
                    && !settings.native_inputs.iter().any(|name| {
                        name.tensor == input.name && name.graph.as_ref().is_none_or(|wanted| *wanted == graph.name)
                    })
            })
            .collect();
        let mut refused: Vec<String> = graph
            .inputs
            .iter()
            .zip(&float_inputs)
            .filter(|(input, float)| **float && !input.convertible)
            .map(|(input, _)| {
                format!(
                    "input '{}' ({}) has no float32 conversion: pass --use_native_input_files or name it in \
                     --native_input_tensor_names",
                    input.name,
                    crate::graph_io::data_type_name(input)
                )
            })
            .collect();
        let mut outputs = Vec::new();
        for &index in selected {
            let Some(tensor) = graph.outputs.get(index) else { continue };
            let base = output::file_name(&tensor.name);
            let is_float32 = tensor.data_type == DataType::FLOAT_32.0;
            let wants_float = settings.output_data_type != OutputDataType::NativeOnly;
            if wants_float && !tensor.convertible {
                refused.push(format!(
                    "output '{}' ({}) has no float32 conversion: pass --use_native_output_files or \
                     --output_data_type native_only",
                    tensor.name,
                    crate::graph_io::data_type_name(tensor)
                ));
            }
            let index = index as u32;
            match settings.output_data_type {
                OutputDataType::FloatOnly => outputs.push(OutputFile { index, file_name: base, float: true }),
                OutputDataType::NativeOnly => outputs.push(OutputFile { index, file_name: base, float: false }),
                OutputDataType::FloatAndNative => {
                    let native_name = output::native_file_name(&tensor.name);
                    outputs.push(OutputFile { index, file_name: base, float: true });
                    if !is_float32 {
                        outputs.push(OutputFile { index, file_name: native_name, float: false });
                    }
                }
            }
        }
        if !refused.is_empty() {
            bail!("graph {} cannot run with these files: {}", graph.name, refused.join("; "));
        }
        Ok(FileKinds { float_inputs, outputs })
    }

    /// `execute`'s flags for the traditional loop: float inputs (outputs) when every input (output file) is float;
    /// otherwise the tensors travel native and [`quantize_input`] / [`output_file_bytes`]
    /// convert the float files here.
    pub fn execute_flags(&self) -> u32 {
        let all_float_in = self.float_inputs.iter().all(|float| *float);
        let all_float_out = self.outputs.iter().all(|file| file.float);
        (if all_float_in { EXECUTE_FLOAT_INPUTS } else { 0 }) | if all_float_out { EXECUTE_FLOAT_OUTPUTS } else { 0 }
    }

    /// A direct-mode job's flags and native-inputs mask: the skel converts per file.
    pub fn job_flags(&self) -> (u32, u32) {
        let any_float_in = self.float_inputs.iter().any(|float| *float);
        let any_float_out = self.outputs.iter().any(|file| file.float);
        let flags = (if any_float_in { EXECUTE_FLOAT_INPUTS } else { 0 })
            | if any_float_out { EXECUTE_FLOAT_OUTPUTS } else { 0 };
        let native_mask = self
            .float_inputs
            .iter()
            .enumerate()
            .filter(|(_, float)| !**float)
            .fold(0u32, |mask, (index, _)| mask | 1u32.checked_shl(index as u32).unwrap_or(0));
        (flags, native_mask)
    }
}

/// The tensor's encoding for float32 conversion, if it has one.
fn encoding(tensor: &TensorDescription) -> Option<Encoding> {
    let scale_offset = ScaleOffset { scale: tensor.scale, offset: tensor.offset };
    tensor.convertible.then(|| Encoding::of(DataType(tensor.data_type), Some(scale_offset))).flatten()
}

/// Converts a float32 input file's bytes into the tensor's native bytes in `native`.
pub fn quantize_input(tensor: &TensorDescription, float_bytes: &[u8], native: &mut [u8]) -> Result<()> {
    match encoding(tensor) {
        Some(encoding) if quantize::quantize(encoding, float_bytes, native) => Ok(()),
        _ => bail!(
            "input '{}': {} bytes of float32 do not convert into its {} native bytes",
            tensor.name,
            float_bytes.len(),
            native.len()
        ),
    }
}

/// The bytes of output file `file` from the tensor's native bytes (dequantized for a float file).
pub fn output_file_bytes(tensor: &TensorDescription, file: &OutputFile<String>, native: &[u8]) -> Result<Vec<u8>> {
    if !file.float {
        return Ok(native.to_vec());
    }
    let mut float_bytes = vec![0u8; tensor.elements.saturating_mul(4)];
    match encoding(tensor) {
        Some(encoding) if quantize::dequantize(encoding, native, &mut float_bytes) => Ok(float_bytes),
        _ => bail!("output '{}': its {} native bytes do not convert to float32", tensor.name, native.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tensor(name: &str, data_type: DataType, convertible: bool) -> TensorDescription {
        let native_bytes = if data_type == DataType::FLOAT_32 { 16 } else { 4 };
        TensorDescription {
            name: name.into(),
            id: 0,
            data_type: data_type.0,
            dimensions: vec![4],
            scale: 0.5,
            offset: -10,
            native_bytes,
            elements: 4,
            convertible,
        }
    }

    fn graph() -> GraphDescription {
        GraphDescription {
            name: "g".into(),
            inputs: vec![tensor("a", DataType::UFIXED_POINT_8, true), tensor("ids", DataType::UINT_32, false)],
            outputs: vec![tensor("q", DataType::UFIXED_POINT_8, true), tensor("f", DataType::FLOAT_32, true)],
            scratch_bytes: 0,
            persistent_bytes: 0,
            arena_used: 0,
            arena_capacity: 0,
            clock_hz: 1,
        }
    }

    fn file(index: u32, name: &str, float: bool) -> OutputFile<String> {
        OutputFile { index, file_name: name.into(), float }
    }

    #[test]
    fn native_input_names_parse_in_both_forms() {
        let names = parse_native_input_names("g1:a,b;c").unwrap();
        let name = |graph: Option<&str>, tensor: &str| NativeInputName {
            graph: graph.map(str::to_string),
            tensor: tensor.to_string(),
        };
        assert_eq!(names, vec![name(Some("g1"), "a"), name(Some("g1"), "b"), name(None, "c")]);
        assert!(parse_native_input_names("a,,b").unwrap_err().to_string().contains("empty tensor name"));
        assert!(parse_native_input_names(":a").unwrap_err().to_string().contains("empty graph name"));
        assert!(parse_native_input_names(";").unwrap_err().to_string().contains("names no tensor"));
    }

    #[test]
    fn per_tensor_native_inputs_and_both_output_kinds() {
        let names = parse_native_input_names("g:ids").unwrap();
        let settings = FileSettings {
            all_inputs_native: false,
            native_inputs: &names,
            output_data_type: OutputDataType::FloatAndNative,
        };
        let kinds = FileKinds::new(&graph(), &settings, &[0, 1]).unwrap();
        assert_eq!(kinds.float_inputs, vec![true, false]);
        assert_eq!(kinds.outputs, vec![file(0, "q.raw", true), file(0, "q_native.raw", false), file(1, "f.raw", true)]);
        assert_eq!(kinds.execute_flags(), 0);
        assert_eq!(kinds.job_flags(), (EXECUTE_FLOAT_INPUTS | EXECUTE_FLOAT_OUTPUTS, 0b10));
        let other_graph = parse_native_input_names("h:ids").unwrap();
        let settings = FileSettings { native_inputs: &other_graph, ..settings };
        let message = FileKinds::new(&graph(), &settings, &[0]).unwrap_err().to_string();
        assert!(message.contains("input 'ids' (UINT_32) has no float32 conversion"), "{message}");
        let unknown = unknown_native_inputs(&other_graph, &[&graph()]).unwrap();
        assert!(unknown.contains("names h:ids, which no graph that runs has") && unknown.contains("g:a, g:ids"));
        assert_eq!(unknown_native_inputs(&names, &[&graph()]), None);
    }

    #[test]
    fn uniform_kinds_keep_the_skel_converting() {
        let settings =
            FileSettings { all_inputs_native: true, native_inputs: &[], output_data_type: OutputDataType::NativeOnly };
        let kinds = FileKinds::new(&graph(), &settings, &[1]).unwrap();
        assert_eq!((kinds.execute_flags(), kinds.job_flags()), (0, (0, 0b11)));
        assert_eq!(kinds.outputs, vec![file(1, "f.raw", false)]);
        let mut only_a = graph();
        only_a.inputs.truncate(1);
        let settings =
            FileSettings { all_inputs_native: false, output_data_type: OutputDataType::FloatOnly, ..settings };
        let kinds = FileKinds::new(&only_a, &settings, &[0]).unwrap();
        assert_eq!(kinds.execute_flags(), EXECUTE_FLOAT_INPUTS | EXECUTE_FLOAT_OUTPUTS);
    }

    #[test]
    fn host_conversion_is_the_shared_code() {
        let q = tensor("q", DataType::UFIXED_POINT_8, true);
        let floats: Vec<u8> = [0.25f32, 0.75, -100.0, 1000.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut native = [0u8; 4];
        quantize_input(&q, &floats, &mut native).unwrap();
        assert_eq!(native, [10, 12, 0, 255]);
        let back = output_file_bytes(&q, &file(0, "q.raw", true), &native).unwrap();
        let expected: Vec<u8> = [0.0f32, 1.0, -5.0, 122.5].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(back, expected);
        assert_eq!(output_file_bytes(&q, &file(0, "q.raw", false), &native).unwrap(), native);
        let message = quantize_input(&q, &floats[..8], &mut native).unwrap_err().to_string();
        assert!(message.contains("input 'q': 8 bytes of float32"), "{message}");
    }
}
