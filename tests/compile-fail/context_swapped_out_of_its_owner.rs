//! Safe code swaps the context an owner hands out for another and drops the owner's own context inside the closure:
//! outside the vendor-calls lock, and without the owner's wait for a frame in flight. `Context` is invariant in its
//! lifetime, so no other context fits the one `with_context` lends.
use lpai_direct_skel::runtime::{Context, Owned, Owner};

fn swap(owner: &mut Owner<Owned>, other: Context<'static>) {
    owner.with_context(|context| {
        if let Some(context) = context {
            drop(core::mem::replace(context, other));
        }
    });
}

fn main() {
    let _ = swap;
}
