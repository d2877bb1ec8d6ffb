//! The audio module's configuration (`PARAM_ID_LPAI_DIRECT_CONFIG`): NUL-terminated `key=value` lines, every key
//! known, every number decimal and in range, read whole before any of it is used. It is kept in place (a refused
//! configuration changes nothing) and its library paths with their NUL, so that neither is copied on the stack.

use crate::platform::{Message, MAX_PATH_BYTES};
use core::ffi::CStr;
use lpai_direct::op_package;
use lpai_direct::qnn::lpai;

/// A library path from the configuration: UTF-8 without a NUL, kept with a NUL after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LibraryPath(heapless::Vec<u8, MAX_PATH_BYTES>);

impl LibraryPath {
    /// Whether `text` can be a path: UTF-8, no NUL, room for the NUL after it.
    fn valid(text: &[u8]) -> bool {
        text.len() < MAX_PATH_BYTES && !text.contains(&0) && core::str::from_utf8(text).is_ok()
    }

    /// A path holding `text`, which [`LibraryPath::valid`] accepted.
    fn of(text: &[u8]) -> LibraryPath {
        let mut path = LibraryPath(heapless::Vec::new());
        path.set(text);
        path
    }

    /// Makes it `text`, which [`LibraryPath::valid`] accepted, in place.
    fn set(&mut self, text: &[u8]) {
        self.0.clear();
        let _ = self.0.extend_from_slice(text.get(..MAX_PATH_BYTES - 1).unwrap_or(text));
        let _ = self.0.push(0);
    }

    /// The path, without its NUL.
    pub fn as_str(&self) -> &str {
        let text = self.0.split_last().map_or(&[][..], |(_, text)| text);
        core::str::from_utf8(text).unwrap_or_default()
    }

    /// The path as the PD's loader takes it.
    pub fn as_c_str(&self) -> &CStr {
        CStr::from_bytes_with_nul(&self.0).unwrap_or_default()
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.0.len() <= 1
    }
}

/// Bytes the `op_packages=` packages are kept in: each package's path, interface provider and target (empty when not
/// given), each with its NUL.
pub const OP_PACKAGES_BYTES: usize = 512;

/// The op packages of `op_packages=` (qnn-net-run's `PATH:PROVIDER[:TARGET][,...]`), kept as the C strings the
/// backend takes: `path\0provider\0target\0` per package.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpPackages(heapless::Vec<u8, OP_PACKAGES_BYTES>);

/// One package of [`OpPackages`]: path, interface provider, target (`None`: the backend's default).
pub type OpPackage<'a> = (&'a CStr, &'a CStr, Option<&'a CStr>);

impl OpPackages {
    /// Whether `value` is an `op_packages=` value that fits; what is wrong with it, and the entry at fault, if not.
    fn check(value: &[u8]) -> Result<(), (Message, Option<u32>)> {
        let text = core::str::from_utf8(value).map_err(|_| (Message::ConfigOpPackagesNotUtf8, None))?;
        let packages = op_package::parse(text).map_err(|error| (error.what, u32::try_from(error.entry).ok()))?;
        let fields = |package: op_package::OpPackage<'_>| {
            package.path.len() + package.interface_provider.len() + package.target.map_or(0, str::len) + 3
        };
        match packages.iter().map(fields).sum::<usize>() <= OP_PACKAGES_BYTES {
            true => Ok(()),
            false => Err((Message::ConfigOpPackagesTooLong, None)),
        }
    }

    /// Keeps the packages of `value`, which [`OpPackages::check`] accepted, in place.
    fn set(&mut self, value: &[u8]) {
        self.0.clear();
        let packages = core::str::from_utf8(value).ok().and_then(|text| op_package::parse(text).ok());
        for package in packages.iter().flat_map(op_package::OpPackages::iter) {
            for field in [package.path, package.interface_provider, package.target.unwrap_or_default()] {
                let _ = self.0.extend_from_slice(field.as_bytes());
                let _ = self.0.push(0);
            }
        }
    }

    /// The packages, in the configuration's order.
    pub fn iter(&self) -> impl Iterator<Item = OpPackage<'_>> {
        let mut fields =
            self.0.split_inclusive(|&byte| byte == 0).filter_map(|field| CStr::from_bytes_with_nul(field).ok());
        core::iter::from_fn(move || {
            let (path, provider, target) = (fields.next()?, fields.next()?, fields.next()?);
            Some((path, provider, Some(target).filter(|target| !target.is_empty())))
        })
    }
}

// The refusal of an `op_packages=` value that does not fit [`OP_PACKAGES_BYTES`] says the limit.
const _: () = assert!(OP_PACKAGES_BYTES == 512, "Message::ConfigOpPackagesTooLong says the limit");

/// The module's settings; what a configuration leaves out keeps its default.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// The QNN backend library the PD loads (libQnnLpai.so on a device).
    pub backend: LibraryPath,
    /// libQnnSystem; empty: the model's metadata comes as a record.
    pub system_library: LibraryPath,
    /// The channel the model reads.
    pub channel: u32,
    /// Samples between inferences; 0: the window's length.
    pub hop: u32,
    /// Whether the module votes for island operation.
    pub island: bool,
    /// LPAI performance settings (0: the backend's default).
    pub performance: Performance,
    /// The memory types of LPAI's scratch and persistent memory (`scratch_memory=`, `persistent_memory=`).
    pub memory: lpai::MemoryPlacement,
    /// Op packages registered when the model's libraries open, before the load (`op_packages=`).
    pub op_packages: OpPackages,
    /// Bytes of the stack the backend's libraries are opened and the model loaded and freed on (`load_stack=`,
    /// [`super::stack`]): [`DEFAULT_LOAD_STACK_BYTES`] unless set, between [`MIN_LOAD_STACK_BYTES`] and
    /// [`MAX_LOAD_STACK_BYTES`].
    pub load_stack: u32,
}

/// The load stack a configuration leaves out: 64 KiB, over 1.7 times the most a load was measured to use (the
/// Hexagon module loading the contract model of libQnnLpai on the virtual aDSP: 37,596 bytes; x86 libQnnHtp's on
/// the host: 24,072). What the device's libQnnLpai needs only a device can tell (the book's audio chapter, "The
/// module's stacks").
pub const DEFAULT_LOAD_STACK_BYTES: u32 = 64 * 1024;
/// The smallest load stack taken: room for the module's own load code (under 6 KiB on Hexagon) and some of the
/// backend's.
pub const MIN_LOAD_STACK_BYTES: u32 = 16 * 1024;
/// The largest load stack taken (1 MiB).
pub const MAX_LOAD_STACK_BYTES: u32 = 1024 * 1024;

/// LPAI performance settings, as `set_performance` takes them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Performance {
    /// Frames per second.
    pub fps: u32,
    /// Faster-than-real-time ratio.
    pub ftrt_ratio: u32,
    /// Client type.
    pub client_type: u32,
    /// Core affinity.
    pub affinity: u32,
    /// Core selection.
    pub core_selection: u32,
}

/// The backend library a configuration leaves out.
const DEFAULT_BACKEND: &[u8] = b"libQnnLpai.so";
/// The system library a configuration leaves out.
const DEFAULT_SYSTEM_LIBRARY: &[u8] = b"libQnnSystem.so";

impl Default for Config {
    fn default() -> Config {
        Config {
            backend: LibraryPath::of(DEFAULT_BACKEND),
            system_library: LibraryPath::of(DEFAULT_SYSTEM_LIBRARY),
            channel: 0,
            hop: 0,
            island: false,
            performance: Performance::default(),
            memory: lpai::MemoryPlacement::DEFAULT,
            op_packages: OpPackages::default(),
            load_stack: DEFAULT_LOAD_STACK_BYTES,
        }
    }
}

/// Why a configuration is refused: the line (1-based) and what is wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The line.
    pub line: u32,
    /// What is wrong: a message of the table with no places (its words are on the HLOS side alone).
    pub what: Message,
    /// For `op_packages=`, the entry at fault (from 1), when one is.
    pub entry: Option<u32>,
}

/// A decimal `u32` (digits only, no sign, no overflow).
fn decimal(text: &[u8]) -> Option<u32> {
    if text.is_empty() {
        return None;
    }
    text.iter().try_fold(0u32, |value, &byte| {
        let digit = byte.checked_sub(b'0').filter(|digit| *digit <= 9)?;
        value.checked_mul(10)?.checked_add(u32::from(digit))
    })
}

impl Config {
    /// Reads a configuration payload: `key=value` lines up to the first NUL (which must be there).
    pub fn parse(payload: &[u8]) -> Result<Config, ConfigError> {
        let mut config = Config::default();
        config.update(payload)?;
        Ok(config)
    }

    /// Replaces this configuration with the one `payload` gives (what it leaves out at its default), in place;
    /// a refused payload changes nothing.
    pub fn update(&mut self, payload: &[u8]) -> Result<(), ConfigError> {
        read(payload, None)?;
        self.backend.set(DEFAULT_BACKEND);
        self.system_library.set(DEFAULT_SYSTEM_LIBRARY);
        (self.channel, self.hop, self.island, self.performance) = (0, 0, false, Performance::default());
        self.load_stack = DEFAULT_LOAD_STACK_BYTES;
        self.op_packages.0.clear();
        read(payload, Some(self))
    }
}

impl Config {
    /// The first key that shapes the model (its libraries, its context's options, its op packages) whose value
    /// differs in `other`, in the order the keys are documented; `None` when only `channel` and `hop` differ.
    pub fn model_key_changed(&self, other: &Config) -> Option<&'static str> {
        let (this, that) = (self.performance, other.performance);
        [
            ("backend", self.backend != other.backend),
            ("system_library", self.system_library != other.system_library),
            ("island", self.island != other.island),
            ("scratch_memory", self.memory.scratch != other.memory.scratch),
            ("persistent_memory", self.memory.persistent != other.memory.persistent),
            ("op_packages", self.op_packages != other.op_packages),
            ("load_stack", self.load_stack != other.load_stack),
            ("fps", this.fps != that.fps),
            ("ftrt_ratio", this.ftrt_ratio != that.ftrt_ratio),
            ("client_type", this.client_type != that.client_type),
            ("affinity", this.affinity != that.affinity),
            ("core_selection", this.core_selection != that.core_selection),
        ]
        .into_iter()
        .find_map(|(key, changed)| changed.then_some(key))
    }
}

/// Reads `payload` whole, checking every line; given a configuration, also sets what each line says.
fn read(payload: &[u8], mut config: Option<&mut Config>) -> Result<(), ConfigError> {
    let Some(end) = payload.iter().position(|&byte| byte == 0) else {
        return Err(ConfigError { line: 0, what: Message::ConfigNotTerminated, entry: None });
    };
    let text = payload.get(..end).unwrap_or(&[]);
    let mut seen = 0u32;
    for (number, line) in (1u32..).zip(text.split(|&byte| byte == b'\n')) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        let error = |what| ConfigError { line: number, what, entry: None };
        let split = line.iter().position(|&byte| byte == b'=').ok_or(error(Message::ConfigNotKeyValue))?;
        let (key, value) = (line.get(..split).unwrap_or(&[]), line.get(split + 1..).unwrap_or(&[]));
        let number = || decimal(value).ok_or(error(Message::ConfigNotDecimal));
        let config = config.as_deref_mut();
        let bit = match key {
            b"backend" => {
                if value.is_empty() || !LibraryPath::valid(value) {
                    return Err(error(Message::ConfigBadBackend));
                }
                if let Some(config) = config {
                    config.backend.set(value);
                }
                0
            }
            b"system_library" => {
                if !LibraryPath::valid(value) {
                    return Err(error(Message::ConfigBadSystemLibrary));
                }
                if let Some(config) = config {
                    config.system_library.set(value);
                }
                1
            }
            b"scratch_memory" | b"persistent_memory" => {
                let Some(memory) = lpai::MemType::named(value) else {
                    return Err(error(Message::ConfigMemoryType));
                };
                let scratch = key == b"scratch_memory";
                if let Some(config) = config {
                    *if scratch { &mut config.memory.scratch } else { &mut config.memory.persistent } = memory;
                }
                if scratch {
                    10
                } else {
                    11
                }
            }
            b"op_packages" => {
                if let Err((what, entry)) = OpPackages::check(value) {
                    return Err(ConfigError { entry, ..error(what) });
                }
                if let Some(config) = config {
                    config.op_packages.set(value);
                }
                12
            }
            b"island" => {
                let island = match value {
                    b"0" => false,
                    b"1" => true,
                    _ => return Err(error(Message::ConfigIsland)),
                };
                if let Some(config) = config {
                    config.island = island;
                }
                4
            }
            _ => {
                let (bit, setting): (u32, fn(&mut Config) -> &mut u32) = match key {
                    b"channel" => (2, |c| &mut c.channel),
                    b"hop" => (3, |c| &mut c.hop),
                    b"fps" => (5, |c| &mut c.performance.fps),
                    b"ftrt_ratio" => (6, |c| &mut c.performance.ftrt_ratio),
                    b"client_type" => (7, |c| &mut c.performance.client_type),
                    b"affinity" => (8, |c| &mut c.performance.affinity),
                    b"core_selection" => (9, |c| &mut c.performance.core_selection),
                    b"load_stack" => (13, |c| &mut c.load_stack),
                    _ => return Err(error(Message::ConfigUnknownKey)),
                };
                let number = number()?;
                if bit == 3 && number == 0 {
                    return Err(error(Message::ConfigHopZero));
                }
                if bit == 13 && !(MIN_LOAD_STACK_BYTES..=MAX_LOAD_STACK_BYTES).contains(&number) {
                    return Err(error(Message::ConfigLoadStack));
                }
                if bit == 9 && !lpai::CoreAffinity::supports(number) {
                    return Err(error(Message::ConfigCoreMix));
                }
                if let Some(config) = config {
                    *setting(config) = number;
                }
                bit
            }
        };
        if seen & (1 << bit) != 0 {
            return Err(error(Message::ConfigKeyTwice));
        }
        seen |= 1 << bit;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_is_read() {
        let text = b"backend=/vendor/lib/libQnnLpai.so\nsystem_library=\nchannel=5\nhop=160\r\nisland=1\nfps=30\n\
                     ftrt_ratio=10\nclient_type=1\naffinity=2\ncore_selection=2\nscratch_memory=tcm\n\
                     persistent_memory=psram\nload_stack=32768\n\0garbage after the NUL";
        let config = Config::parse(text).unwrap();
        assert_eq!(config.backend.as_str(), "/vendor/lib/libQnnLpai.so");
        assert_eq!((config.system_library.as_str(), config.channel, config.hop, config.island), ("", 5, 160, true));
        assert_eq!(
            config.performance,
            Performance { fps: 30, ftrt_ratio: 10, client_type: 1, affinity: 2, core_selection: 2 }
        );
        assert_eq!(
            config.memory,
            lpai::MemoryPlacement { scratch: lpai::MemType::TCM, persistent: lpai::MemType::PSRAM }
        );
        assert_eq!(config.load_stack, 32_768);
    }

    #[test]
    fn op_packages_are_kept_as_c_strings_and_a_malformed_value_is_refused_naming_its_entry() {
        let config = Config::parse(b"op_packages=/dsp/libA.so:ProvideA,libB.so:ProvideB:DSP\nchannel=1\0").unwrap();
        let packages: std::vec::Vec<OpPackage<'_>> = config.op_packages.iter().collect();
        assert_eq!(packages, [(c"/dsp/libA.so", c"ProvideA", None), (c"libB.so", c"ProvideB", Some(c"DSP"))]);
        assert_eq!(Config::parse(b"channel=1\0").unwrap().op_packages.iter().count(), 0);
        for (text, entry, what) in [
            (&b"op_packages=libA.so\0"[..], Some(1), "has no interface provider"),
            (b"op_packages=a:b,,c:d\0", Some(2), "is empty"),
            (b"op_packages=a:b,c:d,e:f,g:h,i:j\0", Some(5), "at most 4 op packages"),
            (b"op_packages=a:b\nop_packages=c:d\0", None, "twice"),
            (b"op_packages=a\xff:b\0", None, "not UTF-8"),
        ] {
            let error = Config::parse(text).unwrap_err();
            assert_eq!(error.entry, entry, "{what}");
            assert!(error.what.template().contains(what), "{} does not say {what}", error.what.template());
        }
        let mut long = std::vec::Vec::from(&b"op_packages="[..]);
        long.extend(core::iter::repeat_n(b'a', 300));
        long.extend(b":P,");
        long.extend(core::iter::repeat_n(b'b', 300));
        long.extend(b":Q\0");
        assert!(Config::parse(&long).unwrap_err().what.template().contains("more than 512 bytes"));
        let mut config = Config::parse(b"op_packages=a:b\0").unwrap();
        config.update(b"channel=2\0").unwrap();
        assert_eq!(config.op_packages.iter().count(), 0, "an update replaces the whole configuration");
    }

    #[test]
    fn a_refusal_is_a_message_the_module_logs_in_the_words_it_always_had() {
        let error = Config::parse(b"channel=1\nop_packages=a:b,,c:d\0").unwrap_err();
        assert_eq!((error.line, error.entry, error.what), (2, Some(2), Message::OpPackageEntryEmpty));
        let line = crate::message!(Message::CapiConfigEntry, error.line, 2u32, error.what);
        assert_eq!(
            line.rendered().as_str(),
            "lpai-direct capi: configuration line 2: op_packages entry 2 is empty: each comma-separated entry is \
             PATH:PROVIDER[:TARGET]"
        );
        let error = Config::parse(b"channel\0").unwrap_err();
        let line = crate::message!(Message::CapiConfigLine, error.line, error.what);
        assert_eq!(line.rendered().as_str(), "lpai-direct capi: configuration line 1: a line is not `key=value`");
    }

    #[test]
    fn what_is_left_out_keeps_its_default() {
        let config = Config::parse(b"channel=1\0").unwrap();
        assert_eq!((config.backend.as_str(), config.system_library.as_str()), ("libQnnLpai.so", "libQnnSystem.so"));
        assert_eq!((config.channel, config.hop, config.island), (1, 0, false));
        assert_eq!(config.load_stack, DEFAULT_LOAD_STACK_BYTES);
        assert_eq!(Config::parse(b"\0").unwrap(), Config::default());
    }

    #[test]
    fn an_update_replaces_the_whole_configuration_and_a_refused_one_changes_nothing() {
        let mut config = Config::parse(b"backend=/a/lib.so\nchannel=3\0").unwrap();
        assert_eq!(config.update(b"channel=3\nhop=0\0").unwrap_err().what.template(), "hop must be at least 1");
        assert_eq!(config.update(b"system_library=/b\xff\0").unwrap_err().what.template(), "a bad system_library path");
        assert_eq!((config.backend.as_str(), config.channel), ("/a/lib.so", 3));
        assert_eq!(config.backend.as_c_str().to_bytes_with_nul(), b"/a/lib.so\0");
        config.update(b"hop=7\0").unwrap();
        assert_eq!(config, Config { hop: 7, ..Config::default() });
        assert_eq!(config.system_library.as_c_str(), c"libQnnSystem.so");
        assert!(Config::parse(b"system_library=\0").unwrap().system_library.is_empty());
    }

    #[test]
    fn only_channel_and_hop_leave_the_model_as_it_is() {
        let base = b"backend=/a/lib.so\nisland=1\nfps=30\nchannel=1\nhop=10\n";
        let config = Config::parse(&[&base[..], b"\0"].concat()).unwrap();
        let same = Config::parse(b"hop=20\nchannel=0\nfps=30\nisland=1\nbackend=/a/lib.so\0").unwrap();
        assert_eq!(config.model_key_changed(&same), None);
        for (line, key) in [
            (&b"backend=/b/lib.so\nisland=1\nfps=30\n"[..], "backend"),
            (b"backend=/a/lib.so\nsystem_library=\nisland=1\nfps=30\n", "system_library"),
            (b"backend=/a/lib.so\nfps=30\n", "island"),
            (b"backend=/a/lib.so\nisland=1\nfps=30\nscratch_memory=tcm\n", "scratch_memory"),
            (b"backend=/a/lib.so\nisland=1\nfps=30\npersistent_memory=llc\n", "persistent_memory"),
            (b"backend=/a/lib.so\nisland=1\nfps=30\nop_packages=a:b\n", "op_packages"),
            (b"backend=/a/lib.so\nisland=1\nfps=30\nload_stack=16384\n", "load_stack"),
            (b"backend=/a/lib.so\nisland=1\n", "fps"),
            (b"backend=/a/lib.so\nisland=1\nfps=30\nftrt_ratio=2\n", "ftrt_ratio"),
            (b"backend=/a/lib.so\nisland=1\nfps=30\nclient_type=1\n", "client_type"),
            (b"backend=/a/lib.so\nisland=1\nfps=30\naffinity=1\n", "affinity"),
            (b"backend=/a/lib.so\nisland=1\nfps=30\ncore_selection=2\n", "core_selection"),
            (b"island=0\nfps=1\n", "backend"),
        ] {
            let other = Config::parse(&[line, b"\0"].concat()).unwrap();
            assert_eq!(config.model_key_changed(&other), Some(key), "{}", std::string::String::from_utf8_lossy(line));
        }
    }

    #[test]
    fn malformed_configurations_are_refused_naming_the_line() {
        for (text, line, what) in [
            (&b"channel=1"[..], 0, "NUL"),
            (b"channel=1\nvolume=3\0", 2, "unknown key"),
            (b"channel\0", 1, "key=value"),
            (b"channel=-1\0", 1, "decimal"),
            (b"channel=\0", 1, "decimal"),
            (b"channel=4294967296\0", 1, "decimal"),
            (b"hop=0\0", 1, "at least 1"),
            (b"island=2\0", 1, "0 or 1"),
            (b"load_stack=16383\0", 1, "16384 to 1048576"),
            (b"load_stack=1048577\0", 1, "16384 to 1048576"),
            (b"channel=1\ncore_selection=3\0", 2, "more than one core"),
            (b"scratch_memory=sram\0", 1, "ddr, llc, tcm or psram"),
            (b"backend=\0", 1, "backend"),
            (b"fps=1\nfps=2\0", 2, "twice"),
        ] {
            let error = Config::parse(text).unwrap_err();
            assert_eq!(error.line, line, "{what}");
            assert!(error.what.template().contains(what), "{} does not say {what}", error.what.template());
        }
        let mut long = [b'a'; MAX_PATH_BYTES + 10];
        long[..8].copy_from_slice(b"backend=");
        long[MAX_PATH_BYTES + 9] = 0;
        assert_eq!(Config::parse(&long).unwrap_err().what.template(), "a bad backend path");
    }
}
