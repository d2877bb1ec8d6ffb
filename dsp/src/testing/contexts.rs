//! Self-tests: teardown order with a persistent binary, and several contexts and graphs on one backend.

use super::fake::{self, binary, Event, GraphId, Settings};
use crate::runtime::{Arena, BackendOptions, ContextOptions};
use core::ptr;
use lpai_direct::qnn::ContextConfig;

crate::self_tests! {
    fn teardown_frees_the_context_before_the_backend_with_the_binary_intact() {
        let session = fake::begin(Settings::LPAI);
        let bytes = expect_some!(super::binary(&binary::ONE_GRAPH));
        let mut buffer = [0u8; super::ARENA_BYTES];
        let arena = Arena::new(&mut buffer);
        let libraries = expect_ok!(super::fake_libraries(&BackendOptions::default()));
        let mut context = expect_ok!(super::load_copy(&libraries, &arena, &bytes, ContextOptions::default()));
        let graph = expect_some!(context.graph_mut(0));
        check!(expect_ok!(graph.execute()).attempts == 1);
        check!(session.record().system_contexts_live == 1);
        drop(context);
        let freed = session.record();
        check!(freed.contexts[0].binary_intact_at_free == Some(true) && !freed.contexts[0].live);
        check!(freed.in_order(&[Event::ContextFree(0), Event::SystemContextFree(0)]));
        check!(freed.system_contexts_live == 0 && freed.position(Event::BackendFree).is_none());
        drop(libraries);
        let record = session.record();
        check!(record.in_order(&[Event::ContextFree(0), Event::BackendFree]));
        check!(record.contexts_live_at_backend_free == 0 && record.events_lost == 0);
    }

    fn the_fake_notices_a_binary_changed_before_context_free() {
        // Checks the checker: drive the fake directly and overwrite the binary while the context lives.
        let session = fake::begin(Settings { require_persistent: false, start_alignment: 1, ..Settings::LPAI });
        let mut bytes = expect_some!(super::binary(&binary::ONE_GRAPH));
        let backend = expect_ok!(super::lpai_backend(&BackendOptions::default()));
        let table = *backend.table();
        let (create, free) = (expect_some!(table.context_create_from_binary), expect_some!(table.context_free));
        let persistent = ContextConfig::persistent_binary(true);
        let configs = [&persistent as *const ContextConfig, ptr::null()];
        let (binary, length) = (bytes.as_mut_ptr(), bytes.len() as u64);
        let mut context = ptr::null_mut();
        // SAFETY: valid configs, a binary buffer that outlives the context, and a valid out-pointer.
        let status = unsafe {
            create(backend.handle(), ptr::null_mut(), configs.as_ptr(), binary.cast(), length, &mut context, ptr::null_mut())
        };
        check!(status == 0);
        // SAFETY: in bounds of `bytes`; the same pointer the fake keeps, so no borrow is invalidated.
        unsafe { *binary.add(100) ^= 0xFF };
        // SAFETY: the context was created above and is freed once; `bytes` is still alive.
        check!(unsafe { free(context, ptr::null_mut()) } == 0);
        check!(session.record().contexts[0].binary_intact_at_free == Some(false));
    }

    fn several_contexts_and_graphs_run_on_one_backend() {
        let session = fake::begin(Settings::LPAI);
        let one = expect_some!(super::binary(&binary::ONE_GRAPH));
        let two = expect_some!(super::binary(&binary::TWO_GRAPHS));
        let mut buffer = [0u8; 2 * super::ARENA_BYTES];
        let arena = Arena::new(&mut buffer);
        let libraries = expect_ok!(super::fake_libraries(&BackendOptions::default()));
        let options = ContextOptions::default();
        let mut first = expect_ok!(super::load_copy(&libraries, &arena, &one, options));
        let mut second = expect_ok!(super::load_copy(&libraries, &arena, &two, options));
        check!(first.graph_count() == 1 && second.graph_count() == 2);
        check!(second.graph_index("g1") == Some(1) && second.graph_index("g2").is_none());
        let g1 = expect_some!(second.graph_mut(1));
        check!(g1.name() == "g1" && expect_some!(g1.input(0)).dimensions == [1, 2]);
        expect_ok!(g1.write_input(0, &[7, 254]));
        let g0 = expect_some!(first.graph_mut(0));
        expect_ok!(g0.write_input(0, &[7, 7, 7, 7]));
        expect_ok!(g0.execute());
        let g1 = expect_some!(second.graph_mut(1));
        expect_ok!(g1.execute());
        check!(expect_some!(g1.output_bytes(0)) == [9, 255]);
        let second_g0 = expect_some!(second.graph_mut(0));
        expect_ok!(second_g0.write_input(0, &[1, 2, 3, 4]));
        expect_ok!(second_g0.execute());
        check!(expect_some!(second_g0.output_bytes(0)) == [2, 3, 4, 5]);
        check!(expect_some!(expect_some!(first.graph(0)).output_bytes(0)) == [8, 8, 8, 8]);

        let record = session.record();
        let (a, b) = (&record.contexts[0], &record.contexts[1]);
        check!(a.live && b.live && a.binary_address != b.binary_address);
        check!(a.binary_address.is_multiple_of(128) && b.binary_address.is_multiple_of(128));
        check!(record.system_contexts_live == 2);
        let second_g1 = expect_some!(record.graph(GraphId { context: 1, graph: 1 }));
        check!(expect_some!(second_g1.scratch).size == 256 && expect_some!(second_g1.persistent).size == 64);
        check!(second_g1.completed == 1 && second_g1.finalized_after_config);
        drop(first);
        check!(session.record().contexts[1].live);
        drop(second);
        drop(libraries);
        let record = session.record();
        check!(record.in_order(&[Event::ContextFree(0), Event::ContextFree(1), Event::BackendFree]));
        let intact = record.contexts.iter().take(2).all(|context| context.binary_intact_at_free == Some(true));
        check!(intact && record.contexts_live_at_backend_free == 0);
    }
}
