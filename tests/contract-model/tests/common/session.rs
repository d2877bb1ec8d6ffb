//! One graph of one context, driven through the whole LPAI sequence as the runtime does.

use super::{
    attach, code, create_backend, create_context, describe, lpai_table, memory, round64, set_config, system_table,
};
use super::{tensor_bytes, Buffer};
use lpai_contract_model::persistent::{self, Header};
use lpai_direct::qnn::{lpai, ContextConfig, GraphProperty, GraphPropertyOption, Handle, NotifyFn, Tensor};
use std::ffi::CStr;
use std::ptr::null_mut;

/// A backend, a context on a model file, one retrieved graph, its memory and I/O buffers.
pub struct Session {
    pub backend: Handle,
    pub context: Handle,
    pub graph: Handle,
    pub system: Handle,
    pub binary: Buffer,
    pub scratch: Buffer,
    pub persistent: Buffer,
    pub scratch_size: usize,
    pub persistent_size: usize,
    pub inputs: Vec<Buffer>,
    pub outputs: Vec<Buffer>,
    pub input_tensors: Vec<Tensor>,
    pub output_tensors: Vec<Tensor>,
    pub freed: bool,
}

// SAFETY: handles are numbers and the buffers are owned; the model is thread-safe.
unsafe impl Send for Session {}

impl Session {
    /// Backend, description, context (PERSISTENT_BINARY), graphRetrieve of graph `index`, I/O buffers padded to 64;
    /// no memory configs yet.
    pub fn created(file: &[u8], index: usize) -> Session {
        Session::created_on(create_backend(), file, index)
    }

    /// [`Session::created`] on a backend the caller created (and this session frees).
    pub fn created_on(backend: Handle, file: &[u8], index: usize) -> Session {
        let binary = Buffer::of(file);
        let (system, graphs) = describe(&binary);
        let info = graphs[index].common().unwrap();
        let (answer, context) = create_context(backend, &binary, &[ContextConfig::persistent_binary(true)]);
        assert_eq!(answer, 0);
        let mut graph = null_mut();
        // SAFETY: the description's NUL-terminated name and a valid out-pointer.
        assert_eq!(unsafe { lpai_table().graph_retrieve.unwrap()(context, info.graph_name, &mut graph) }, 0);
        // SAFETY: the description holds these tensors.
        let described = |at, count| unsafe { std::slice::from_raw_parts(at, count as usize) }.to_vec();
        let mut input_tensors: Vec<Tensor> = described(info.graph_inputs, info.num_graph_inputs);
        let mut output_tensors: Vec<Tensor> = described(info.graph_outputs, info.num_graph_outputs);
        let buffers = |tensors: &mut Vec<Tensor>| -> Vec<Buffer> {
            tensors
                .iter_mut()
                .map(|tensor| {
                    let size = round64(tensor_bytes(tensor));
                    let buffer = Buffer::new(size);
                    attach(tensor, buffer.ptr(), size);
                    buffer
                })
                .collect()
        };
        let inputs = buffers(&mut input_tensors);
        let outputs = buffers(&mut output_tensors);
        let mut session = Session {
            backend,
            context,
            graph,
            system,
            binary,
            scratch: Buffer::new(0),
            persistent: Buffer::new(0),
            scratch_size: 0,
            persistent_size: 0,
            inputs,
            outputs,
            input_tensors,
            output_tensors,
            freed: false,
        };
        let (scratch, persistent) = session.sizes();
        session.scratch_size = round64(scratch as usize);
        session.persistent_size = round64(persistent as usize);
        session.scratch = Buffer::new(session.scratch_size);
        session.persistent = Buffer::new(session.persistent_size);
        session
    }

    /// [`Session::created`] on graph 0, then the memory, perf and affinity configs and graphFinalize.
    pub fn open(file: &[u8]) -> Session {
        Session::open_on(create_backend(), file)
    }

    /// [`Session::open`] on a backend the caller created (and this session frees).
    pub fn open_on(backend: Handle, file: &[u8]) -> Session {
        let session = Session::created_on(backend, file, 0);
        assert_eq!(session.set_memory(), 0);
        assert_eq!(session.finalize(), 0);
        session
    }

    /// graphGetProperty: (scratch, persistent) sizes.
    pub fn sizes(&self) -> (u32, u32) {
        let (mut scratch, mut persistent) = (0u32, 0u32);
        let mut custom = [
            lpai::GraphCustomProperty {
                option: lpai::GraphPropertyOption::SCRATCH_MEM_SIZE,
                property: (&raw mut scratch).cast(),
            },
            lpai::GraphCustomProperty {
                option: lpai::GraphPropertyOption::PERSISTENT_MEM_SIZE,
                property: (&raw mut persistent).cast(),
            },
        ];
        let mut properties = custom.each_mut().map(|c| GraphProperty {
            option: GraphPropertyOption::CUSTOM,
            custom_property: (c as *mut lpai::GraphCustomProperty).cast(),
        });
        let [first, second] = properties.each_mut();
        let mut list = [first as *mut GraphProperty, second, null_mut()];
        // SAFETY: a NULL-terminated list whose targets outlive the call.
        assert_eq!(unsafe { lpai_table().graph_get_property.unwrap()(self.graph, list.as_mut_ptr()) }, 0);
        (scratch, persistent)
    }

    /// SCRATCH_MEM, PERSISTENT_MEM (DDR, sizes rounded to 64), PERF_CFG default, CORE_AFFINITY soft.
    pub fn set_memory(&self) -> u32 {
        let mut scratch = memory(self.scratch_size, &self.scratch);
        let mut persistent = memory(self.persistent_size, &self.persistent);
        self.set_memory_configs(&mut scratch, &mut persistent)
    }

    /// The same with these memory structs.
    pub fn set_memory_configs(&self, scratch: &mut lpai::GraphMem, persistent: &mut lpai::GraphMem) -> u32 {
        let mut perf = lpai::PerfCfg::DEFAULT;
        let mut affinity = lpai::CoreAffinity { affinity: lpai::CoreAffinityType::SOFT, core_selection: 0 };
        let mut configs = [
            (lpai::GraphConfigOption::SCRATCH_MEM, (scratch as *mut lpai::GraphMem).cast()),
            (lpai::GraphConfigOption::PERSISTENT_MEM, (persistent as *mut lpai::GraphMem).cast()),
            (lpai::GraphConfigOption::PERF_CFG, (&raw mut perf).cast()),
            (lpai::GraphConfigOption::CORE_AFFINITY, (&raw mut affinity).cast()),
        ];
        set_config(self.graph, &mut configs, &[])
    }

    pub fn finalize(&self) -> u32 {
        // SAFETY: the memory handed to the graph lives in this session.
        code(unsafe { lpai_table().graph_finalize.unwrap()(self.graph, null_mut(), null_mut()) })
    }

    pub fn execute(&mut self) -> u32 {
        let execute = lpai_table().graph_execute.unwrap();
        let (inputs, input_count) = (self.input_tensors.as_ptr(), self.input_tensors.len() as u32);
        let (outputs, output_count) = (self.output_tensors.as_mut_ptr(), self.output_tensors.len() as u32);
        // SAFETY: tensors and buffers live in this session.
        code(unsafe { execute(self.graph, inputs, input_count, outputs, output_count, null_mut(), null_mut()) })
    }

    /// graphExecuteAsync with this notify function and parameter: the call's answer.
    pub fn execute_async(&mut self, notify: NotifyFn, param: *mut std::ffi::c_void) -> u32 {
        let execute = lpai_table().graph_execute_async.unwrap();
        let (inputs, input_count) = (self.input_tensors.as_ptr(), self.input_tensors.len() as u32);
        let (outputs, output_count) = (self.output_tensors.as_mut_ptr(), self.output_tensors.len() as u32);
        // SAFETY: tensors and buffers live in this session, which outlives its executions (contextFree waits).
        code(unsafe {
            execute(self.graph, inputs, input_count, outputs, output_count, null_mut(), null_mut(), notify, param)
        })
    }

    /// The tensor bytes of input `index` (without padding).
    pub fn input_mut(&mut self, index: usize) -> &mut [u8] {
        let bytes = tensor_bytes(&self.input_tensors[index]);
        &mut self.inputs[index].bytes_mut()[..bytes]
    }

    /// Output `index`'s whole buffer.
    pub fn output(&self, index: usize) -> &[u8] {
        self.outputs[index].bytes()
    }

    /// The persistent header.
    pub fn header(&self) -> Header {
        Header::from_bytes(self.persistent.bytes()[..persistent::HEADER_BYTES].try_into().unwrap())
    }

    /// graphRetrieve by name on this session's context.
    pub fn retrieve(&self, name: &CStr) -> (u32, Handle) {
        let mut graph = null_mut();
        // SAFETY: a NUL-terminated name and a valid out-pointer.
        let answer = unsafe { lpai_table().graph_retrieve.unwrap()(self.context, name.as_ptr(), &mut graph) };
        (code(answer), graph)
    }

    /// contextFree, then backendFree and systemContextFree: the contextFree answer.
    pub fn free(&mut self) -> u32 {
        self.freed = true;
        // SAFETY: handles of this session, freed once.
        let answer = code(unsafe { lpai_table().context_free.unwrap()(self.context, null_mut()) });
        // SAFETY: as above.
        unsafe {
            lpai_table().backend_free.unwrap()(self.backend);
            system_table().system_context_free.unwrap()(self.system);
        }
        answer
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if !self.freed {
            self.free();
        }
    }
}
