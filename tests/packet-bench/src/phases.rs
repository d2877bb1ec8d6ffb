//! Which phase of a call a skel function belongs to, by its demangled name: decoding the call, converting between
//! float and native data, the execute wrapper around the backend, encoding the reply, reading the clock, copying
//! memory, or the dispatch around them (validation, handle lookup, the method's own code).

/// A phase of a skel call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Phase {
    /// The entry point, the handle table, the session, the method's own code, error text.
    Dispatch,
    /// Reading the call's buffers (`lpai_direct_idl`'s skel-side decoder, the method layouts).
    Decode,
    /// Float to native (quantize) and back (dequantize).
    Convert,
    /// The runtime's graph and execute code around graphExecute.
    ExecuteWrapper,
    /// Writing the reply (output scalars, reports, the skel-side decoder's setters of output parameters).
    Encode,
    /// Reading the clock and converting ticks.
    Timing,
    /// memcpy, memmove, memset.
    Copy,
}

impl Phase {
    /// Every phase, in the order tables print them.
    pub const ALL: [Phase; 7] = [
        Phase::Decode,
        Phase::Dispatch,
        Phase::Convert,
        Phase::ExecuteWrapper,
        Phase::Encode,
        Phase::Timing,
        Phase::Copy,
    ];

    /// The phase's key in figures.json.
    pub fn key(self) -> &'static str {
        match self {
            Phase::Dispatch => "dispatch",
            Phase::Decode => "decode",
            Phase::Convert => "convert",
            Phase::ExecuteWrapper => "execute_wrapper",
            Phase::Encode => "encode",
            Phase::Timing => "timing",
            Phase::Copy => "copy",
        }
    }

    /// The phase of the function named `name` (demangled, without its hash).
    pub fn of(name: &str) -> Phase {
        let has = |part: &str| name.contains(part);
        let c_memory = ["memcpy", "memmove", "memset", "memcmp"].contains(&name);
        if c_memory || has("compiler_builtins::mem::") || (name.starts_with("__") && has("mem")) {
            Phase::Copy
        } else if has("lpai_direct::quantize::") || has("write_input_float") || has("read_output_float") {
            Phase::Convert
        } else if has("now_ticks") || has("ticks_to_micros") || has("u128_div_rem") || has("udivti3") {
            Phase::Timing
        } else if has("encode") || has("Encoder") || has("Decoded>::set_") || has("Decoded>::take_rout") {
            Phase::Encode
        } else if has("lpai_direct_idl::") || has("lpai_direct::codec::") || has("decode") {
            Phase::Decode
        } else if has("lpai_direct_skel::runtime::graph::") || has("skel::methods::execute") || has("with_graph") {
            Phase::ExecuteWrapper
        } else {
            Phase::Dispatch
        }
    }
}

/// Whether a function of the skel is the float-to-native conversion (`Some(true)`), the native-to-float one
/// (`Some(false)`), or neither.
pub fn quantize_direction(name: &str) -> Option<bool> {
    let conversion = name.starts_with("lpai_direct::quantize::") || name.starts_with("<lpai_direct::quantize::");
    match conversion && !name.contains("Encoding") {
        false => None,
        true => Some(!name.contains("dequantize")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skel_functions_fall_in_their_phases() {
        assert_eq!(Phase::of("lpai_direct_idl::skel::decode"), Phase::Decode);
        assert_eq!(Phase::of("lpai_direct::quantize::dequantize"), Phase::Convert);
        assert_eq!(Phase::of("<lpai_direct::job::Report>::encode"), Phase::Encode);
        assert_eq!(Phase::of("<lpai_direct_idl::skel::Decoded>::set_rout::<4>"), Phase::Encode);
        assert_eq!(Phase::of("<lpai_direct_skel::runtime::graph::Graph>::execute"), Phase::ExecuteWrapper);
        assert_eq!(Phase::of("compiler_builtins::mem::memcpy"), Phase::Copy);
        assert_eq!(Phase::of("memset"), Phase::Copy);
        assert_eq!(Phase::of("__hexagon_memcpy_likely_aligned_min32bytes_mult8bytes"), Phase::Copy);
        assert_eq!(Phase::of("lpai_direct_skel_handle_invoke"), Phase::Dispatch);
        assert_eq!(Phase::of("lpai_direct_skel::skel::methods::ensure_libraries"), Phase::Dispatch);
        assert_eq!(quantize_direction("lpai_direct::quantize::quantize"), Some(true));
        assert_eq!(quantize_direction("lpai_direct::quantize::quantize_bytes"), Some(true));
        assert_eq!(quantize_direction("lpai_direct::quantize::dequantize"), Some(false));
        assert_eq!(quantize_direction("<lpai_direct::quantize::Encoding>::of"), None);
        assert_eq!(quantize_direction("lpai_direct::quantize_not"), None);
    }
}
