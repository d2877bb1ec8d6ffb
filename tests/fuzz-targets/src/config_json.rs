//! Target `config_json`: qnn-net-run's `--config_file` (`lpai_net_run::net_run_config::read_from`), read from
//! memory: the JSON at `/fuzz/config.json`, and an `lpaiParams.conf` beside it that its `config_file_path` may
//! name (`lpaiParams.conf`, `./lpaiParams.conf` or `/fuzz/lpaiParams.conf`), or one in the current directory
//! (`/fuzz/current/other.conf`).
//!
//! Input: the JSON, then optionally a NUL and the conf beside it, then optionally a NUL and the one in the current
//! directory.

use lpai_net_run::net_run_config::{self, ConfigFiles};
use std::path::{Path, PathBuf};

/// The files of one input, in memory.
struct Files {
    files: Vec<(PathBuf, Vec<u8>)>,
}

impl ConfigFiles for Files {
    fn read_to_string(&self, path: &Path) -> std::io::Result<String> {
        let Some((_, bytes)) = self.files.iter().find(|(name, _)| name == path) else {
            return Err(std::io::Error::from(std::io::ErrorKind::NotFound));
        };
        String::from_utf8(bytes.clone()).map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidData))
    }

    fn exists(&self, path: &Path) -> bool {
        self.files.iter().any(|(name, _)| name == path)
    }

    fn current_dir(&self) -> PathBuf {
        PathBuf::from("/fuzz/current")
    }
}

/// The target.
pub fn run(data: &[u8]) {
    let mut parts = data.splitn(3, |&byte| byte == 0);
    let json = parts.next().unwrap_or(&[]);
    let mut files = Files { files: vec![(PathBuf::from("/fuzz/config.json"), json.to_vec())] };
    if let Some(conf) = parts.next() {
        files.files.push((PathBuf::from("/fuzz/lpaiParams.conf"), conf.to_vec()));
    }
    if let Some(conf) = parts.next() {
        files.files.push((PathBuf::from("/fuzz/current/other.conf"), conf.to_vec()));
    }
    let config = match net_run_config::read_from(&files, Path::new("/fuzz/config.json")) {
        Ok(config) => config,
        Err(error) => {
            // Every error names a file: one of these, or the absolute path the JSON's config_file_path gives.
            let message = format!("{error:#}");
            let named = serde_json::from_slice::<serde_json::Value>(json).ok().and_then(|value| {
                value.pointer("/backend_extensions/config_file_path").and_then(|path| path.as_str().map(String::from))
            });
            let names_one = message.contains("/fuzz/") || named.is_some_and(|path| message.contains(&path));
            assert!(names_one, "an error that names no file: {message}");
            return;
        }
    };
    let names: Vec<&str> = config.graphs.iter().map(|graph| graph.graph_name.as_str()).collect();
    for (index, name) in names.iter().enumerate() {
        assert!(!names[..index].contains(name), "graph {name} configured twice: {config:?}");
        assert!(config.graph(name).is_some(), "{config:?}");
    }
    let priorities = [0, 100, 150, 200];
    assert!(config.context_priority.is_none_or(|priority| priorities.contains(&priority)), "{config:?}");
    assert!(config.graphs.iter().all(|graph| graph.priority.is_none_or(|p| priorities.contains(&p))), "{config:?}");
    if config.enable_graphs.is_none() {
        assert!(config.enabled("any graph"), "{config:?}");
    }
}
