//! Self-tests that run the same on the host (`cargo test`) and on Hexagon (the qemu self-test executable); only
//! in builds with the `self-test` feature or under `cargo test`.
//!
//! A module declares its tests with [`self_tests!`]; each becomes a plain function listed in the module's
//! `SELF_TESTS`, plus a `#[test]` wrapper for the host, which registers the contract model of libQnnLpai first (as
//! the Hexagon self-test program does before it runs them). `testing::all` gathers every module's list.

use core::fmt;

/// Where and why a self-test failed.
#[derive(Clone, Copy, Debug)]
pub struct Failure {
    /// Source file of the failed check.
    pub file: &'static str,
    /// Line of the failed check.
    pub line: u32,
    /// The condition that did not hold, as written.
    pub condition: &'static str,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: check failed: {}", self.file, self.line, self.condition)
    }
}

/// One named self-test.
#[derive(Clone, Copy)]
pub struct SelfTest {
    /// `module::function`.
    pub name: &'static str,
    /// Runs the test.
    pub run: fn() -> Result<(), Failure>,
}

/// Declares self-tests: `self_tests! { fn name() { check!(condition); ... } ... }`.
#[macro_export]
macro_rules! self_tests {
    ($(fn $name:ident() $body:block)*) => {
        #[allow(unused_imports)]
        use $crate::{check, expect_ok, expect_some};
        $(
            #[allow(unreachable_code, clippy::unnecessary_wraps)]
            pub(crate) fn $name() -> Result<(), $crate::selftest::Failure> {
                $body
                Ok(())
            }
        )*
        /// This module's self-tests.
        pub(crate) const SELF_TESTS: &[$crate::selftest::SelfTest] = &[$(
            $crate::selftest::SelfTest { name: concat!(module_path!(), "::", stringify!($name)), run: $name },
        )*];
        #[cfg(test)]
        mod host_self_tests {
            $(
                #[test]
                fn $name() -> Result<(), std::string::String> {
                    $crate::testing::host::register_contract_model();
                    super::$name().map_err(|failure| std::string::ToString::to_string(&failure))
                }
            )*
        }
    };
}

/// Inside [`self_tests!`]: returns a [`Failure`] naming the condition when it does not hold.
#[macro_export]
macro_rules! check {
    ($condition:expr) => {
        if !$condition {
            return Err($crate::selftest::Failure { file: file!(), line: line!(), condition: stringify!($condition) });
        }
    };
}

/// Inside a self-test: the `Ok` value, or a failure naming the expression (the error is logged).
#[macro_export]
macro_rules! expect_ok {
    ($result:expr) => {
        match $result {
            Ok(value) => value,
            Err(error) => {
                $crate::log!(
                    $crate::platform::Level::Error,
                    $crate::platform::Message::StepFailed,
                    stringify!($result),
                    error
                );
                return Err($crate::selftest::Failure {
                    file: file!(),
                    line: line!(),
                    condition: concat!(stringify!($result), " is Ok"),
                });
            }
        }
    };
}

/// Inside a self-test: the `Some` value, or a failure naming the expression.
#[macro_export]
macro_rules! expect_some {
    ($option:expr) => {
        match $option {
            Some(value) => value,
            None => {
                return Err($crate::selftest::Failure {
                    file: file!(),
                    line: line!(),
                    condition: concat!(stringify!($option), " is Some"),
                })
            }
        }
    };
}

/// Totals of one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Tests that passed.
    pub passed: u32,
    /// Tests that failed.
    pub failed: u32,
}
