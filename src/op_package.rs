//! Op packages as qnn-net-run names them: `PATH:PROVIDER[:TARGET][,PATH:PROVIDER[:TARGET]...]` (`--op_packages`,
//! the audio module's `op_packages=`), read by one parser, [`parse`], into borrowed parts, with no allocation.
//!
//! Each entry is a package library's path, the name of its interface provider function (the symbol QNN's
//! `backendRegisterOpPackage` looks up in it) and, optionally, the target the package was built for (the backend's
//! own default when left out). At most [`MAX_OP_PACKAGES`] entries; none may be empty, have an empty field or a NUL,
//! or more than three fields. A refusal ([`OpPackageError`]) names the entry, by number and text, and what is wrong;
//! the caller puts the flag or key in front of it.

use crate::message::Message;
use core::fmt;

/// Most packages one value names (and one run registers): a custom op lives in a package or two, and every
/// package is one more library in the PD.
pub const MAX_OP_PACKAGES: usize = 4;

/// One package: its library, its interface provider and, if given, its target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpPackage<'a> {
    /// The package library's path (`libMyOpPackage.so`).
    pub path: &'a str,
    /// The interface provider function it exports (`MyOpPackageInterfaceProvider`).
    pub interface_provider: &'a str,
    /// The target it was built for (`CPU`, `DSP`, ...); `None`: the backend's default.
    pub target: Option<&'a str>,
}

/// The packages one value names, in its order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpPackages<'a> {
    entries: [Option<OpPackage<'a>>; MAX_OP_PACKAGES],
}

impl<'a> OpPackages<'a> {
    /// No packages.
    pub const NONE: OpPackages<'static> = OpPackages { entries: [None; MAX_OP_PACKAGES] };

    /// The packages, in the value's order.
    pub fn iter(&self) -> impl Iterator<Item = OpPackage<'a>> + '_ {
        self.entries.iter().flatten().copied()
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.iter().count()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.iter().all(Option::is_none)
    }
}

/// Why a value was refused: which entry (1-based, and its text) and what is wrong with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpPackageError<'a> {
    /// The entry's number, from 1.
    pub entry: usize,
    /// The entry's text.
    pub text: &'a str,
    /// What is wrong, said after the entry (`has no interface provider: write PATH:PROVIDER[:TARGET]`): a message
    /// of the table with no places, whose words only the HLOS side holds.
    pub what: Message,
}

impl fmt::Display for OpPackageError<'_> {
    /// `entry 2 'libA.so' has no interface provider: write PATH:PROVIDER[:TARGET]`.
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "entry {} '{}' {}", self.entry, self.text, self.what.template())
    }
}

/// Reads a value: entries separated by commas, each `PATH:PROVIDER[:TARGET]`.
pub fn parse(value: &str) -> Result<OpPackages<'_>, OpPackageError<'_>> {
    let mut packages = OpPackages { entries: [None; MAX_OP_PACKAGES] };
    for (index, text) in pieces(value, b',').enumerate() {
        let entry = index + 1;
        let refuse = |what| OpPackageError { entry, text, what };
        let Some(slot) = packages.entries.get_mut(index) else {
            return Err(refuse(Message::OpPackageOneTooMany));
        };
        *slot = Some(entry_of(text).map_err(refuse)?);
    }
    Ok(packages)
}

// The refusal of an entry beyond [`MAX_OP_PACKAGES`] says the limit.
const _: () = assert!(MAX_OP_PACKAGES == 4, "Message::OpPackageOneTooMany says the limit");

/// `text` cut at each `separator` (an ASCII byte, so every piece is UTF-8 too), as `str::split` does; over bytes,
/// whose splitting has no panic path (the skel and the audio module must have none).
fn pieces(text: &str, separator: u8) -> impl Iterator<Item = &str> {
    text.as_bytes().split(move |&byte| byte == separator).map(|piece| core::str::from_utf8(piece).unwrap_or_default())
}

/// One entry's fields, or what is wrong with it.
fn entry_of(text: &str) -> Result<OpPackage<'_>, Message> {
    if text.is_empty() {
        return Err(Message::OpPackageEntryEmpty);
    }
    if text.as_bytes().contains(&0) {
        return Err(Message::OpPackageEntryHoldsNul);
    }
    let mut fields = pieces(text, b':');
    let path = fields.next().unwrap_or_default();
    let (Some(interface_provider), target, None) = (fields.next(), fields.next(), fields.next()) else {
        return Err(if text.as_bytes().contains(&b':') {
            Message::OpPackageMoreFields
        } else {
            Message::OpPackageNoInterfaceProvider
        });
    };
    match (path.is_empty(), interface_provider.is_empty(), target.is_some_and(str::is_empty)) {
        (true, _, _) => Err(Message::OpPackageEmptyPath),
        (_, true, _) => Err(Message::OpPackageEmptyInterfaceProvider),
        (_, _, true) => Err(Message::OpPackageEmptyTarget),
        _ => Ok(OpPackage { path, interface_provider, target }),
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::string::ToString;
    use std::vec::Vec;

    #[test]
    fn entries_are_read_in_order_with_an_optional_target() {
        let packages = parse("/a/libA.so:ProvideA,libB.so:ProvideB:CPU").unwrap();
        let read: Vec<OpPackage<'_>> = packages.iter().collect();
        assert_eq!(
            read,
            [
                OpPackage { path: "/a/libA.so", interface_provider: "ProvideA", target: None },
                OpPackage { path: "libB.so", interface_provider: "ProvideB", target: Some("CPU") },
            ]
        );
        assert_eq!((packages.len(), packages.is_empty()), (2, false));
        assert!(OpPackages::NONE.is_empty());
        assert_eq!(parse("a:b:c,d:e,f:g,h:i").unwrap().len(), MAX_OP_PACKAGES);
    }

    #[test]
    fn malformed_values_are_refused_naming_the_entry() {
        for (value, entry, text, what) in [
            ("", 1, "", "is empty"),
            ("a.so:P,", 2, "", "is empty"),
            ("a.so:P,,b.so:Q", 2, "", "is empty"),
            ("a.so:P,b.so", 2, "b.so", "has no interface provider"),
            ("a.so:P:DSP:extra", 1, "a.so:P:DSP:extra", "more than three fields"),
            (":P", 1, ":P", "empty path"),
            ("a.so:", 1, "a.so:", "empty interface provider"),
            ("a.so:P:", 1, "a.so:P:", "empty target"),
            ("a.so:P\0", 1, "a.so:P\0", "NUL"),
            ("a:b,c:d,e:f,g:h,i:j", 5, "i:j", "at most 4 op packages"),
        ] {
            let error = parse(value).unwrap_err();
            assert_eq!((error.entry, error.text), (entry, text), "{value:?}");
            assert!(error.what.template().contains(what), "{value:?}: {}", error.what.template());
        }
        let line = parse("a.so:P,b.so").unwrap_err().to_string();
        assert_eq!(line, "entry 2 'b.so' has no interface provider: write PATH:PROVIDER[:TARGET]");
        assert!(!line.contains('\n'));
    }
}
