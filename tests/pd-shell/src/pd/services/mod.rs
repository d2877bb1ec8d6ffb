//! The PD services a loaded library may call: exactly the names of `linker/dsp-runtime-symbols.txt` and
//! `linker/virtual-hardware-symbols.txt`. build.rs turns the lists into one `service_table!` invocation, which
//! names a function of each name in this module: a listed service the shell lacks fails the build, and nothing
//! beyond the lists is offered. Every service but the C library's memory and string functions tolerates null
//! pointers (it answers an error); the PD is not the place to crash.

mod c_library;
mod debug;
mod dynamic;
mod files;
mod hardware;
mod memory;
mod mutex;
mod signal;
mod time;

pub use c_library::*;
pub use debug::*;
pub use dynamic::*;
pub use files::*;
pub use hardware::*;
pub use memory::*;
pub use mutex::*;
pub use signal::*;
pub use time::*;

/// errno (and AEE_EBADPARM, the same number) for a null or unusable pointer from the library.
const EFAULT: i32 = 14;
/// errno for a bad argument.
const EINVAL: i32 = 22;

macro_rules! service_table {
    ($($name:ident),* $(,)?) => {
        /// The address of the PD service called `name`, for the loader; `None` for anything not in the list.
        pub fn address_of(name: &[u8]) -> Option<u32> {
            $(
                if name == stringify!($name).as_bytes() {
                    return Some($name as *const () as usize as u32);
                }
            )*
            None
        }
    };
}

include!(concat!(env!("OUT_DIR"), "/service_table.rs"));

/// The bytes of a library's NUL-terminated string, at most `limit` of them; `None` for a null pointer.
pub(crate) use lpai_direct_skel::platform::pd_services::c_text as c_string;
