//! Self-tests: a persistent binary the caller owns (`Binary::InPlace`) reaches the backend as the
//! caller's own pointer when it meets the backend's start and size alignment, and as a copy in the arena when not.

use super::fake::{self, binary, Event, Settings};
use crate::runtime::{Arena, BackendOptions, ContextOptions, PersistentBinary, RuntimeError};

/// Memory at the fake's start alignment (128), with room for a fake binary and its padding to the size
/// alignment (64): 200 bytes round up to 256.
#[repr(C, align(128))]
struct Aligned([u8; 384]);

/// An arena at the fake's start alignment, so two arenas pad alike whatever the stack's layout: the in-place and
/// the copied load below differ by the binary's copy alone.
#[repr(C, align(128))]
struct AlignedArena([u8; super::ARENA_BYTES]);

/// Where the bytes the backend got lie relative to `memory`: `Some(offset)` inside it, `None` outside.
fn offset_in(address: usize, memory: &[u8]) -> Option<usize> {
    address.checked_sub(memory.as_ptr() as usize).filter(|&offset| offset < memory.len())
}

crate::self_tests! {
    fn an_aligned_padded_binary_reaches_the_backend_in_place() {
        let session = fake::begin(Settings::LPAI);
        let bytes = expect_some!(super::binary(&binary::ONE_GRAPH));
        let mut model = Aligned([0; 384]);
        lpai_direct::codec::copy_prefix(&mut model.0, &bytes);
        let mut buffer = AlignedArena([0u8; super::ARENA_BYTES]);
        let arena = Arena::new(&mut buffer.0);
        let libraries = expect_ok!(super::fake_libraries(&BackendOptions::default()));
        let binary = expect_some!(PersistentBinary::padded(&model.0, bytes.len()));
        let mut context =
            expect_ok!(super::load_in_place(&libraries, &arena, binary, ContextOptions::default()));
        check!(context.binary_in_place() && context.binary_bytes() == bytes.len() && context.is_persistent());
        let record = session.record();
        check!(record.contexts[0].binary_address == model.0.as_ptr() as usize);
        check!(record.contexts[0].binary_size == bytes.len() as u64 && record.contexts[0].persistent_binary == Some(1));
        // Nothing of the binary went into the arena: tensors and LPAI memory, and at most 1 KiB more (the tensor
        // tables, alignment padding).
        let used = arena.used();
        let model = expect_some!(context.graph(0));
        let inputs = (0..model.input_count()).filter_map(|index| model.input_size(index));
        let outputs = (0..model.output_count()).filter_map(|index| model.output_size(index));
        let tensors: usize = inputs.chain(outputs).map(|size| size.bytes).sum();
        let lpai = model.lpai_memory();
        check!(used <= tensors + lpai.scratch + lpai.persistent + 1024);
        let graph = expect_some!(context.graph_mut(0));
        expect_ok!(graph.write_input(0, &[1, 2, 3, 4]));
        check!(expect_ok!(graph.execute()).attempts == 1);
        check!(expect_some!(graph.output_bytes(0)) == [2, 3, 4, 5]);
        drop(context);
        let freed = session.record();
        check!(freed.contexts[0].binary_intact_at_free == Some(true));
        check!(freed.in_order(&[Event::ContextFree(0), Event::SystemContextFree(0)]));

        // The same binary as a copy needs its size more of the arena.
        let mut copied_buffer = AlignedArena([0u8; super::ARENA_BYTES]);
        let copied_arena = Arena::new(&mut copied_buffer.0);
        let copied = expect_ok!(super::load_copy(&libraries, &copied_arena, &bytes, ContextOptions::default()));
        check!(!copied.binary_in_place() && copied_arena.used() >= used + bytes.len());
    }

    fn a_binary_without_its_size_padding_is_copied() {
        let session = fake::begin(Settings::LPAI);
        let bytes = expect_some!(super::binary(&binary::ONE_GRAPH));
        let mut model = Aligned([0; 384]);
        lpai_direct::codec::copy_prefix(&mut model.0, &bytes);
        let mut buffer = [0u8; super::ARENA_BYTES];
        let arena = Arena::new(&mut buffer);
        let arena_start = arena.used();
        let libraries = expect_ok!(super::fake_libraries(&BackendOptions::default()));
        // Aligned start, but 200 bytes of memory where the size alignment asks for 256.
        let exact = expect_some!(model.0.get(..bytes.len()));
        let binary = PersistentBinary::new(exact);
        let options = ContextOptions::default();
        let context = expect_ok!(super::load_in_place(&libraries, &arena, binary, options));
        check!(!context.binary_in_place() && arena.used() >= arena_start + bytes.len());
        let address = session.record().contexts[0].binary_address;
        check!(address != model.0.as_ptr() as usize && address.is_multiple_of(128));
        check!(offset_in(address, &model.0).is_none());
        drop(context);
        check!(session.record().contexts[0].binary_intact_at_free == Some(true));
    }

    fn a_misaligned_binary_is_copied_to_an_aligned_place() {
        let session = fake::begin(Settings::LPAI);
        let bytes = expect_some!(super::binary(&binary::ONE_GRAPH));
        let mut model = Aligned([0; 384]);
        let shifted = expect_some!(model.0.get_mut(8..));
        lpai_direct::codec::copy_prefix(shifted, &bytes);
        let mut buffer = [0u8; super::ARENA_BYTES];
        let arena = Arena::new(&mut buffer);
        let libraries = expect_ok!(super::fake_libraries(&BackendOptions::default()));
        // Room for the padding, but the start is 8 bytes past the 128-byte alignment.
        let binary = expect_some!(PersistentBinary::padded(expect_some!(model.0.get(8..)), bytes.len()));
        let mut context =
            expect_ok!(super::load_in_place(&libraries, &arena, binary, ContextOptions::default()));
        check!(!context.binary_in_place());
        let address = session.record().contexts[0].binary_address;
        check!(address.is_multiple_of(128) && offset_in(address, &model.0).is_none());
        let graph = expect_some!(context.graph_mut(0));
        expect_ok!(graph.write_input(0, &[7, 7, 7, 7]));
        check!(expect_ok!(graph.execute()).attempts == 1);
        check!(expect_some!(graph.output_bytes(0)) == [8, 8, 8, 8]);
    }

    fn a_persistent_binary_needs_bytes_and_room_for_its_length() {
        let _session = fake::begin(Settings::LPAI);
        let model = Aligned([0; 384]);
        check!(PersistentBinary::padded(&model.0, 385).is_none());
        let padded = expect_some!(PersistentBinary::padded(&model.0, 200));
        check!(padded.bytes().len() == 200 && padded.memory().len() == 384);
        let mut buffer = [0u8; super::ARENA_BYTES];
        let arena = Arena::new(&mut buffer);
        let libraries = expect_ok!(super::fake_libraries(&BackendOptions::default()));
        let empty = expect_some!(PersistentBinary::padded(&model.0, 0));
        let refused = super::load_in_place(&libraries, &arena, empty, ContextOptions::default());
        check!(matches!(refused, Err(RuntimeError::BinarySize(0))));
    }
}
