//! The audio-framework module (AudioReach CAPI, issue 13): the state SPF drives ([`module`]), the model it runs
//! ([`model`]), its ids and result record ([`ids`]), the PCM formats and layouts it takes ([`format`]), the frame
//! of one `process` call ([`frame`]), its configuration ([`config`]), its sliding window over one channel
//! ([`window`]), the property lists it reads and answers ([`properties`]) and the stack it loads models on
//! ([`stack`]). The exported C entry points are the
//! `lpai-direct-capi` crate's (`dsp/capi`).

pub mod config;
pub mod format;
pub mod frame;
pub mod ids;
pub mod model;
pub mod module;
pub mod properties;
pub mod stack;
pub mod window;
