//! The names a client opens, read as quic/fastrpc reads them (`src/fastrpc_apps_user.c`): a skel URI's domain
//! (`&_dom=`, matched in the library's order, `cdsp1` before `cdsp`), session (`&_session=N`, N < 4), library and
//! invoke symbol; and the control names after `ITRANSPORT_PREFIX` that pick a static PD.

/// FastRPC's `ITRANSPORT_PREFIX`: a name starting with it is a control request.
pub const ITRANSPORT_PREFIX: &str = "'\":;./\\";

/// The domains by id (quic/fastrpc `inc/remote.h`): adsp 0, mdsp 1, sdsp 2, cdsp 3, cdsp1 4.
pub const DOMAINS: [&str; 5] = ["adsp", "mdsp", "sdsp", "cdsp", "cdsp1"];

/// The order the library matches `&_dom=` in: `cdsp1` before `cdsp`, since one contains the other.
const MATCH_ORDER: [usize; 5] = [0, 1, 2, 4, 3];

/// The domain id a name gives with `&_dom=`, if any.
pub fn domain_of(name: &str) -> Option<usize> {
    MATCH_ORDER.into_iter().find(|&id| name.contains(&format!("&_dom={}", DOMAINS[id])))
}

/// The session a name gives with `&_session=N` (0 without one); `None` for a bad number or N >= 4.
pub fn session_of(name: &str) -> Option<u32> {
    let Some((_, rest)) = name.split_once("&_session=") else { return Some(0) };
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse::<u32>().ok().filter(|&session| session < 4)
}

/// A skel URI: `file:///<library>?<invoke symbol>&...`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkelUri {
    /// The library's file name.
    pub library: String,
    /// The invoke symbol (the first query item).
    pub symbol: String,
}

/// Reads a skel URI; `None` when it is not `file:///<name>?<symbol>...`.
pub fn skel_uri(name: &str) -> Option<SkelUri> {
    let rest = name.strip_prefix("file:///")?;
    let (library, query) = rest.split_once('?')?;
    let symbol = query.split('&').next()?;
    (!library.is_empty() && !library.contains('/') && !symbol.is_empty())
        .then(|| SkelUri { library: library.to_string(), symbol: symbol.to_string() })
}

/// The PD a control name picks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StaticPd {
    /// `createstaticpd:audiopd`.
    Audio,
    /// `createstaticpd:sensorspd`.
    Sensors,
    /// `createstaticpd:oispd`, `securepd` or `rootpd`: static PDs the virtual device does not have.
    Other,
    /// `attachguestos`: the root PD.
    Root,
    /// `attachuserpd`: the dynamic user PD (the default).
    User,
}

impl StaticPd {
    /// The name `LPAI_VD_STATIC_PDS` lists it by.
    pub fn name(self) -> &'static str {
        match self {
            StaticPd::Audio => "audio",
            StaticPd::Sensors => "sensors",
            StaticPd::Other => "other",
            StaticPd::Root => "root",
            StaticPd::User => "user",
        }
    }
}

/// A static PD name the library refuses (AEE_EBADPARM): 30 bytes or more.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NameTooLong;

/// A control name after the prefix: the PD it picks and the handle the library answers (audiopd 257, sensorspd
/// 258, attachguestos 259, rootpd 260, securepd 261, oispd 256; `attachuserpd` and an unknown static PD name
/// answer success and no handle).
pub fn control(request: &str) -> Result<(StaticPd, Option<u64>), NameTooLong> {
    let request = request.split("&_dom=").next().unwrap_or(request);
    let request = request.split("&_session=").next().unwrap_or(request);
    if request.starts_with("attachguestos") {
        return Ok((StaticPd::Root, Some(259)));
    }
    if request.starts_with("attachuserpd") {
        return Ok((StaticPd::User, None));
    }
    let Some(name) = request.strip_prefix("createstaticpd:") else { return Ok((StaticPd::User, None)) };
    if name.len() >= 30 {
        return Err(NameTooLong);
    }
    Ok(match name {
        _ if name.starts_with("audiopd") => (StaticPd::Audio, Some(257)),
        _ if name.starts_with("sensorspd") => (StaticPd::Sensors, Some(258)),
        _ if name.starts_with("rootpd") => (StaticPd::Other, Some(260)),
        _ if name.starts_with("securepd") => (StaticPd::Other, Some(261)),
        _ if name.starts_with("oispd") => (StaticPd::Other, Some(256)),
        _ => (StaticPd::User, None),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_read_as_the_library_reads_them() {
        let uri = "file:///liblpai_direct_skel.so?lpai_direct_skel_handle_invoke&_modver=1.0&_dom=cdsp1&_session=2";
        assert_eq!(domain_of(uri), Some(4));
        assert_eq!(domain_of("x&_dom=cdsp"), Some(3));
        assert_eq!(domain_of("x&_dom=gpu"), None);
        assert_eq!((session_of(uri), session_of("x"), session_of("x&_session=4")), (Some(2), Some(0), None));
        let read = skel_uri(uri).unwrap();
        assert_eq!(
            (read.library.as_str(), read.symbol.as_str()),
            ("liblpai_direct_skel.so", "lpai_direct_skel_handle_invoke")
        );
        assert_eq!(skel_uri("file:///a/b.so?x"), None);
        assert_eq!(skel_uri("http://x"), None);
    }

    #[test]
    fn control_names_pick_their_pd_and_handle() {
        assert_eq!(control("createstaticpd:audiopd&_dom=adsp"), Ok((StaticPd::Audio, Some(257))));
        assert_eq!(control("createstaticpd:sensorspd&_dom=sdsp&_session=1"), Ok((StaticPd::Sensors, Some(258))));
        assert_eq!(control("attachguestos&_dom=adsp"), Ok((StaticPd::Root, Some(259))));
        assert_eq!(control("createstaticpd:nothing&_dom=adsp"), Ok((StaticPd::User, None)));
        assert_eq!(control("createstaticpd:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), Err(NameTooLong));
    }
}
