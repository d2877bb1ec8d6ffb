//! Target `lpai_params`: an `lpaiParams.conf` (`lpai_net_run::lpai_config::from_params`) from arbitrary JSON.
//!
//! Input: the file's bytes.

use lpai_net_run::lpai_config;
use std::path::Path;

/// The target.
pub fn run(data: &[u8]) {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    let config = match lpai_config::from_params(Path::new("fuzz/lpaiParams.conf"), value) {
        Ok(config) => config,
        Err(error) => {
            let message = format!("{error:#}");
            assert!(message.contains("fuzz/lpaiParams.conf"), "an error that names no file: {message}");
            return;
        }
    };
    assert!(config.target.is_none_or(|target| target <= 2), "{config:?}");
    assert!(config.hw_version.is_none_or(|version| [5, 0x0001_0005, 6, 7].contains(&version)), "{config:?}");
    assert!(config.profiling_level.is_none_or(|level| level == 1 || level == 2), "{config:?}");
    assert_eq!(config.perf.is_some(), config.affinity.is_some(), "{config:?}");
    if let Some(perf) = config.perf {
        assert!(perf.client_type.0 == 1 || perf.client_type.0 == 2, "{config:?}");
    }
    if let Some(affinity) = config.affinity {
        assert!(affinity.affinity.0 == 1 || affinity.affinity.0 == 2, "{config:?}");
    }
}
