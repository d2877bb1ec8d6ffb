//! What to know before running a staged directory: signing, root, where a static PD finds its files, and what the
//! checks found.

use super::layout::ADSP_DIR;
use lpai_direct_stub::stub::fastrpc::Pd;

/// The notes, in the order they are printed: signing the DSP side (its files `dsp_names`), root, the PD's place,
/// then what the checks `found`.
pub fn before_running(dsp_names: &[String], pd: Pd, device_dir: &str, found: Vec<String>) -> Vec<String> {
    let dsp_files: Vec<String> = dsp_names.iter().map(|name| format!("{ADSP_DIR}/{name}")).collect();
    let mut notes = vec![
        format!(
            "sign the DSP side before running: {} (the aDSP's PDs load signed libraries: the Hexagon SDK's \
             tools/elfsigner/elfsigner.py signs each, with a test signature on a development device, as ExecuTorch's \
             LPAI direct-mode script does for every library it places on the aDSP)",
            dsp_files.join(", ")
        ),
        "the run needs root: the commands start with `adb root` (a production build's adbd cannot be root)".into(),
    ];
    notes.extend(pd_note(pd, device_dir));
    notes.extend(found);
    notes
}

/// Where the skel must live for a static PD to load it.
fn pd_note(pd: Pd, device_dir: &str) -> Option<String> {
    let (name, daemon) = match pd {
        Pd::Audio => ("audio", "the daemon that opens createstaticpd:audiopd, `adsprpcd audiopd adsp`"),
        Pd::Sensors => ("sensors", "the daemon that opens createstaticpd:sensorspd"),
        Pd::User | Pd::Root => return None,
    };
    Some(format!(
        "--pd {name}: the {name} PD is a static PD the system starts; its library loads and file reads are served by \
         its own HLOS daemon ({daemon}), so the ADSP_LIBRARY_PATH that counts is that daemon's (set where the system \
         starts it), not the one in the command above. Put the files of {device_dir}/{ADSP_DIR} in a directory on \
         that path, usually /vendor/lib/rfsa/adsp (Android) or /usr/lib/rfsa/adsp (Linux), which needs a writable \
         partition (adb remount), or build them into the DSP image; unverified without a device"
    ))
}
