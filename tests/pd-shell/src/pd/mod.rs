//! The PD itself (Hexagon only): the program entry, the shell's own syscalls, the loader's memory side, the
//! `dlopen` table, the PD services, the event counter of `--restart-after`, the request loop and the audio module's
//! session (`--capi`).

mod capi;
mod events;
mod invoke;
mod libraries;
mod loader;
mod serve;
mod services;
pub mod system;

use core::cell::RefCell;
use lpai_pd_shell::arguments::Arguments;
use lpai_pd_shell::service_names::{index_of, NAMES};
use lpai_pd_shell::text::Escaped;

/// State the shell keeps between calls, in a static. A `RefCell`: a nested use (a library initializer calling
/// `dlopen` while the table is being changed) is refused instead of aliasing.
pub struct Shared<T>(RefCell<T>);

// SAFETY: the shell runs a single thread (none of the services it offers creates threads, and it starts none),
// so the cell is never touched from two threads.
unsafe impl<T> Sync for Shared<T> {}

impl<T> Shared<T> {
    /// A cell holding `value`.
    pub const fn new(value: T) -> Shared<T> {
        Shared(RefCell::new(value))
    }

    /// Runs `use_value` on the value; `None` when a caller up the stack is using it.
    pub fn with<R>(&self, use_value: impl FnOnce(&mut T) -> R) -> Option<R> {
        let mut value = self.0.try_borrow_mut().ok()?;
        Some(use_value(&mut value))
    }
}

/// The bytes of the NUL-terminated string at `pointer`, without the NUL.
///
/// # Safety
/// `pointer` must point at a NUL-terminated string that lives for `'a`.
pub unsafe fn c_bytes<'a>(pointer: *const u8) -> &'a [u8] {
    let mut length = 0;
    // SAFETY: the caller promises a NUL before the end of the string's memory.
    while unsafe { *pointer.add(length) } != 0 {
        length += 1;
    }
    // SAFETY: the `length` bytes before the NUL were just read.
    unsafe { core::slice::from_raw_parts(pointer, length) }
}

/// The process entry `_start` (in the dsp crate's Linux user-mode platform) calls, with the initial stack:
/// argc, then argc pointers to the NUL-terminated arguments.
#[no_mangle]
extern "C" fn lpai_program_main(initial_stack: *const u32) -> ! {
    // SAFETY: the kernel's initial stack, as `_start` found it.
    unsafe { system::record_page_size(initial_stack) };
    // SAFETY: the kernel's initial stack holds argc and then argc argument pointers.
    let count = unsafe { *initial_stack } as usize;
    let arguments = (1..count).map(|index| {
        // SAFETY: index < argc: a pointer to a NUL-terminated argument, alive for the whole process.
        unsafe { c_bytes(*initial_stack.add(1 + index) as usize as *const u8) }
    });
    system::exit(run(arguments))
}

/// Loads the skel, then checks or serves; answers the exit status.
fn run(arguments: impl Iterator<Item = &'static [u8]>) -> i32 {
    let arguments = match Arguments::parse(arguments) {
        Ok(arguments) => arguments,
        Err(error) => {
            crate::say!("lpai-pd-shell: {error}");
            return 2;
        }
    };
    libraries::configure(arguments);
    events::configure(arguments.restart_after);
    services::configure_hardware(arguments.no_lpai_engine);
    services::configure_log(arguments.raw_log);
    let path = arguments.skel;
    let mut used = [false; NAMES.len()];
    let mut resolve = |name: &[u8]| {
        let address = services::address_of(name)?;
        if let Some(index) = index_of(name) {
            used[index] = true;
        }
        Some(address)
    };
    let skel = match loader::Library::load(path, &mut resolve, arguments.require_signature) {
        Ok(skel) => skel,
        Err(loader::LoadError::Unsigned) => {
            crate::say!(
                "lpai-pd-shell: {}: refused: not signed (this PD is signed: --require-signature)",
                Escaped(path)
            );
            return 1;
        }
        Err(error) => {
            crate::say!("lpai-pd-shell: {}: {error}", Escaped(path));
            return 1;
        }
    };
    libraries::record_mapping(path, &skel);
    if arguments.check {
        let mut services = lpai_pd_shell::text::Text::<1024>::new();
        for (name, _) in NAMES.iter().zip(used).filter(|(_, used)| *used) {
            if !services.as_bytes().is_empty() {
                services.push_bytes(b", ");
            }
            services.push_bytes(name.as_bytes());
        }
        let services = core::str::from_utf8(services.as_bytes()).unwrap_or("?");
        system::line(
            1,
            format_args!(
                "lpai-pd-shell: {}: loads ({} relocations; PD services used: {services})",
                Escaped(path),
                skel.relocations()
            ),
        );
        return 0;
    }
    if arguments.capi {
        return capi::serve(&skel);
    }
    match serve::Skel::new(skel) {
        Ok(skel) => skel.serve(),
        Err(missing) => {
            crate::say!("lpai-pd-shell: {}: is not an lpai-direct skel: it exports no {missing}", Escaped(path));
            1
        }
    }
}
