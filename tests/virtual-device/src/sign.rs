//! The virtual device's test signature: a trailer (`lpai_pd_shell::signature`) that a PD told to be signed
//! (`LPAI_VD_SIGNED_PD=1`) requires on every library it loads. It stands in for a Qualcomm signature, which only
//! the Hexagon SDK's elfsigner.py makes; `stage` never adds it, so an unsigned stage meets a signed PD as on a
//! device.

use std::path::Path;

/// Signs the file at `path` in place (whole or not at all: a signed copy beside it, renamed over it); a file that is
/// signed already is left as it is. Answers whether it signed.
pub fn sign(path: &Path) -> std::io::Result<bool> {
    let mut bytes = std::fs::read(path)?;
    if lpai_pd_shell::signature::is_signed(&bytes) {
        return Ok(false);
    }
    let trailer = lpai_pd_shell::signature::trailer(&bytes);
    bytes.extend_from_slice(&trailer);
    let mut partial = path.as_os_str().to_os_string();
    partial.push(".signing");
    std::fs::write(&partial, &bytes)?;
    std::fs::set_permissions(&partial, std::fs::metadata(path)?.permissions())?;
    std::fs::rename(&partial, path)?;
    Ok(true)
}
