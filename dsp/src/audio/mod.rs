//! The audio-framework module (AudioReach CAPI, issue 13), built up in parts: its ids and result record
//! ([`ids`]), the PCM formats it takes ([`format`]), its configuration ([`config`]) and its sliding window over one
//! channel ([`window`]). The CAPI entry points that drive them come with the module itself.

pub mod config;
pub mod format;
pub mod ids;
pub mod window;
