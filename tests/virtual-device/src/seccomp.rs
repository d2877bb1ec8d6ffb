//! The seccomp filter `lpai-vd-exec` runs the virtual device under: x86_64's statx, renameat2, openat2 and
//! faccessat2 answer ENOSYS, every other call passes. Debian's proot 5.1 predates those calls and would pass their
//! paths to the kernel untranslated; on ENOSYS, glibc, Rust's std and qemu's user mode each fall back to fstatat,
//! renameat, openat and faccessat, which proot translates.

/// The x86_64 numbers of the calls refused.
pub const REFUSED: [u32; 4] = [332, 316, 437, 439];

/// `AUDIT_ARCH_X86_64`: the filter only judges x86_64 calls.
const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;

/// The filter's program: the architecture, then each refused number.
#[cfg(target_os = "linux")]
pub fn program() -> Vec<libc::sock_filter> {
    const LOAD_WORD: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
    const JUMP_IF_EQUAL: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
    const RETURN: u16 = (libc::BPF_RET | libc::BPF_K) as u16;
    let statement = |code: u16, k: u32| libc::sock_filter { code, jt: 0, jf: 0, k };
    let jump = |k: u32, jt: u8, jf: u8| libc::sock_filter { code: JUMP_IF_EQUAL, jt, jf, k };
    let allow = statement(RETURN, libc::SECCOMP_RET_ALLOW);
    // seccomp_data: {int nr; u32 arch; ...}
    let mut program = vec![statement(LOAD_WORD, 4), jump(AUDIT_ARCH_X86_64, 1, 0), allow, statement(LOAD_WORD, 0)];
    for number in REFUSED {
        program.push(jump(number, 0, 1));
        program.push(statement(RETURN, libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32));
    }
    program.push(allow);
    program
}

/// Installs the filter on this process (and so on every process it starts).
#[cfg(target_os = "linux")]
pub fn refuse_untranslated_calls() -> std::io::Result<()> {
    let mut program = program();
    let filter = libc::sock_fprog { len: program.len() as u16, filter: program.as_mut_ptr() };
    // SAFETY: prctl with these options reads only its integer arguments and, for PR_SET_SECCOMP, the sock_fprog,
    // which points at `program`, alive for the call.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &filter as *const libc::sock_fprog) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}
