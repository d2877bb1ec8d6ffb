//! An embedding on a borrowed stack arena starts a frame and is forgotten: the borrow of `arena` would end while the
//! backend's thread still writes the outputs into it. Safe frames start only on memory no leak can free
//! (`Footing<'static>`).
use lpai_direct_skel::embed::{Binary, Borrowed, Embed, Libraries, LoadRequest};

fn run(libraries: &Libraries, model: &[u8]) {
    let mut arena = [0u8; 4096];
    let mut embed = Embed::new(Borrowed::new(libraries, &mut arena));
    embed.load(&LoadRequest::new(Binary::Copy(model))).unwrap();
    embed.start_frame().unwrap();
    core::mem::forget(embed);
}

fn main() {
    let _ = run;
}
