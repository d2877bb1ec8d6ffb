//! The configuration files `stage` writes: `lpaiParams.conf` (the conf given, checked by lpai-net-run's own reader,
//! merged with the target it needs), `config.json` (naming it) and `env.sh` (the run's library paths).

use super::layout::{ADSP_DIR, PARAMS_FILE};
use super::settings::Given;
use super::target::Hlos;
use crate::net_run_config;
use anyhow::{bail, Context as _, Result};
use std::path::Path;

/// The directories the FastRPC library searches when ADSP_LIBRARY_PATH is not set; kept after the staged `adsp/`
/// so the PD still finds the system's own libraries.
const DSP_DEFAULT_SEARCH: [&str; 3] = ["/usr/lib/rfsa/adsp", "/vendor/lib/rfsa/adsp", "/vendor/dsp/"];

/// The lpaiParams.conf to stage: the one `config_file` stands for (checked with lpai-net-run's own reader), with
/// `lpai_backend.target_env` `adsp` and `lpai_backend.enable_hw_ver` filled in when absent; or a minimal one. A conf
/// for another target, or for another hardware version than a `HW_VER` given explicitly, is refused.
pub fn plan_params(config_file: Option<&Path>, hw_ver: &Given, hw: &str) -> Result<String> {
    let mut params = match config_file {
        None => serde_json::json!({}),
        Some(path) => {
            net_run_config::read(path)?;
            match net_run_config::params_file(path)? {
                None => serde_json::json!({}),
                Some(conf) => {
                    let text = std::fs::read_to_string(&conf)
                        .with_context(|| format!("cannot read config file {}", conf.display()))?;
                    serde_json::from_str(&text)
                        .with_context(|| format!("config file {} is not JSON", conf.display()))?
                }
            }
        }
    };
    let shown =
        config_file.map(|path| net_run_config::params_file(path).ok().flatten().unwrap_or_else(|| path.to_path_buf()));
    let object = params.as_object_mut().context("an lpaiParams.conf must be a JSON object")?;
    let backend = object.entry("lpai_backend").or_insert_with(|| serde_json::json!({}));
    let backend = backend.as_object_mut().with_context(|| {
        format!("config file {}: lpai_backend must be an object", shown.clone().unwrap_or_default().display())
    })?;
    match backend.get("target_env").and_then(|value| value.as_str()) {
        Some("adsp") | None => {}
        Some(other) => bail!(
            "config file {}: lpai_backend.target_env is \"{other}\"; the native aDSP path stage assembles needs \
             \"adsp\"",
            shown.unwrap_or_default().display()
        ),
    }
    backend.insert("target_env".into(), "adsp".into());
    match backend.get("enable_hw_ver").and_then(|value| value.as_str()) {
        Some(asked) if asked != hw && !hw_ver.is_default() => bail!(
            "config file {} asks for lpai_backend.enable_hw_ver {asked}, but HW_VER from {} is {hw}",
            shown.unwrap_or_default().display(),
            hw_ver.from
        ),
        Some(_) => {}
        None => {
            backend.insert("enable_hw_ver".into(), hw.into());
        }
    }
    Ok(serde_json::to_string_pretty(&params).context("writing lpaiParams.conf")? + "\n")
}

/// env.sh: the environment the run needs on the device, which the run command sources: the HLOS libraries from the
/// root (and the target's FastRPC directory), the DSP side from `adsp/` before the system's own directories.
pub fn environment_file(device_dir: &str, hlos: Hlos) -> String {
    let mut libraries = device_dir.to_string();
    if let Some(directory) = hlos.system_library_dir() {
        libraries.push(':');
        libraries.push_str(directory);
    }
    let search: Vec<String> =
        std::iter::once(format!("{device_dir}/{ADSP_DIR}")).chain(DSP_DEFAULT_SEARCH.map(String::from)).collect();
    format!(
        "# Written by lpai-net-run stage: the environment of a run on the device (the run command sources it).\n\
         export LD_LIBRARY_PATH={libraries}\n\
         export ADSP_LIBRARY_PATH='{}'\n",
        search.join(";")
    )
}

/// config.json: qnn-net-run's backend-extensions file naming the staged conf, and the persistent binary LPAI needs.
pub fn config_json() -> String {
    let value = serde_json::json!({
        "backend_extensions": { "config_file_path": format!("./{PARAMS_FILE}") },
        "context_configs": { "is_persistent_binary": true },
    });
    serde_json::to_string_pretty(&value).unwrap_or_default() + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn given(value: &str) -> Given {
        Given { value: value.into(), from: "--test".into() }
    }

    #[test]
    fn the_conf_gets_the_target_and_hardware_version_it_lacks_and_refuses_others() {
        let dir = tempfile::tempdir().unwrap();
        let minimal: serde_json::Value = serde_json::from_str(&plan_params(None, &given("v7"), "v7").unwrap()).unwrap();
        assert_eq!(minimal, serde_json::json!({"lpai_backend": {"target_env": "adsp", "enable_hw_ver": "v7"}}));
        let conf = dir.path().join("lpaiParams.conf");
        std::fs::write(&conf, r#"{"lpai_backend": {"enable_hw_ver": "v5"}, "lpai_graph": {"execute": {"fps": 30}}}"#)
            .unwrap();
        let default = Given { value: "v6".into(), from: "the default".into() };
        let kept: serde_json::Value = serde_json::from_str(&plan_params(Some(&conf), &default, "v6").unwrap()).unwrap();
        assert_eq!(kept["lpai_backend"], serde_json::json!({"target_env": "adsp", "enable_hw_ver": "v5"}));
        assert_eq!(kept["lpai_graph"]["execute"]["fps"], 30);
        let message = plan_params(Some(&conf), &given("v6"), "v6").unwrap_err().to_string();
        assert!(message.contains("asks for lpai_backend.enable_hw_ver v5, but HW_VER from --test is v6"), "{message}");
        std::fs::write(&conf, r#"{"lpai_backend": {"target_env": "arm"}}"#).unwrap();
        let message = plan_params(Some(&conf), &default, "v6").unwrap_err().to_string();
        assert!(message.contains("lpaiParams.conf: lpai_backend.target_env is \"arm\""), "{message}");
        std::fs::write(&conf, r#"{"lpai_backend": {"target_env": "adsp", "typo": 1}}"#).unwrap();
        let message = format!("{:#}", plan_params(Some(&conf), &default, "v6").unwrap_err());
        assert!(message.contains("unknown field `typo`"), "{message}");
    }
}
