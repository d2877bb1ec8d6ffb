//! The `dlopen` table: at most [`MAX_LIBRARIES`] libraries at once, each loaded by the PD's loader, found by
//! path (with a `/`) or by bare name in the `--library-path` directories, then beside the skel. A signed PD
//! (`--require-signature`) loads only libraries carrying the test signature.

use super::loader::{Library, LoadError, PathBuffer};
use super::{services, system, Shared};
use core::fmt;
use lpai_direct_skel::platform::linux_user as linux;
use lpai_pd_shell::arguments::{directory_of, Arguments};
use lpai_pd_shell::text::Escaped;

/// Linux's O_APPEND (the generic value Hexagon uses).
const O_APPEND: i32 = 0o2000;

/// Most libraries `dlopen` holds at once.
pub const MAX_LIBRARIES: usize = 8;

struct Entry {
    library: Library,
    path: PathBuffer,
    references: u32,
    handle: u32,
}

struct Table {
    entries: [Option<Entry>; MAX_LIBRARIES],
    serial: u32,
    arguments: Option<Arguments<'static>>,
}

static TABLE: Shared<Table> =
    Shared::new(Table { entries: [const { None }; MAX_LIBRARIES], serial: 0, arguments: None });

/// Why `dlopen` failed.
pub enum OpenError {
    /// A bare name found in no search directory.
    NotFound,
    /// The loader's reason.
    Load(LoadError),
    /// [`MAX_LIBRARIES`] are loaded.
    Full,
    /// Called while the table is being changed (from a library initializer).
    Busy,
}

impl fmt::Display for OpenError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpenError::NotFound => {
                formatter.write_str("not found in ")?;
                let arguments = TABLE.with(|table| table.arguments).flatten();
                for (index, directory) in search_directories(arguments).enumerate() {
                    write!(formatter, "{}{}", if index == 0 { "" } else { ", " }, Escaped(directory))?;
                }
                formatter.write_str(" (the --library-path directories, then the skel's)")
            }
            OpenError::Load(error) => error.fmt(formatter),
            OpenError::Full => write!(formatter, "{MAX_LIBRARIES} libraries are loaded already, the most a PD holds"),
            OpenError::Busy => formatter.write_str("dlopen from a library initializer is not supported"),
        }
    }
}

/// Remembers the command line: its `--library-path` directories and the skel's directory.
pub fn configure(arguments: Arguments<'static>) {
    TABLE.with(|table| table.arguments = Some(arguments));
}

/// With `--map FILE`, appends `START BYTES BIAS PATH` for a library just loaded (hex: where its image starts, its
/// bytes, and the bias: a symbol's address in the file plus the bias is its address in the PD). A map that cannot
/// be written is said on stderr.
pub fn record_mapping(path: &[u8], library: &Library) {
    let Some(map) = TABLE.with(|table| table.arguments.and_then(|arguments| arguments.map)).flatten() else {
        return;
    };
    let Some(map_path) = PathBuffer::join(b"", map) else {
        return crate::say!("lpai-pd-shell: --map {}: not a usable path", Escaped(map));
    };
    let flags = linux::O_WRONLY | linux::O_CREAT | O_APPEND | linux::O_CLOEXEC;
    match system::open(map_path.with_nul(), flags, 0o644) {
        Ok(fd) => {
            let (start, bytes, bias) = library.placement();
            system::line(fd, format_args!("{start:#010x} {bytes:#x} {bias:#010x} {}", Escaped(path)));
            let _ = system::close(fd);
        }
        Err(errno) => crate::say!("lpai-pd-shell: --map {}: cannot be written (errno {errno})", Escaped(map)),
    }
}

/// The directories a bare name is searched in: each `--library-path` directory, then the skel's.
fn search_directories<'a>(arguments: Option<Arguments<'a>>) -> impl Iterator<Item = &'a [u8]> {
    let skel_directory = arguments.map(|arguments| directory_of(arguments.skel));
    arguments.into_iter().flat_map(|arguments| arguments.library_directories()).chain(skel_directory)
}

/// Where `path` is: itself when it holds a `/`, else the first search directory holding a file of that name.
fn locate(path: &[u8]) -> Result<PathBuffer, OpenError> {
    if path.contains(&b'/') {
        return PathBuffer::join(b"", path).ok_or(OpenError::Load(LoadError::Path));
    }
    let arguments = TABLE.with(|table| table.arguments).ok_or(OpenError::Busy)?;
    for directory in search_directories(arguments) {
        let Some(candidate) = PathBuffer::join(directory, path) else { continue };
        match system::open(candidate.with_nul(), linux::O_RDONLY | linux::O_CLOEXEC, 0) {
            Err(linux::ENOENT) => continue,
            Ok(fd) => {
                let _ = system::close(fd);
                return Ok(candidate);
            }
            // Exists but cannot be opened: the loader will say why.
            Err(_) => return Ok(candidate),
        }
    }
    Err(OpenError::NotFound)
}

/// `dlopen`: loads the library (or counts one more reference to it) and answers its handle.
pub fn open(path: &[u8]) -> Result<u32, OpenError> {
    let located = locate(path)?;
    let known = TABLE.with(|table| {
        let entry = table.entries.iter_mut().flatten().find(|entry| entry.path.as_bytes() == located.as_bytes());
        entry.map(|entry| {
            entry.references += 1;
            entry.handle
        })
    });
    match known {
        None => return Err(OpenError::Busy),
        Some(Some(handle)) => return Ok(handle),
        Some(None) => {}
    }
    if TABLE.with(|table| table.entries.iter().all(Option::is_some)) != Some(false) {
        return Err(OpenError::Full);
    }
    let require_signature = TABLE.with(|table| table.arguments.is_some_and(|arguments| arguments.require_signature));
    // Loaded outside the table: its initializers may call the services, dlopen included.
    let library = Library::load(located.as_bytes(), &mut services::address_of, require_signature.unwrap_or(true))
        .map_err(OpenError::Load)?;
    record_mapping(located.as_bytes(), &library);
    let entry = Entry { library, path: located, references: 1, handle: 0 };
    TABLE
        .with(move |table| {
            let index = table.entries.iter().position(Option::is_none).ok_or(OpenError::Full)?;
            // Handles are serial << 3 | slot: never 0, and a stale handle does not name the slot's next library.
            table.serial = if table.serial >= 0x0FFF_FFFF { 1 } else { table.serial + 1 };
            let handle = (table.serial << 3) | index as u32;
            table.entries[index] = Some(Entry { handle, ..entry });
            Ok(handle)
        })
        .unwrap_or(Err(OpenError::Busy))
}

/// How many libraries the table holds (`None` while it is being changed).
pub fn loaded_count() -> Option<u32> {
    TABLE.with(|table| table.entries.iter().flatten().count() as u32)
}

/// `dlsym`: the address of `name` in the library `handle` names.
pub fn symbol(handle: u32, name: &[u8]) -> Option<usize> {
    TABLE.with(|table| entry(table, handle)?.library.symbol(name)).flatten()
}

/// `dlclose`: one reference fewer; the library is unmapped with the last. `false` for an unknown handle.
pub fn close(handle: u32) -> bool {
    let removed = TABLE.with(|table| {
        let entry = entry(table, handle)?;
        entry.references -= 1;
        let last = entry.references == 0;
        Some(if last { table.entries[handle as usize % MAX_LIBRARIES].take() } else { None })
    });
    // Dropped here, outside the table: unmaps the image.
    matches!(removed, Some(Some(_)))
}

fn entry(table: &mut Table, handle: u32) -> Option<&mut Entry> {
    let slot = table.entries.get_mut(handle as usize % MAX_LIBRARIES)?.as_mut()?;
    (slot.handle == handle).then_some(slot)
}
