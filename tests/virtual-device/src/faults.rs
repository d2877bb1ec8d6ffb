//! What the virtual device is, read from its environment once: where its PD shell is, where the PD's log goes (in
//! words or raw), and the faults it can be told to have (`LPAI_VD_*`, documented in docs/src/virtual-device.md).

use std::path::PathBuf;

/// The virtual device's settings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    /// `LPAI_VD_PD_SHELL`: the PD shell (`lpai-pd-shell`) qemu-hexagon runs for each PD.
    pub shell: Option<PathBuf>,
    /// `LPAI_VD_DSP_LOG`: where the PDs' log lines go (appended); unset: this process's stderr.
    pub log: Option<PathBuf>,
    /// `LPAI_VD_SIGNED_PD=1`: a PD the client did not ask to be unsigned refuses unsigned libraries.
    pub signed_pd: bool,
    /// `LPAI_VD_RESTART_AFTER=N`: the first PD dies at the N-th event it serves.
    pub restart_after: Option<u32>,
    /// `LPAI_VD_LPAI_DOMAINS`: the domains with an LPAI engine (default `adsp`).
    pub lpai_domains: Vec<String>,
    /// `LPAI_VD_SKEL_INTERFACE=MAJOR.MINOR`: the version the skel answers the handshake with.
    pub skel_interface: Option<(u32, u32)>,
    /// `LPAI_VD_STATIC_PDS`: the static PDs this process may attach to (`audio`, `sensors`, `root`; default none:
    /// an application is refused, as on a device where only the PD's own daemon may attach).
    pub static_pds: Vec<String>,
    /// `LPAI_VD_RAW_LOG=1`: the PDs print the DSP's log lines raw, message records as `lpai:` (and `lpai+`) lines, as
    /// a device's log carries them, instead of in words.
    pub raw_log: bool,
}

/// A setting that is not understood: its variable and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadSetting(pub String);

fn list(value: Option<String>, default: &[&str]) -> Vec<String> {
    match value {
        Some(value) => value.split(',').map(str::trim).filter(|name| !name.is_empty()).map(String::from).collect(),
        None => default.iter().map(|name| name.to_string()).collect(),
    }
}

/// A switch `read` gives: unset, empty or `0` is off, `1` is on, anything else a bad setting.
fn switch(read: &impl Fn(&str) -> Option<String>, variable: &str) -> Result<bool, BadSetting> {
    match read(variable).as_deref() {
        None | Some("") | Some("0") => Ok(false),
        Some("1") => Ok(true),
        Some(other) => Err(BadSetting(format!("{variable}={other} is neither 0 nor 1"))),
    }
}

impl Settings {
    /// The settings `read` (an environment lookup) gives.
    pub fn from(read: impl Fn(&str) -> Option<String>) -> Result<Settings, BadSetting> {
        let restart_after = match read("LPAI_VD_RESTART_AFTER") {
            None => None,
            Some(text) => Some(
                text.parse::<u32>()
                    .ok()
                    .filter(|&count| count >= 1)
                    .ok_or_else(|| BadSetting(format!("LPAI_VD_RESTART_AFTER={text} is not a count of 1 or more")))?,
            ),
        };
        let skel_interface = match read("LPAI_VD_SKEL_INTERFACE") {
            None => None,
            Some(text) => {
                let parsed =
                    text.split_once('.').and_then(|(major, minor)| Some((major.parse().ok()?, minor.parse().ok()?)));
                Some(parsed.ok_or_else(|| BadSetting(format!("LPAI_VD_SKEL_INTERFACE={text} is not MAJOR.MINOR")))?)
            }
        };
        let signed_pd = switch(&read, "LPAI_VD_SIGNED_PD")?;
        let raw_log = switch(&read, "LPAI_VD_RAW_LOG")?;
        let lpai_domains = list(read("LPAI_VD_LPAI_DOMAINS"), &["adsp"]);
        let static_pds = list(read("LPAI_VD_STATIC_PDS"), &[]);
        for (variable, names, known) in [
            ("LPAI_VD_LPAI_DOMAINS", &lpai_domains, &crate::names::DOMAINS[..]),
            ("LPAI_VD_STATIC_PDS", &static_pds, &["audio", "sensors", "root"][..]),
        ] {
            if let Some(unknown) = names.iter().find(|name| !known.contains(&name.as_str())) {
                return Err(BadSetting(format!("{variable} names {unknown}, which is none of {}", known.join(", "))));
            }
        }
        Ok(Settings {
            shell: read("LPAI_VD_PD_SHELL").map(PathBuf::from),
            log: read("LPAI_VD_DSP_LOG").filter(|path| !path.is_empty()).map(PathBuf::from),
            signed_pd,
            restart_after,
            lpai_domains,
            skel_interface,
            static_pds,
            raw_log,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(pairs: &[(&str, &str)]) -> Result<Settings, BadSetting> {
        let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Settings::from(|name| pairs.iter().find(|(key, _)| key == name).map(|(_, value)| value.clone()))
    }

    #[test]
    fn faults_are_read_and_bad_ones_named() {
        let plain = settings(&[]).unwrap();
        assert_eq!((plain.lpai_domains, plain.signed_pd, plain.restart_after), (vec!["adsp".to_string()], false, None));
        assert!(!plain.raw_log);
        let told = settings(&[
            ("LPAI_VD_SIGNED_PD", "1"),
            ("LPAI_VD_RESTART_AFTER", "12"),
            ("LPAI_VD_LPAI_DOMAINS", "adsp, cdsp"),
            ("LPAI_VD_SKEL_INTERFACE", "2.0"),
            ("LPAI_VD_STATIC_PDS", "audio"),
            ("LPAI_VD_RAW_LOG", "1"),
        ])
        .unwrap();
        assert!(told.signed_pd && told.restart_after == Some(12) && told.skel_interface == Some((2, 0)));
        assert!(told.raw_log);
        assert_eq!((told.lpai_domains.len(), told.static_pds), (2, vec!["audio".to_string()]));
        for (variable, value) in [
            ("LPAI_VD_RESTART_AFTER", "0"),
            ("LPAI_VD_SKEL_INTERFACE", "2"),
            ("LPAI_VD_SIGNED_PD", "yes"),
            ("LPAI_VD_RAW_LOG", "true"),
            ("LPAI_VD_LPAI_DOMAINS", "gpu"),
        ] {
            let BadSetting(message) = settings(&[(variable, value)]).unwrap_err();
            assert!(message.starts_with(&format!("{variable}={value}")) || message.contains("gpu"), "{message}");
        }
    }
}
