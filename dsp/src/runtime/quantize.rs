//! Float ↔ fixed-point conversion: the shared core's ([`lpai_direct::quantize`]), checked here on Hexagon.

pub use lpai_direct::quantize::*;
