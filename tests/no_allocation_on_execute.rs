//! The execute path allocates nothing: a counting global allocator watches writing inputs (float and native),
//! graphExecute and reading outputs on the real libQnnHtp.so. (The backend's own C allocations are its own.)

mod common;

use lpai_direct_skel::platform::VendorCalls;
use lpai_direct_skel::runtime::{Arena, BackendOptions, Binary, Context, Libraries, LoadRequest};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct CountingAllocator;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn note_allocation() {
    if COUNTING.with(Cell::get) {
        ALLOCATIONS.with(|count| count.set(count.get() + 1));
    }
}

// SAFETY: forwards to the system allocator unchanged; counting touches only thread-local cells.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        // SAFETY: the caller's layout is forwarded as is.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        // SAFETY: the pointer came from `alloc` above with this layout.
        unsafe { System.dealloc(pointer, layout) }
    }
    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        note_allocation();
        // SAFETY: as for `dealloc`.
        unsafe { System.realloc(pointer, layout, size) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Runs `work` and returns how many heap allocations it made on this thread.
fn allocations_during(work: impl FnOnce()) -> usize {
    ALLOCATIONS.with(|count| count.set(0));
    COUNTING.with(|counting| counting.set(true));
    work();
    COUNTING.with(|counting| counting.set(false));
    ALLOCATIONS.with(Cell::get)
}

#[test]
fn the_counter_sees_an_allocation() {
    assert_eq!(allocations_during(|| drop(std::hint::black_box(Box::new(7u64)))), 1);
}

#[test]
fn write_execute_read_allocates_nothing() {
    let qnn = common::qnn_lib_dir();
    let c_path = |p: std::path::PathBuf| std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    let (backend, system) = (c_path(qnn.join("libQnnHtp.so")), c_path(qnn.join("libQnnSystem.so")));
    let libraries = Libraries::open(&backend, Some(&system), &BackendOptions::default()).unwrap();
    let mut memory = vec![0u8; 1 << 20];
    let arena = Arena::new(&mut memory);
    let binary = c_path(common::fixture("kws_conv/kws_conv_qnn.bin"));
    let mut context =
        Context::load(&VendorCalls::lock(), &libraries, &arena, &LoadRequest::new(Binary::File(&binary))).unwrap();
    let graph = context.graph_mut(0).unwrap();
    let float_input = std::fs::read(common::fixture("kws_conv/inputs/float/2_0.raw")).unwrap();
    let native_input = std::fs::read(common::fixture("kws_conv/inputs/native/2_0.raw")).unwrap();
    let mut output = vec![0u8; graph.output(0).unwrap().elements * 4];
    graph.write_input_float(0, &float_input).unwrap();
    graph.execute().unwrap();

    let mut results = Vec::with_capacity(16);
    let counted = allocations_during(|| {
        for _ in 0..3 {
            results.push(graph.write_input_float(0, &float_input).is_ok());
            results.push(graph.execute().is_ok());
            results.push(graph.read_output_float(0, &mut output).is_ok());
        }
        results.push(graph.write_input(0, &native_input).is_ok());
        results.push(graph.execute().is_ok());
    });
    assert!(results.iter().all(|&ok| ok), "{results:?}");
    assert_eq!(counted, 0, "the execute path allocated {counted} times");
    let reference = std::fs::read(common::fixture("kws_conv/reference/native/Result_2/logits.raw")).unwrap();
    assert_eq!(graph.output_bytes(0).unwrap(), reference.as_slice());
}
