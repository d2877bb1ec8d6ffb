//! Verified-layout tables: each hand-written C declaration's sizes, alignments and offsets against the values
//! measured with clang on the vendor's headers, for 64-bit hosts and Hexagon. A table row is checked twice: by a
//! `const` assertion, so a wrong layout fails the build on the target itself, and by the table's `layout_checks`,
//! which a test or the Hexagon self-test can print.

/// One measured fact: `actual` is what this build computes, `expected` the verified value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayoutCheck {
    /// What is measured, e.g. `"Qnn_TensorV1_t.quantizeParams offset"`.
    pub what: &'static str,
    /// The value in this build.
    pub actual: usize,
    /// The verified value for this target.
    pub expected: usize,
}

impl LayoutCheck {
    /// Whether the build matches the verified value.
    pub const fn holds(&self) -> bool {
        self.actual == self.expected
    }
}

/// Picks the verified value for the target being compiled.
#[allow(unused_variables)] // reason: exactly one of the two arguments is used per target
pub(crate) const fn expected(x86_64: usize, hexagon: usize) -> usize {
    #[cfg(target_arch = "hexagon")]
    {
        hexagon
    }
    #[cfg(not(target_arch = "hexagon"))]
    {
        x86_64
    }
}

/// Declares a module's verified table: `LAYOUT_CHECK_COUNT`, `layout_checks()` and one `const` assertion per row,
/// whose message starts with `$interface`.
macro_rules! layout_table {
    ($interface:literal; $( $what:literal : $actual:expr => $x86_64:literal / $hexagon:literal ; )*) => {
        /// Number of rows in [`layout_checks`].
        pub const LAYOUT_CHECK_COUNT: usize = [$($what),*].len();

        /// Every row of the verified layout table, measured in this build.
        pub fn layout_checks() -> [$crate::layout::LayoutCheck; LAYOUT_CHECK_COUNT] {
            [$(
                $crate::layout::LayoutCheck {
                    what: $what,
                    actual: $actual,
                    expected: $crate::layout::expected($x86_64, $hexagon),
                },
            )*]
        }

        $(
            const _: () = assert!(
                $actual == $crate::layout::expected($x86_64, $hexagon),
                concat!("lpai-direct: ", $interface, " layout mismatch: ", $what),
            );
        )*
    };
}
pub(crate) use layout_table;
