//! The version every lpai-direct library carries: the stub/skel interface's major.minor (the IDL's constants),
//! which library it is, the Hexagon version it was built for and its build id, in a fixed 64-byte record in a
//! section of its own ([`SECTION`]). Tools read it from the file without loading it (`stage`, `doctor`); the skel
//! answers its own record in the `version` method, and the stub compares it with [`INTERFACE`] right after open.
//!
//! ```text
//! offset  field
//!  0      magic        `LPVR`
//!  4      major        u16, the interface's major version
//!  6      minor        u16, the interface's minor version
//!  8      hex_version  u16, the Hexagon version the library was built for (81 for v81), 0 off Hexagon
//! 10      component    u8: 1 the skel, 2 the stub
//! 11      reserved     5 bytes of 0
//! 16      build id     48 bytes of UTF-8, NUL-padded (at least one NUL)
//! ```

use crate::codec;
use core::fmt;

/// The section each library keeps its record in.
pub const SECTION: &str = ".lpai_direct.version";
/// Bytes of a record.
pub const RECORD_BYTES: usize = 64;
/// The first bytes of a record.
pub const MAGIC: [u8; 4] = *b"LPVR";
/// Bytes of the build id field (its text is at most one fewer).
pub const BUILD_ID_BYTES: usize = 48;
/// The build id this build carries: `LPAI_DIRECT_BUILD_ID` at build time (a release sets its commit), else
/// `lpai-direct` and the crate's version.
pub const BUILD_ID: &str = env!("LPAI_DIRECT_BUILD_ID");

const _: () = assert!(BUILD_ID.len() < BUILD_ID_BYTES, "LPAI_DIRECT_BUILD_ID must be shorter than 48 bytes");

/// A `major.minor` interface version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    /// Major: a stub refuses a skel of another one.
    pub major: u32,
    /// Minor: each adds methods after the last minor's.
    pub minor: u32,
}

impl fmt::Display for Version {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}.{}", self.major, self.minor)
    }
}

/// The interface this build speaks.
pub const INTERFACE: Version =
    Version { major: codec::LPAI_DIRECT_INTERFACE_MAJOR, minor: codec::LPAI_DIRECT_INTERFACE_MINOR };

/// The first method id of each minor version of [`INTERFACE`]'s major, minor 0 first: a method belongs to the
/// last minor whose first id it reaches. Bumping the IDL's minor without naming its first method here does not
/// compile.
pub const FIRST_METHOD_OF_MINOR: [u32; INTERFACE.minor as usize + 1] =
    [codec::configure::ID, codec::version::ID, codec::register_op_package::ID, codec::failed_library::ID];

/// The minor version that added method `id` (0 for ids before the first minor's, `open` and `close`).
pub const fn minor_of_method(id: u32) -> u32 {
    let mut minor = FIRST_METHOD_OF_MINOR.len();
    while minor > 0 {
        minor -= 1;
        if id >= FIRST_METHOD_OF_MINOR[minor] {
            return minor as u32;
        }
    }
    0
}

/// Which library a record is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Component {
    /// The skel (`liblpai_direct_skel.so`).
    Skel,
    /// The stub (`liblpai_direct_stub.so`, and the `lpai-net-run` built with it).
    Stub,
}

impl Component {
    const fn code(self) -> u8 {
        match self {
            Component::Skel => 1,
            Component::Stub => 2,
        }
    }

    const fn of(code: u8) -> Option<Component> {
        match code {
            1 => Some(Component::Skel),
            2 => Some(Component::Stub),
            _ => None,
        }
    }
}

/// A library's version record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// The interface it speaks.
    pub interface: Version,
    /// The Hexagon version it was built for, 0 off Hexagon.
    pub hex_version: u16,
    /// Which library.
    pub component: Component,
    build_id: [u8; BUILD_ID_BYTES],
}

impl Record {
    /// This build's record for `component` built for Hexagon `hex_version` (0 off Hexagon).
    pub const fn current(component: Component, hex_version: u16) -> Record {
        Record::new(INTERFACE, component, hex_version, BUILD_ID)
    }

    /// A record; a build id longer than the field keeps its first 47 bytes.
    pub const fn new(interface: Version, component: Component, hex_version: u16, build_id: &str) -> Record {
        let mut field = [0u8; BUILD_ID_BYTES];
        let text = build_id.as_bytes();
        let mut index = 0;
        while index < text.len() && index < BUILD_ID_BYTES - 1 {
            field[index] = text[index];
            index += 1;
        }
        Record { interface, hex_version, component, build_id: field }
    }

    /// The build id.
    pub fn build_id(&self) -> &str {
        core::str::from_utf8(self.build_id_bytes()).unwrap_or("(not UTF-8)")
    }

    /// The build id's bytes, without its NUL.
    pub const fn build_id_bytes(&self) -> &[u8] {
        let mut end = 0;
        while end < BUILD_ID_BYTES && self.build_id[end] != 0 {
            end += 1;
        }
        self.build_id.split_at(end).0
    }

    /// The record's bytes.
    pub const fn to_bytes(&self) -> [u8; RECORD_BYTES] {
        let mut bytes = [0u8; RECORD_BYTES];
        let (major, minor) = (self.interface.major as u16, self.interface.minor as u16);
        let words = [major.to_le_bytes(), minor.to_le_bytes(), self.hex_version.to_le_bytes()];
        let mut index = 0;
        while index < 4 {
            bytes[index] = MAGIC[index];
            index += 1;
        }
        let mut word = 0;
        while word < 3 {
            bytes[4 + 2 * word] = words[word][0];
            bytes[5 + 2 * word] = words[word][1];
            word += 1;
        }
        bytes[10] = self.component.code();
        let mut index = 0;
        while index < BUILD_ID_BYTES {
            bytes[16 + index] = self.build_id[index];
            index += 1;
        }
        bytes
    }

    /// Reads a record from the start of `bytes`; `None` when it is not one (another magic, an unknown component,
    /// reserved bytes set, a build id without its NUL).
    pub fn parse(bytes: &[u8]) -> Option<Record> {
        let bytes: &[u8; RECORD_BYTES] = bytes.get(..RECORD_BYTES)?.try_into().ok()?;
        let half = |at: usize| u16::from_le_bytes([bytes[at], bytes[at + 1]]);
        if bytes[..4] != MAGIC || bytes[11..16].iter().any(|&byte| byte != 0) || bytes[RECORD_BYTES - 1] != 0 {
            return None;
        }
        let mut build_id = [0u8; BUILD_ID_BYTES];
        crate::codec::copy_prefix(&mut build_id, bytes.get(16..).unwrap_or_default());
        Some(Record {
            interface: Version { major: u32::from(half(4)), minor: u32::from(half(6)) },
            hex_version: half(8),
            component: Component::of(bytes[10])?,
            build_id,
        })
    }
}

impl fmt::Display for Record {
    /// `interface 1.1, built for Hexagon v81, build lpai-direct 0.1.0` (no Hexagon part off Hexagon).
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "interface {}", self.interface)?;
        if self.hex_version != 0 {
            write!(formatter, ", built for Hexagon v{}", self.hex_version)?;
        }
        write!(formatter, ", build {}", self.build_id())
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::format;
    use std::string::ToString;

    #[test]
    fn a_record_round_trips_and_refuses_what_is_not_one() {
        let record = Record::new(Version { major: 3, minor: 7 }, Component::Skel, 81, "lpai-direct 9.9 (abc)");
        let bytes = record.to_bytes();
        assert_eq!(&bytes[..4], b"LPVR");
        assert_eq!(&bytes[4..11], &[3, 0, 7, 0, 81, 0, 1]);
        let read = Record::parse(&bytes).unwrap();
        assert_eq!(read, record);
        assert_eq!(read.build_id(), "lpai-direct 9.9 (abc)");
        assert_eq!(read.to_string(), "interface 3.7, built for Hexagon v81, build lpai-direct 9.9 (abc)");
        for (at, value) in [(0, b'X'), (10, 9), (12, 1), (RECORD_BYTES - 1, b'a')] {
            let mut broken = bytes;
            broken[at] = value;
            assert_eq!(Record::parse(&broken), None, "byte {at}");
        }
        assert_eq!(Record::parse(&bytes[..RECORD_BYTES - 1]), None);
        let long = Record::new(INTERFACE, Component::Stub, 0, core::str::from_utf8(&[b'x'; 80]).unwrap());
        assert_eq!(Record::parse(&long.to_bytes()).unwrap().build_id().len(), BUILD_ID_BYTES - 1);
        assert_eq!(Record::current(Component::Stub, 0).to_string(), format!("interface {INTERFACE}, build {BUILD_ID}"));
    }

    #[test]
    fn each_method_belongs_to_the_minor_that_added_it() {
        assert_eq!(INTERFACE, Version { major: 1, minor: 3 });
        assert_eq!(minor_of_method(0), 0);
        assert_eq!(minor_of_method(codec::configure::ID), 0);
        assert_eq!(minor_of_method(codec::load_file_with_metadata::ID), 0);
        assert_eq!(minor_of_method(codec::version::ID), 1);
        assert_eq!(minor_of_method(codec::probe::ID), 1);
        assert_eq!(minor_of_method(codec::register_op_package::ID), 2);
        assert_eq!(minor_of_method(codec::failed_library::ID), 3);
        assert!(Version { major: 1, minor: 0 } < INTERFACE && INTERFACE < Version { major: 2, minor: 0 });
    }
}
