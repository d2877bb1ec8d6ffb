//! Where on a device FastRPC reaches the skel: the skel's file name and URI, the DSP domain, the protection domain
//! (PD) on it and the session, and the control name that attaches this process to a static PD.

use super::names::{self, Named, UnknownName};
use std::ffi::{c_int, CString};
use std::str::FromStr;

/// The skel's file name: FastRPC opens it by this name on the DSP, the DSP loader searches for it, and the local
/// transport looks for the host build under it.
pub const SKEL_FILE_NAME: &str = "liblpai_direct_skel.so";

/// A DSP domain FastRPC can reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Domain {
    /// The audio DSP (LPAI's home).
    Adsp,
    /// The modem DSP.
    Mdsp,
    /// The sensors DSP.
    Sdsp,
    /// The compute DSP.
    Cdsp,
    /// The second compute DSP.
    Cdsp1,
}

impl Named for Domain {
    const WHAT: &'static str = "domain";
    const ALL: &'static [Self] = &[Domain::Adsp, Domain::Mdsp, Domain::Sdsp, Domain::Cdsp, Domain::Cdsp1];

    /// The URI's `_dom` value.
    fn name(self) -> &'static str {
        match self {
            Domain::Adsp => "adsp",
            Domain::Mdsp => "mdsp",
            Domain::Sdsp => "sdsp",
            Domain::Cdsp => "cdsp",
            Domain::Cdsp1 => "cdsp1",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Domain::Adsp => "The audio DSP (LPAI's home)",
            Domain::Mdsp => "The modem DSP",
            Domain::Sdsp => "The sensors DSP",
            Domain::Cdsp => "The compute DSP",
            Domain::Cdsp1 => "The second compute DSP",
        }
    }
}

impl FromStr for Domain {
    type Err = UnknownName;
    fn from_str(given: &str) -> Result<Self, UnknownName> {
        names::parse(given)
    }
}

impl Domain {
    /// The URI's `_dom` value.
    pub fn uri_name(self) -> &'static str {
        self.name()
    }

    /// FastRPC's domain id.
    pub fn id(self) -> c_int {
        match self {
            Domain::Adsp => 0,
            Domain::Mdsp => 1,
            Domain::Sdsp => 2,
            Domain::Cdsp => 3,
            Domain::Cdsp1 => 4,
        }
    }

    /// Libraries to try, the domain's own first.
    pub fn libraries(self) -> [&'static str; 2] {
        match self {
            Domain::Cdsp | Domain::Cdsp1 => ["libcdsprpc.so", "libadsprpc.so"],
            _ => ["libadsprpc.so", "libcdsprpc.so"],
        }
    }
}

/// FastRPC's `ITRANSPORT_PREFIX` (quic/fastrpc `inc/remote.h`): a `remote_handle64_open` name that starts with
/// these 7 bytes is a control request to the library, not a skel.
pub const ITRANSPORT_PREFIX: &str = "'\":;./\\";

/// The protection domain on the DSP domain that the skel is opened in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pd {
    /// The dynamic user PD FastRPC creates for this process (FastRPC's default; no control open).
    User,
    /// The audio static PD (`createstaticpd:audiopd`).
    Audio,
    /// The sensors static PD (`createstaticpd:sensorspd`).
    Sensors,
    /// The root PD, the DSP's guest OS (`attachguestos`).
    Root,
}

impl Named for Pd {
    const WHAT: &'static str = "PD";
    const ALL: &'static [Self] = &[Pd::User, Pd::Audio, Pd::Sensors, Pd::Root];

    fn name(self) -> &'static str {
        match self {
            Pd::User => "user",
            Pd::Audio => "audio",
            Pd::Sensors => "sensors",
            Pd::Root => "root",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Pd::User => "The dynamic user PD FastRPC creates for this process (no control open)",
            Pd::Audio => "The audio static PD (control name createstaticpd:audiopd, then the skel)",
            Pd::Sensors => "The sensors static PD (control name createstaticpd:sensorspd, then the skel)",
            Pd::Root => "The root PD, the DSP's guest OS (control name attachguestos, then the skel)",
        }
    }
}

impl FromStr for Pd {
    type Err = UnknownName;
    fn from_str(given: &str) -> Result<Self, UnknownName> {
        names::parse(given)
    }
}

impl Pd {
    /// The control request after `ITRANSPORT_PREFIX` that attaches this process to the PD (`None`: the default
    /// user PD, which needs none).
    pub fn control_request(self) -> Option<&'static str> {
        match self {
            Pd::User => None,
            Pd::Audio => Some("createstaticpd:audiopd"),
            Pd::Sensors => Some("createstaticpd:sensorspd"),
            Pd::Root => Some("attachguestos"),
        }
    }
}

/// The control name that attaches this process to `pd` on `domain` (and session): `ITRANSPORT_PREFIX`, the
/// request, `&_dom=<domain>`, `&_session=N` when a session is given. `None` for the user PD.
pub fn control_name(pd: Pd, domain: Domain, session: Option<u32>) -> Option<CString> {
    let request = pd.control_request()?;
    let session = session.map(|n| format!("&_session={n}")).unwrap_or_default();
    let name = format!("{ITRANSPORT_PREFIX}{request}&_dom={}{session}", domain.uri_name());
    CString::new(name).ok()
}

/// How to reach the DSP.
#[derive(Clone, Debug)]
pub struct FastRpcOptions {
    /// The domain.
    pub domain: Domain,
    /// The PD on that domain the skel is opened in.
    pub pd: Pd,
    /// FastRPC session on that domain (`&_session=N`), if not the default.
    pub session: Option<u32>,
    /// Ask for an unsigned PD before opening.
    pub unsigned_pd: bool,
    /// Libraries to try instead of the domain's defaults.
    pub libraries: Vec<String>,
}

impl Default for FastRpcOptions {
    fn default() -> Self {
        FastRpcOptions { domain: Domain::Adsp, pd: Pd::User, session: None, unsigned_pd: false, libraries: Vec::new() }
    }
}

/// The skel URI for a domain (and session).
pub fn skel_uri(domain: Domain, session: Option<u32>) -> CString {
    let session = session.map(|n| format!("&_session={n}")).unwrap_or_default();
    let uri = format!(
        "file:///{SKEL_FILE_NAME}?lpai_direct_skel_handle_invoke&_modver=1.0&_dom={}{session}",
        domain.uri_name()
    );
    CString::new(uri).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_skel_uri_names_the_skel_file_its_invoke_function_and_the_domain() {
        let uri = skel_uri(Domain::Cdsp, Some(1));
        let expected = "file:///liblpai_direct_skel.so?lpai_direct_skel_handle_invoke&_modver=1.0&_dom=cdsp&_session=1";
        assert_eq!(uri.to_str().unwrap(), expected);
    }

    #[test]
    fn the_prefix_is_the_seven_bytes_of_remote_h() {
        assert_eq!(ITRANSPORT_PREFIX.as_bytes(), [b'\'', b'"', b':', b';', b'.', b'/', b'\\']);
        assert_eq!(ITRANSPORT_PREFIX.len(), 7);
    }

    #[test]
    fn each_pd_has_its_control_name() {
        assert_eq!(control_name(Pd::User, Domain::Adsp, Some(1)), None);
        let expected = [
            (Pd::Audio, Domain::Adsp, None, "createstaticpd:audiopd&_dom=adsp"),
            (Pd::Sensors, Domain::Sdsp, None, "createstaticpd:sensorspd&_dom=sdsp"),
            (Pd::Root, Domain::Adsp, Some(2), "attachguestos&_dom=adsp&_session=2"),
        ];
        for (pd, domain, session, request) in expected {
            let name = control_name(pd, domain, session).unwrap();
            assert_eq!(name.to_str().unwrap(), format!("'\":;./\\{request}"));
        }
    }
}
