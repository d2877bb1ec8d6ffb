//! The method table: runs the IDL method an invocation names on its session (the last error cleared first, but for
//! `last_error` and `failed_library`, which answer for it).

use super::error::SkelError;
use super::methods::{self, Answer};
use super::session::Session;
use super::{job, load};
use crate::platform::{Hex, Level, Message};
use lpai_direct::aee::EUNSUPPORTED;
use lpai_direct::codec::{self, Decoded};

/// Runs method `id`.
pub(super) fn dispatch(session: &mut Session, id: u32, call: &mut Decoded<'_>) -> Answer {
    if id != codec::last_error::ID && id != codec::failed_library::ID {
        session.clear_error();
    }
    let answer = match id {
        codec::configure::ID => methods::configure(session, call),
        codec::load::ID | codec::load_file::ID | codec::load_with_metadata::ID | codec::load_file_with_metadata::ID => {
            load::load(session, call, id)
        }
        codec::describe::ID => methods::describe(session, call),
        codec::set_performance::ID => methods::set_performance(session, call),
        codec::execute::ID => methods::execute(session, call),
        codec::run_job::ID => job::run_job(session, call),
        codec::profile::ID => methods::profile(session, call),
        codec::unload::ID => methods::unload(session, call),
        codec::last_error::ID => methods::last_error(session, call),
        codec::version::ID => methods::version(call),
        codec::probe::ID => methods::probe(session, call),
        codec::register_op_package::ID => methods::register_op_package(session, call),
        codec::failed_library::ID => methods::failed_library(session, call),
        _ => Err(SkelError::aee(EUNSUPPORTED)),
    };
    if let Err(SkelError { aee, qnn: Some(qnn) }) = answer {
        crate::log!(Level::Debug, Message::MethodAnswers, id, Hex::of(aee), qnn);
    }
    answer
}
