//! Reads the subset of qaic's IDL that `idl/lpai_direct.idl` uses, and turns it into [`Method`]s, the Rust
//! constants the root crate includes ([`generate_rust`]) and the book's interface table ([`markdown_table`]).
//!
//! Accepted: `//` and `/* */` comments, `#include` lines (ignored), integer constants `const SCALAR NAME = N;` (at
//! file level or inside the interface; each becomes a Rust constant), and one `interface NAME : remote_handle64
//! { ... };` whose methods are `long NAME(in|rout TYPE NAME, ...);` (or `AEEResult NAME(...)`), TYPE being a
//! scalar, `string` or `sequence<scalar>`. Anything else is a [`ReadError`] naming its line. Layouts are never
//! computed here: the engine's own [`Method`] functions do that.

mod rust_code;
mod table;
#[cfg(test)]
mod tests;

pub use rust_code::generate_rust;
pub use table::markdown_table;

use crate::layout::{Direction, Kind, Method, Param, MAX_BUFFERS, MAX_PRIMARY_BYTES};
use std::fmt;

/// Why an IDL file could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadError {
    /// 1-based line of the problem.
    pub line: usize,
    /// What is wrong there.
    pub message: String,
}

impl fmt::Display for ReadError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ReadError {}

fn error<T>(line: usize, message: impl Into<String>) -> Result<T, ReadError> {
    Err(ReadError { line, message: message.into() })
}

/// A scalar type of the IDL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scalar {
    /// Its spelling in the IDL, words separated by one space (`unsigned long`).
    pub idl: &'static str,
    /// The Rust type of the same size and signedness (`u32`).
    pub rust: &'static str,
    /// Its size class.
    pub kind: Kind,
}

const fn scalar(idl: &'static str, rust: &'static str, kind: Kind) -> Scalar {
    Scalar { idl, rust, kind }
}

/// Every scalar type the reader knows.
pub const SCALARS: &[Scalar] = &[
    scalar("octet", "u8", Kind::Byte),
    scalar("char", "c_char", Kind::Byte),
    scalar("int8", "i8", Kind::Byte),
    scalar("uint8", "u8", Kind::Byte),
    scalar("short", "i16", Kind::Half),
    scalar("unsigned short", "u16", Kind::Half),
    scalar("int16", "i16", Kind::Half),
    scalar("uint16", "u16", Kind::Half),
    scalar("long", "i32", Kind::Word),
    scalar("unsigned long", "u32", Kind::Word),
    scalar("int32", "i32", Kind::Word),
    scalar("uint32", "u32", Kind::Word),
    scalar("float", "f32", Kind::Word),
    scalar("long long", "i64", Kind::Double),
    scalar("unsigned long long", "u64", Kind::Double),
    scalar("int64", "i64", Kind::Double),
    scalar("uint64", "u64", Kind::Double),
    scalar("double", "f64", Kind::Double),
];

/// A parameter's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    /// A scalar.
    Scalar(Scalar),
    /// `sequence<scalar>`.
    Sequence(Scalar),
    /// `string`.
    String,
}

impl Type {
    /// The engine's [`Kind`] of this type.
    pub fn kind(self) -> Kind {
        match self {
            Type::Scalar(scalar) => scalar.kind,
            Type::Sequence(element) => Kind::Sequence {
                element_bytes: element.kind.scalar_bytes().expect("sequence elements are scalars") as u32,
            },
            Type::String => Kind::String,
        }
    }

    /// The IDL name of a sequence's elements (`octet`), `string` for a string, the scalar's own name otherwise.
    pub fn element_name(self) -> &'static str {
        match self {
            Type::Scalar(scalar) | Type::Sequence(scalar) => scalar.idl,
            Type::String => "string",
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Scalar(scalar) => formatter.write_str(scalar.idl),
            Type::Sequence(element) => write!(formatter, "sequence<{}>", element.idl),
            Type::String => formatter.write_str("string"),
        }
    }
}

/// One parameter as declared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamDecl {
    /// Its name.
    pub name: String,
    /// `in` or `rout`.
    pub direction: Direction,
    /// Its type.
    pub ty: Type,
}

impl fmt::Display for ParamDecl {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let direction = match self.direction {
            Direction::In => "in",
            Direction::Rout => "rout",
        };
        write!(formatter, "{direction} {} {}", self.ty, self.name)
    }
}

/// One method as declared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MethodDecl {
    /// Its name.
    pub name: String,
    /// Its method id (2, 3, ... in declaration order).
    pub id: u32,
    /// Line of its declaration.
    pub line: usize,
    /// Its return type as spelled (`long` or `AEEResult`).
    pub returns: String,
    /// Its parameters in order.
    pub params: Vec<ParamDecl>,
}

impl MethodDecl {
    /// The engine's description of this method. Its strings and parameters are leaked: this runs in build
    /// scripts and tools, a few times per process.
    pub fn to_method(&self) -> Method {
        let params: Vec<Param> = self
            .params
            .iter()
            .map(|param| Param { name: leak(&param.name), direction: param.direction, kind: param.ty.kind() })
            .collect();
        Method { name: leak(&self.name), id: self.id, params: Box::leak(params.into_boxed_slice()) }
    }
}

impl fmt::Display for MethodDecl {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let params: Vec<String> = self.params.iter().map(ParamDecl::to_string).collect();
        write!(formatter, "{} {}({})", self.returns, self.name, params.join(", "))
    }
}

fn leak(text: &str) -> &'static str {
    Box::leak(text.to_owned().into_boxed_str())
}

/// One integer constant as declared (`const unsigned long NAME = 1;`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConstDecl {
    /// Its name as spelled.
    pub name: String,
    /// Its type.
    pub ty: Scalar,
    /// Its value.
    pub value: i128,
    /// Line of its declaration.
    pub line: usize,
}

/// The interface of one IDL file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interface {
    /// Its name.
    pub name: String,
    /// Its methods in declaration order.
    pub methods: Vec<MethodDecl>,
    /// The file's integer constants, in declaration order (file level and inside the interface alike).
    pub constants: Vec<ConstDecl>,
}

/// The engine's descriptions of every method of `interface`, in order.
pub fn to_methods(interface: &Interface) -> Vec<Method> {
    interface.methods.iter().map(MethodDecl::to_method).collect()
}

/// Highest method id the `sc` word can carry (31 means "the real id follows in args\[0\]").
pub const MAX_METHOD_ID: u32 = 30;

/// Names a method may not take, separated by spaces: open and close come from `remote_handle64`, and the
/// generated module must neither shadow a type the generated code uses nor be a Rust keyword.
const RESERVED_METHOD_NAMES: &str = "open close Method Param Kind Direction \
    as async await break const continue crate dyn else enum extern false fn for gen if impl in let loop match mod \
    move mut pub ref return self Self static struct super trait true try type unsafe use where while \
    abstract become box do final macro override priv typeof unsized virtual yield";

/// Upper-case parameter names that would clash with the constants every generated method module has.
const RESERVED_PARAM_NAMES: &[&str] = &["ID", "SCALARS", "METHOD"];

/// Reads one IDL file.
pub fn read(source: &str) -> Result<Interface, ReadError> {
    let mut parser = Parser { tokens: tokenize(source)?, next: 0, constants: Vec::new() };
    let mut interface: Option<Interface> = None;
    while let Some(token) = parser.peek() {
        match token.text.as_str() {
            "const" => parser.constant()?,
            "interface" => {
                if let Some(first) = &interface {
                    return error(token.line, format!("a second interface; a file holds one (`{}`)", first.name));
                }
                interface = Some(parser.interface()?);
            }
            other => return error(token.line, format!("expected `interface` or `const`, found `{other}`")),
        }
    }
    match interface {
        Some(mut interface) => {
            interface.constants = parser.constants;
            Ok(interface)
        }
        None => error(parser.last_line(), "no `interface` declared"),
    }
}

#[derive(Clone, Debug)]
struct Token {
    text: String,
    line: usize,
}

fn is_word_character(character: char) -> bool {
    character.is_ascii_alphanumeric() || character == '_' || character == '.'
}

/// Splits the source into words, string literals and one-character punctuation, dropping comments and
/// `#include` lines.
fn tokenize(source: &str) -> Result<Vec<Token>, ReadError> {
    let characters: Vec<char> = source.chars().collect();
    let mut tokens = Vec::new();
    let (mut at, mut line) = (0, 1);
    let following = |at: usize| characters.get(at + 1).copied();
    let end_of_line =
        |from: usize| characters[from..].iter().position(|&c| c == '\n').map_or(characters.len(), |n| from + n);
    while let Some(&character) = characters.get(at) {
        let start = at;
        let start_line = line;
        match character {
            '\n' => {
                line += 1;
                at += 1;
                continue;
            }
            _ if character.is_whitespace() => {
                at += 1;
                continue;
            }
            '/' if following(at) == Some('/') => {
                at = end_of_line(at);
                continue;
            }
            '#' => {
                at = end_of_line(at);
                let directive: String = characters[start..at].iter().collect();
                if !directive.trim_start_matches('#').trim_start().starts_with("include") {
                    return error(
                        start_line,
                        format!("only `#include` lines are supported, found `{}`", directive.trim()),
                    );
                }
                continue;
            }
            '/' if following(at) == Some('*') => {
                at += 2;
                loop {
                    match characters.get(at) {
                        None => return error(start_line, "a `/*` comment is never closed"),
                        Some('*') if following(at) == Some('/') => break,
                        Some('\n') => line += 1,
                        Some(_) => {}
                    }
                    at += 1;
                }
                at += 2;
                continue;
            }
            '"' => {
                at += 1;
                while characters.get(at).is_some_and(|&c| c != '"' && c != '\n') {
                    at += 1;
                }
                if characters.get(at) != Some(&'"') {
                    return error(start_line, "a string literal is never closed");
                }
                at += 1;
            }
            _ if is_word_character(character) => {
                while characters.get(at).copied().is_some_and(is_word_character) {
                    at += 1;
                }
            }
            _ => at += 1,
        }
        tokens.push(Token { text: characters[start..at].iter().collect(), line: start_line });
    }
    Ok(tokens)
}

/// Whether `value` is a value of the integer type `ty` (never of `float`, `double` or `char`).
fn integer_holds(ty: Scalar, value: i128) -> bool {
    let Some(bytes) = ty.kind.scalar_bytes() else { return false };
    let bits = 8 * bytes as u32;
    match ty.rust.as_bytes().first() {
        Some(b'u') => (0..1i128 << bits).contains(&value),
        Some(b'i') => (-(1i128 << (bits - 1))..1i128 << (bits - 1)).contains(&value),
        _ => false,
    }
}

struct Parser {
    tokens: Vec<Token>,
    next: usize,
    constants: Vec<ConstDecl>,
}

impl Parser {
    fn peek(&self) -> Option<Token> {
        self.tokens.get(self.next).cloned()
    }

    fn peek_is(&self, text: &str) -> bool {
        self.tokens.get(self.next).is_some_and(|token| token.text == text)
    }

    /// Line of the last token consumed (1 before the first).
    fn previous_line(&self) -> usize {
        self.next.checked_sub(1).and_then(|index| self.tokens.get(index)).map_or(1, |token| token.line)
    }

    /// Line of the file's last token.
    fn last_line(&self) -> usize {
        self.tokens.last().map_or(1, |token| token.line)
    }

    /// The next token; `expected` describes what was wanted, for the error at the end of the file.
    fn take(&mut self, expected: &str) -> Result<Token, ReadError> {
        match self.tokens.get(self.next).cloned() {
            Some(token) => {
                self.next += 1;
                Ok(token)
            }
            None => error(self.last_line(), format!("expected {expected}, found the end of the file")),
        }
    }

    fn eat(&mut self, text: &str) -> bool {
        let found = self.peek_is(text);
        if found {
            self.next += 1;
        }
        found
    }

    fn expect(&mut self, text: &str) -> Result<(), ReadError> {
        let token = self.take(&format!("`{text}`"))?;
        if token.text != text {
            return error(token.line, format!("expected `{text}`, found `{}`", token.text));
        }
        Ok(())
    }

    /// The `;` that ends a declaration; a missing one is reported on the line where the declaration ends.
    fn semicolon(&mut self, after: &str) -> Result<(), ReadError> {
        if !self.eat(";") {
            return error(self.previous_line(), format!("missing `;` after {after}"));
        }
        Ok(())
    }

    fn identifier(&mut self, expected: &str) -> Result<Token, ReadError> {
        let token = self.take(expected)?;
        let mut characters = token.text.chars();
        let starts_well = characters.next().is_some_and(|first| first.is_ascii_alphabetic() || first == '_');
        if !starts_well || !characters.all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return error(token.line, format!("expected {expected}, found `{}`", token.text));
        }
        Ok(token)
    }

    /// `const SCALAR NAME = [-]DIGITS;` (decimal or `0x` hex), the value within the scalar's range.
    fn constant(&mut self) -> Result<(), ReadError> {
        let start = self.take("`const`")?;
        let ty = self.scalar()?;
        let name = self.identifier("the constant's name")?;
        if self.constants.iter().any(|other| other.name == name.text) {
            return error(name.line, format!("a second constant named `{}`", name.text));
        }
        self.expect("=")?;
        let negative = self.eat("-");
        let digits = self.take("the constant's value")?;
        let parsed = match digits.text.strip_prefix("0x").or_else(|| digits.text.strip_prefix("0X")) {
            Some(hex) => i128::from_str_radix(hex, 16),
            None => digits.text.parse::<i128>(),
        };
        let Ok(magnitude) = parsed else {
            return error(digits.line, format!("`{}` is not an integer", digits.text));
        };
        let value = if negative { -magnitude } else { magnitude };
        if !integer_holds(ty, value) {
            return error(digits.line, format!("{value} is not a value of `{}`", ty.idl));
        }
        self.semicolon("this `const` declaration")?;
        self.constants.push(ConstDecl { name: name.text, ty, value, line: start.line });
        Ok(())
    }

    fn interface(&mut self) -> Result<Interface, ReadError> {
        self.expect("interface")?;
        let name = self.identifier("the interface's name")?;
        self.expect(":")?;
        let base = self.identifier("`remote_handle64`")?;
        if base.text != "remote_handle64" {
            return error(base.line, format!("the interface must extend `remote_handle64`, not `{}`", base.text));
        }
        self.expect("{")?;
        let mut methods: Vec<MethodDecl> = Vec::new();
        while !self.eat("}") {
            if self.peek_is("const") {
                self.constant()?;
                continue;
            }
            let method = self.method(methods.len())?;
            if methods.iter().any(|other| other.name == method.name) {
                return error(method.line, format!("a second method named `{}`", method.name));
            }
            methods.push(method);
        }
        self.semicolon("the interface's `}`")?;
        Ok(Interface { name: name.text, methods, constants: Vec::new() })
    }

    fn method(&mut self, index: usize) -> Result<MethodDecl, ReadError> {
        let returns = self.take("a method or `}`")?;
        if returns.text != "long" && returns.text != "AEEResult" {
            return error(returns.line, format!("a method returns `long` or `AEEResult`, found `{}`", returns.text));
        }
        let name = self.identifier("a method name")?;
        if RESERVED_METHOD_NAMES.split_whitespace().any(|reserved| reserved == name.text) {
            return error(name.line, format!("`{}` cannot name a method here (reserved)", name.text));
        }
        self.expect("(")?;
        let mut params: Vec<ParamDecl> = Vec::new();
        if !self.eat(")") {
            loop {
                let line = self.peek().map_or(name.line, |token| token.line);
                let param = self.param()?;
                let upper = param.name.to_ascii_uppercase();
                if RESERVED_PARAM_NAMES.contains(&upper.as_str()) {
                    return error(
                        line,
                        format!("`{}` cannot name a parameter (its constant would be `{upper}`)", param.name),
                    );
                }
                if params.iter().any(|other| other.name.to_ascii_uppercase() == upper) {
                    return error(line, format!("a second parameter named `{}` (upper case `{upper}`)", param.name));
                }
                params.push(param);
                if self.eat(")") {
                    break;
                }
                let separator = self.take("`,` or `)`")?;
                if separator.text != "," {
                    return error(separator.line, format!("expected `,` or `)`, found `{}`", separator.text));
                }
            }
        }
        self.semicolon(&format!("method `{}`", name.text))?;
        let id = u32::try_from(index).map_or(u32::MAX, |index| index.saturating_add(2));
        let declared = MethodDecl { name: name.text, id, line: returns.line, returns: returns.text, params };
        if id > MAX_METHOD_ID {
            return error(
                declared.line,
                format!(
                    "method `{}` would get id {id}; the `sc` word carries ids up to {MAX_METHOD_ID}",
                    declared.name
                ),
            );
        }
        let method = declared.to_method();
        let first_sequence = method.params.iter().position(|p| p.kind.scalar_bytes().is_none());
        let late_scalar = method.params.iter().enumerate().find(|(position, p)| {
            p.direction == Direction::In
                && p.kind.scalar_bytes().is_some()
                && first_sequence.is_some_and(|s| s < *position)
        });
        if let Some((_, scalar)) = late_scalar {
            return error(
                declared.line,
                format!(
                    "method `{}`: `in` scalar `{}` follows a sequence or string; list every `in` scalar first, so the \
                     primary input reads the same under every reading of qaic's layout rules",
                    declared.name, scalar.name
                ),
            );
        }
        if !method.is_supported() {
            let totals = method.totals();
            return error(
                declared.line,
                format!(
                    "method `{}` is more than the codec carries: {} input and {} output buffers (at most {MAX_BUFFERS} \
                     each), primary input {} bytes and primary output {} bytes (at most {MAX_PRIMARY_BYTES} each)",
                    declared.name,
                    method.in_buffers(),
                    method.out_buffers(),
                    totals.primary_in_bytes,
                    totals.primary_out_bytes
                ),
            );
        }
        Ok(declared)
    }

    fn param(&mut self) -> Result<ParamDecl, ReadError> {
        let direction = self.take("`in` or `rout`")?;
        let direction = match direction.text.as_str() {
            "in" => Direction::In,
            "rout" => Direction::Rout,
            "inrout" => return error(direction.line, "`inrout` parameters are not supported (only `in` and `rout`)"),
            other => return error(direction.line, format!("expected `in` or `rout`, found `{other}`")),
        };
        let ty = if self.eat("sequence") {
            self.expect("<")?;
            let element = self.scalar()?;
            self.expect(">")?;
            Type::Sequence(element)
        } else if self.eat("string") {
            if direction == Direction::Rout {
                return error(
                    self.peek().map_or(0, |token| token.line),
                    "a `rout string` is not supported; use `rout sequence<octet>` with a `rout` length",
                );
            }
            Type::String
        } else {
            Type::Scalar(self.scalar()?)
        };
        let name = self.identifier("a parameter name")?;
        Ok(ParamDecl { name: name.text, direction, ty })
    }

    /// The scalar type spelled by the next one to three words (the longest spelling that matches).
    fn scalar(&mut self) -> Result<Scalar, ReadError> {
        let words_match = |spelling: &str| {
            spelling
                .split(' ')
                .enumerate()
                .all(|(offset, word)| self.tokens.get(self.next + offset).is_some_and(|token| token.text == word))
        };
        let longest =
            SCALARS.iter().filter(|scalar| words_match(scalar.idl)).max_by_key(|scalar| scalar.idl.split(' ').count());
        match longest {
            Some(&scalar) => {
                self.next += scalar.idl.split(' ').count();
                Ok(scalar)
            }
            None => {
                let token = self.take("a type")?;
                let known: Vec<&str> = SCALARS.iter().map(|scalar| scalar.idl).collect();
                error(
                    token.line,
                    format!(
                        "unknown type `{}` (known: {}, string, sequence<T> of a scalar T)",
                        token.text,
                        known.join(", ")
                    ),
                )
            }
        }
    }
}
