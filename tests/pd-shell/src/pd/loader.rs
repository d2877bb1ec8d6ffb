//! Loading a PD library from a file with the PD's ELF loader: read the file, check its test signature when the PD
//! is signed (`--require-signature`), reserve the image, check and relocate it, protect its pages, run its
//! initializers; `dlsym` on the result.

use super::system::{self, Mapping};
use core::fmt;
use lpai_direct_skel::platform::linux_user as linux;
use lpai_pd_shell::elf::{self, Layout, Refusal, SymbolTable, MAX_IMAGE_BYTES};
use lpai_pd_shell::signature;

/// Longest path the shell handles (Linux's PATH_MAX, NUL included).
pub const PATH_BYTES: usize = 4096;

/// A path with its NUL, for `openat`.
pub struct PathBuffer {
    bytes: [u8; PATH_BYTES],
    length: usize,
}

impl PathBuffer {
    /// `directory/name` (just `name` when `directory` is empty); `None` when too long or holding a NUL.
    pub fn join(directory: &[u8], name: &[u8]) -> Option<PathBuffer> {
        let mut path = PathBuffer { bytes: [0; PATH_BYTES], length: 0 };
        let separator: &[u8] = if directory.is_empty() || directory.ends_with(b"/") { b"" } else { b"/" };
        for part in [directory, separator, name] {
            if part.contains(&0) {
                return None;
            }
            let end = path.length.checked_add(part.len()).filter(|&end| end < PATH_BYTES)?;
            path.bytes[path.length..end].copy_from_slice(part);
            path.length = end;
        }
        Some(path)
    }

    /// The path without its NUL.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.length]
    }

    /// The path with its NUL.
    pub fn with_nul(&self) -> &[u8] {
        &self.bytes[..=self.length]
    }
}

/// Why a library did not load.
#[derive(Clone, Copy, Debug)]
pub enum LoadError {
    /// The path is too long or holds a NUL.
    Path,
    /// `openat` failed with this errno.
    Open(i32),
    /// Reading failed with this errno.
    Read(i32),
    /// The file is larger than any image may be.
    TooLarge(u64),
    /// No memory for the file or the image: bytes asked, errno.
    Memory(usize, i32),
    /// `mprotect` failed with this errno.
    Protect(i32),
    /// The ELF loader refused it.
    Refused(Refusal),
    /// A signed PD refused it: it does not carry the test signature (`lpai_pd_shell::signature`).
    Unsigned,
}

impl fmt::Display for LoadError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            LoadError::Path => formatter.write_str("is not a usable path (too long, or holds a NUL)"),
            LoadError::Open(linux::ENOENT) => formatter.write_str("does not exist"),
            LoadError::Open(errno) => write!(formatter, "cannot be opened (errno {errno})"),
            LoadError::Read(errno) => write!(formatter, "cannot be read (errno {errno})"),
            LoadError::TooLarge(bytes) => write!(formatter, "is too large for a PD library ({bytes} bytes)"),
            LoadError::Memory(bytes, errno) => {
                write!(formatter, "does not fit in memory ({bytes} bytes, errno {errno})")
            }
            LoadError::Protect(errno) => write!(formatter, "cannot have its pages protected (errno {errno})"),
            LoadError::Refused(refusal) => refusal.fmt(formatter),
            LoadError::Unsigned => formatter.write_str("refused: not signed (this PD is signed)"),
        }
    }
}

impl From<Refusal> for LoadError {
    fn from(refusal: Refusal) -> LoadError {
        LoadError::Refused(refusal)
    }
}

/// An open file descriptor, closed when dropped.
struct File(i32);

impl Drop for File {
    fn drop(&mut self) {
        let _ = system::close(self.0);
    }
}

/// Reads the whole file at `path` into a mapping; answers it and the file's size.
fn read_file(path: &PathBuffer) -> Result<(Mapping, usize), LoadError> {
    let file = File(system::open(path.with_nul(), linux::O_RDONLY | linux::O_CLOEXEC, 0).map_err(LoadError::Open)?);
    let size = system::seek(file.0, 0, linux::SEEK_END).map_err(LoadError::Read)?;
    system::seek(file.0, 0, linux::SEEK_SET).map_err(LoadError::Read)?;
    let size =
        usize::try_from(size).ok().filter(|&size| size <= MAX_IMAGE_BYTES as usize).ok_or(LoadError::TooLarge(size))?;
    let mut contents = Mapping::new(size).map_err(|errno| LoadError::Memory(size, errno))?;
    let buffer = &mut contents.as_mut_slice()[..size];
    let mut filled = 0;
    while filled < size {
        match system::read(file.0, &mut buffer[filled..]).map_err(LoadError::Read)? {
            0 => return Err(LoadError::Read(5)),
            read => filled += read,
        }
    }
    Ok((contents, size))
}

/// A library in memory: relocated, protected, initialised.
pub struct Library {
    image: Mapping,
    bias: u32,
    symbols: SymbolTable,
    relocations: u32,
}

impl Library {
    /// Loads the library at `path`; `resolve` answers the address of each PD service it needs. A signed PD
    /// (`require_signature`) refuses a file without the test signature before looking at its ELF headers.
    pub fn load(
        path: &[u8],
        resolve: &mut dyn FnMut(&[u8]) -> Option<u32>,
        require_signature: bool,
    ) -> Result<Library, LoadError> {
        let path = PathBuffer::join(b"", path).ok_or(LoadError::Path)?;
        let (mut contents, size) = read_file(&path)?;
        let file = &contents.as_mut_slice()[..size];
        if !signature::admits(require_signature, file) {
            return Err(LoadError::Unsigned);
        }
        let layout = Layout::parse(file)?;
        let span = layout.span as usize;
        let mut image = Mapping::new(span).map_err(|errno| LoadError::Memory(span, errno))?;
        let base = image.address() as u32;
        let loaded = elf::load(file, &layout, &mut image.as_mut_slice()[..span], base, resolve)?;
        drop(contents);
        for (offset, bytes, protection) in layout.protection_runs(system::page_size()) {
            // SAFETY: no reference into the image is alive: the slice `load` wrote through ended above.
            unsafe { image.protect(offset as usize, bytes as usize, protection) }.map_err(LoadError::Protect)?;
        }
        for &address in loaded.initializers() {
            // SAFETY: an address is a valid function pointer value; calling it is vouched for below.
            let initializer = unsafe { core::mem::transmute::<usize, unsafe extern "C" fn()>(address as usize) };
            // SAFETY: the loader checked that the address lies in an executable segment of this image, which is
            // relocated and now mapped executable; DT_INIT and DT_INIT_ARRAY functions take no arguments.
            unsafe { initializer() };
        }
        let bias = base.wrapping_sub(layout.first_page);
        Ok(Library { image, bias, symbols: loaded.symbols, relocations: loaded.relocations })
    }

    /// Where the image lies: its first byte, its bytes, and the bias (a file address plus the bias is the PD
    /// address).
    pub fn placement(&self) -> (u32, u32, u32) {
        (self.image.address() as u32, self.image.bytes() as u32, self.bias)
    }

    /// Relocations the loader applied.
    pub fn relocations(&self) -> u32 {
        self.relocations
    }

    /// `dlsym`: the address of the global function or object `name`.
    pub fn symbol(&self, name: &[u8]) -> Option<usize> {
        let readable = |(offset, bytes): (usize, usize)| {
            // SAFETY: the loader checked that the range lies in a readable segment of this image, which stays
            // mapped while `self` lives; the shell is single-threaded and runs no library code meanwhile.
            unsafe { core::slice::from_raw_parts(self.image.address().add(offset), bytes) }
        };
        let (symbols, strings) = (readable(self.symbols.symbols_range()), readable(self.symbols.strings_range()));
        let symbol = self.symbols.lookup(symbols, strings, name)?;
        symbol.defined_address(self.bias).map(|address| address as usize)
    }
}
