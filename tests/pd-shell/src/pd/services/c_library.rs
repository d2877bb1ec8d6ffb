//! The C library's memory and string functions a PD offers its libraries (on a device, the PD's own C library):
//! here the shell's own, which compiler-builtins supplies to this static program. Unlike the other services they
//! take no null pointer, as the C library's do not.

use core::ffi::{c_char, c_int, c_void};

unsafe extern "C" {
    /// `void* memcpy(void* to, const void* from, size_t bytes)`.
    pub fn memcpy(to: *mut c_void, from: *const c_void, bytes: usize) -> *mut c_void;
    /// `void* memmove(void* to, const void* from, size_t bytes)`.
    pub fn memmove(to: *mut c_void, from: *const c_void, bytes: usize) -> *mut c_void;
    /// `void* memset(void* to, int byte, size_t bytes)`.
    pub fn memset(to: *mut c_void, byte: c_int, bytes: usize) -> *mut c_void;
    /// `int memcmp(const void* a, const void* b, size_t bytes)`.
    pub fn memcmp(a: *const c_void, b: *const c_void, bytes: usize) -> c_int;
    /// `size_t strlen(const char* text)`.
    pub fn strlen(text: *const c_char) -> usize;
}
