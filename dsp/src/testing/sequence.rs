//! Self-tests: the whole LPAI load-and-execute sequence, and the alignment the backend asks for.

use super::fake::{self, binary, Event, GraphId, Settings};
use crate::runtime::graph::LpaiMemory;
use crate::runtime::quantize::{float_bytes, Encoding};
use crate::runtime::{Arena, BackendOptions, ContextOptions, GraphOptions, Libraries};
use lpai_direct::qnn::{lpai, Priority};

const G0: GraphId = GraphId { context: 0, graph: 0 };

crate::self_tests! {
    fn lpai_sequence_loads_configures_and_executes() {
        let session = fake::begin(Settings::LPAI);
        let bytes = expect_some!(super::binary(&binary::ONE_GRAPH));
        let mut buffer = [0u8; super::ARENA_BYTES];
        let arena = Arena::new(&mut buffer);
        let options = BackendOptions { lpai_hw_version: lpai::HwVersion::V5_1, ..BackendOptions::default() };
        let backend = expect_ok!(super::lpai_backend(&options));
        check!(backend.is_lpai() && backend.info().backend_id == lpai::BACKEND_ID_LPAI);
        check!(backend.info().name == "LPAI_QTI_AISW");
        let properties = *backend.properties();
        check!(properties.start_alignment == 128 && properties.size_alignment == 64);
        check!(properties.requires_persistent_binary);
        let libraries = Libraries::new(backend, Some(expect_ok!(super::system_library())));
        let graph = GraphOptions {
            priority: Some(Priority::HIGH),
            perf: lpai::PerfCfg { fps: 30, ftrt_ratio: 5, client_type: lpai::ClientPerfType::NON_REAL_TIME },
            affinity: lpai::CoreAffinity { affinity: lpai::CoreAffinityType::HARD, core_selection: 0b10 },
            memory: lpai::MemoryPlacement { scratch: lpai::MemType::DDR, persistent: lpai::MemType::TCM },
            input_sets: 1,
        };
        let context_options = ContextOptions { graph, priority: Some(Priority::NORMAL_HIGH), ..ContextOptions::default() };
        let mut context = expect_ok!(super::load_copy(&libraries, &arena, &bytes, context_options));
        check!(context.graph_count() == 1 && context.is_persistent() && context.binary_bytes() == bytes.len());
        check!(arena.used() > bytes.len());

        let record = session.record();
        check!(record.hw_info == Some(lpai::HwInfo { lpai_target: options.lpai_target, hw_version: lpai::HwVersion::V5_1 }));
        check!(record.backend_configs == 1);
        // ALIGNMENT_REQ, REQUIRE_PERSISTENT_BINARY, then ENPU_CORE_NUM (each core's ENPU_CORE_INFO only for a probe).
        check!(record.properties_asked == [0, 1, 200]);
        let cores = expect_some!(libraries.backend().enpu_cores());
        check!(cores.count == 2 && cores.described().iter().map(|core| core.mac_cnt).eq([128, 256]));
        let created = &record.contexts[0];
        check!(created.live && created.device_was_null && created.persistent_binary == Some(1));
        check!(created.priority == Some(Priority::NORMAL_HIGH) && created.custom.is_empty());
        check!(created.binary_address.is_multiple_of(128) && created.binary_size == bytes.len() as u64);
        let configured = expect_some!(record.graph(G0));
        let scratch = expect_some!(configured.scratch);
        let persistent = expect_some!(configured.persistent);
        // 1000 and 300 bytes asked for, handed over rounded up to the size alignment (64).
        check!(scratch.size == 1024 && scratch.addr.addr().is_multiple_of(128) && scratch.mem_type == lpai::MemType::DDR);
        check!(persistent.size == 320 && persistent.addr.addr().is_multiple_of(128));
        check!(persistent.mem_type == lpai::MemType::TCM);
        check!(configured.perf == Some(graph.perf) && configured.affinity == Some(graph.affinity));
        check!(configured.priority == Some(Priority::HIGH) && configured.unknown_configs == 0);
        check!(configured.finalized_after_config);
        check!(record.in_order(&[
            Event::BackendCreate,
            Event::BackendGetProperty,
            Event::ContextCreate(0),
            Event::GraphRetrieve(G0),
            Event::GraphGetProperty(G0),
            Event::GraphSetConfig(G0),
            Event::GraphFinalize(G0),
        ]));
        check!(record.in_order(&[Event::SystemGetBinaryInfo(0), Event::GraphRetrieve(G0)]));

        let graph = expect_some!(context.graph_mut(0));
        check!(graph.name() == "g0" && graph.input_count() == 1 && graph.output_count() == 1);
        check!(graph.lpai_memory() == LpaiMemory { scratch: 1000, persistent: 300 });
        let input = expect_some!(graph.input(0));
        check!(input.name == "g0_in" && input.id == 1 && input.dimensions == [1, 4] && input.bytes == 4);
        check!(input.encoding == Some(Encoding::Unsigned8 { scale: 0.5, offset: -10 }));
        let floats: [u8; 16] = float_bytes([0.0, 1.0, -5.0, 200.0]);
        expect_ok!(graph.write_input_float(0, &floats));
        check!(expect_some!(graph.input_bytes_mut(0)) == [10, 12, 0, 255]);
        let execution = expect_ok!(graph.execute());
        check!(execution.attempts == 1);
        check!(expect_some!(graph.output_bytes(0)) == [11, 13, 1, 255]);
        let mut out = [0u8; 16];
        expect_ok!(graph.read_output_float(0, &mut out));
        check!(super::floats::<4>(&out) == [0.5, 1.5, -4.5, 122.5]);
        let executed = session.record();
        let executed = expect_some!(executed.graph(G0));
        check!(executed.execute_calls == 1 && executed.completed == 1 && executed.io_aligned);
    }

    fn buffers_follow_the_reported_alignment() {
        let session = fake::begin(Settings { start_alignment: 512, size_alignment: 32, ..Settings::LPAI });
        let bytes = expect_some!(super::binary(&binary::ONE_GRAPH_V1));
        let mut buffer = [0u8; 3 * super::ARENA_BYTES];
        let arena = Arena::new(&mut buffer);
        let backend = expect_ok!(super::lpai_backend(&BackendOptions::default()));
        check!(backend.properties().start_alignment == 512 && backend.properties().size_alignment == 32);
        let libraries = Libraries::new(backend, Some(expect_ok!(super::system_library())));
        let mut context = expect_ok!(super::load_copy(&libraries, &arena, &bytes, ContextOptions::default()));
        let graph = expect_some!(context.graph_mut(0));
        expect_ok!(graph.write_input(0, &[1, 2, 3, 254]));
        check!(expect_ok!(graph.execute()).attempts == 1);
        check!(expect_some!(graph.output_bytes(0)) == [2, 3, 4, 255]);
        let record = session.record();
        check!(record.contexts[0].binary_address.is_multiple_of(512));
        let graph = expect_some!(record.graph(G0));
        let (scratch, persistent) = (expect_some!(graph.scratch), expect_some!(graph.persistent));
        check!(scratch.addr.addr().is_multiple_of(512) && persistent.addr.addr().is_multiple_of(512) && graph.io_aligned);
        check!(graph.perf == Some(lpai::PerfCfg::DEFAULT) && graph.priority.is_none());
        check!(graph.affinity == Some(lpai::CoreAffinity { affinity: lpai::CoreAffinityType::SOFT, core_selection: 0 }));
    }
}
