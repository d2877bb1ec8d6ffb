//! The clap parser for the stub library's named values (transports, DSP domains, PDs): their names as the possible
//! values, each with its help line.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use lpai_direct_stub::stub::{names, Named};

/// A clap parser for one of the library's named values: its names as the possible values (with their help),
/// turned into the value by the library's own parser.
pub fn named<T: Named + Send + Sync>() -> impl TypedValueParser<Value = T> {
    let values = T::ALL.iter().map(|value| PossibleValue::new(value.name()).help(value.description()));
    PossibleValuesParser::new(values).try_map(|name| names::parse::<T>(&name))
}
