//! The two compiler helpers the PD libraries provide themselves: LLVM's aligned block copy, for the link that keeps
//! compiler-builtins' Hexagon assembly out (`linker/compiler-helpers.ld`), and `bcmp`.
//!
//! compiler-builtins assembles all its Hexagon helpers into a single `.text` section: the block copy and the
//! integer and float divisions LLVM calls, and beside them every double-precision one (`__hexagon_adddf3`,
//! `divdf3`, `muldf3`, `sqrtdf2`, `fmadf5`, ... about 6.5 KB). One call into that section keeps all of it, whatever
//! `--gc-sections` finds unused, although nothing on the DSP computes in `f64`. `linker/compiler-helpers.ld` points
//! each helper LLVM calls elsewhere: the divisions at compiler-builtins' portable versions (a section each), the
//! block copy at `__lpai_copy_doublewords` below, so that nothing reaches the section and the link drops it whole.
//! `lpai-skel-fixup` refuses a PD library that carries a double-precision helper.
//!
//! `__lpai_copy_doublewords(destination, source, bytes)` (LLVM's `__hexagon_memcpy_likely_aligned_min32bytes_mult8bytes`
//! once linked so) copies `bytes` (at least 32, a multiple of 8, as LLVM calls it), a doubleword a packet, and
//! answers `destination`; when either pointer is not 8-byte aligned (LLVM only promises 4) it hands the whole copy
//! to `memcpy`. The first read and the loop's set-up share packets with the alignment test: `bytes / 8 + 2` packets.

#[cfg(target_arch = "hexagon")]
core::arch::global_asm!(
    ".section .text.__lpai_copy_doublewords,\"ax\",@progbits",
    ".p2align 4",
    ".globl __lpai_copy_doublewords",
    ".type __lpai_copy_doublewords,@function",
    "__lpai_copy_doublewords:",
    // Both pointers 8-aligned (the two tests of one packet AND into p0); r5 writes, r0 stays the answer.
    "{{ p0 = bitsclr(r0, #7); p0 = bitsclr(r1, #7); r5 = r0; r4 = add(r2, #-16) }}",
    // Otherwise memcpy does it all (r0-r2 untouched). The first doubleword is read; the loop runs bytes / 8 - 2 times.
    "{{ if (!p0) jump:nt memcpy; if (p0) r7:6 = memd(r1++#8); r4 = lsr(r4, #3) }}",
    "{{ loop0(1f, r4); memd(r5++#8) = r7:6; r7:6 = memd(r1++#8) }}",
    ".falign",
    // Each packet writes the doubleword read by the one before and reads the next.
    "1:",
    "{{ memd(r5++#8) = r7:6; r7:6 = memd(r1++#8) }}:endloop0",
    "{{ memd(r5+#0) = r7:6; jumpr r31 }}",
    ".size __lpai_copy_doublewords, . - __lpai_copy_doublewords",
);

// `int bcmp(const void* a, const void* b, size_t bytes)`, zero when the bytes are equal: LLVM calls it for equality
// compares on a Linux target (ours, `hexagon-unknown-linux-musl`), but a QuRT PD's C library is not known to offer
// it, unlike `memcmp`, which answers the same way for equality: a jump to `memcmp`, hidden so that no library exports
// it. The PD libraries take the other memory functions from the PD (`linker/dsp-runtime-symbols.txt`); a static
// program's compiler-builtins defines its own, weakly, which this one replaces.
#[cfg(target_arch = "hexagon")]
core::arch::global_asm!(
    ".section .text.bcmp,\"ax\",@progbits",
    ".p2align 2",
    ".globl bcmp",
    ".hidden bcmp",
    ".type bcmp,@function",
    "bcmp:",
    "{{ jump memcmp }}",
    ".size bcmp, . - bcmp",
);
