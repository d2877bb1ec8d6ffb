//! Self-tests: the LPAI ENABLE_ISLAND context configs (one with NULL for every graph, or one per graph name).

use super::fake::{self, binary, Settings};
use crate::runtime::{Arena, BackendOptions, ContextOptions, Island};
use core::ffi::CStr;
use lpai_direct::qnn::lpai::ContextConfigOption;

const ENABLE_ISLAND: u32 = ContextConfigOption::ENABLE_ISLAND.0;

/// Loads `spec` with `island` and returns the LPAI custom configs contextCreateFromBinary got.
fn island_configs(
    spec: &binary::BinarySpec,
    island: Island<'_>,
) -> Result<heapless::Vec<(u32, usize), 8>, crate::selftest::Failure> {
    let session = fake::begin(Settings::LPAI);
    let bytes = expect_some!(super::binary(spec));
    let mut buffer = [0u8; super::ARENA_BYTES];
    let arena = Arena::new(&mut buffer);
    let libraries = expect_ok!(super::fake_libraries(&BackendOptions::default()));
    let options = ContextOptions { island, ..ContextOptions::default() };
    let context = expect_ok!(super::load_copy(&libraries, &arena, &bytes, options));
    check!(context.graph_count() == spec.graph_count);
    let record = session.record();
    check!(record.contexts[0].persistent_binary == Some(1));
    Ok(record.contexts[0].custom.clone())
}

fn address(name: &CStr) -> usize {
    name.as_ptr().addr()
}

crate::self_tests! {
    fn island_for_all_graphs_is_one_config_with_null() {
        let configs = island_configs(&binary::TWO_GRAPHS, Island::AllGraphs)?;
        check!(configs == [(ENABLE_ISLAND, 0)]);
    }

    fn island_for_named_graphs_is_one_config_per_name() {
        let one: &[&CStr] = &[c"g0"];
        let configs = island_configs(&binary::ONE_GRAPH, Island::Graphs(one))?;
        check!(configs == [(ENABLE_ISLAND, address(one[0]))]);
        let two: &[&CStr] = &[c"g1", c"g0"];
        let configs = island_configs(&binary::TWO_GRAPHS, Island::Graphs(two))?;
        check!(configs == [(ENABLE_ISLAND, address(two[0])), (ENABLE_ISLAND, address(two[1]))]);
    }

    fn no_island_config_unless_asked() {
        let configs = island_configs(&binary::ONE_GRAPH, Island::Off)?;
        check!(configs.is_empty());
    }
}
