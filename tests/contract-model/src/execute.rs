//! graphExecute: the rules in their documented order, then the deterministic outputs.
//!
//! Output element `i` of an output whose source input holds `x[0..m)`:
//! `acc = x[i % m] * multiplier + addend + n * step` (i64, saturating), `q = acc >> shift` (arithmetic),
//! clamped to the output's type, little-endian; `n` is the frame counter of the persistent header. Bytes from the
//! tensor's size up to `dataSize` become [`crate::PAD_FILL`]. The whole scratch memory is filled with
//! [`crate::SCRATCH_FILL`] first and each source input is copied there before its output is computed from the copy.

use crate::context::check_binary;
use crate::format::MAX_IO;
use crate::lock::with_state;
use crate::persistent::{self, Header};
use crate::rules::{self, Breach};
use crate::state::{token, BinaryRecord, GraphPlan, Memory, TensorPlan};
use crate::{ALIGNMENT_START, PAD_FILL, SCRATCH_FILL, SIZE_GRANULE};
use core::ptr::{with_exposed_provenance_mut, write_bytes};
use lpai_direct::qnn::error::GRAPH_ERROR_EARLY_TERMINATION;
use lpai_direct::qnn::{ErrorHandle, GraphHandle, ProfileHandle, SignalHandle, Tensor, TensorMemType};

/// What an execution needs, copied out of the state.
struct Run {
    plan: GraphPlan,
    scratch: Memory,
    persistent: Memory,
    binary: BinaryRecord,
    token: u32,
    /// The serial of the graph's context (the host's queue waits by context).
    #[cfg(not(target_arch = "hexagon"))]
    context: u32,
}

/// A client buffer that passed the rules.
#[derive(Clone, Copy)]
pub(crate) struct Buffer {
    data: *mut u8,
    size: usize,
}

const NO_BUFFER: Buffer = Buffer { data: core::ptr::null_mut(), size: 0 };

/// The client buffers of one execution that passed the rules: inputs, then outputs.
pub(crate) type Buffers = [[Buffer; MAX_IO]; 2];

/// An execution that passed every rule of graphExecute, ready to compute.
pub(crate) struct Checked {
    run: Run,
    header: Header,
    pub(crate) buffers: Buffers,
}

#[cfg(not(target_arch = "hexagon"))]
impl Checked {
    /// The serial of the graph's context.
    pub(crate) fn context(&self) -> u32 {
        self.run.context
    }
}

/// graphExecute.
///
/// # Safety
/// `inputs` and `outputs` hold `input_count` and `output_count` valid tensors whose client buffers are valid for
/// their `dataSize`; the graph's scratch and persistent memory and the context's binary are still the caller's.
pub(crate) unsafe extern "C" fn graph_execute(
    graph: GraphHandle,
    inputs: *const Tensor,
    input_count: u32,
    outputs: *mut Tensor,
    output_count: u32,
    _profile: ProfileHandle,
    _signal: SignalHandle,
) -> ErrorHandle {
    // On the host an execution waits for the executions graphExecuteAsync queued on its graph (one queue).
    #[cfg(not(target_arch = "hexagon"))]
    crate::asynchronous::wait_for_graph(graph);
    // SAFETY: forwarded from the caller.
    match unsafe { check(graph, inputs, input_count, outputs.cast_const(), output_count) } {
        // SAFETY: the rules hold and the caller's memory is valid, as this function's contract says.
        Ok(checked) => unsafe { compute_checked(&checked) },
        Err(breach) => breach.report(),
    }
}

fn take_run(graph: GraphHandle) -> Result<Run, Breach> {
    with_state(|state| {
        let stale = || rules::GRAPH_HANDLE.breach().text("graphExecute on ").hex(graph.addr() as u64);
        let (_, index) = state.graph(graph).ok_or_else(stale)?;
        let (slot, serial, binary) = state.graph_mut(graph).ok_or_else(stale)?;
        match (slot.finalized, slot.scratch, slot.persistent) {
            (true, Some(scratch), Some(persistent)) => Ok(Run {
                plan: slot.plan,
                scratch,
                persistent,
                binary,
                token: token(serial, index),
                #[cfg(not(target_arch = "hexagon"))]
                context: serial,
            }),
            _ => {
                let breach = rules::FINALIZED_AFTER_CONFIG.breach().text("graph ").name(&slot.plan.name);
                Err(breach.text(": no graphFinalize after the last graphSetConfig (memory or tuning configs)"))
            }
        }
    })
}

/// The rules of the graph itself: a finalized graph of a live context, its binary intact, its persistent header
/// its own.
///
/// # Safety
/// The graph's scratch and persistent memory and the context's binary are still the caller's.
unsafe fn take_checked_run(graph: GraphHandle) -> Result<(Run, Header), Breach> {
    let run = take_run(graph)?;
    // SAFETY: per the caller.
    unsafe { check_binary(&run.binary, "graphExecute") }?;
    // SAFETY: at least 16 bytes of the caller's persistent memory (size checked at graphSetConfig).
    let header = unsafe { persistent::read(run.persistent.addr) };
    if header.magic != persistent::MAGIC || header.token != run.token {
        let breach = rules::PERSISTENT_STATE.breach().text("persistent header at ").hex(run.persistent.addr as u64);
        let breach = breach.text(" holds magic ").hex(header.magic.into()).text(", token ").hex(header.token.into());
        let breach = breach.text(" instead of ").hex(persistent::MAGIC.into()).text(", ").hex(run.token.into());
        return Err(breach.text(": shared or clobbered since graphFinalize"));
    }
    Ok((run, header))
}

/// Every rule of graphExecute, in its documented order; graphExecuteAsync checks the same.
///
/// # Safety
/// As for [`graph_execute`].
pub(crate) unsafe fn check(
    graph: GraphHandle,
    inputs: *const Tensor,
    input_count: u32,
    outputs: *const Tensor,
    output_count: u32,
) -> Result<Checked, Breach> {
    // SAFETY: per the caller.
    let (run, header) = unsafe { take_checked_run(graph) }?;
    let plan = &run.plan;
    let sides = [
        ("input", inputs, input_count, 0, plan.input_count),
        ("output", outputs, output_count, plan.input_count, plan.output_count),
    ];
    for (what, tensors, count, first, expected) in sides {
        // SAFETY: per the caller.
        unsafe { check_ids(what, tensors, count, plan, first, expected) }?;
    }
    let mut buffers = [[NO_BUFFER; MAX_IO]; 2];
    for ((what, tensors, _, _, expected), side) in sides.into_iter().zip(buffers.iter_mut()) {
        // SAFETY: per the caller; the counts were checked above.
        unsafe { check_buffers(what, tensors, expected, side) }?;
    }
    for ((what, _, _, first, expected), side) in sides.into_iter().zip(buffers.iter()) {
        check_padding(what, plan, first, expected, side)?;
    }
    Ok(Checked { run, header, buffers })
}

/// Computes an execution that passed the rules just now.
///
/// # Safety
/// The caller's memory is valid, as for [`graph_execute`].
pub(crate) unsafe fn compute_checked(checked: &Checked) -> ErrorHandle {
    // SAFETY: per the caller.
    unsafe { compute(&checked.run, checked.header, &checked.buffers) }
}

/// Runs an execution that passed the rules at its call: on the host it ran later, so the graph's own rules are
/// checked again (its context may have been freed from inside a notify function, or the graph un-finalized since).
///
/// # Safety
/// The buffers are still the caller's, and so are the graph's memory and binary (QNN: until the notification).
#[cfg(not(target_arch = "hexagon"))]
pub(crate) unsafe fn run_checked(graph: GraphHandle, buffers: &Buffers) -> ErrorHandle {
    // SAFETY: per the caller.
    match unsafe { take_checked_run(graph) } {
        // SAFETY: the rules hold again; the buffers passed them at the call.
        Ok((run, header)) => unsafe { compute(&run, header, buffers) },
        Err(breach) => breach.report(),
    }
}

/// # Safety
/// `tensors` holds `count` valid tensors (or is null).
unsafe fn check_ids(
    what: &str,
    tensors: *const Tensor,
    count: u32,
    plan: &GraphPlan,
    first: usize,
    expected: usize,
) -> Result<(), Breach> {
    if count as usize != expected || (expected > 0 && tensors.is_null()) {
        let breach = rules::TENSOR_IDS.breach().num(count.into()).text(" ").text(what).text("s given, the graph has ");
        return Err(breach.num(expected as u64));
    }
    for index in 0..expected {
        let want = plan.tensor(first + index).id;
        // SAFETY: `index < count` valid tensors, per the caller.
        let common = unsafe { &*tensors.add(index) }.common();
        match common.map(|tensor| tensor.id) {
            Some(id) if id == want => {}
            Some(id) => {
                let breach = rules::TENSOR_IDS.breach().text(what).text(" ").num(index as u64).text(" has id ");
                return Err(breach.num(id.into()).text(", the graph's is ").num(want.into()));
            }
            None => {
                let breach = rules::TENSOR_IDS.breach().text(what).text(" ").num(index as u64);
                return Err(breach.text(" is not a version 1 or 2 tensor"));
            }
        }
    }
    Ok(())
}

/// # Safety
/// `tensors` holds `expected` valid tensors (checked by [`check_ids`]).
unsafe fn check_buffers(
    what: &str,
    tensors: *const Tensor,
    expected: usize,
    out: &mut [Buffer; MAX_IO],
) -> Result<(), Breach> {
    for (index, slot) in out.iter_mut().enumerate().take(expected) {
        // SAFETY: per the caller.
        let Some(common) = (unsafe { &*tensors.add(index) }).common() else {
            return Err(rules::TENSOR_IDS.breach().text(what).text(" changed version"));
        };
        let breach = || rules::IO_ALIGNED.breach().text(what).text(" ").num(index as u64);
        if common.mem_type != TensorMemType::RAW {
            return Err(breach().text(" has memType ").num(common.mem_type.0.into()).text(", not RAW"));
        }
        // SAFETY: RAW selects the client buffer.
        let buffer = unsafe { common.memory.client_buf };
        if buffer.data.is_null() || !buffer.data.addr().is_multiple_of(ALIGNMENT_START) {
            let breach = breach().text(" data at ").hex(buffer.data.addr() as u64);
            return Err(breach.text(" is not a multiple of ").num(ALIGNMENT_START as u64));
        }
        *slot = Buffer { data: buffer.data.cast(), size: buffer.data_size as usize };
    }
    Ok(())
}

fn check_padding(
    what: &str,
    plan: &GraphPlan,
    first: usize,
    expected: usize,
    buffers: &[Buffer; MAX_IO],
) -> Result<(), Breach> {
    for (index, buffer) in buffers.iter().enumerate().take(expected) {
        let bytes = plan.tensor(first + index).bytes as usize;
        if buffer.size < bytes || !buffer.size.is_multiple_of(SIZE_GRANULE) {
            let breach = rules::IO_PADDED.breach().text(what).text(" ").num(index as u64).text(" dataSize ");
            let breach = breach.num(buffer.size as u64).text(" (tensor ").num(bytes as u64).text(" bytes)");
            return Err(breach.text(": it must be a multiple of 64 and at least the tensor's bytes"));
        }
    }
    Ok(())
}

/// Element `index` of a tensor at `base`.
///
/// # Safety
/// `base` holds the tensor's bytes.
unsafe fn element(base: *const u8, index: usize, wide: bool) -> i64 {
    if wide {
        // SAFETY: per the caller (index < elements).
        let (low, high) = unsafe { (*base.add(2 * index), *base.add(2 * index + 1)) };
        i64::from(u16::from_le_bytes([low, high]))
    } else {
        // SAFETY: as above.
        i64::from(unsafe { *base.add(index) })
    }
}

/// One output element per the formula.
fn formula(x: i64, out: &TensorPlan, frame: u32) -> u16 {
    let step = i64::from(frame).saturating_mul(out.step.into());
    let acc = x.saturating_mul(out.multiplier.into()).saturating_add(out.addend.into()).saturating_add(step);
    let q = acc.checked_shr(out.shift).unwrap_or(if acc < 0 { -1 } else { 0 });
    let top = if out.wide { i64::from(u16::MAX) } else { i64::from(u8::MAX) };
    q.max(0).min(top) as u16
}

/// # Safety
/// The buffers passed the rules; the scratch and persistent memory are the caller's.
unsafe fn compute(run: &Run, header: Header, buffers: &Buffers) -> ErrorHandle {
    let [inputs, outputs] = buffers;
    let scratch = with_exposed_provenance_mut::<u8>(run.scratch.addr);
    // SAFETY: the configured scratch size, checked at graphSetConfig.
    unsafe { write_bytes(scratch, SCRATCH_FILL, run.scratch.size as usize) };
    let calls = header.calls.wrapping_add(1);
    let frames = header.frames.wrapping_add(1);
    let early = run.plan.early_every > 0 && calls.is_multiple_of(run.plan.early_every);
    if !early {
        let plan = &run.plan;
        for (index, buffer) in outputs.iter().enumerate().take(plan.output_count) {
            let out = plan.tensor(plan.input_count + index);
            let source = plan.tensor(out.source as usize);
            let input = inputs.get(out.source as usize).copied().unwrap_or(NO_BUFFER);
            // SAFETY: the input holds `source.bytes` (io-padded) and scratch at least as many (format and memory
            // rules); `copy` allows overlap, which a broken runtime may cause.
            unsafe { core::ptr::copy(input.data, scratch, source.bytes as usize) };
            let stride = if out.wide { 2 } else { 1 };
            for element_index in 0..out.elements as usize {
                let at = element_index.checked_rem(source.elements as usize).unwrap_or(0);
                // SAFETY: `at < source.elements`, copied into scratch above.
                let value = formula(unsafe { element(scratch, at, source.wide) }, &out, header.frames);
                let [low, high] = value.to_le_bytes();
                // SAFETY: the output holds `out.bytes` (io-padded).
                unsafe {
                    buffer.data.add(element_index * stride).write(low);
                    if out.wide {
                        buffer.data.add(element_index * stride + 1).write(high);
                    }
                }
            }
            let pad = buffer.size.saturating_sub(out.bytes as usize);
            // SAFETY: from the tensor's bytes up to dataSize, inside the caller's buffer.
            unsafe { write_bytes(buffer.data.add(out.bytes as usize), PAD_FILL, pad) };
        }
    }
    // SAFETY: the persistent memory holds the 16-byte header (checked at graphSetConfig).
    unsafe { persistent::write(run.persistent.addr, Header { frames, calls, ..header }) };
    if early {
        u64::from(GRAPH_ERROR_EARLY_TERMINATION)
    } else {
        0
    }
}
