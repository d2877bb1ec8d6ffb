//! qnn-net-run's `--config_file` JSON: `backend_extensions` (the `lpaiParams.conf` it points to),
//! `context_configs` and `graph_configs`, as lpai-net-run applies them. A file with none of these top-level keys is
//! read as an `lpaiParams.conf` itself.
//!
//! Keys lpai-net-run does not know are refused by name. Keys qnn-net-run knows but that mean nothing here
//! (`async_execute_queue_depth`, `cache_compatibility_mode`, `graph_profiling_start_delay`,
//! `graph_profiling_num_executions`, `profile_configs`) are accepted with a warning naming each.

use crate::lpai_config::{self, LpaiConfig};
use anyhow::{bail, Context as _, Result};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The top-level keys that make a JSON file qnn-net-run's config file rather than an lpaiParams.conf.
const NET_RUN_KEYS: [&str; 4] = ["backend_extensions", "context_configs", "graph_configs", "profile_configs"];

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    backend_extensions: Option<Extensions>,
    context_configs: Option<ContextConfigs>,
    graph_configs: Option<Vec<GraphConfigs>>,
    profile_configs: Option<serde_json::Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Extensions {
    #[expect(dead_code, reason = "accepted for qnn-net-run compatibility; lpai-direct loads no extension library")]
    shared_library_path: Option<String>,
    config_file_path: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ContextConfigs {
    context_priority: Option<String>,
    async_execute_queue_depth: Option<serde_json::Value>,
    enable_graphs: Option<Vec<String>>,
    memory_limit_hint: Option<u64>,
    is_persistent_binary: Option<bool>,
    cache_compatibility_mode: Option<serde_json::Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct GraphConfigs {
    graph_name: String,
    graph_priority: Option<String>,
    graph_profiling_start_delay: Option<serde_json::Value>,
    graph_profiling_num_executions: Option<serde_json::Value>,
}

/// One graph's settings from `graph_configs`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphSetting {
    /// The graph it applies to.
    pub graph_name: String,
    /// QNN priority (LOW 0, NORMAL 100, NORMAL_HIGH 150, HIGH 200), applied with the graph's LPAI performance.
    pub priority: Option<u32>,
}

/// What a config file asks for.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NetRunConfig {
    /// The lpaiParams.conf's settings.
    pub lpai: LpaiConfig,
    /// `context_configs.is_persistent_binary`.
    pub persistent_binary: bool,
    /// `context_configs.context_priority` in QNN's numbers, sent with the load.
    pub context_priority: Option<u32>,
    /// `context_configs.memory_limit_hint`: the skel's memory limit per context (its arena), in bytes.
    pub memory_limit_hint: Option<u32>,
    /// `context_configs.enable_graphs`: only these graphs run.
    pub enable_graphs: Option<Vec<String>>,
    /// `graph_configs`.
    pub graphs: Vec<GraphSetting>,
    /// Keys accepted but meaning nothing here, one message each.
    pub warnings: Vec<String>,
}

/// QNN's priority numbers for the names qnn-net-run's config file uses.
pub fn priority(file: &Path, key: &str, name: &str) -> Result<u32> {
    let priorities = [("low", 0), ("normal", 100), ("normal_high", 150), ("high", 200)];
    match priorities.iter().find(|(known, _)| *known == name) {
        Some((_, number)) => Ok(*number),
        None => bail!("{}: {key} is \"{name}\"; expected one of low, normal, normal_high, high", file.display()),
    }
}

impl NetRunConfig {
    /// The settings for the graph named `graph_name`, if `graph_configs` has any.
    pub fn graph(&self, graph_name: &str) -> Option<&GraphSetting> {
        self.graphs.iter().find(|setting| setting.graph_name == graph_name)
    }

    /// Whether `context_configs.enable_graphs` lets `graph_name` run.
    pub fn enabled(&self, graph_name: &str) -> bool {
        self.enable_graphs.as_ref().is_none_or(|names| names.iter().any(|name| name == graph_name))
    }
}

/// Where config files are read from: the file system ([`FileSystem`]), or memory (the fuzz targets).
pub trait ConfigFiles {
    /// The text of the file at `path`.
    fn read_to_string(&self, path: &Path) -> std::io::Result<String>;
    /// Whether a file exists at `path`.
    fn exists(&self, path: &Path) -> bool;
    /// The directory a relative `config_file_path` is looked for in after the JSON's own.
    fn current_dir(&self) -> PathBuf;
}

/// The process's file system and current directory.
pub struct FileSystem;

impl ConfigFiles for FileSystem {
    fn read_to_string(&self, path: &Path) -> std::io::Result<String> {
        std::fs::read_to_string(path)
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn current_dir(&self) -> PathBuf {
        std::env::current_dir().unwrap_or_default()
    }
}

fn read_json(files: &dyn ConfigFiles, path: &Path) -> Result<serde_json::Value> {
    let text = files.read_to_string(path).with_context(|| format!("cannot read config file {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("config file {} is not JSON", path.display()))
}

/// Whether a JSON value is qnn-net-run's config file (rather than an lpaiParams.conf).
fn is_net_run_file(value: &serde_json::Value) -> bool {
    NET_RUN_KEYS.iter().any(|key| value.get(key).is_some())
}

/// Where a config file's `config_file_path` points: an absolute path as it is; a relative one beside `json` when it
/// exists there, else from `current_directory`.
fn resolve(files: &dyn ConfigFiles, json: &Path, config_file_path: &Path, current_directory: &Path) -> Result<PathBuf> {
    if config_file_path.is_absolute() {
        return Ok(config_file_path.to_path_buf());
    }
    let beside = json.parent().unwrap_or(Path::new("")).join(config_file_path);
    if files.exists(&beside) {
        return Ok(beside);
    }
    let from_current = current_directory.join(config_file_path);
    if files.exists(&from_current) {
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

/// The lpaiParams.conf a config file stands for: the file itself when it is a conf, else the conf its
/// `backend_extensions.config_file_path` names (found as [`read`] finds it; `None` when it names none).
pub fn params_file(path: &Path) -> Result<Option<PathBuf>> {
    let files = FileSystem;
    let value = read_json(&files, path)?;
    if !is_net_run_file(&value) {
        return Ok(Some(path.to_path_buf()));
    }
    let file: File = serde_json::from_value(value).with_context(|| format!("config file {}", path.display()))?;
    let current_directory = files.current_dir();
    file.backend_extensions
        .and_then(|extensions| extensions.config_file_path)
        .map(|conf| resolve(&files, path, Path::new(&conf), &current_directory))
        .transpose()
}

/// Reads a config file: qnn-net-run's JSON, or an lpaiParams.conf itself.
pub fn read(path: &Path) -> Result<NetRunConfig> {
    read_from(&FileSystem, path)
}

/// Reads a config file as [`read`] does, from `files`.
pub fn read_from(files: &dyn ConfigFiles, path: &Path) -> Result<NetRunConfig> {
    let value = read_json(files, path)?;
    if !is_net_run_file(&value) {
        return Ok(NetRunConfig { lpai: lpai_config::from_params(path, value)?, ..NetRunConfig::default() });
    }
    let file: File = serde_json::from_value(value).with_context(|| format!("config file {}", path.display()))?;
    let mut config = NetRunConfig::default();
    let ignored = |config: &mut NetRunConfig, key: &str| {
        config.warnings.push(format!("config file {}: {key} means nothing to lpai-net-run; ignored", path.display()))
    };
    if let Some(conf) = file.backend_extensions.and_then(|extensions| extensions.config_file_path) {
        let inner = resolve(files, path, Path::new(&conf), &files.current_dir())?;
        let inner_value = read_json(files, &inner)?;
        if is_net_run_file(&inner_value) {
            bail!(
                "config file {}: its config_file_path {} is another qnn-net-run config file; it must name an \
                 lpaiParams.conf",
                path.display(),
                inner.display()
            );
        }
        config.lpai = lpai_config::from_params(&inner, inner_value)?;
    }
    if file.profile_configs.is_some() {
        ignored(&mut config, "profile_configs");
    }
    if let Some(context) = file.context_configs {
        config.persistent_binary = context.is_persistent_binary.unwrap_or(false);
        config.context_priority = context
            .context_priority
            .map(|name| priority(path, "context_configs.context_priority", &name))
            .transpose()?;
        config.memory_limit_hint = context
            .memory_limit_hint
            .map(|bytes| {
                u32::try_from(bytes).with_context(|| {
                    format!(
                        "config file {}: context_configs.memory_limit_hint {bytes} is over the skel's limit of {} \
                         bytes per context",
                        path.display(),
                        u32::MAX
                    )
                })
            })
            .transpose()?;
        config.enable_graphs = context.enable_graphs;
        if context.async_execute_queue_depth.is_some() {
            ignored(&mut config, "context_configs.async_execute_queue_depth");
        }
        if context.cache_compatibility_mode.is_some() {
            ignored(&mut config, "context_configs.cache_compatibility_mode");
        }
    }
    for graph in file.graph_configs.unwrap_or_default() {
        let key = format!("graph_configs[{}].graph_priority", graph.graph_name);
        let priority = graph.graph_priority.map(|name| priority(path, &key, &name)).transpose()?;
        if graph.graph_profiling_start_delay.is_some() {
            ignored(&mut config, "graph_configs.graph_profiling_start_delay");
        }
        if graph.graph_profiling_num_executions.is_some() {
            ignored(&mut config, "graph_configs.graph_profiling_num_executions");
        }
        if config.graph(&graph.graph_name).is_some() {
            bail!("config file {}: graph_configs names graph {} twice", path.display(), graph.graph_name);
        }
        config.graphs.push(GraphSetting { graph_name: graph.graph_name, priority });
    }
    Ok(config)
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
    fn context_and_graph_configs_are_read_in_qnn_numbers() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "lpaiParams.conf", r#"{"lpai_backend": {"target_env": "adsp"}}"#);
        let file = write(
            dir.path(),
            "config.json",
            r#"{"backend_extensions": {"shared_library_path": "libQnnLpaiNetRunExtensions.so",
                                       "config_file_path": "lpaiParams.conf"},
                "context_configs": {"is_persistent_binary": true, "context_priority": "normal_high",
                                    "memory_limit_hint": 65536, "enable_graphs": ["g1"]},
                "graph_configs": [{"graph_name": "g1", "graph_priority": "high"}, {"graph_name": "g2"}]}"#,
        );
        let config = read(&file).unwrap();
        assert_eq!(config.lpai.target, Some(2));
        assert!(config.persistent_binary);
        assert_eq!((config.context_priority, config.memory_limit_hint), (Some(150), Some(65536)));
        assert!(config.enabled("g1") && !config.enabled("g2"));
        assert_eq!(config.graph("g1").unwrap().priority, Some(200));
        assert_eq!(config.graph("g2").unwrap().priority, None);
        assert!(config.graph("g3").is_none());
        assert!(config.warnings.is_empty());
    }

    #[test]
    fn unknown_keys_are_refused_by_name_and_unused_ones_warned_about() {
        let dir = tempfile::tempdir().unwrap();
        let typo = write(dir.path(), "typo.json", r#"{"context_configs": {"is_persistant_binary": true}}"#);
        let message = format!("{:#}", read(&typo).unwrap_err());
        assert!(message.contains("typo.json") && message.contains("unknown field `is_persistant_binary`"), "{message}");
        let top = write(dir.path(), "top.json", r#"{"context_configs": {}, "backend_extension": {}}"#);
        assert!(format!("{:#}", read(&top).unwrap_err()).contains("unknown field `backend_extension`"));
        let unused = write(
            dir.path(),
            "unused.json",
            r#"{"context_configs": {"async_execute_queue_depth": 2},
                "graph_configs": [{"graph_name": "g", "graph_profiling_num_executions": 3}]}"#,
        );
        let warnings = read(&unused).unwrap().warnings;
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(
            warnings[0].ends_with("context_configs.async_execute_queue_depth means nothing to lpai-net-run; ignored")
        );
        assert!(warnings[1].contains("graph_configs.graph_profiling_num_executions"));
    }

    #[test]
    fn bad_values_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let bad = write(dir.path(), "bad.json", r#"{"graph_configs": [{"graph_name": "g", "graph_priority": "max"}]}"#);
        let message = format!("{:#}", read(&bad).unwrap_err());
        assert!(message.contains("graph_configs[g].graph_priority is \"max\"; expected one of low"), "{message}");
        let huge = write(dir.path(), "huge.json", r#"{"context_configs": {"memory_limit_hint": 8589934592}}"#);
        assert!(format!("{:#}", read(&huge).unwrap_err()).contains("memory_limit_hint 8589934592 is over"));
        let twice = write(dir.path(), "twice.json", r#"{"graph_configs": [{"graph_name": "g"}, {"graph_name": "g"}]}"#);
        assert!(format!("{:#}", read(&twice).unwrap_err()).contains("names graph g twice"));
    }

    #[test]
    fn a_conf_is_read_as_itself_and_a_config_file_is_followed_one_level_only() {
        let dir = tempfile::tempdir().unwrap();
        let conf = write(dir.path(), "lpaiParams.conf", r#"{"lpai_backend": {"target_env": "arm"}}"#);
        assert_eq!(read(&conf).unwrap().lpai.target, Some(1));
        let itself = dir.path().join("self.json");
        let text = format!(r#"{{"backend_extensions": {{"config_file_path": "{}"}}}}"#, itself.display());
        std::fs::write(&itself, text).unwrap();
        let message = format!("{:#}", read(&itself).unwrap_err());
        assert!(message.contains("another qnn-net-run config file"), "{message}");
        let conf_with_net_run_key = write(dir.path(), "extra.conf", r#"{"lpai_backend": {}, "graph_configs": []}"#);
        assert!(format!("{:#}", read(&conf_with_net_run_key).unwrap_err()).contains("unknown field `lpai_backend`"));
    }

    #[test]
    fn a_relative_conf_is_found_beside_the_json_first_then_in_the_current_directory() {
        let json_dir = tempfile::tempdir().unwrap();
        let current = tempfile::tempdir().unwrap();
        let json = json_dir.path().join("config.json");
        let conf = Path::new("lpaiParams.conf");
        write(current.path(), "lpaiParams.conf", "{}");
        assert_eq!(resolve(&FileSystem, &json, conf, current.path()).unwrap(), current.path().join(conf));
        write(json_dir.path(), "lpaiParams.conf", "{}");
        assert_eq!(resolve(&FileSystem, &json, conf, current.path()).unwrap(), json_dir.path().join(conf));
        let message = resolve(&FileSystem, &json, Path::new("absent.conf"), current.path()).unwrap_err().to_string();
        assert!(message.contains("absent.conf") && message.contains("current directory"), "{message}");
        assert_eq!(
            resolve(&FileSystem, &json, Path::new("/x/y.conf"), current.path()).unwrap(),
            Path::new("/x/y.conf")
        );
    }
}
