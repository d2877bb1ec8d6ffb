//! Self-tests of what this target's build lays out: the QNN declarations' layouts against the verified table (on
//! Hexagon, inside the qemu executable) and the build's default LPAI hardware version.

use crate::build_config::{DEFAULT_LPAI_HW_VERSION, DEFAULT_LPAI_HW_VERSION_NAME};

crate::self_tests! {
    fn qnn_layouts_match_the_verified_table() {
        for row in lpai_direct::qnn::layout::layout_checks() {
            if row.actual != row.expected {
                let line = super::text(format_args!("{}: {} != {}", row.what, row.actual, row.expected));
                crate::log!(crate::platform::Level::Error, crate::platform::Message::Text, line.as_str());
            }
            check!(row.actual == row.expected);
        }
    }

    fn default_lpai_hw_version_is_a_known_one() {
        check!(matches!(DEFAULT_LPAI_HW_VERSION, 5 | 0x0001_0005 | 6 | 7));
        check!(DEFAULT_LPAI_HW_VERSION_NAME.starts_with('v'));
    }
}
