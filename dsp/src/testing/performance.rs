//! Self-tests: changing a loaded graph's LPAI performance settings (PERF_CFG, CORE_AFFINITY, priority) sets
//! them again and finalizes again; on a non-LPAI backend only the priority applies.

use super::fake::{self, binary, Event, GraphId, Settings};
use crate::runtime::{Arena, Backend, BackendOptions, ContextOptions, GraphOptions, Libraries, RuntimeError};
use lpai_direct::qnn::{lpai, Priority};

const G0: GraphId = GraphId { context: 0, graph: 0 };

crate::self_tests! {
    fn new_performance_settings_are_set_and_finalized_again() {
        let session = fake::begin(Settings::LPAI);
        load_one_graph!(context);
        let graph = expect_some!(context.graph_mut(0));
        let before = session.record();
        let first_finalize = expect_some!(before.position(Event::GraphFinalize(G0)));

        let perf = lpai::PerfCfg { fps: 50, ftrt_ratio: 2, client_type: lpai::ClientPerfType::NON_REAL_TIME };
        let affinity = lpai::CoreAffinity { affinity: lpai::CoreAffinityType::HARD, core_selection: 0b1 };
        expect_ok!(graph.set_performance(perf, affinity, Some(Priority::LOW)));
        let after = session.record();
        let configured = expect_some!(after.graph(G0));
        check!(configured.perf == Some(perf) && configured.affinity == Some(affinity));
        check!(configured.priority == Some(Priority::LOW) && configured.finalized_after_config);
        let events = &after.events[first_finalize + 1..];
        check!(events.first() == Some(&Event::GraphSetConfig(G0)) && events.get(1) == Some(&Event::GraphFinalize(G0)));
        check!(configured.scratch.is_some_and(|m| m.size == 1024));

        expect_ok!(graph.write_input(0, &[1, 2, 3, 4]));
        check!(expect_ok!(graph.execute()).attempts == 1);
        check!(expect_some!(graph.output_bytes(0)) == [2, 3, 4, 5]);
    }

    fn a_mix_of_cores_is_refused_when_set_and_at_load_naming_the_mask() {
        let session = fake::begin(Settings::LPAI);
        load_one_graph!(context);
        let graph = expect_some!(context.graph_mut(0));
        let before = session.record().events.len();
        let mix = lpai::CoreAffinity { affinity: lpai::CoreAffinityType::HARD, core_selection: 0b11 };
        let refused = graph.set_performance(lpai::PerfCfg::DEFAULT, mix, None);
        check!(matches!(refused, Err(RuntimeError::CoreMix(0b11))));
        let Err(error) = refused else {
            return Err(crate::selftest::Failure { file: file!(), line: line!(), condition: "a mix of cores is refused" });
        };
        check!(crate::message!(error).rendered().as_str().starts_with("core_selection 0x3 selects more than one core"));
        check!(session.record().events.len() == before);

        let bytes = expect_some!(super::binary(&binary::ONE_GRAPH));
        let mut buffer = [0u8; super::ARENA_BYTES];
        let arena = Arena::new(&mut buffer);
        let libraries = expect_ok!(super::fake_libraries(&BackendOptions::default()));
        let options = ContextOptions { graph: GraphOptions { affinity: mix, ..GraphOptions::default() }, ..Default::default() };
        let refused = super::load_copy(&libraries, &arena, &bytes, options);
        check!(matches!(refused, Err(RuntimeError::CoreMix(0b11))));
    }

    fn a_core_the_backend_does_not_report_is_refused_and_one_it_does_not_count_is_not_checked() {
        let session = fake::begin(Settings::LPAI); // two eNPU cores
        load_one_graph!(context);
        let graph = expect_some!(context.graph_mut(0));
        let third = lpai::CoreAffinity { affinity: lpai::CoreAffinityType::HARD, core_selection: 0b100 };
        let refused = graph.set_performance(lpai::PerfCfg::DEFAULT, third, None);
        check!(matches!(refused, Err(RuntimeError::NoSuchCore { mask: 0b100, cores: 2 })));
        let Err(error) = refused else {
            return Err(crate::selftest::Failure { file: file!(), line: line!(), condition: "core 2 of 2 is refused" });
        };
        check!(crate::message!(error).rendered().as_str().contains("it reports 2 eNPU core(s) (ENPU_CORE_NUM), bits 0 to 1"));
        let second = lpai::CoreAffinity { core_selection: 0b10, ..third };
        expect_ok!(graph.set_performance(lpai::PerfCfg::DEFAULT, second, None));
        drop(context);
        drop(session);

        // A backend that does not answer ENPU_CORE_NUM: nothing to check the selection against.
        let _session = fake::begin(Settings { enpu_cores: 0, ..Settings::LPAI });
        load_one_graph!(older);
        let graph = expect_some!(older.graph_mut(0));
        expect_ok!(graph.set_performance(lpai::PerfCfg::DEFAULT, third, None));
    }

    fn on_another_backend_only_the_priority_is_set() {
        let generic = Settings { require_persistent: false, start_alignment: 64, size_alignment: 1, ..Settings::LPAI };
        let session = fake::begin(generic);
        let bytes = expect_some!(super::binary(&binary::ONE_GRAPH));
        let mut buffer = [0u8; super::ARENA_BYTES];
        let arena = Arena::new(&mut buffer);
        let options = BackendOptions { backend_id: Some(fake::backend::HTP_BACKEND_ID), ..BackendOptions::default() };
        // SAFETY: the fake's provider list is static.
        let backend = expect_ok!(unsafe { Backend::from_providers(fake::htp_and_lpai_providers, &options) });
        let libraries = Libraries::new(backend, Some(expect_ok!(super::system_library())));
        let mut context = expect_ok!(super::load_copy(&libraries, &arena, &bytes, ContextOptions::default()));
        let graph = expect_some!(context.graph_mut(0));
        let perf = lpai::PerfCfg::DEFAULT;
        let affinity = lpai::CoreAffinity { affinity: lpai::CoreAffinityType::SOFT, core_selection: 0 };
        let calls = |record: &fake::Record| record.events.iter().filter(|e| **e == Event::GraphSetConfig(G0)).count();
        let before = calls(&session.record());
        expect_ok!(graph.set_performance(perf, affinity, None));
        check!(calls(&session.record()) == before);
        expect_ok!(graph.set_performance(perf, affinity, Some(Priority::HIGH)));
        let record = session.record();
        let configured = expect_some!(record.graph(G0));
        check!(calls(&record) == before + 1);
        check!(configured.priority == Some(Priority::HIGH) && configured.perf.is_none() && configured.affinity.is_none());
        expect_ok!(graph.write_input(0, &[1, 2, 3, 4]));
        expect_ok!(graph.execute());
        check!(expect_some!(graph.output_bytes(0)) == [2, 3, 4, 5]);
        // Another backend gets exact I/O sizes (LPAI's are padded to 64: `execution.rs`).
        check!(expect_some!(session.record().graph(G0)).data_sizes == (4, 4));
    }
}
