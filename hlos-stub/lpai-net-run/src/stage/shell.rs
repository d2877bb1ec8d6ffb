//! The shell lines of `stage`: the `adb` commands that push the staged directory and run it, each printed as a
//! shell line (quoted where a shell would read an argument), and the run line they send to the device.

use super::layout::{CONFIG_FILE, ENV_FILE, INPUT_LIST_FILE, NET_RUN_FILE, OUTPUT_DIR};
use super::settings::StageSettings;
use anyhow::{bail, Result};
use lpai_direct_stub::stub::fastrpc::Pd;
use lpai_direct_stub::stub::{Named, TransportKind};
use std::fmt;
use std::path::Path;

/// One `adb` invocation: its arguments, without the program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdbCommand {
    /// The arguments.
    pub args: Vec<String>,
}

impl fmt::Display for AdbCommand {
    /// The command as a shell line: `adb` and each argument, double-quoted when it holds anything a shell reads.
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "adb")?;
        for argument in &self.args {
            let plain =
                !argument.is_empty() && argument.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c));
            if plain {
                write!(formatter, " {argument}")?;
            } else {
                let escaped =
                    argument.replace('\\', "\\\\").replace('"', "\\\"").replace('$', "\\$").replace('`', "\\`");
                write!(formatter, " \"{escaped}\"")?;
            }
        }
        Ok(())
    }
}

/// The device directory goes into the input list, a shell command and ADSP_LIBRARY_PATH: it must be absolute, not
/// `/`, and hold nothing a shell or those lists read.
pub fn check_device_dir(device_dir: &str) -> Result<()> {
    let bad = |c: char| c.is_whitespace() || "'\";$`\\".contains(c);
    if !device_dir.starts_with('/') || device_dir.contains(bad) || device_dir.len() < 2 {
        bail!(
            "--device_dir {device_dir:?} must be an absolute directory other than / without spaces, quotes, \
             semicolons, $, ` or \\ (it goes into the input list, a shell command and ADSP_LIBRARY_PATH)"
        );
    }
    Ok(())
}

/// The `adb` commands that push the staged `directory` to `device_dir` and run it there.
pub fn commands(directory: &Path, device_dir: &str, run: &str) -> Vec<AdbCommand> {
    let command = |args: &[&str]| AdbCommand { args: args.iter().map(|arg| arg.to_string()).collect() };
    let contents = format!("{}/.", directory.display());
    vec![
        command(&["root"]),
        command(&["wait-for-device"]),
        command(&["shell", "mkdir", "-p", device_dir]),
        command(&["push", &contents, device_dir]),
        command(&["shell", run]),
    ]
}

/// The command the device runs, from the staged root: its environment sourced, then lpai-net-run in direct mode
/// over FastRPC on the staged files (`backend_name`, `binary_name`), with `system_arguments` naming the
/// libQnnSystem (and the op packages); an argument a shell would read otherwise is refused.
pub fn run_line(
    settings: &StageSettings,
    device_dir: &str,
    backend_name: &str,
    binary_name: &str,
    system_arguments: Vec<String>,
) -> Result<String> {
    let mut run = format!("cd {device_dir} && . ./{ENV_FILE} && ./{NET_RUN_FILE}");
    let mut arguments = vec![
        "--transport".to_string(),
        TransportKind::Fastrpc.name().to_string(),
        "--backend".to_string(),
        backend_name.to_string(),
        "--retrieve_context".to_string(),
        format!("{device_dir}/{binary_name}"),
        "--input_list".to_string(),
        format!("{device_dir}/{INPUT_LIST_FILE}"),
        "--config_file".to_string(),
        format!("{device_dir}/{CONFIG_FILE}"),
        "--direct_mode".to_string(),
        "--output_dir".to_string(),
        format!("{device_dir}/{OUTPUT_DIR}"),
    ];
    arguments.extend(system_arguments);
    if settings.pd != Pd::User {
        arguments.extend(["--pd".to_string(), settings.pd.name().to_string()]);
    }
    if settings.use_native_input_files {
        arguments.push("--use_native_input_files".to_string());
    }
    if settings.use_native_output_files {
        arguments.push("--use_native_output_files".to_string());
    }
    for argument in &arguments {
        if argument.contains(|c: char| c.is_whitespace() || "'\";$`\\&|<>()*?".contains(c)) {
            bail!("{argument:?} cannot go into the device's shell command unquoted (rename the file)");
        }
        run.push(' ');
        run.push_str(argument);
    }
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_print_as_shell_lines() {
        let command = AdbCommand { args: vec!["shell".into(), "cd /x && A='b;c' ./run".into()] };
        assert_eq!(command.to_string(), "adb shell \"cd /x && A='b;c' ./run\"");
        let command = AdbCommand { args: vec!["push".into(), "/tmp/s/.".into(), "/data/local/tmp/LPAI".into()] };
        assert_eq!(command.to_string(), "adb push /tmp/s/. /data/local/tmp/LPAI");
        assert!(check_device_dir("/data/local/tmp/LPAI").is_ok());
        for bad in ["relative", "/", "/data/my dir", "/data/a;b"] {
            assert!(check_device_dir(bad).is_err(), "{bad}");
        }
    }
}
