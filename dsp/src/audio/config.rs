//! The audio module's configuration (`PARAM_ID_LPAI_DIRECT_CONFIG`): NUL-terminated `key=value` lines, every key
//! known, every number decimal and in range, read whole before any of it is used.

use crate::platform::MAX_PATH_BYTES;

/// A library path from the configuration.
pub type LibraryPath = heapless::String<MAX_PATH_BYTES>;

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
}

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

impl Default for Config {
    fn default() -> Config {
        let mut backend = LibraryPath::new();
        let _ = backend.push_str("libQnnLpai.so");
        let mut system_library = LibraryPath::new();
        let _ = system_library.push_str("libQnnSystem.so");
        Config { backend, system_library, channel: 0, hop: 0, island: false, performance: Performance::default() }
    }
}

/// Why a configuration is refused: the line (1-based) and what is wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The line.
    pub line: u32,
    /// What is wrong.
    pub what: &'static str,
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

fn path(value: &[u8]) -> Option<LibraryPath> {
    let text = core::str::from_utf8(value).ok()?;
    let mut path = LibraryPath::new();
    path.push_str(text).ok()?;
    // The path must leave room for its NUL.
    (path.len() < MAX_PATH_BYTES).then_some(path)
}

impl Config {
    /// Reads a configuration payload: `key=value` lines up to the first NUL (which must be there).
    pub fn parse(payload: &[u8]) -> Result<Config, ConfigError> {
        let Some(end) = payload.iter().position(|&byte| byte == 0) else {
            return Err(ConfigError { line: 0, what: "the configuration is not NUL-terminated" });
        };
        let text = payload.get(..end).unwrap_or(&[]);
        let mut config = Config::default();
        let mut seen = 0u32;
        for (number, line) in (1u32..).zip(text.split(|&byte| byte == b'\n')) {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.is_empty() {
                continue;
            }
            let error = |what| ConfigError { line: number, what };
            let split = line.iter().position(|&byte| byte == b'=').ok_or(error("a line is not `key=value`"))?;
            let (key, value) = (line.get(..split).unwrap_or(&[]), line.get(split + 1..).unwrap_or(&[]));
            let number_of = |value| decimal(value).ok_or(error("the value is not a decimal number"));
            let bit = match key {
                b"backend" => {
                    config.backend = path(value).filter(|path| !path.is_empty()).ok_or(error("a bad backend path"))?;
                    0
                }
                b"system_library" => {
                    config.system_library = path(value).ok_or(error("a bad system_library path"))?;
                    1
                }
                b"channel" => {
                    config.channel = number_of(value)?;
                    2
                }
                b"hop" => {
                    config.hop = number_of(value)?;
                    if config.hop == 0 {
                        return Err(error("hop must be at least 1"));
                    }
                    3
                }
                b"island" => {
                    config.island = match value {
                        b"0" => false,
                        b"1" => true,
                        _ => return Err(error("island is 0 or 1")),
                    };
                    4
                }
                b"fps" => {
                    config.performance.fps = number_of(value)?;
                    5
                }
                b"ftrt_ratio" => {
                    config.performance.ftrt_ratio = number_of(value)?;
                    6
                }
                b"client_type" => {
                    config.performance.client_type = number_of(value)?;
                    7
                }
                b"affinity" => {
                    config.performance.affinity = number_of(value)?;
                    8
                }
                b"core_selection" => {
                    config.performance.core_selection = number_of(value)?;
                    9
                }
                _ => return Err(error("an unknown key")),
            };
            if seen & (1 << bit) != 0 {
                return Err(error("a key given twice"));
            }
            seen |= 1 << bit;
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_is_read() {
        let text = b"backend=/vendor/lib/libQnnLpai.so\nsystem_library=\nchannel=5\nhop=160\r\nisland=1\nfps=30\n\
                     ftrt_ratio=10\nclient_type=1\naffinity=2\ncore_selection=3\n\0garbage after the NUL";
        let config = Config::parse(text).unwrap();
        assert_eq!(config.backend.as_str(), "/vendor/lib/libQnnLpai.so");
        assert_eq!((config.system_library.as_str(), config.channel, config.hop, config.island), ("", 5, 160, true));
        assert_eq!(
            config.performance,
            Performance { fps: 30, ftrt_ratio: 10, client_type: 1, affinity: 2, core_selection: 3 }
        );
    }

    #[test]
    fn what_is_left_out_keeps_its_default() {
        let config = Config::parse(b"channel=1\0").unwrap();
        assert_eq!((config.backend.as_str(), config.system_library.as_str()), ("libQnnLpai.so", "libQnnSystem.so"));
        assert_eq!((config.channel, config.hop, config.island), (1, 0, false));
        assert_eq!(Config::parse(b"\0").unwrap(), Config::default());
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
            (b"backend=\0", 1, "backend"),
            (b"fps=1\nfps=2\0", 2, "twice"),
        ] {
            let error = Config::parse(text).unwrap_err();
            assert_eq!(error.line, line, "{what}");
            assert!(error.what.contains(what), "{} does not say {what}", error.what);
        }
        let mut long = [b'a'; MAX_PATH_BYTES + 10];
        long[..8].copy_from_slice(b"backend=");
        long[MAX_PATH_BYTES + 9] = 0;
        assert_eq!(Config::parse(&long).unwrap_err().what, "a bad backend path");
    }
}
