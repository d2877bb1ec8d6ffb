//! The FastRPC flags a run and `doctor` share: the domain, the PD, the session, the library, an unsigned PD.

use super::named_values::named;
use lpai_direct_stub::stub::fastrpc::{Domain, FastRpcOptions, Pd};

/// The FastRPC flags of a run and of `doctor`: the domain, the PD, the session, the library, an unsigned PD.
#[derive(Clone, Debug, clap::Args)]
pub struct FastRpcArgs {
    /// DSP domain for --transport fastrpc.
    #[arg(long, value_name = "DOMAIN", default_value = "adsp", value_parser = named::<Domain>())]
    pub domain: Domain,

    /// The PD on that domain the skel runs in: user (FastRPC's dynamic user PD), or audio, sensors, root (the
    /// stub first opens the FastRPC control name that attaches this process to that PD). FastRPC only.
    #[arg(long, value_name = "PD", default_value = "user", value_parser = named::<Pd>())]
    pub pd: Pd,

    /// FastRPC session on that domain.
    #[arg(long, value_name = "N")]
    pub session: Option<u32>,

    /// FastRPC library to load instead of the domain's usual libadsprpc.so / libcdsprpc.so.
    #[arg(long = "fastrpc_library", value_name = "FILE")]
    pub fastrpc_library: Option<String>,

    /// Run the skel in an unsigned PD (remote_session_control before opening).
    #[arg(long = "unsigned_pd")]
    pub unsigned_pd: bool,
}

impl FastRpcArgs {
    /// The FastRPC transport's options.
    pub fn options(&self) -> FastRpcOptions {
        FastRpcOptions {
            domain: self.domain,
            pd: self.pd,
            session: self.session,
            unsigned_pd: self.unsigned_pd,
            libraries: self.fastrpc_library.iter().cloned().collect(),
        }
    }
}
