//! The book's table of the interface: per method its id, `sc` word, and what travels in which argument.

use super::{Interface, MethodDecl, ParamDecl, Type};
use crate::layout::{Direction, Slot};
use crate::remote::Scalars;

/// A Markdown table of `interface`: open, close, then every declared method.
pub fn markdown_table(interface: &Interface) -> String {
    let mut table = String::from(
        "| method | id | sc | primary input | in buffers | primary output | out buffers |\n\
         | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    // open(in string uri, rout remote_handle64 h) and close(in remote_handle64 h) come from remote_handle64;
    // their buffers are laid out like any method's, the handle travels after every buffer.
    let open =
        declaration("open", 0, vec![ParamDecl { name: "uri".into(), direction: Direction::In, ty: Type::String }]);
    let open_method = open.to_method();
    let handle_arg = open_method.in_buffers() + open_method.out_buffers();
    let open_scalars = Scalars { out_handles: 1, ..Scalars::of(open_method.scalars()) }.word();
    table.push_str(&row(&open, open_scalars, None, Some(format!("[{handle_arg}] handle (out remote_handle64)"))));
    let close = declaration("close", 1, Vec::new());
    let close_scalars = Scalars { in_handles: 1, ..Scalars::of(close.to_method().scalars()) }.word();
    table.push_str(&row(&close, close_scalars, Some("[0] handle (in remote_handle64)".into()), None));
    for declared in &interface.methods {
        table.push_str(&row(declared, declared.to_method().scalars(), None, None));
    }
    table
}

fn declaration(name: &str, id: u32, params: Vec<ParamDecl>) -> MethodDecl {
    MethodDecl { name: name.into(), id, line: 0, returns: "long".into(), params }
}

/// One table row; `in_handle` and `out_handle` describe the handle arguments of open and close.
fn row(declared: &MethodDecl, scalars: u32, in_handle: Option<String>, out_handle: Option<String>) -> String {
    let method = declared.to_method();
    let totals = method.totals();
    let (mut primary_in, mut primary_out, mut in_buffers, mut out_buffers) = (vec![], vec![], vec![], vec![]);
    for (index, param) in declared.params.iter().enumerate() {
        match method.slot(index) {
            Some(Slot::PrimaryIn { offset }) => primary_in.push((offset, scalar_field(offset, param))),
            Some(Slot::PrimaryOut { offset }) => primary_out.push((offset, scalar_field(offset, param))),
            Some(Slot::Buffer { arg, count_offset, direction }) => {
                let (count, buffers) = match direction {
                    Direction::In => ("count", &mut in_buffers),
                    Direction::Rout => ("capacity", &mut out_buffers),
                };
                primary_in.push((count_offset, format!("{count_offset}: u32 {} {count}", param.name)));
                buffers.push((arg, format!("[{arg}] {} ({})", param.name, param.ty.element_name())));
            }
            None => unreachable!("every parameter has a slot"),
        }
    }
    in_buffers.extend(in_handle.map(|handle| (usize::MAX, handle)));
    out_buffers.extend(out_handle.map(|handle| (usize::MAX, handle)));
    let cells = [
        format!("`{}`", declared.name),
        method.id.to_string(),
        format!("0x{scalars:08X}"),
        primary(primary_in, totals.primary_in_bytes),
        listing(in_buffers),
        primary(primary_out, totals.primary_out_bytes),
        listing(out_buffers),
    ];
    format!("| {} |\n", cells.join(" | "))
}

fn scalar_field(offset: usize, param: &ParamDecl) -> String {
    let rust = match param.ty {
        Type::Scalar(scalar) => scalar.rust,
        Type::Sequence(_) | Type::String => unreachable!("only scalars travel in primary buffers"),
    };
    format!("{offset}: {rust} {}", param.name)
}

/// Fields of a primary buffer by offset, and its size.
fn primary(fields: Vec<(usize, String)>, bytes: usize) -> String {
    if fields.is_empty() {
        return "—".into();
    }
    format!("{} ({bytes} B)", listing(fields))
}

/// Entries sorted by their key (offset or argument index), separated by middle dots.
fn listing(mut entries: Vec<(usize, String)>) -> String {
    if entries.is_empty() {
        return "—".into();
    }
    entries.sort_by_key(|(key, _)| *key);
    entries.into_iter().map(|(_, text)| text).collect::<Vec<_>>().join(" · ")
}
