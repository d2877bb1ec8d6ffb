//! A context created (and so later freed) by a thread that does not hold the PD-wide vendor-calls lock: loading takes
//! the lock's guard, which only `VendorCalls::lock` makes.
use lpai_direct_skel::runtime::{Arena, Binary, Context, Libraries, LoadRequest};

fn load<'a>(libraries: &'a Libraries, arena: &Arena<'a>, binary: &'a [u8]) -> Context<'a> {
    Context::load(libraries, arena, &LoadRequest::new(Binary::Copy(binary))).unwrap()
}

fn main() {
    let _ = load;
}
