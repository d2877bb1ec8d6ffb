//! For code that provides the QNN C API in Rust (the self-tests' fake backend, the contract model of libQnnLpai):
//! static provider lists that `QnnInterface_getProviders` / `QnnSystemInterface_getProviders` hand out, and
//! QNN's NULL-terminated config and property lists.

use super::{Interface, SystemInterface};

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Interface {}
    impl Sealed for super::SystemInterface {}
}

/// A provider entry type: a function table, numbers and a pointer to a static name, never written through a
/// shared reference. Only [`Interface`] and [`SystemInterface`] are.
pub trait ProviderEntry: sealed::Sealed + 'static {}
impl ProviderEntry for Interface {}
impl ProviderEntry for SystemInterface {}

/// A provider entry kept in a static.
pub struct Provider<T: ProviderEntry>(pub T);

// SAFETY: an entry holds function pointers, numbers and a pointer to a static string, and nothing writes through a
// shared reference to it (the entry types have no interior mutability), so threads may share it.
unsafe impl<T: ProviderEntry> Sync for Provider<T> {}

/// A static list of providers, as `*_getProviders` hands it out.
pub struct ProviderList<T: ProviderEntry, const N: usize>([*const T; N]);

// SAFETY: pointers to `Provider` statics, which are `Sync` (above); the list itself is never written.
unsafe impl<T: ProviderEntry, const N: usize> Sync for ProviderList<T, N> {}

impl<T: ProviderEntry, const N: usize> ProviderList<T, N> {
    /// The list of `providers`, in order.
    pub const fn new(providers: [&'static Provider<T>; N]) -> Self {
        let mut list = [core::ptr::null(); N];
        let mut index = 0;
        while index < N {
            list[index] = &providers[index].0;
            index += 1;
        }
        ProviderList(list)
    }

    /// Writes the list and its length as `*_getProviders` answers them; `false` (nothing written) when either
    /// pointer is null.
    ///
    /// # Safety
    /// `list` and `count` are null or valid for writes.
    pub unsafe fn hand_out(&'static self, list: *mut *mut *const T, count: *mut u32) -> bool {
        if list.is_null() || count.is_null() {
            return false;
        }
        // SAFETY: both non-null and valid for writes (the caller's promise). Callers only read through the list,
        // so handing out a mutable pointer to the static is fine.
        unsafe {
            *list = self.0.as_ptr().cast_mut();
            *count = N as u32;
        }
        true
    }
}

/// Iterates a NULL-terminated array of pointers (QNN's config and property lists); a null list is empty.
///
/// # Safety
/// `list` is null or points to pointers ending with a null one, all valid while the iterator is used.
pub unsafe fn entries<T>(list: *const *const T) -> impl Iterator<Item = *const T> {
    let mut index = 0usize;
    core::iter::from_fn(move || {
        if list.is_null() {
            return None;
        }
        // SAFETY: the caller's list is NULL-terminated and iteration never reads past its terminator.
        let entry = unsafe { *list.add(index) };
        if entry.is_null() {
            return None;
        }
        index += 1;
        Some(entry)
    })
}
