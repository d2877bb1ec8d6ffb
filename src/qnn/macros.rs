//! The `c_enum!` helper: declares a C enum as a `#[repr(transparent)]` `u32` newtype.
//!
//! A C enum read back from a backend may hold any value, so a Rust `enum` would be unsound there.
//! Each generated type keeps the raw value public, has one associated constant per known C
//! enumerator (documented with its C name) and a `c_name` lookup for diagnostics.

/// Declares a `#[repr(transparent)] pub struct Name(pub u32)` with associated constants.
///
/// Syntax: `c_enum! { /// docs  pub struct Name = "C_TYPE_t" { CONST = value => "C_NAME", ... } }`.
/// Aliases (a second name for a value already listed) go in an optional `aliases { ... }` block:
/// they get constants but are not returned by `c_name`.
macro_rules! c_enum {
    (
        $(#[$meta:meta])*
        pub struct $name:ident = $c_type:literal {
            $( $konst:ident = $value:expr => $c_name:literal ),* $(,)?
        }
        $( aliases { $( $alias:ident = $alias_value:expr => $alias_c_name:literal ),* $(,)? } )?
    ) => {
        $(#[$meta])*
        #[doc = concat!("\n\nC type: `", $c_type, "` (a 32-bit C enum or `uint32_t`).")]
        #[repr(transparent)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u32);

        impl $name {
            $(
                #[doc = concat!("`", $c_name, "`.")]
                pub const $konst: Self = Self($value);
            )*
            $($(
                #[doc = concat!("`", $alias_c_name, "` (alias).")]
                pub const $alias: Self = Self($alias_value);
            )*)?

            /// The C enumerator name of this value, or `None` when it is not one this crate knows.
            pub const fn c_name(self) -> Option<&'static str> {
                match self {
                    $( Self::$konst => Some($c_name), )*
                    _ => None,
                }
            }
        }

        impl From<u32> for $name {
            fn from(raw: u32) -> Self {
                Self(raw)
            }
        }

        impl From<$name> for u32 {
            fn from(value: $name) -> u32 {
                value.0
            }
        }
    };
}
