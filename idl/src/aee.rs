//! AEEStdErr codes, the error numbers FastRPC calls answer with, and their names: the one table the codec, the
//! skel and the stub share. The table holds every code of quic/fastrpc's `inc/AEEStdErr.h` (its values and names;
//! the meanings are said here in its words or shorter), so no message prints a number without its name.

/// Offset every AEE code carries when the DSP side returns it.
pub const DSP_OFFSET: u32 = 0x8000_0400;
/// Success.
pub const SUCCESS: u32 = 0;
/// Generic failure.
pub const EFAILED: u32 = 0x1;
/// Out of memory.
pub const ENOMEMORY: u32 = 0x2;
/// Called in the wrong state.
pub const EBADSTATE: u32 = 0xD;
/// A parameter is invalid.
pub const EBADPARM: u32 = 0xE;
/// The method or feature is not supported.
pub const EUNSUPPORTED: u32 = 0x14;
/// The handle is not valid.
pub const EINVHANDLE: u32 = 0x2C;
/// A symbol the call needs is missing.
pub const ENOSUCHSYMBOL: u32 = 0x42;
/// The connection was refused (FastRPC could not reach the domain).
pub const ECONNREFUSED: u32 = 0x72;
/// An unsigned module was refused (the PD is signed-only).
pub const EUNSIGNEDMOD: u32 = 0x81;
/// The FastRPC layer itself failed.
pub const ERPC: u32 = 0x200;

/// An object could not be loaded (on the DSP: the loader could not load a library, the skel among them).
pub const EUNABLETOLOAD: u32 = 0x6;
/// The object is loaded already (a FastRPC session already open in another mode).
pub const EALREADYLOADED: u32 = 0x5;
/// The signature is invalid.
pub const EINVALIDSIGNATURE: u32 = 0x38;
/// No such device.
pub const ENOSUCHDEVICE: u32 = 0x43;
/// No such file.
pub const ENOSUCHFILE: u32 = 0x45;
/// Bad file, map or memory permissions.
pub const EBADPERMS: u32 = 0x4E;
/// The stub's IDL version is newer than the skel's (`_idlver`).
pub const ESTUBSKELVERMISMATCH: u32 = 0x194;
/// The connection was reset: the FastRPC library's answer, without offset, when the DSP's PD or the DSP itself
/// restarted (the driver's ECONNRESET or EPIPE); every later call of the session answers it too.
pub const ECONNRESET: u32 = 104;

/// Every AEE code of quic/fastrpc's `inc/AEEStdErr.h` that carries the offset, without it: (value, name, the
/// header's meaning). On the DSP side each carries [`DSP_OFFSET`]; on the host side (the FastRPC library's own errors)
/// none.
pub const OFFSET_CODES: &[(u32, &str, &str)] = &[
    (0x001, "AEE_EFAILED", "General failure"),
    (0x002, "AEE_ENOMEMORY", "Memory allocation failed because of insufficient RAM"),
    (0x003, "AEE_ECLASSNOTSUPPORT", "Specified class unsupported"),
    (0x004, "AEE_EVERSIONNOTSUPPORT", "Version not supported"),
    (0x005, "AEE_EALREADYLOADED", "Object already loaded"),
    (0x006, "AEE_EUNABLETOLOAD", "Unable to load object/applet"),
    (0x007, "AEE_EUNABLETOUNLOAD", "Unable to unload object/applet"),
    (0x008, "AEE_EALARMPENDING", "Alarm is pending"),
    (0x009, "AEE_EINVALIDTIME", "Invalid time"),
    (0x00A, "AEE_EBADCLASS", "NULL class object"),
    (0x00B, "AEE_EBADMETRIC", "Invalid metric specified"),
    (0x00C, "AEE_EEXPIRED", "App/Component expired"),
    (0x00D, "AEE_EBADSTATE", "Process or thread is not in expected state"),
    (0x00E, "AEE_EBADPARM", "Invalid parameter"),
    (0x00F, "AEE_ESCHEMENOTSUPPORTED", "Invalid URL scheme"),
    (0x010, "AEE_EBADITEM", "Value out of range"),
    (0x011, "AEE_EINVALIDFORMAT", "Invalid format"),
    (0x012, "AEE_EINCOMPLETEITEM", "Incomplete item"),
    (0x013, "AEE_ENOPERSISTMEMORY", "Insufficient flash"),
    (0x014, "AEE_EUNSUPPORTED", "API not implemented"),
    (0x015, "AEE_EPRIVLEVEL", "Privileges are insufficient for this operation"),
    (0x016, "AEE_ERESOURCENOTFOUND", "Unable to find specified resource"),
    (0x017, "AEE_EREENTERED", "Non re-entrant API re-entered"),
    (0x018, "AEE_EBADTASK", "API called in wrong task context"),
    (0x019, "AEE_EALLOCATED", "App/Module left memory allocated when released"),
    (0x01A, "AEE_EALREADY", "Operation is already in progress"),
    (0x01B, "AEE_EADSAUTHBAD", "ADS mutual authorization failed"),
    (0x01C, "AEE_ENEEDSERVICEPROG", "Need service programming"),
    (0x01D, "AEE_EMEMPTR", "Bad memory pointer, expected to be NULL"),
    (0x01E, "AEE_EHEAP", "An internal heap error was detected"),
    (0x01F, "AEE_EIDLE", "Context is idle"),
    (0x020, "AEE_EITEMBUSY", "Context is busy"),
    (0x021, "AEE_EBADSID", "Invalid subscriber ID"),
    (0x022, "AEE_ENOTYPE", "No type detected/found"),
    (0x023, "AEE_ENEEDMORE", "Need more data/info"),
    (0x024, "AEE_EADSCAPS", "ADS capabilities do not match those required"),
    (0x025, "AEE_EBADSHUTDOWN", "App failed to close properly"),
    (0x026, "AEE_EBUFFERTOOSMALL", "Destination buffer given is too small"),
    (0x028, "AEE_EACKPENDING", "ACK pending on application"),
    (0x029, "AEE_ENOTOWNER", "Not an owner authorized to perform the operation"),
    (0x02A, "AEE_EINVALIDITEM", "Current item is invalid"),
    (0x02B, "AEE_ENOTALLOWED", "Not allowed to perform the operation"),
    (0x02C, "AEE_EINVHANDLE", "Invalid handle"),
    (0x02D, "AEE_EOUTOFHANDLES", "Out of handles"),
    (0x02F, "AEE_ENOMORE", "No more items available"),
    (0x030, "AEE_ECPUEXCEPTION", "A CPU exception occurred"),
    (0x031, "AEE_EREADONLY", "Cannot change read-only object or parameter"),
    (0x032, "AEE_EINVALIDMSG", "Invalid SMD message from APPS"),
    (0x033, "AEE_EINVALIDTHREAD", "Invalid thread"),
    (0x034, "AEE_EINVALIDPROCESS", "Invalid process"),
    (0x035, "AEE_EINVALIDFILENAME", "Invalid file name"),
    (0x036, "AEE_EINVALIDDIGESTSIZE", "Invalid digest size"),
    (0x037, "AEE_EINVALIDSEGS", "Invalid segments"),
    (0x038, "AEE_EINVALIDSIGNATURE", "Invalid signature"),
    (0x039, "AEE_EINVALIDDOMAIN", "Invalid DSP domain"),
    (0x03A, "AEE_EINVALIDFD", "Invalid file descriptor"),
    (0x03B, "AEE_EINVALIDDEVICE", "Invalid device, or the device node open failed for the domain"),
    (0x03C, "AEE_EINVALIDMODE", "Invalid mode"),
    (0x03D, "AEE_EINVALIDPROCNAME", "Invalid process name"),
    (0x03E, "AEE_ENOSUCHMOD", "No such module"),
    (0x03F, "AEE_ENOSUCHINSTANCE", "No instance in the list lookup"),
    (0x040, "AEE_ENOSUCHTHREAD", "No such thread"),
    (0x041, "AEE_ENOSUCHPROCESS", "No such process"),
    (0x042, "AEE_ENOSUCHSYMBOL", "No such symbol (dlsym for the symbol failed)"),
    (0x043, "AEE_ENOSUCHDEVICE", "No such device"),
    (0x044, "AEE_ENOSUCHPROP", "No such DAL property"),
    (0x045, "AEE_ENOSUCHFILE", "No such file found"),
    (0x046, "AEE_ENOSUCHHANDLE", "No such handle"),
    (0x047, "AEE_ENOSUCHSTREAM", "No such stream"),
    (0x048, "AEE_ENOSUCHMAP", "No mapping exists for this address on the DSP"),
    (0x049, "AEE_ENOSUCHREGISTER", "No such register"),
    (0x04A, "AEE_ENOSUCHCLIENT", "No such QDI client"),
    (0x04B, "AEE_EBADDOMAIN", "Bad domain (not initialized)"),
    (0x04C, "AEE_EBADOFFSET", "Bad buffer/page/heap offset"),
    (0x04D, "AEE_EBADSIZE", "Bad buffer/page/heap size"),
    (0x04E, "AEE_EBADPERMS", "Bad file/map/memory permissions"),
    (0x04F, "AEE_EBADFD", "Bad file descriptor"),
    (0x050, "AEE_EBADPID", "Bad PID from HLOS"),
    (0x051, "AEE_EBADTID", "Bad TID"),
    (0x052, "AEE_EBADELF", "Bad ELF file"),
    (0x053, "AEE_EBADASID", "Bad ASID"),
    (0x054, "AEE_EBADCONTEXT", "Bad context"),
    (0x055, "AEE_EBADMEMALIGN", "Bad memory alignment"),
    (0x056, "AEE_EIOCTL", "ioctl call failed"),
    (0x057, "AEE_EFOPEN", "File open error, or the device node open failed for the DSP domain"),
    (0x058, "AEE_EFGETS", "File get string error"),
    (0x059, "AEE_EFFLUSH", "File flush error"),
    (0x05A, "AEE_EFCLOSE", "File close error"),
    (0x05B, "AEE_EEOF", "File EOF reached"),
    (0x05C, "AEE_EFREAD", "File read failed"),
    (0x05D, "AEE_EFWRITE", "File write failed"),
    (0x05E, "AEE_EFGETPOS", "File get position failed"),
    (0x05F, "AEE_EFSETPOS", "File set position failed"),
    (0x060, "AEE_EFTELL", "File tell position failed"),
    (0x061, "AEE_EFSEEK", "File seek failed"),
    (0x062, "AEE_EFLEN", "File length greater than expected"),
    (0x063, "AEE_EGETENV", "apps_std get environment failed"),
    (0x064, "AEE_ESETENV", "apps_std set environment failed"),
    (0x065, "AEE_EMMAP", "mmap failed"),
    (0x066, "AEE_EIONMAP", "ION map failed"),
    (0x067, "AEE_EIONALLOC", "ION alloc failed"),
    (0x068, "AEE_ENORPCMEMORY", "ION memory allocation failed"),
    (0x069, "AEE_ENOROOTOFTRUST", "No root of trust for sigverify"),
    (0x06A, "AEE_ENOTLOCKED", "Unlock failed, not locked before"),
    (0x06B, "AEE_ENOTINITIALIZED", "Not initialized"),
    (0x06C, "AEE_EUNSUPPORTEDAPI", "Unsupported API or request id"),
    (0x06D, "AEE_EUNPACK", "Unpacking command failed"),
    (0x06E, "AEE_EPOLL", "Error while polling for event"),
    (0x06F, "AEE_EEVENTREAD", "Event read failed"),
    (0x070, "AEE_EMAXBUFS", "Maximum buffers"),
    (0x071, "AEE_EINVARGS", "Invalid arguments"),
    (0x072, "AEE_ECONNREFUSED", "Connection refused to the DSP"),
    (0x081, "AEE_EUNSIGNEDMOD", "Test signature not found: unsigned shared object"),
    (0x082, "AEE_EINVALIDHASH", "Test signature not found: invalid hash object"),
    (0x083, "AEE_EBADVA", "Bad VA address"),
    (0x084, "AEE_ENOSUCHJOB", "No such job (also AEE_ENOSUCHGROUP: no such static PD group)"),
    (0x085, "AEE_EBADMAPREFCNT", "Bad map reference count"),
    (0x086, "AEE_EBADPAGECNT", "Bad page count"),
    (0x087, "AEE_EMAPALREADYPRESENT", "Map already present"),
    (0x088, "AEE_ENOFREESECTION", "No more free sections available"),
    (0x089, "AEE_U2GCLIENT_OPEN", "u2g client open failed"),
    (0x08A, "AEE_ENOSESSION", "No available session"),
    (0x100, "AEE_EGLINK_OFFSET", "SMD errors offset"),
    (0x101, "AEE_EGLINKBADPACKET", "SMD invalid packet size"),
    (0x102, "AEE_EGLINKALREADYOPEN", "SMD port is already open"),
    (0x103, "AEE_EGLINKOPENFAILED", "SMD port open failed"),
    (0x104, "AEE_EGLINKWRITE", "SMD port write failed"),
    (0x105, "AEE_EGLINKREGISTER", "SMD port register callback failed"),
    (0x120, "AEE_EDAL_OFFSET", "DAL error offset"),
    (0x121, "AEE_EDALDEVATTACH", "DAL attach error"),
    (0x122, "AEE_EDALINTREGISTER", "DAL interrupt register error"),
    (0x123, "AEE_EDALINTUNREGISTER", "DAL interrupt unregister error"),
    (0x124, "AEE_EDALGETPROP", "DAL get property"),
    (0x125, "AEE_EDALGETVAL", "DAL get property value"),
    (0x126, "AEE_EDCVSREQUEST", "DCVS request failed"),
    (0x140, "AEE_EQURT_OFFSET", "QuRT error offset"),
    (0x141, "AEE_EQURTREGIONCREATE", "QuRT region create failed"),
    (0x142, "AEE_EQURTCACHECLEAN", "QuRT cache clean failed"),
    (0x143, "AEE_EQURTREGIONGETATTR", "QuRT region get attribute failed"),
    (0x144, "AEE_EQURTBADREGIONPERMS", "QuRT bad permissions for region"),
    (0x145, "AEE_EQURTMEMPOOLADD", "QuRT add to memory pool failed"),
    (0x146, "AEE_EQURTREGISTERDEV", "QuRT register device failed"),
    (0x147, "AEE_EQURTMEMPOOLCREATE", "QuRT create memory pool failed"),
    (0x148, "AEE_EQURTGETVA", "QuRT get VA failed"),
    (0x149, "AEE_EQURTREGIONDELETE", "QuRT region delete failed"),
    (0x14A, "AEE_EQURTMEMPOOLATTACH", "QuRT memory pool attach failed"),
    (0x14B, "AEE_EQURTTHREADCREATE", "QuRT thread create failed"),
    (0x14C, "AEE_EQURTCOPYTOUSER", "QuRT copy to user memory failed"),
    (0x14D, "AEE_EQURTMEMMAPCREATE", "QuRT map create failed"),
    (0x14E, "AEE_EQURTINVHANDLE", "QuRT invalid client handle"),
    (0x14F, "AEE_EQURTBADASID", "QuRT bad ASID"),
    (0x150, "AEE_EQURTOPENFAILED", "QuRT QDI open failed"),
    (0x151, "AEE_EQURTCOPYFROMUSER", "QuRT copy from user failed"),
    (0x152, "AEE_EQURTLINELOCK", "QuRT line lock failed"),
    (0x153, "AEE_EQURTQDIDEFMETHOD", "QuRT QDI default method failed"),
    (0x154, "AEE_EQURTCREATEHANDLE", "QuRT create handle from object failed"),
    (0x155, "AEE_EQURTWRITABLEMEM", "QuRT CPZ migration writable memory"),
    (0x156, "AEE_EQURTTHREADCREATEDEF", "QuRT thread create def"),
    (0x157, "AEE_EQURTLOOKUPVA", "QuRT lookup VA"),
    (0x158, "AEE_EQURTLOOKUPPA", "QuRT lookup PA"),
    (0x159, "AEE_EQURTMIGRATESECURE", "QuRT CPZ migration failure"),
    (0x160, "AEE_EQURTQDIOPEN", "QuRT QDI open failure"),
    (0x161, "AEE_EQURTMAPREMOVE", "QuRT map remove failure"),
    (0x162, "AEE_EQURTQDICLOSE", "QuRT QDI close failed"),
    (0x163, "AEE_EQURTWAIT", "QuRT futex wait failed"),
    (0x170, "AEE_EMMPM_OFFSET", "MMPM errors offset"),
    (0x171, "AEE_EMMPMREQUEST", "MMPM power request failed"),
    (0x172, "AEE_EMMPMRELEASE", "MMPM release request failed"),
    (0x173, "AEE_EMMPMSETPARAM", "MMPM set param request failed"),
    (0x174, "AEE_EMMPMREGISTER", "MMPM register request failed"),
    (0x175, "AEE_EMMPMGETINFO", "MMPM get info failed"),
    (0x176, "AEE_EMAX_MMPM_CLIENTS", "MMPM reached the maximum clients per PD"),
    (0x177, "AEE_EDCVSREGISTER", "ADSP DCVS client registration failed"),
    (0x178, "AEE_PDRREGFAIL", "Error callback services registration failed for the PD"),
    (0x180, "AEE_DEFAULT_PROCESS", "Default process in the guest OS is not present"),
    (0x181, "AEE_ENULLCONTEXT", "User NULL context vote"),
    (0x182, "AEE_EINVALIDJOB", "AsyncRPC invalid job"),
    (0x183, "AEE_EBUSY", "AsyncRPC pending job"),
    (0x190, "E_APPS_BUSY_RETRY_LATER", "Retry because the apps processor is busy"),
    (0x191, "E_HLOS_CAP_REACHED", "Cannot allocate any more HLOS memory"),
    (0x192, "E_DPOOL_CAP_REACHED", "Cannot allocate any more physpool memory"),
    (0x193, "E_NO_MORE_FREE_SECTIONS", "No more free sections available to grow the heap"),
    (0x194, "AEE_ESTUBSKELVERMISMATCH", "Stub version cannot be greater than skel version"),
    (0x200, "AEE_ERPC", "Error due to the FastRPC implementation"),
    (0x201, "AEE_EFILE", "File handling related error"),
];

/// The codes `inc/AEEStdErr.h` gives as plain numbers, used on both sides: (value, name, meaning). On the host side
/// 104 is also the offset-free `AEE_ENORPCMEMORY`; FastRPC calls answer it as AEE_ECONNRESET (the kernel's ECONNRESET
/// and EPIPE), so that is its name here.
pub const PLAIN_CODES: &[(u32, &str, &str)] = &[
    (39, "AEE_ENOSUCH", "No such name, port, socket"),
    (46, "AEE_EINTERRUPTED", "Waitable call is interrupted: return to the HLOS and retry the call"),
    (104, "AEE_ECONNRESET", "Connection reset by peer (the DSP's PD or the DSP restarted)"),
    (516, "AEE_EWOULDBLOCK", "Operation would block if not non-blocking; wait and try again"),
];

/// The code as the DSP side returns it: `0x80000400 + code` (success stays 0).
pub const fn dsp(code: u32) -> i32 {
    if code == SUCCESS {
        0
    } else {
        (DSP_OFFSET + code) as i32
    }
}

/// Whether the DSP side answered `code` (it carries [`DSP_OFFSET`]), rather than the FastRPC library or driver.
pub const fn is_dsp(code: u32) -> bool {
    code > DSP_OFFSET && code < DSP_OFFSET + 0x400
}

/// The code without the DSP offset (a host-side code as it is).
pub const fn plain(code: u32) -> u32 {
    if is_dsp(code) {
        code - DSP_OFFSET
    } else {
        code
    }
}

/// The table entry of `code` (with or without the DSP offset): its name and meaning.
pub const fn describe(code: u32) -> Option<(&'static str, &'static str)> {
    if code == SUCCESS {
        return Some(("AEE_SUCCESS", "No error"));
    }
    if code == u32::MAX {
        return Some(("AEE_EUNKNOWN", "Unknown error"));
    }
    if !is_dsp(code) {
        if let Some(found) = find(PLAIN_CODES, code) {
            return Some(found);
        }
    }
    find(OFFSET_CODES, plain(code))
}

const fn find(table: &[(u32, &'static str, &'static str)], code: u32) -> Option<(&'static str, &'static str)> {
    let mut index = 0;
    while index < table.len() {
        if table[index].0 == code {
            return Some((table[index].1, table[index].2));
        }
        index += 1;
    }
    None
}

/// The name of an AEE code, given with or without the DSP offset (`not an AEEStdErr code` for a number the header
/// does not name, a kernel errno passed through among them).
pub const fn name(code: u32) -> &'static str {
    match describe(code) {
        Some((name, _)) => name,
        None => "not an AEEStdErr code",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_hold_each_value_once_and_agree_with_the_constants() {
        for table in [OFFSET_CODES, PLAIN_CODES] {
            for (index, (value, name, _)) in table.iter().enumerate() {
                assert!(table[index + 1..].iter().all(|(other, _, _)| other != value), "{name} twice");
                assert!(name.starts_with("AEE_") || name.starts_with("E_"), "{name}");
            }
        }
        assert_eq!(OFFSET_CODES.len(), 185);
        let constants = [
            (EFAILED, "AEE_EFAILED"),
            (ENOMEMORY, "AEE_ENOMEMORY"),
            (EALREADYLOADED, "AEE_EALREADYLOADED"),
            (EUNABLETOLOAD, "AEE_EUNABLETOLOAD"),
            (EBADSTATE, "AEE_EBADSTATE"),
            (EBADPARM, "AEE_EBADPARM"),
            (EUNSUPPORTED, "AEE_EUNSUPPORTED"),
            (EINVHANDLE, "AEE_EINVHANDLE"),
            (EINVALIDSIGNATURE, "AEE_EINVALIDSIGNATURE"),
            (ENOSUCHSYMBOL, "AEE_ENOSUCHSYMBOL"),
            (ENOSUCHDEVICE, "AEE_ENOSUCHDEVICE"),
            (ENOSUCHFILE, "AEE_ENOSUCHFILE"),
            (EBADPERMS, "AEE_EBADPERMS"),
            (ECONNREFUSED, "AEE_ECONNREFUSED"),
            (EUNSIGNEDMOD, "AEE_EUNSIGNEDMOD"),
            (ESTUBSKELVERMISMATCH, "AEE_ESTUBSKELVERMISMATCH"),
            (ERPC, "AEE_ERPC"),
        ];
        for (value, expected) in constants {
            assert_eq!(name(dsp(value) as u32), expected);
        }
    }

    #[test]
    fn names_accept_codes_with_and_without_the_dsp_offset() {
        assert_eq!(name(EBADPARM), "AEE_EBADPARM");
        assert_eq!(name(dsp(EBADPARM) as u32), "AEE_EBADPARM");
        assert_eq!(name(dsp(ERPC) as u32), "AEE_ERPC");
        assert_eq!(name(ECONNREFUSED), "AEE_ECONNREFUSED");
        assert_eq!(name(0x7777), "not an AEEStdErr code");
        assert_eq!(name(0x8000_0406), "AEE_EUNABLETOLOAD");
        assert_eq!(name(0x8000_0442), "AEE_ENOSUCHSYMBOL");
        assert_eq!(name(ECONNRESET), "AEE_ECONNRESET");
        assert_eq!(name(dsp(0x68) as u32), "AEE_ENORPCMEMORY");
        assert_eq!(name(0x8000_0600), "AEE_ERPC");
        assert_eq!(name(0), "AEE_SUCCESS");
    }
}
