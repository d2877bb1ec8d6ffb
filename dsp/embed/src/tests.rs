//! The C functions called from Rust on the host (and under Miri): the contract model runs the
//! `contract_single` fixture through them (with libQnnSystem, and with a metadata record and no libQnnSystem),
//! every pointer and size is checked, and the header's numbers are the library's.

extern crate std;

use crate::handle::State;
use crate::*;
use core::ffi::{c_char, c_int, c_void, CStr};
use core::ptr;
use lpai_direct_skel::platform::libraries::{register_builtin_libraries, BuiltinLibrary, BuiltinSymbol};
use lpai_direct_skel::testing::contract_record;
use lpai_direct_skel::testing::contract_single::{BINARY, FRAMES};
use std::string::{String, ToString};
use std::vec::Vec;

mod asynchronous;

const LPAI: &CStr = lpai_contract_model::LPAI_LIBRARY_NAME;
const SYSTEM: &CStr = lpai_contract_model::SYSTEM_LIBRARY_NAME;

/// The contract model of libQnnLpai and its system library as built-in libraries.
static CONTRACT_MODEL: [BuiltinLibrary; 2] = [
    BuiltinLibrary { name: LPAI, symbols: &[BuiltinSymbol::backend_providers(lpai_contract_model::lpai_providers)] },
    BuiltinLibrary { name: SYSTEM, symbols: &[BuiltinSymbol::system_providers(lpai_contract_model::system_providers)] },
];

/// Registers the contract model as built-in libraries (again: fine), and the optional message table, so that
/// last_error reads in words.
fn register() {
    register_builtin_libraries(&CONTRACT_MODEL).unwrap();
    // SAFETY: the table's renderer, callable for the life of the program.
    unsafe { lpai_direct_embed_use_messages(Some(lpai_direct_messages_render)) };
}

/// Memory at the contract model's start alignment.
#[repr(C, align(128))]
struct Aligned<const N: usize>([u8; N]);

fn last_error(embed: *mut EmbedHandle) -> String {
    // SAFETY: last_error answers a NUL-terminated string for any pointer it is given (null included).
    unsafe { CStr::from_ptr(lpai_direct_embed_last_error(embed)) }.to_str().unwrap().to_string()
}

/// A created embedding on the contract model over `arena`.
fn create(arena: &mut [u8]) -> *mut EmbedHandle {
    register();
    let mut embed = ptr::null_mut();
    // SAFETY: a live arena and NUL-terminated names.
    let created = unsafe {
        lpai_direct_embed_create(arena.as_mut_ptr().cast(), arena.len(), LPAI.as_ptr(), SYSTEM.as_ptr(), &mut embed)
    };
    assert_eq!(created, OK, "{}", last_error(embed));
    embed
}

#[test]
fn the_header_numbers_are_the_library_s() {
    let header = include_str!("../../include/lpai_direct_embed.h");
    let defined: Vec<(&str, c_int)> = header
        .lines()
        .filter_map(|line| line.strip_prefix("#define LPAI_DIRECT_EMBED_"))
        .filter_map(|rest| rest.split_once(' '))
        .filter_map(|(name, value)| Some((name, value.trim_matches(['(', ')', ' ']).parse().ok()?)))
        .collect();
    let expected = [
        ("OK", OK),
        ("ERROR_INVALID_ARGUMENT", ERROR_INVALID_ARGUMENT),
        ("ERROR_ARENA_FULL", ERROR_ARENA_FULL),
        ("ERROR_STATE", ERROR_STATE),
        ("ERROR_LIBRARY", ERROR_LIBRARY),
        ("ERROR_BINARY", ERROR_BINARY),
        ("ERROR_QNN", ERROR_QNN),
        ("ERROR_FAILED", ERROR_FAILED),
        ("INPUT", DIRECTION_INPUT),
        ("OUTPUT", DIRECTION_OUTPUT),
        ("MEMORY_DDR", MEMORY_DDR as c_int),
        ("MEMORY_LLC", MEMORY_LLC as c_int),
        ("MEMORY_TCM", MEMORY_TCM as c_int),
        ("MEMORY_PSRAM", MEMORY_PSRAM as c_int),
        ("FRAME_NEEDS_NEXT", FRAME_NEEDS_NEXT),
        ("FRAME_READY", FRAME_READY),
        ("FRAME_PENDING", FRAME_PENDING),
    ];
    assert_eq!(defined, expected);
}

#[test]
fn the_c_functions_run_the_contract_fixture_from_a_binary_in_place() {
    let mut arena = std::boxed::Box::new(Aligned([0u8; 16 * 1024]));
    let mut model = Aligned([0u8; 384]);
    model.0[..BINARY.len()].copy_from_slice(BINARY);
    let embed = create(&mut arena.0);
    let (mut in_place, mut count, mut ready) = (0, 0usize, 0);
    let mut name: *const c_char = ptr::null();
    let mut info = TensorDescription {
        name: ptr::null(),
        id: 0,
        data_type: 0,
        rank: 0,
        dimensions: ptr::null(),
        bytes: 0,
        quantized: 0,
        scale: 0.0,
        offset: 0,
    };
    let (mut input, mut input_bytes) = (ptr::null_mut(), 0usize);
    let (mut output, mut output_bytes) = (ptr::null(), 0usize);
    // SAFETY: a live handle, valid out-pointers, and a binary that outlives the handle, outside the arena.
    unsafe {
        assert_eq!(lpai_direct_embed_execute_frame(embed, &mut ready), ERROR_STATE);
        assert_eq!(last_error(embed), "execute_frame: no context binary is loaded");
        let buffer = model.0.as_ptr().cast();
        assert_eq!(lpai_direct_embed_load_padded(embed, buffer, BINARY.len(), model.0.len()), OK);
        assert_eq!(last_error(embed), "");
        assert_eq!(lpai_direct_embed_binary_in_place(embed, &mut in_place), OK);
        assert_eq!(in_place, 1);
        assert_eq!(lpai_direct_embed_graph_count(embed, &mut count), OK);
        assert_eq!(count, 1);
        assert_eq!(lpai_direct_embed_graph_name(embed, &mut name), OK);
        assert_eq!(CStr::from_ptr(name), c"single");
        assert_eq!(lpai_direct_embed_find_graph(embed, c"single".as_ptr(), &mut count), OK);
        assert_eq!(count, 0);
        assert_eq!(lpai_direct_embed_tensor_count(embed, DIRECTION_OUTPUT, &mut count), OK);
        assert_eq!(count, 1);
        assert_eq!(lpai_direct_embed_tensor_info(embed, DIRECTION_INPUT, 0, &mut info), OK);
        assert_eq!(CStr::from_ptr(info.name), c"in");
        assert_eq!((info.id, info.data_type, info.bytes, info.quantized), (1, 0x0408, 16, 1));
        assert_eq!((info.scale, info.offset), (0.0625, -128));
        assert_eq!(core::slice::from_raw_parts(info.dimensions, info.rank as usize), [1, 16]);
        assert_eq!(lpai_direct_embed_input(embed, 0, &mut input, &mut input_bytes), OK);
        assert_eq!(lpai_direct_embed_output(embed, 0, &mut output, &mut output_bytes), OK);
        assert_eq!((input_bytes, output_bytes), (16, 16));
        for (frame, reference) in FRAMES {
            ptr::copy_nonoverlapping(frame.as_ptr(), input.cast::<u8>(), frame.len());
            assert_eq!(lpai_direct_embed_execute_frame(embed, &mut ready), OK, "{}", last_error(embed));
            assert_eq!(ready, 1);
            assert_eq!(core::slice::from_raw_parts(output.cast::<u8>(), output_bytes), reference);
        }
        let mut micros = u64::MAX;
        assert_eq!(lpai_direct_embed_last_execute_us(embed, &mut micros), OK);
        assert!(micros < u64::MAX);
        let (mut used, mut capacity) = (0, 0);
        assert_eq!(lpai_direct_embed_arena_used(embed, &mut used, &mut capacity), OK);
        assert!(used > core::mem::size_of::<State>() && used < BINARY.len() + 4096, "{used}");
        assert_eq!(capacity, arena.0.len());
        // One binary per embedding.
        assert_eq!(lpai_direct_embed_load(embed, buffer, BINARY.len()), ERROR_STATE);
        assert_eq!(lpai_direct_embed_destroy(embed), OK);
        assert_eq!(lpai_direct_embed_destroy(embed), ERROR_INVALID_ARGUMENT);
        assert_eq!(last_error(embed), "not a live lpai_direct_embed handle");
    }
}

#[test]
fn memory_types_are_set_before_a_load_and_a_wrong_one_or_a_late_one_is_refused() {
    let mut arena = std::boxed::Box::new(Aligned([0u8; 16 * 1024]));
    let mut model = Aligned([0u8; 384]);
    model.0[..BINARY.len()].copy_from_slice(BINARY);
    let embed = create(&mut arena.0);
    let mut ready = 0;
    // SAFETY: a live handle, valid out-pointers, and a binary that outlives the handle, outside the arena.
    unsafe {
        assert_eq!(lpai_direct_embed_set_memory_types(embed, 9, MEMORY_DDR), ERROR_INVALID_ARGUMENT);
        assert!(last_error(embed).starts_with("set_memory_types: a memory type is LPAI_DIRECT_EMBED_MEMORY_DDR (1)"));
        assert_eq!(lpai_direct_embed_set_memory_types(ptr::null_mut(), MEMORY_TCM, MEMORY_DDR), ERROR_INVALID_ARGUMENT);
        assert_eq!(lpai_direct_embed_set_memory_types(embed, MEMORY_TCM, MEMORY_PSRAM), OK);
        let buffer = model.0.as_ptr().cast();
        assert_eq!(lpai_direct_embed_load_padded(embed, buffer, BINARY.len(), model.0.len()), OK);
        // The contract model takes pools this small in TCM and PSRAM, and computes the same frame.
        assert_eq!(lpai_direct_embed_execute_frame(embed, &mut ready), OK);
        assert_eq!(lpai_direct_embed_set_memory_types(embed, MEMORY_DDR, MEMORY_DDR), ERROR_STATE);
        assert!(last_error(embed).contains("a context binary is loaded"));
        assert_eq!(lpai_direct_embed_destroy(embed), OK);
    }
}

#[test]
fn an_op_package_after_the_load_is_refused_and_a_null_path_is_an_invalid_argument() {
    let mut arena = std::boxed::Box::new(Aligned([0u8; 16 * 1024]));
    let mut model = Aligned([0u8; 384]);
    model.0[..BINARY.len()].copy_from_slice(BINARY);
    let embed = create(&mut arena.0);
    let (path, provider) = (c"liblpai_test_op_package.so".as_ptr(), c"LpaiTestOpPackage_interfaceProvider".as_ptr());
    // SAFETY: a live handle, NUL-terminated strings (or null ones, refused), and a binary that outlives the handle,
    // outside the arena.
    unsafe {
        let null = ptr::null();
        assert_eq!(
            lpai_direct_embed_register_op_package(ptr::null_mut(), path, provider, null),
            ERROR_INVALID_ARGUMENT
        );
        assert_eq!(lpai_direct_embed_register_op_package(embed, null, provider, null), ERROR_INVALID_ARGUMENT);
        assert!(last_error(embed).starts_with("register_op_package: the path and the interface provider are strings"));
        assert_eq!(lpai_direct_embed_register_op_package(embed, path, null, null), ERROR_INVALID_ARGUMENT);
        let buffer = model.0.as_ptr().cast();
        assert_eq!(lpai_direct_embed_load_padded(embed, buffer, BINARY.len(), model.0.len()), OK);
        assert_eq!(lpai_direct_embed_register_op_package(embed, path, provider, c"DSP".as_ptr()), ERROR_STATE);
        assert_eq!(
            last_error(embed),
            "register_op_package: a context binary is loaded; op packages are registered before the load"
        );
        assert_eq!(lpai_direct_embed_destroy(embed), OK);
    }
}

#[test]
#[cfg_attr(miri, ignore = "the contract model opens the package with dlopen")]
fn an_op_package_the_backend_cannot_open_is_a_library_error_naming_it() {
    let mut arena = std::boxed::Box::new(Aligned([0u8; 16 * 1024]));
    let embed = create(&mut arena.0);
    let (path, provider) = (c"/nonexistent/libNoOps.so".as_ptr(), c"NoOps_interfaceProvider".as_ptr());
    // SAFETY: a live handle and NUL-terminated strings.
    unsafe {
        assert_eq!(lpai_direct_embed_register_op_package(embed, path, provider, ptr::null()), ERROR_LIBRARY);
        assert_eq!(
            last_error(embed),
            "op package /nonexistent/libNoOps.so:NoOps_interfaceProvider: backendRegisterOpPackage failed: \
             QNN_BACKEND_ERROR_OP_PACKAGE_NOT_FOUND (4005): it could not be opened (missing, or not a library)"
        );
        assert_eq!(lpai_direct_embed_destroy(embed), OK);
    }
}

#[test]
fn pointers_sizes_and_order_are_checked() {
    let mut arena = std::boxed::Box::new(Aligned([0u8; 16 * 1024]));
    let mut small = Aligned([0u8; 64]);
    let mut out = ptr::null_mut();
    let (mut ready, mut count) = (0, 0usize);
    // SAFETY: every pointer is null, or valid for what the function does with it.
    unsafe {
        let arena_pointer = arena.0.as_mut_ptr().cast::<c_void>();
        let create_in = |arena: *mut c_void, bytes: usize, out: *mut *mut EmbedHandle| {
            lpai_direct_embed_create(arena, bytes, LPAI.as_ptr(), SYSTEM.as_ptr(), out)
        };
        assert_eq!(create_in(arena_pointer, 16 * 1024, ptr::null_mut()), ERROR_INVALID_ARGUMENT);
        assert_eq!(create_in(ptr::null_mut(), 16, &mut out), ERROR_INVALID_ARGUMENT);
        assert_eq!(create_in(arena_pointer, usize::MAX, &mut out), ERROR_INVALID_ARGUMENT);
        assert_eq!(create_in(small.0.as_mut_ptr().cast(), 64, &mut out), ERROR_ARENA_FULL);
        assert!(out.is_null());
        let named = lpai_direct_embed_create(arena_pointer, 16 * 1024, ptr::null(), SYSTEM.as_ptr(), &mut out);
        assert_eq!(named, ERROR_INVALID_ARGUMENT);
        let missing = c"/no/such/libQnnLpai.so".as_ptr();
        assert_eq!(
            lpai_direct_embed_create(arena_pointer, 16 * 1024, missing, SYSTEM.as_ptr(), &mut out),
            ERROR_LIBRARY
        );
        assert!(!out.is_null());
        assert!(last_error(out).starts_with("loading the QNN backend library: "), "{}", last_error(out));
        assert_eq!(lpai_direct_embed_load(out, BINARY.as_ptr().cast(), BINARY.len()), ERROR_STATE);
        assert_eq!(lpai_direct_embed_destroy(out), OK);

        let embed = create(&mut arena.0);
        for null_handle in [ptr::null_mut(), small.0.as_mut_ptr().cast::<EmbedHandle>()] {
            assert_eq!(lpai_direct_embed_execute_frame(null_handle, &mut ready), ERROR_INVALID_ARGUMENT);
            assert_eq!(lpai_direct_embed_graph_count(null_handle, &mut count), ERROR_INVALID_ARGUMENT);
            assert_eq!(lpai_direct_embed_destroy(null_handle), ERROR_INVALID_ARGUMENT);
        }
        assert_eq!(lpai_direct_embed_execute_frame(embed, ptr::null_mut()), ERROR_INVALID_ARGUMENT);
        assert_eq!(last_error(embed), "execute_frame: null or misaligned ready");
        let misaligned = small.0.as_mut_ptr().add(1).cast::<usize>();
        assert_eq!(lpai_direct_embed_graph_count(embed, misaligned), ERROR_INVALID_ARGUMENT);
        assert_eq!(lpai_direct_embed_load(embed, ptr::null(), 16), ERROR_INVALID_ARGUMENT);
        let binary = BINARY.as_ptr().cast();
        assert_eq!(lpai_direct_embed_load_padded(embed, binary, BINARY.len(), 4), ERROR_INVALID_ARGUMENT);
        assert_eq!(lpai_direct_embed_load_padded(embed, binary, 0, 0), ERROR_INVALID_ARGUMENT);
        assert_eq!(lpai_direct_embed_load_padded(embed, binary, 1, usize::MAX), ERROR_INVALID_ARGUMENT);
        let inside = arena.0.as_ptr().add(8 * 1024).cast();
        assert_eq!(lpai_direct_embed_load(embed, inside, 512), ERROR_INVALID_ARGUMENT);
        assert_eq!(last_error(embed), "load: the binary overlaps the embedding's arena");
        // Not a binary at all: libQnnSystem refuses it.
        let garbage = [0u8; 64];
        assert_eq!(lpai_direct_embed_load(embed, garbage.as_ptr().cast(), garbage.len()), ERROR_BINARY);
        assert!(last_error(embed).starts_with("not a usable QNN context binary"), "{}", last_error(embed));
        assert_eq!(lpai_direct_embed_tensor_count(embed, 2, &mut count), ERROR_INVALID_ARGUMENT);
        assert_eq!(lpai_direct_embed_find_graph(embed, ptr::null(), &mut count), ERROR_INVALID_ARGUMENT);
        assert_eq!(lpai_direct_embed_destroy(embed), OK);
    }
}

/// The contract model's metadata record (made through its system library, as `lpai-net-run inspect` does).
fn record() -> Vec<u8> {
    register();
    let mut record = [0u8; 256];
    let length = contract_record(&mut record).expect("the contract model's record");
    record[..length].to_vec()
}

#[test]
fn the_c_functions_run_the_contract_fixture_from_a_metadata_record_with_no_system_library() {
    let record = record();
    // The same record, its graph called "others" instead of "single" (same length: the bytes after stay put).
    let mut other = record.clone();
    assert_eq!(&other[44..51], b"\x06single");
    other[45..51].copy_from_slice(b"others");
    let mut arena = std::boxed::Box::new(Aligned([0u8; 16 * 1024]));
    let mut model = Aligned([0u8; 384]);
    model.0[..BINARY.len()].copy_from_slice(BINARY);
    let mut embed = ptr::null_mut();
    let (mut in_place, mut count, mut ready) = (0, 0usize, 0);
    let mut name: *const c_char = ptr::null();
    let (mut input, mut input_bytes) = (ptr::null_mut(), 0usize);
    let (mut output, mut output_bytes) = (ptr::null(), 0usize);
    // SAFETY: a live arena, a NUL-terminated name, valid out-pointers, a binary that outlives the handle and
    // records that outlive the calls, all outside the arena (but the one that is meant to be inside).
    unsafe {
        let arena_pointer = arena.0.as_mut_ptr().cast::<c_void>();
        let created = lpai_direct_embed_create(arena_pointer, arena.0.len(), LPAI.as_ptr(), ptr::null(), &mut embed);
        assert_eq!(created, OK, "{}", last_error(embed));
        let binary = model.0.as_ptr().cast::<c_void>();
        let (bytes, padded) = (BINARY.len(), model.0.len());
        // No system library: the metadata must come with the binary.
        assert_eq!(lpai_direct_embed_load(embed, binary, bytes), ERROR_STATE);
        assert!(last_error(embed).starts_with("no libQnnSystem was opened"), "{}", last_error(embed));
        // Every pointer and size of the record is checked.
        let load = |record: *const u8, record_bytes: usize| {
            lpai_direct_embed_load_padded_with_metadata(embed, binary, bytes, padded, record.cast(), record_bytes)
        };
        assert_eq!(load(ptr::null(), record.len()), ERROR_INVALID_ARGUMENT);
        assert_eq!(last_error(embed), "load_with_metadata: the record is null or empty");
        assert_eq!(load(record.as_ptr(), 0), ERROR_INVALID_ARGUMENT);
        assert_eq!(load(record.as_ptr(), usize::MAX), ERROR_INVALID_ARGUMENT);
        assert_eq!(load(arena.0.as_ptr().add(8 * 1024), record.len()), ERROR_INVALID_ARGUMENT);
        assert!(last_error(embed).ends_with("overlaps the embedding's arena"), "{}", last_error(embed));
        assert_eq!(
            lpai_direct_embed_load_with_metadata(embed, ptr::null(), bytes, record.as_ptr().cast(), 4),
            ERROR_INVALID_ARGUMENT
        );
        // Untrusted bytes: a truncated record, and the binary itself, are refused with where.
        assert_eq!(load(record.as_ptr(), record.len() - 1), ERROR_BINARY);
        assert!(last_error(embed).starts_with("the metadata record is malformed (byte "), "{}", last_error(embed));
        assert_eq!(load(BINARY.as_ptr(), 64), ERROR_BINARY);
        // A record for another graph: refused by name.
        assert_eq!(load(other.as_ptr(), other.len()), ERROR_BINARY);
        assert!(last_error(embed).contains("names graph others,"), "{}", last_error(embed));
        // The matching record: the fixture's outputs, the binary in place.
        assert_eq!(load(record.as_ptr(), record.len()), OK, "{}", last_error(embed));
        assert_eq!(last_error(embed), "");
        assert_eq!(lpai_direct_embed_binary_in_place(embed, &mut in_place), OK);
        assert_eq!(in_place, 1);
        assert_eq!(lpai_direct_embed_graph_count(embed, &mut count), OK);
        assert_eq!(count, 1);
        assert_eq!(lpai_direct_embed_graph_name(embed, &mut name), OK);
        assert_eq!(CStr::from_ptr(name), c"single");
        assert_eq!(lpai_direct_embed_input(embed, 0, &mut input, &mut input_bytes), OK);
        assert_eq!(lpai_direct_embed_output(embed, 0, &mut output, &mut output_bytes), OK);
        assert_eq!((input_bytes, output_bytes), (16, 16));
        // The record is needed only during the load.
        drop(record);
        for (frame, reference) in FRAMES {
            ptr::copy_nonoverlapping(frame.as_ptr(), input.cast::<u8>(), frame.len());
            assert_eq!(lpai_direct_embed_execute_frame(embed, &mut ready), OK, "{}", last_error(embed));
            assert_eq!(ready, 1);
            assert_eq!(core::slice::from_raw_parts(output.cast::<u8>(), output_bytes), reference);
        }
        assert_eq!(lpai_direct_embed_destroy(embed), OK);
    }
}
