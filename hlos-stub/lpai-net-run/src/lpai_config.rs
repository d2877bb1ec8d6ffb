//! The `lpaiParams.conf`: the keys the LPAI net-run extension documents, plus lpai-direct's own `lpai_direct`
//! section (`{"lpai_direct": {"island": true, "scratch_memory": "tcm", "persistent_memory": "ddr"}}`: load every
//! graph in LPAI island mode; the memory type of LPAI's scratch and persistent pools). Unknown keys are refused by
//! name, so a typo is not ignored. qnn-net-run's config file that points to it is read by
//! [`crate::net_run_config`].

use anyhow::{bail, Context, Result};
use lpai_direct::qnn::lpai;
use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    lpai_backend: Option<Backend>,
    lpai_graph: Option<Graph>,
    lpai_profile: Option<Profile>,
    lpai_direct: Option<Ours>,
}

/// lpai-direct's own section.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Ours {
    island: Option<bool>,
    scratch_memory: Option<String>,
    persistent_memory: Option<String>,
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
    /// `lpai_direct.island`: load every graph in LPAI island mode.
    pub island: bool,
    /// `lpai_direct.scratch_memory` and `persistent_memory` (`ddr`, `llc`, `tcm`, `psram`; both DDR by default).
    pub memory: lpai::MemoryPlacement,
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

/// Reads an lpaiParams.conf's keys (`path` names it in messages).
pub fn from_params(path: &Path, value: serde_json::Value) -> Result<LpaiConfig> {
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
            let core_selection = execute.core_selection.unwrap_or(lpai::CoreAffinity::DEFAULT.core_selection);
            if !lpai::CoreAffinity::supports(core_selection) {
                bail!(
                    "config file {}: lpai_graph.execute.core_selection {core_selection:#x} {}",
                    path.display(),
                    lpai::CORE_MIX_UNSUPPORTED
                );
            }
            (
                Some(lpai::PerfCfg {
                    fps: execute.fps.unwrap_or(lpai::PerfCfg::DEFAULT.fps),
                    ftrt_ratio: execute.ftrt_ratio.unwrap_or(lpai::PerfCfg::DEFAULT.ftrt_ratio),
                    client_type,
                }),
                Some(lpai::CoreAffinity { affinity, core_selection }),
            )
        }
    };
    let profiling_level = params
        .lpai_profile
        .and_then(|profile| profile.level)
        .map(|v| choice(path, "lpai_profile.level", &v, &[("basic", 1), ("detailed", 2)]))
        .transpose()?;
    let ours = params.lpai_direct.unwrap_or_default();
    let island = ours.island.unwrap_or(false);
    let memory_types = lpai::MemType::NAMES.map(|(name, memory)| (name, memory.0));
    let memory = |key: &str, value: Option<String>, default: lpai::MemType| match value {
        Some(value) => choice(path, key, &value, &memory_types).map(lpai::MemType),
        None => Ok(default),
    };
    let memory = lpai::MemoryPlacement {
        scratch: memory("lpai_direct.scratch_memory", ours.scratch_memory, lpai::MemoryPlacement::DEFAULT.scratch)?,
        persistent: memory(
            "lpai_direct.persistent_memory",
            ours.persistent_memory,
            lpai::MemoryPlacement::DEFAULT.persistent,
        )?,
    };
    Ok(LpaiConfig { target, hw_version, perf, affinity, profiling_level, island, memory })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(path: &Path) -> Result<LpaiConfig> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        from_params(path, serde_json::from_str(&text)?)
    }

    #[test]
    fn documented_keys_map_to_qnn_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let conf = dir.path().join("lpaiParams.conf");
        std::fs::write(
            &conf,
            r#"{"lpai_backend": {"target_env": "adsp", "enable_hw_ver": "v5_1"},
                "lpai_graph": {"execute": {"fps": 30, "client_type": "non_real_time", "affinity": "hard", "core_selection": 2}},
                "lpai_profile": {"level": "detailed"}, "lpai_direct": {"island": true}}"#,
        )
        .unwrap();
        let config = read(&conf).unwrap();
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
        assert!(config.island);
        std::fs::write(&conf, "{}").unwrap();
        assert_eq!(read(&conf).unwrap(), LpaiConfig::default());
    }

    #[test]
    fn typos_and_bad_values_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let typo = dir.path().join("typo.conf");
        std::fs::write(&typo, r#"{"lpai_graph": {"execute": {"fpss": 3}}}"#).unwrap();
        assert!(format!("{:#}", read(&typo).unwrap_err()).contains("unknown field `fpss`"));
        let bad = dir.path().join("bad.conf");
        std::fs::write(&bad, r#"{"lpai_backend": {"enable_hw_ver": "v9"}}"#).unwrap();
        let message = format!("{:#}", read(&bad).unwrap_err());
        assert!(
            message.contains("lpai_backend.enable_hw_ver is \"v9\"; expected one of v5, v5_1, v6, v7"),
            "{message}"
        );
    }

    #[test]
    fn memory_types_are_read_by_name_and_an_unknown_one_is_refused_with_the_choices() {
        let dir = tempfile::tempdir().unwrap();
        let placed = dir.path().join("placed.conf");
        std::fs::write(&placed, r#"{"lpai_direct": {"scratch_memory": "tcm", "persistent_memory": "psram"}}"#).unwrap();
        let memory = read(&placed).unwrap().memory;
        assert_eq!(memory, lpai::MemoryPlacement { scratch: lpai::MemType::TCM, persistent: lpai::MemType::PSRAM });
        let unknown = dir.path().join("unknown.conf");
        std::fs::write(&unknown, r#"{"lpai_direct": {"persistent_memory": "sram"}}"#).unwrap();
        let message = format!("{:#}", read(&unknown).unwrap_err());
        let expected = "lpai_direct.persistent_memory is \"sram\"; expected one of ddr, llc, tcm, psram";
        assert_eq!(message, format!("{}: {expected}", unknown.display()));
        let none = dir.path().join("none.conf");
        std::fs::write(&none, "{}").unwrap();
        assert_eq!(read(&none).unwrap().memory, lpai::MemoryPlacement::DEFAULT);
    }

    #[test]
    fn a_mix_of_cores_is_refused_naming_the_file_and_the_mask() {
        let dir = tempfile::tempdir().unwrap();
        let mix = dir.path().join("mix.conf");
        std::fs::write(&mix, r#"{"lpai_graph": {"execute": {"affinity": "hard", "core_selection": 3}}}"#).unwrap();
        let message = format!("{:#}", read(&mix).unwrap_err());
        let expected =
            format!("config file {}: lpai_graph.execute.core_selection 0x3 selects more than one core", mix.display());
        assert!(message.starts_with(&expected) && message.contains("(0)"), "{message}");
        let one = dir.path().join("one.conf");
        std::fs::write(&one, r#"{"lpai_graph": {"execute": {"core_selection": 4}}}"#).unwrap();
        assert_eq!(read(&one).unwrap().affinity.unwrap().core_selection, 4);
    }
}
