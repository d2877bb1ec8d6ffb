//! Names users give to transports, DSP domains and PDs (command line, C API): each has a fixed spelling, and an
//! unknown name is refused with the list of known ones.

use std::str::FromStr;

/// A small set of values, each with one name.
pub trait Named: Copy + 'static {
    /// What the values are, for messages ("transport", "domain").
    const WHAT: &'static str;
    /// Every value, in the order messages and help list them.
    const ALL: &'static [Self];
    /// The value's name.
    fn name(self) -> &'static str;
    /// One line saying what the value means, for help texts.
    fn description(self) -> &'static str;
}

/// A name that is none of the known ones.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} '{given}' ({})", known.join(", "))]
pub struct UnknownName {
    /// What was being named ("transport", "domain").
    pub what: &'static str,
    /// The name given.
    pub given: String,
    /// The names that exist.
    pub known: Vec<&'static str>,
}

/// The value called `given` (exact spelling).
pub fn parse<T: Named>(given: &str) -> Result<T, UnknownName> {
    T::ALL.iter().copied().find(|value| value.name() == given).ok_or_else(|| UnknownName {
        what: T::WHAT,
        given: given.to_string(),
        known: T::ALL.iter().map(|value| value.name()).collect(),
    })
}

/// How stub calls reach the skel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransportKind {
    /// The host build of the skel, loaded into this process and called with the same encoded arguments.
    Local,
    /// FastRPC to a DSP (libadsprpc.so / libcdsprpc.so).
    Fastrpc,
    /// The virtual aDSP: the Hexagon skel loaded by the PD shell under qemu-hexagon.
    Qemu,
}

impl Named for TransportKind {
    const WHAT: &'static str = "transport";
    const ALL: &'static [Self] = &[TransportKind::Local, TransportKind::Fastrpc, TransportKind::Qemu];

    fn name(self) -> &'static str {
        match self {
            TransportKind::Local => "local",
            TransportKind::Fastrpc => "fastrpc",
            TransportKind::Qemu => "qemu",
        }
    }

    fn description(self) -> &'static str {
        match self {
            TransportKind::Local => "The host build of the skel (liblpai_direct_skel.so), loaded into this process",
            TransportKind::Fastrpc => "FastRPC to a DSP (libadsprpc.so / libcdsprpc.so)",
            TransportKind::Qemu => "The virtual aDSP: the Hexagon skel .so loaded by the PD shell under qemu-hexagon",
        }
    }
}

impl FromStr for TransportKind {
    type Err = UnknownName;
    fn from_str(given: &str) -> Result<Self, UnknownName> {
        parse(given)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stub::fastrpc::{Domain, Pd};

    #[test]
    fn every_name_parses_back_and_unknown_ones_list_the_known() {
        for kind in TransportKind::ALL {
            assert_eq!(kind.name().parse::<TransportKind>(), Ok(*kind));
        }
        for domain in Domain::ALL {
            assert_eq!(domain.name().parse::<Domain>(), Ok(*domain));
        }
        for pd in Pd::ALL {
            assert_eq!(pd.name().parse::<Pd>(), Ok(*pd));
        }
        let error = "audiopd".parse::<Pd>().unwrap_err();
        assert_eq!(error.to_string(), "unknown PD 'audiopd' (user, audio, sensors, root)");
        let error = "Local".parse::<TransportKind>().unwrap_err();
        assert_eq!(error.to_string(), "unknown transport 'Local' (local, fastrpc, qemu)");
        let error = "moon".parse::<Domain>().unwrap_err();
        assert_eq!(error.to_string(), "unknown domain 'moon' (adsp, mdsp, sdsp, cdsp, cdsp1)");
    }
}
