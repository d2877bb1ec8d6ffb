//! The Rust code the root crate includes in `lpai_direct::codec`, after `pub use lpai_direct_idl::*;`.
//!
//! It defines `INTERFACE`, the IDL's integer constants (their names in upper case), `METHODS` (one [`Method`] per declared method), `PLANS` (their layouts, worked out at
//! compile time) and, per method, a module of the same name holding `ID`, `SCALARS`, `METHOD`, `PLAN` and one
//! index constant per parameter (its name in upper case).

use super::{to_methods, Interface, MethodDecl};
use crate::layout::{Direction, Kind, Method, Param};

/// The Rust code for `interface`; every item carries a `///` line.
pub fn generate_rust(interface: &Interface) -> String {
    let methods = to_methods(interface);
    let mut code = String::new();
    code.push_str(
        "// Generated from the IDL by lpai-direct-idl's reader (idl/src/reader/rust_code.rs); do not edit.\n\n",
    );
    line(&mut code, "/// The interface's name in the IDL.");
    line(&mut code, &format!("pub const INTERFACE: &str = {:?};", interface.name));
    line(&mut code, "");
    for constant in &interface.constants {
        line(
            &mut code,
            &format!("/// `const {} {} = {};` in the IDL.", constant.ty.idl, constant.name, constant.value),
        );
        line(
            &mut code,
            &format!("pub const {}: {} = {};", constant.name.to_ascii_uppercase(), constant.ty.rust, constant.value),
        );
        line(&mut code, "");
    }
    line(&mut code, "/// Every declared method in declaration order: ids 2, 3, ... (open is 0 and close 1).");
    line(&mut code, "pub const METHODS: &[Method] = &[");
    for method in &methods {
        line(&mut code, &format!("    {},", method_expression(method)));
    }
    line(&mut code, "];");
    line(&mut code, "");
    line(&mut code, "/// Every method's layout, worked out at compile time, in the order of [`METHODS`].");
    line(&mut code, "pub const PLANS: &[Plan] = &[");
    for index in 0..methods.len() {
        line(&mut code, &format!("    Plan::of(&METHODS[{index}]),"));
    }
    line(&mut code, "];");
    for (index, (declared, method)) in interface.methods.iter().zip(&methods).enumerate() {
        line(&mut code, "");
        method_module(&mut code, index, declared, method);
    }
    line(&mut code, "");
    line(&mut code, "/// One method module's constants, for tests.");
    line(&mut code, "#[cfg(test)]");
    line(&mut code, "struct ModuleConstants {");
    line(&mut code, "    name: &'static str,");
    line(&mut code, "    id: u32,");
    line(&mut code, "    scalars: u32,");
    line(&mut code, "    method: &'static Method,");
    line(&mut code, "    params: &'static [(&'static str, usize)],");
    line(&mut code, "}");
    line(&mut code, "");
    line(&mut code, "/// The constants of every method module, in order, for tests.");
    line(&mut code, "#[cfg(test)]");
    line(&mut code, "const MODULES: &[ModuleConstants] = &[");
    for declared in &interface.methods {
        let name = &declared.name;
        let indices: Vec<String> = declared
            .params
            .iter()
            .map(|param| format!("({:?}, {name}::{})", param.name, param.name.to_ascii_uppercase()))
            .collect();
        line(
            &mut code,
            &format!(
                "    ModuleConstants {{ name: {name:?}, id: {name}::ID, scalars: {name}::SCALARS, \
                 method: {name}::METHOD, params: &[{}] }},",
                indices.join(", ")
            ),
        );
    }
    line(&mut code, "];");
    code
}

fn line(code: &mut String, text: &str) {
    code.push_str(text);
    code.push('\n');
}

fn method_module(code: &mut String, index: usize, declared: &MethodDecl, method: &Method) {
    let scalars = method.scalars();
    line(code, &format!("/// Method `{}`, id {}.", declared.name, method.id));
    line(code, "///");
    line(code, &format!("/// `{declared}`"));
    if declared.name.chars().any(|c| c.is_ascii_uppercase()) {
        line(code, "#[allow(non_snake_case)] // named exactly like the IDL method");
    }
    line(code, &format!("pub mod {} {{", declared.name));
    line(code, "    /// Method id.");
    line(code, &format!("    pub const ID: u32 = {};", method.id));
    line(
        code,
        &format!(
            "    /// The `sc` word of a call: {} input and {} output buffers, no handles.",
            method.in_buffers(),
            method.out_buffers()
        ),
    );
    line(code, &format!("    pub const SCALARS: u32 = 0x{:04X}_{:04X};", scalars >> 16, scalars & 0xFFFF));
    line(code, "    /// This method's entry in [`super::METHODS`].");
    line(code, &format!("    pub const METHOD: &super::Method = &super::METHODS[{index}];"));
    line(code, "    /// Its layout in [`super::PLANS`].");
    line(code, &format!("    pub const PLAN: &super::Plan = &super::PLANS[{index}];"));
    for (position, param) in declared.params.iter().enumerate() {
        line(code, &format!("    /// Index of parameter `{param}`."));
        line(code, &format!("    pub const {}: usize = {position};", param.name.to_ascii_uppercase()));
    }
    line(code, "}");
}

fn method_expression(method: &Method) -> String {
    let params: Vec<String> = method.params.iter().map(param_expression).collect();
    format!("Method {{ name: {:?}, id: {}, params: &[{}] }}", method.name, method.id, params.join(", "))
}

fn param_expression(param: &Param) -> String {
    let direction = match param.direction {
        Direction::In => "Direction::In",
        Direction::Rout => "Direction::Rout",
    };
    let kind = match param.kind {
        Kind::Byte => "Kind::Byte".to_owned(),
        Kind::Half => "Kind::Half".to_owned(),
        Kind::Word => "Kind::Word".to_owned(),
        Kind::Double => "Kind::Double".to_owned(),
        Kind::Sequence { element_bytes } => format!("Kind::Sequence {{ element_bytes: {element_bytes} }}"),
        Kind::String => "Kind::String".to_owned(),
    };
    format!("Param {{ name: {:?}, direction: {direction}, kind: {kind} }}", param.name)
}
