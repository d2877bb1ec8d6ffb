//! qnn-net-run's `--config_file` for LPAI: either the backend-extensions JSON
//! (`{"backend_extensions": {"config_file_path": "lpaiParams.conf", ...}}`) or an `lpaiParams.conf` itself, with
//! the keys the LPAI net-run extension documents. Unknown keys in the conf are refused by name, so a typo is not
//! ignored; the backend-extensions JSON's other top-level keys (`context_configs`, `graph_configs`, ...) are
//! qnn-net-run's and are ignored. `config_file_path` is followed one level only; a relative one is taken from the
//! JSON file's directory first, then from the current directory.

use anyhow::{bail, Context, Result};
use lpai_direct::qnn::lpai;
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Extensions {
    #[allow(dead_code)] // reason: accepted for qnn-net-run compatibility; lpai-direct loads no extension library
    shared_library_path: Option<String>,
    config_file_path: String,
}

/// The backend-extensions JSON; its other top-level keys belong to qnn-net-run and are ignored.
#[derive(Debug, Default, Deserialize)]
struct Outer {
    backend_extensions: Extensions,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    lpai_backend: Option<Backend>,
    lpai_graph: Option<Graph>,
    lpai_profile: Option<Profile>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Backend {
    target_env: Option<String>,
    enable_hw_ver: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Graph {
    execute: Option<Execute>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Execute {
    fps: Option<u32>,
    ftrt_ratio: Option<u32>,
    client_type: Option<String>,
    affinity: Option<String>,
    core_selection: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Profile {
    level: Option<String>,
}

/// What an LPAI config file asks for, in QNN's numbers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LpaiConfig {
    /// `lpai_backend.target_env`: x86 0, arm 1, adsp 2.
    pub target: Option<u32>,
    /// `lpai_backend.enable_hw_ver`.
    pub hw_version: Option<u32>,
    /// `lpai_graph.execute` fps, ftrt_ratio, client_type (defaults 1, 10, real_time).
    pub perf: Option<lpai::PerfCfg>,
    /// `lpai_graph.execute` affinity and core_selection (defaults soft, 0).
    pub affinity: Option<lpai::CoreAffinity>,
    /// `lpai_profile.level`: basic 1, detailed 2.
    pub profiling_level: Option<u32>,
}

fn choice(file: &Path, key: &str, value: &str, choices: &[(&str, u32)]) -> Result<u32> {
    match choices.iter().find(|(name, _)| *name == value) {
        Some((_, number)) => Ok(*number),
        None => {
            let names: Vec<&str> = choices.iter().map(|(name, _)| *name).collect();
            bail!("{}: {key} is \"{value}\"; expected one of {}", file.display(), names.join(", "))
        }
    }
}

fn read_json(path: &Path) -> Result<serde_json::Value> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read config file {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("config file {} is not JSON", path.display()))
}

/// Where a backend-extensions file's `config_file_path` points: an absolute path as it is; a relative one beside
/// `json` when it exists there, else from `current_directory`.
fn resolve(json: &Path, config_file_path: &Path, current_directory: &Path) -> Result<PathBuf> {
    if config_file_path.is_absolute() {
        return Ok(config_file_path.to_path_buf());
    }
    let beside = json.parent().unwrap_or(Path::new("")).join(config_file_path);
    if beside.exists() {
        return Ok(beside);
    }
    let from_current = current_directory.join(config_file_path);
    if from_current.exists() {
        return Ok(from_current);
    }
    bail!(
        "config file {}: config_file_path {} is neither beside it ({}) nor in the current directory ({})",
        json.display(),
        config_file_path.display(),
        beside.display(),
        from_current.display()
    )
}

/// Reads a config file (the backend-extensions JSON or the lpaiParams.conf it points to).
pub fn read(path: &Path) -> Result<LpaiConfig> {
    let value = read_json(path)?;
    if value.get("backend_extensions").is_none() {
        return from_params(path, value);
    }
    let outer: Outer = serde_json::from_value(value).with_context(|| format!("config file {}", path.display()))?;
    let current_directory = std::env::current_dir().unwrap_or_default();
    let inner = resolve(path, Path::new(&outer.backend_extensions.config_file_path), &current_directory)?;
    let inner_value = read_json(&inner)?;
    if inner_value.get("backend_extensions").is_some() {
        bail!(
            "config file {}: its config_file_path {} is another backend-extensions file; it must name an \
             lpaiParams.conf",
            path.display(),
            inner.display()
        );
    }
    from_params(&inner, inner_value)
}

/// The lpaiParams.conf a config file stands for: the file itself, or the conf a backend-extensions JSON's
/// `config_file_path` names (found as [`read`] finds it).
pub fn params_file(path: &Path) -> Result<PathBuf> {
    let value = read_json(path)?;
    if value.get("backend_extensions").is_none() {
        return Ok(path.to_path_buf());
    }
    let outer: Outer = serde_json::from_value(value).with_context(|| format!("config file {}", path.display()))?;
    let current_directory = std::env::current_dir().unwrap_or_default();
    resolve(path, Path::new(&outer.backend_extensions.config_file_path), &current_directory)
}

/// Reads an lpaiParams.conf's keys (`path` names it in messages).
fn from_params(path: &Path, value: serde_json::Value) -> Result<LpaiConfig> {
    let params: Params = serde_json::from_value(value).with_context(|| format!("config file {}", path.display()))?;
    let backend = params.lpai_backend.unwrap_or_default();
    let target = backend
        .target_env
        .map(|v| choice(path, "lpai_backend.target_env", &v, &[("x86", 0), ("arm", 1), ("adsp", 2)]))
        .transpose()?;
    let hw_choices = [("v5", 5), ("v5_1", 0x0001_0005), ("v6", 6), ("v7", 7)];
    let hw_version =
        backend.enable_hw_ver.map(|v| choice(path, "lpai_backend.enable_hw_ver", &v, &hw_choices)).transpose()?;
    let execute = params.lpai_graph.and_then(|graph| graph.execute);
    let (perf, affinity) = match execute {
        None => (None, None),
        Some(execute) => {
            let client = execute.client_type.as_deref().unwrap_or("real_time");
            let clients = [("real_time", 1), ("non_real_time", 2)];
            let client_type = lpai::ClientPerfType(choice(path, "lpai_graph.execute.client_type", client, &clients)?);
            let affinity = execute.affinity.as_deref().unwrap_or("soft");
            let affinities = [("soft", 1), ("hard", 2)];
            let affinity = lpai::CoreAffinityType(choice(path, "lpai_graph.execute.affinity", affinity, &affinities)?);
            (
                Some(lpai::PerfCfg {
                    fps: execute.fps.unwrap_or(1),
                    ftrt_ratio: execute.ftrt_ratio.unwrap_or(10),
                    client_type,
                }),
                Some(lpai::CoreAffinity { affinity, core_selection: execute.core_selection.unwrap_or(0) }),
            )
        }
    };
    let profiling_level = params
        .lpai_profile
        .and_then(|profile| profile.level)
        .map(|v| choice(path, "lpai_profile.level", &v, &[("basic", 1), ("detailed", 2)]))
        .transpose()?;
    Ok(LpaiConfig { target, hw_version, perf, affinity, profiling_level })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn documented_keys_map_to_qnn_numbers_through_the_extensions_file() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "lpaiParams.conf",
            r#"{"lpai_backend": {"target_env": "adsp", "enable_hw_ver": "v5_1"},
                "lpai_graph": {"execute": {"fps": 30, "client_type": "non_real_time", "affinity": "hard", "core_selection": 2}},
                "lpai_profile": {"level": "detailed"}}"#,
        );
        let outer = write(
            dir.path(),
            "config.json",
            r#"{"backend_extensions": {"shared_library_path": "libQnnLpaiNetRunExtensions.so", "config_file_path": "lpaiParams.conf"}}"#,
        );
        let config = read(&outer).unwrap();
        assert_eq!(config.target, Some(2));
        assert_eq!(config.hw_version, Some(0x0001_0005));
        assert_eq!(
            config.perf,
            Some(lpai::PerfCfg { fps: 30, ftrt_ratio: 10, client_type: lpai::ClientPerfType::NON_REAL_TIME })
        );
        assert_eq!(
            config.affinity,
            Some(lpai::CoreAffinity { affinity: lpai::CoreAffinityType::HARD, core_selection: 2 })
        );
        assert_eq!(config.profiling_level, Some(2));
        let empty = write(dir.path(), "empty.conf", "{}");
        assert_eq!(
            read(&empty).unwrap(),
            LpaiConfig { target: None, hw_version: None, perf: None, affinity: None, profiling_level: None }
        );
    }

    #[test]
    fn typos_and_bad_values_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let typo = write(dir.path(), "typo.conf", r#"{"lpai_graph": {"execute": {"fpss": 3}}}"#);
        assert!(format!("{:#}", read(&typo).unwrap_err()).contains("unknown field `fpss`"));
        let bad = write(dir.path(), "bad.conf", r#"{"lpai_backend": {"enable_hw_ver": "v9"}}"#);
        let message = format!("{:#}", read(&bad).unwrap_err());
        assert!(
            message.contains("lpai_backend.enable_hw_ver is \"v9\"; expected one of v5, v5_1, v6, v7"),
            "{message}"
        );
        assert!(format!("{:#}", read(&dir.path().join("absent.conf")).unwrap_err()).contains("absent.conf"));
    }

    #[test]
    fn the_extensions_file_is_followed_one_level_only() {
        let dir = tempfile::tempdir().unwrap();
        let itself = dir.path().join("self.json");
        let text = format!(r#"{{"backend_extensions": {{"config_file_path": "{}"}}}}"#, itself.display());
        std::fs::write(&itself, text).unwrap();
        let message = format!("{:#}", read(&itself).unwrap_err());
        assert!(message.contains("another backend-extensions file"), "{message}");
        write(dir.path(), "second.json", r#"{"backend_extensions": {"config_file_path": "lpaiParams.conf"}}"#);
        write(dir.path(), "lpaiParams.conf", r#"{"lpai_backend": {"target_env": "arm"}}"#);
        let first = write(dir.path(), "first.json", r#"{"backend_extensions": {"config_file_path": "second.json"}}"#);
        let message = format!("{:#}", read(&first).unwrap_err());
        assert!(message.contains("first.json") && message.contains("second.json"), "{message}");
    }

    #[test]
    fn qnn_net_run_top_level_keys_are_ignored_but_the_conf_stays_strict() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "lpaiParams.conf", r#"{"lpai_backend": {"target_env": "arm"}}"#);
        let outer = write(
            dir.path(),
            "config.json",
            r#"{"backend_extensions": {"config_file_path": "lpaiParams.conf"},
                "context_configs": {"context_priority": "high"}, "graph_configs": [{"graph_name": "g"}]}"#,
        );
        assert_eq!(read(&outer).unwrap().target, Some(1));
        let conf = write(dir.path(), "extra.conf", r#"{"context_configs": {}}"#);
        assert!(format!("{:#}", read(&conf).unwrap_err()).contains("unknown field `context_configs`"));
    }

    #[test]
    fn a_relative_conf_is_found_beside_the_json_first_then_in_the_current_directory() {
        let json_dir = tempfile::tempdir().unwrap();
        let current = tempfile::tempdir().unwrap();
        let json = json_dir.path().join("config.json");
        let conf = Path::new("lpaiParams.conf");
        write(current.path(), "lpaiParams.conf", "{}");
        assert_eq!(resolve(&json, conf, current.path()).unwrap(), current.path().join(conf));
        write(json_dir.path(), "lpaiParams.conf", "{}");
        assert_eq!(resolve(&json, conf, current.path()).unwrap(), json_dir.path().join(conf));
        let message = resolve(&json, Path::new("absent.conf"), current.path()).unwrap_err().to_string();
        assert!(message.contains("absent.conf") && message.contains("current directory"), "{message}");
        assert_eq!(resolve(&json, Path::new("/x/y.conf"), current.path()).unwrap(), Path::new("/x/y.conf"));
    }
}
