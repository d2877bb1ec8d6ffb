//! Self-tests: provider choice, and what the runtime refuses (old API, refused persistent binary, malformed
//! binary, too small an arena), each leaving nothing behind in the backend.

use super::fake::{self, binary, Event, Settings};
use crate::runtime::{Arena, Backend, BackendOptions, ContextOptions, RuntimeError};
use core::fmt::Write;
use lpai_direct::qnn::error::{COMMON_ERROR_NOT_SUPPORTED, SYSTEM_CONTEXT_ERROR_MALFORMED_BINARY};
use lpai_direct::qnn::{lpai, Version};

crate::self_tests! {
    fn an_old_core_api_is_refused_naming_both_versions() {
        let session = fake::begin(Settings::LPAI);
        // SAFETY: the fake's provider function and its data are statics.
        let result = unsafe { Backend::from_providers(fake::old_api_providers, &BackendOptions::default()) };
        let Err(error) = result else {
            check!(false);
            return Ok(());
        };
        let expected = RuntimeError::UnsupportedApi {
            provider: crate::runtime::error::name_of("LPAI_QTI_AISW"),
            found: Version::new(2, 7, 0),
            required: Version::new(2, 30, 0),
        };
        check!(error == expected);
        let mut text = heapless::String::<256>::new();
        check!(write!(text, "{error}").is_ok());
        check!(text.contains("2.7.0") && text.contains("2.x with x >= 30"));
        check!(session.record().events.is_empty());
    }

    fn default_options_choose_lpai_over_htp() {
        let session = fake::begin(Settings::LPAI);
        // SAFETY: as above.
        let lpai = expect_ok!(unsafe { Backend::from_providers(fake::htp_and_lpai_providers, &BackendOptions::default()) });
        check!(lpai.info().backend_id == lpai::BACKEND_ID_LPAI && lpai.info().name == "LPAI_QTI_AISW" && lpai.is_lpai());
        check!(session.record().hw_info.is_some());
        drop(lpai);
        drop(session);

        let session = fake::begin(Settings::LPAI);
        let htp_options = BackendOptions { backend_id: Some(fake::backend::HTP_BACKEND_ID), ..BackendOptions::default() };
        // SAFETY: as above.
        let htp = expect_ok!(unsafe { Backend::from_providers(fake::htp_and_lpai_providers, &htp_options) });
        check!(htp.info().backend_id == 6 && htp.info().name == "HTP_QTI_AISW" && !htp.is_lpai());
        let record = session.record();
        check!(record.hw_info.is_none() && record.backend_configs == 0 && record.properties_asked.is_empty());
        check!(!htp.properties().requires_persistent_binary);

        let missing = BackendOptions { backend_id: Some(99), ..BackendOptions::default() };
        // SAFETY: as above.
        let none = unsafe { Backend::from_providers(fake::htp_and_lpai_providers, &missing) };
        check!(matches!(none, Err(RuntimeError::NoProviders)));
    }

    fn a_refused_persistent_binary_is_reported_as_required_by_the_backend() {
        let session = fake::begin(Settings { refuse_persistent: true, ..Settings::LPAI });
        let bytes = expect_some!(super::binary(&binary::ONE_GRAPH));
        let mut buffer = [0u8; super::ARENA_BYTES];
        let arena = Arena::new(&mut buffer);
        let libraries = expect_ok!(super::fake_libraries(&BackendOptions::default()));
        let result = super::load_copy(&libraries, &arena, &bytes, ContextOptions::default());
        let expected = RuntimeError::PersistentBinaryRefused { code: COMMON_ERROR_NOT_SUPPORTED, required_by_backend: true };
        check!(matches!(result, Err(ref error) if *error == expected));
        let record = session.record();
        check!(record.context_create_calls == 1 && record.contexts[0].persistent_binary == Some(1));
        check!(!record.contexts[0].created && record.position(Event::ContextFree(0)).is_none());
        check!(record.system_contexts_live == 0);
    }

    fn malformed_binaries_are_refused_before_any_context() {
        let session = fake::begin(Settings::LPAI);
        let bytes = expect_some!(super::binary(&binary::ONE_GRAPH));
        let mut garbage = bytes;
        garbage[..4].copy_from_slice(b"ELF\x7f");
        let mut buffer = [0u8; super::ARENA_BYTES];
        let arena = Arena::new(&mut buffer);
        let libraries = expect_ok!(super::fake_libraries(&BackendOptions::default()));
        let malformed = RuntimeError::MalformedBinary { code: SYSTEM_CONTEXT_ERROR_MALFORMED_BINARY };
        for broken in [&bytes[..bytes.len() - 5], &bytes[..7], &garbage[..]] {
            let result = super::load_copy(&libraries, &arena, broken, ContextOptions::default());
            check!(matches!(result, Err(ref error) if *error == malformed));
        }
        let empty = super::load_copy(&libraries, &arena, &[], ContextOptions::default());
        check!(matches!(empty, Err(RuntimeError::BinarySize(0))));
        let record = session.record();
        check!(record.context_create_calls == 0 && record.system_contexts_live == 0);
    }

    fn too_small_an_arena_is_refused_and_cleaned_up() {
        let session = fake::begin(Settings::LPAI);
        let bytes = expect_some!(super::binary(&binary::ONE_GRAPH));
        let libraries = expect_ok!(super::fake_libraries(&BackendOptions::default()));
        let mut tiny = [0u8; 64];
        let arena = Arena::new(&mut tiny);
        let result = super::load_copy(&libraries, &arena, &bytes, ContextOptions::default());
        check!(matches!(result, Err(RuntimeError::Arena(full)) if full.capacity == 64));
        check!(session.record().context_create_calls == 0);

        // Room for the binary and the tensors but not for the 1000-byte scratch memory: the context was
        // created, so the failed load must free it.
        let mut small = [0u8; 1200];
        let arena = Arena::new(&mut small);
        let result = super::load_copy(&libraries, &arena, &bytes, ContextOptions::default());
        check!(matches!(result, Err(RuntimeError::Arena(full)) if full.capacity == 1200));
        let record = session.record();
        check!(record.contexts[0].created && !record.contexts[0].live);
        check!(record.in_order(&[Event::ContextCreate(0), Event::ContextFree(0)]));
        check!(record.contexts[0].binary_intact_at_free == Some(true) && record.system_contexts_live == 0);
    }
}
