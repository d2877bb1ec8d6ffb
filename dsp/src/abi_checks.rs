//! Self-tests of the shared declarations as this target lays them out (on Hexagon: inside the qemu executable).

crate::self_tests! {
    fn qnn_layouts_match_the_verified_table() {
        for row in lpai_direct::qnn::layout::layout_checks() {
            if row.actual != row.expected {
                crate::log!(crate::platform::Level::Error, row.what, ": ", row.actual, " != ", row.expected);
            }
            check!(row.actual == row.expected);
        }
    }
}
