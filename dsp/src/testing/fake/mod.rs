//! A fake LPAI QNN backend and libQnnSystem provider, linked in for the self-tests (no dlopen).
//!
//! The fake answers like libQnnLpai does (backend id 12, core API 2.32, ALIGNMENT_REQ and
//! REQUIRE_PERSISTENT_BINARY properties, scratch and persistent graph memory, EARLY_TERMINATION) on a small
//! context binary format of its own ([`binary`]), and records what it was asked ([`record`]).
//!
//! Its state is global, so a test first takes a [`Session`] with [`begin`]: the session serialises tests
//! (host `cargo test` runs them on parallel threads), resets the state, and must outlive every runtime object
//! of the test (declare it first). The entry points are only ever called by the thread holding the session.

pub mod backend;
pub mod binary;
pub mod context;
pub mod graph;
pub mod record;
pub mod system;

pub use backend::{htp_and_lpai_providers, lpai_providers, old_api_providers, OP_PACKAGE, OP_PACKAGE_PROVIDER};
pub use record::{ContextRecord, Event, GraphId, GraphRecord, Record};
pub use system::system_providers;

pub(crate) use lpai_direct::qnn::provide::entries;

use core::cell::UnsafeCell;
use core::ffi::c_void;
use record::State;

/// How the fake behaves in one test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// ALIGNMENT_REQ start-address alignment reported, and demanded of every buffer.
    pub start_alignment: u32,
    /// ALIGNMENT_REQ size alignment reported.
    pub size_alignment: u32,
    /// REQUIRE_PERSISTENT_BINARY reported; when set, contextCreateFromBinary also demands PERSISTENT_BINARY=1.
    pub require_persistent: bool,
    /// contextCreateFromBinary answers 1000 (NOT_SUPPORTED) to any PERSISTENT_BINARY config, as HTP does.
    pub refuse_persistent: bool,
    /// graphExecute answers EARLY_TERMINATION (6038) this many times before it completes.
    pub early_terminations: u32,
    /// graphExecute always answers EARLY_TERMINATION.
    pub always_early: bool,
    /// ENPU_CORE_NUM reported (and ENPU_CORE_INFO for each); 0: neither property is answered, as an older LPAI.
    pub enpu_cores: u32,
}

impl Settings {
    /// A well-behaved LPAI backend: alignment 128 / 64, persistent binary required, no early termination.
    pub const LPAI: Settings = Settings {
        start_alignment: 128,
        size_alignment: 64,
        require_persistent: true,
        refuse_persistent: false,
        early_terminations: 0,
        always_early: false,
        enpu_cores: 2,
    };
}

/// A `Sync` cell for the fake's statics; see [`with_state`] for why sharing it is sound.
pub(crate) struct SyncCell<T>(UnsafeCell<T>);

// SAFETY: only the thread holding the session lock touches the contents (see the module documentation).
unsafe impl<T> Sync for SyncCell<T> {}

impl<T> SyncCell<T> {
    pub(crate) const fn new(value: T) -> Self {
        SyncCell(UnsafeCell::new(value))
    }

    pub(crate) fn get(&self) -> *mut T {
        self.0.get()
    }
}

/// Serialises the host's test threads (the guard lives in the [`Session`]).
#[cfg(not(target_arch = "hexagon"))]
static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
/// The Hexagon self-test executable runs one test at a time on one thread: a session is only ever taken once.
#[cfg(target_arch = "hexagon")]
static TAKEN: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);
static STATE: SyncCell<State> = SyncCell::new(State::INITIAL);

/// Runs `action` on the fake's state. Never call it from inside `action`.
pub(crate) fn with_state<R>(action: impl FnOnce(&mut State) -> R) -> R {
    // SAFETY: the state is only reached through this function, by the one thread holding the session lock,
    // and `action` cannot call back into it, so this is the only reference alive.
    action(unsafe { &mut *STATE.get() })
}

/// The lock on the fake for one test; released on drop.
pub struct Session {
    #[cfg(not(target_arch = "hexagon"))]
    _guard: std::sync::MutexGuard<'static, ()>,
}

/// Waits for the fake (blocking, never spinning), then resets it with `settings`.
pub fn begin(settings: Settings) -> Session {
    #[cfg(not(target_arch = "hexagon"))]
    let session = Session { _guard: LOCK.lock().unwrap_or_else(std::sync::PoisonError::into_inner) };
    #[cfg(target_arch = "hexagon")]
    let session = {
        if TAKEN.swap(true, core::sync::atomic::Ordering::Acquire) {
            let message = "fake::begin: a session is already open on this one thread (nested begin)";
            crate::platform::write_log(crate::platform::Level::Error, &crate::message!(message));
            crate::platform::linux_user::exit(101);
        }
        Session {}
    };
    with_state(|state| state.reset(settings));
    session
}

impl Session {
    /// A copy of everything recorded so far.
    pub fn record(&self) -> Record {
        with_state(|state| state.record.clone())
    }

    /// Changes the settings mid-test (for example to make the next executions terminate early).
    pub fn configure(&self, change: impl FnOnce(&mut Settings)) {
        with_state(|state| {
            change(&mut state.settings);
            state.early_left = state.settings.early_terminations;
        });
    }
}

#[cfg(target_arch = "hexagon")]
impl Drop for Session {
    fn drop(&mut self) {
        TAKEN.store(false, core::sync::atomic::Ordering::Release);
    }
}

/// Where the fake's backend handles start (the backend and the contexts check them).
pub(crate) const BACKEND_HANDLE_BASE: usize = 0xB000;

/// A fake handle: `base + index` as a pointer that is never dereferenced.
pub(crate) fn handle(base: usize, index: usize) -> *mut c_void {
    core::ptr::without_provenance_mut(base + index)
}

/// The index of a fake handle made with `base`, if it is one below `limit`.
pub(crate) fn index_of(handle: *mut c_void, base: usize, limit: usize) -> Option<usize> {
    handle.addr().checked_sub(base).filter(|&index| index < limit)
}

/// The fake backend and system library as built-in libraries, so code that loads libraries by name (the skel's
/// `configure`) reaches them without a dynamic loader. The tests that run the contract model of libQnnLpai expect
/// the program to have registered it (see [`crate::testing::contract_model_registered`]).
pub static BUILTINS: &[crate::platform::libraries::BuiltinLibrary] = &{
    use crate::platform::libraries::{BuiltinLibrary, BuiltinSymbol};
    [
        BuiltinLibrary {
            name: c"libQnnLpaiFake.so",
            symbols: &[BuiltinSymbol::backend_providers(backend::lpai_providers)],
        },
        BuiltinLibrary {
            name: c"libQnnSystemFake.so",
            symbols: &[BuiltinSymbol::system_providers(system::system_providers)],
        },
    ]
};
