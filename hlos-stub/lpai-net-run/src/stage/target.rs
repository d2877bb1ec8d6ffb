//! The device `stage` prepares for: its HLOS (`QNN_TARGET_ARCH`), its Hexagon version (`HEX_VER`) and its LPAI
//! hardware version (`HW_VER`), each checked against the values the builds know.

use super::settings::Given;
use anyhow::{bail, Result};

/// The Hexagon versions LLVM (and scripts/build-hexagon.sh) knows.
const HEXAGON_VERSIONS: [u32; 12] = [60, 62, 65, 66, 67, 68, 69, 71, 73, 75, 79, 81];
/// The LPAI hardware versions lpaiParams.conf names.
const HW_VERSIONS: [&str; 4] = ["v5", "v5_1", "v6", "v7"];

/// The HLOS targets `QNN_TARGET_ARCH` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hlos {
    /// `aarch64-android`.
    Android,
    /// `aarch64-oe-linux-gcc<version>`.
    OeLinux,
    /// `aarch64-qnx800`.
    Qnx,
}

impl Hlos {
    /// The target `QNN_TARGET_ARCH` names.
    pub fn parse(given: &Given) -> Result<Hlos> {
        match given.value.as_str() {
            "aarch64-android" => Ok(Hlos::Android),
            "aarch64-qnx800" => Ok(Hlos::Qnx),
            value if value.starts_with("aarch64-oe-linux-gcc") => Ok(Hlos::OeLinux),
            value => bail!(
                "QNN_TARGET_ARCH from {} is \"{value}\"; expected aarch64-android, aarch64-oe-linux-gcc<version> or \
                 aarch64-qnx800",
                given.from
            ),
        }
    }

    /// The Rust target scripts/build-hlos.sh builds for it.
    pub fn triple(self) -> &'static str {
        match self {
            Hlos::Android => "aarch64-linux-android",
            Hlos::OeLinux => "aarch64-unknown-linux-gnu",
            Hlos::Qnx => "aarch64-unknown-nto-qnx800",
        }
    }

    /// Where the target keeps the FastRPC library, searched after the root (`None`: the loader's default covers it).
    pub fn system_library_dir(self) -> Option<&'static str> {
        match self {
            Hlos::Android => Some("/vendor/lib64"),
            Hlos::OeLinux | Hlos::Qnx => None,
        }
    }
}

/// The Hexagon version `HEX_VER` names (`73`, `v73`).
pub fn parse_hex_ver(given: &Given) -> Result<u32> {
    let digits = given.value.strip_prefix(['v', 'V']).unwrap_or(&given.value);
    match digits.parse::<u32>() {
        Ok(version) if HEXAGON_VERSIONS.contains(&version) => Ok(version),
        _ => bail!(
            "HEX_VER from {} is \"{}\"; expected a Hexagon version LLVM knows (60, 62, 65, 66, 67, 68, 69, 71, 73, 75, \
             79, 81)",
            given.from,
            given.value
        ),
    }
}

/// The LPAI hardware version `HW_VER` names.
pub fn parse_hw_ver(given: &Given) -> Result<&'static str> {
    match HW_VERSIONS.iter().find(|name| **name == given.value) {
        Some(name) => Ok(name),
        None => bail!("HW_VER from {} is \"{}\"; expected one of {}", given.from, given.value, HW_VERSIONS.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn given(value: &str) -> Given {
        Given { value: value.into(), from: "--test".into() }
    }

    #[test]
    fn settings_come_from_the_flag_then_the_environment_then_the_default() {
        let chosen = Given::choose(Some("79"), "--hex_ver", Some("73".into()), "HEX_VER", "81");
        assert_eq!(chosen, Given { value: "79".into(), from: "--hex_ver".into() });
        let chosen = Given::choose(None, "--hex_ver", Some("73".into()), "HEX_VER", "81");
        assert_eq!(chosen, Given { value: "73".into(), from: "HEX_VER in the environment".into() });
        let chosen = Given::choose(None, "--hex_ver", Some(String::new()), "HEX_VER", "81");
        assert!(chosen.is_default() && chosen.value == "81");
        assert_eq!(parse_hex_ver(&given("v75")).unwrap(), 75);
        let message = parse_hex_ver(&given("74")).unwrap_err().to_string();
        assert!(message.starts_with("HEX_VER from --test is \"74\""), "{message}");
        assert_eq!(parse_hw_ver(&given("v5_1")).unwrap(), "v5_1");
        assert!(parse_hw_ver(&given("6")).unwrap_err().to_string().contains("expected one of v5, v5_1, v6, v7"));
        assert_eq!(Hlos::parse(&given("aarch64-oe-linux-gcc9.3")).unwrap(), Hlos::OeLinux);
        assert_eq!(Hlos::parse(&given("aarch64-android")).unwrap().triple(), "aarch64-linux-android");
        assert!(Hlos::parse(&given("x86_64-linux-clang")).unwrap_err().to_string().contains("aarch64-qnx800"));
    }
}
