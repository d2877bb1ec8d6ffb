//! The reader against qaic's calculator, the probe interface qaic was run on, `lpai_direct.idl`, and bad input.

use super::*;
use crate::layout::Slot;
use crate::remote::{CLOSE_SCALARS, OPEN_SCALARS};

fn methods_of(source: &str) -> Vec<Method> {
    to_methods(&read(source).unwrap())
}

fn wrap(body: &str) -> String {
    format!("#include \"remote.idl\"\ninterface probe : remote_handle64 {{\n{body}\n}};\n")
}

/// The line and message of reading `source`, which must fail.
fn failure(source: &str) -> ReadError {
    read(source).expect_err("this IDL must be refused")
}

#[test]
fn calculator_from_qaic() {
    let source = "#include \"AEEStdDef.idl\"\n#include \"remote.idl\"\n\n\
                  interface calculator : remote_handle64 {\n\
                  \x20  long sum(in sequence<long> vec, rout long long res);\n\
                  \x20  long max(in sequence<long> vec, rout long res);\n\
                  };\n";
    let interface = read(source).unwrap();
    assert_eq!(interface.name, "calculator");
    let methods = to_methods(&interface);
    assert_eq!((methods[0].name, methods[0].id, methods[0].scalars()), ("sum", 2, 0x0202_0100));
    assert_eq!(methods[0].params[0].kind, Kind::Sequence { element_bytes: 4 });
    assert_eq!(methods[0].params[1].kind, Kind::Double);
    assert_eq!(methods[0].slot(0), Some(Slot::Buffer { arg: 1, count_offset: 0, direction: Direction::In }));
    assert_eq!(methods[0].slot(1), Some(Slot::PrimaryOut { offset: 0 }));
    assert_eq!((methods[1].name, methods[1].id, methods[1].scalars()), ("max", 3, 0x0302_0100));
}

const PROBE: &str = "// The probe interface qaic was run on (docs/fastrpc-wire.md).\n\
    #include \"AEEStdDef.idl\"\n\
    #include \"remote.idl\"\n\
    const long PROBE_VERSION = 1;\n\
    interface lpai_probe : remote_handle64 {\n\
    \x20  /* load a context\n\
    \x20     binary */\n\
    \x20  AEEResult load(in sequence<octet> binary, in string path, rout long context_id);\n\
    \x20  long execute(in long graph, in sequence<octet> inputs, rout sequence<octet> outputs,\n\
    \x20              rout unsigned long long dsp_ticks);\n\
    \x20  long unload(in long context_id);\n\
    };\n";

#[test]
fn probe_interface_as_qaic_generated_it() {
    let interface = read(PROBE).unwrap();
    assert_eq!(interface.methods.iter().map(|m| m.line).collect::<Vec<_>>(), [8, 9, 11]);
    assert_eq!(interface.methods[0].returns, "AEEResult");
    let methods = to_methods(&interface);
    let [load, execute, unload] = methods.as_slice() else { panic!("three methods") };

    assert_eq!((load.id, load.scalars()), (2, 0x0203_0100));
    assert_eq!((load.totals().primary_in_bytes, load.totals().primary_out_bytes), (8, 4));
    assert_eq!(load.slot(0), Some(Slot::Buffer { arg: 1, count_offset: 0, direction: Direction::In }));
    assert_eq!(load.slot(1), Some(Slot::Buffer { arg: 2, count_offset: 4, direction: Direction::In }));
    assert_eq!(load.slot(2), Some(Slot::PrimaryOut { offset: 0 }));
    assert_eq!(load.primary_out_arg(), Some(3));

    assert_eq!((execute.id, execute.scalars()), (3, 0x0302_0200));
    assert_eq!((execute.totals().primary_in_bytes, execute.totals().primary_out_bytes), (12, 8));
    assert_eq!(execute.slot(0), Some(Slot::PrimaryIn { offset: 0 }));
    assert_eq!(execute.slot(1), Some(Slot::Buffer { arg: 1, count_offset: 4, direction: Direction::In }));
    assert_eq!(execute.slot(2), Some(Slot::Buffer { arg: 3, count_offset: 8, direction: Direction::Rout }));
    assert_eq!(execute.slot(3), Some(Slot::PrimaryOut { offset: 0 }));
    assert_eq!(execute.primary_out_arg(), Some(2));

    assert_eq!((unload.id, unload.scalars(), unload.totals().primary_in_bytes), (4, 0x0401_0000, 4));
}

#[test]
fn lpai_direct_idl_reads() {
    // The nine methods configure..unload keep ids 2..10; methods added later follow them.
    let interface = read(include_str!("../../lpai_direct.idl")).unwrap();
    assert_eq!(interface.name, "lpai_direct");
    let names: Vec<&str> = interface.methods.iter().map(|m| m.name.as_str()).take(9).collect();
    assert_eq!(
        names,
        ["configure", "load", "load_file", "describe", "set_performance", "execute", "run_job", "profile", "unload"]
    );
    let ids: Vec<u32> = interface.methods.iter().map(|m| m.id).collect();
    assert_eq!(ids, (2..2 + ids.len() as u32).collect::<Vec<_>>());
    assert_eq!(interface.methods[8].id, 10);
    let execute = interface.methods[5].to_method();
    let totals = execute.totals();
    assert_eq!((execute.scalars(), totals.primary_in_bytes, totals.primary_out_bytes), (0x0702_0200, 20, 16));
    // run_job's job is binary (it may hold NULs): a byte sequence, not a string.
    assert_eq!(interface.methods[6].params[0].to_string(), "in sequence<octet> job");
}

#[test]
fn every_scalar_spelling_reads_as_its_kind() {
    for scalar in SCALARS {
        let source = wrap(&format!("long f(in {0} a, rout {0} b, in sequence<{0}> c);", scalar.idl));
        let method = &methods_of(&source)[0];
        assert_eq!(method.params[0].kind, scalar.kind, "{}", scalar.idl);
        assert_eq!(method.params[1].kind, scalar.kind, "{}", scalar.idl);
        let bytes = scalar.kind.scalar_bytes().unwrap() as u32;
        assert_eq!(method.params[2].kind, Kind::Sequence { element_bytes: bytes }, "{}", scalar.idl);
    }
    let method = &methods_of(&wrap("long f(in string s, in string t);"))[0];
    assert_eq!((method.params[0].kind, method.params[1].kind), (Kind::String, Kind::String));
    assert_eq!(methods_of(&wrap("long ping();"))[0].params, &[]);
}

#[test]
fn errors_name_their_line() {
    let cases: &[(&str, usize, &str)] = &[
        ("long f(in handle h);", 3, "unknown type `handle`"),
        ("long f(in sequence<string> s);", 3, "unknown type `string`"),
        ("long f(in unsigned u);", 3, "unknown type `unsigned`"),
        ("long f(inrout long x);", 3, "`inrout`"),
        ("long f(out long x);", 3, "expected `in` or `rout`, found `out`"),
        ("long f(in long x)\nlong g();", 3, "missing `;` after method `f`"),
        ("long f(in long x; long g();", 3, "expected `,` or `)`, found `;`"),
        ("void f();", 3, "returns `long` or `AEEResult`"),
        ("long open(in long x);", 3, "`open` cannot name a method"),
        ("long type();", 3, "`type` cannot name a method"),
        ("long f();\n\nlong f();", 5, "a second method named `f`"),
        ("long f(in long a, rout long A);", 3, "a second parameter named `A`"),
        ("long f(in long id);", 3, "`id` cannot name a parameter"),
        ("long f(in long x);\n/* never closed", 4, "never closed"),
        ("long f(in string s, in long x);", 3, "`in` scalar `x` follows a sequence or string"),
        ("long f(rout string s);", 3, "a `rout string` is not supported"),
        (
            "long f(in sequence<octet> a, in sequence<octet> b, in sequence<octet> c, in sequence<octet> d,\n\
             in sequence<octet> e, in sequence<octet> f, in sequence<octet> g, in sequence<octet> h);",
            3,
            "more than the codec carries: 9 input",
        ),
        (
            "long f(in double a, in double b, in double c, in double d, in double e, in double f, in double g,\n\
          in double h, in long i);",
            3,
            "primary input 72 bytes",
        ),
    ];
    for &(body, line, message) in cases {
        let error = failure(&wrap(body));
        assert_eq!(error.line, line, "{body}: {error}");
        assert!(error.message.contains(message), "{body}: {error}");
    }
}

#[test]
fn errors_outside_methods_name_their_line() {
    let missing_interface_semicolon = failure("interface a : remote_handle64 {\n  long f();\n}\n");
    assert_eq!(
        (missing_interface_semicolon.line, missing_interface_semicolon.to_string().as_str()),
        (3, "line 3: missing `;` after the interface's `}`")
    );
    let second = failure("interface a : remote_handle64 {\n};\n// another\ninterface b : remote_handle64 {\n};\n");
    assert_eq!(second.line, 4);
    assert!(second.message.contains("a second interface"), "{second}");
    let base = failure("\ninterface a : remote_handle {\n};\n");
    assert_eq!(base.line, 2);
    let directive = failure("#include \"remote.idl\"\n#define X 1\n");
    assert_eq!((directive.line, directive.message.contains("#define")), (2, true));
    let constant = failure("const long X = 1\n");
    assert_eq!((constant.line, constant.message.contains("`const`")), (1, true));
    let range = failure("const octet X = 256;\ninterface a : remote_handle64 {};");
    assert_eq!((range.line, range.message.as_str()), (1, "256 is not a value of `octet`"));
    let float = failure("const float X = 1;\ninterface a : remote_handle64 {};");
    assert_eq!(float.message, "1 is not a value of `float`");
    let twice = failure("const long X = 1;\nconst long X = 2;\ninterface a : remote_handle64 {};");
    assert_eq!((twice.line, twice.message.as_str()), (2, "a second constant named `X`"));
    assert_eq!(failure("// nothing\n\n#include \"remote.idl\"\n").message, "no `interface` declared");
    assert_eq!(failure("typedef long T;").message, "expected `interface` or `const`, found `typedef`");
}

#[test]
fn ids_stop_at_30() {
    let mut body: Vec<String> = (2..=30).map(|id| format!("long m{id}();")).collect();
    assert_eq!(read(&wrap(&body.join("\n"))).unwrap().methods.last().unwrap().id, 30);
    body.push("long m31();".into());
    let error = failure(&wrap(&body.join("\n")));
    assert_eq!(error.line, 32);
    assert!(error.message.contains("would get id 31"), "{error}");
}

#[test]
fn generated_rust_names_every_item() {
    let code = generate_rust(&read(PROBE).unwrap());
    assert!(code.contains("pub const INTERFACE: &str = \"lpai_probe\";"));
    assert!(code.contains("/// `const long PROBE_VERSION = 1;` in the IDL.\npub const PROBE_VERSION: i32 = 1;\n"));
    assert!(code.contains(
        "    Method { name: \"execute\", id: 3, params: &[Param { name: \"graph\", direction: Direction::In, \
         kind: Kind::Word }, Param { name: \"inputs\", direction: Direction::In, kind: Kind::Sequence { element_bytes: 1 } }, \
         Param { name: \"outputs\", direction: Direction::Rout, kind: Kind::Sequence { element_bytes: 1 } }, \
         Param { name: \"dsp_ticks\", direction: Direction::Rout, kind: Kind::Double }] },\n"
    ));
    for expected in [
        "pub mod execute {\n",
        "    pub const ID: u32 = 3;\n",
        "    pub const SCALARS: u32 = 0x0302_0200;\n",
        "    pub const METHOD: &super::Method = &super::METHODS[1];\n",
        "    pub const GRAPH: usize = 0;\n",
        "    pub const DSP_TICKS: usize = 3;\n",
        "/// `long execute(in long graph, in sequence<octet> inputs, rout sequence<octet> outputs, rout unsigned long long dsp_ticks)`\n",
    ] {
        assert!(code.contains(expected), "missing {expected:?} in\n{code}");
    }
    // Every item is preceded by its doc line.
    let lines: Vec<&str> = code.lines().collect();
    for (index, text) in lines.iter().enumerate() {
        if text.trim_start().starts_with("pub ") {
            let before = lines[..index].iter().rev().find(|l| !l.trim_start().starts_with("#["));
            assert!(before.is_some_and(|l| l.trim_start().starts_with("///")), "no doc line before {text:?}");
        }
    }
    let camel = generate_rust(&read(&wrap("long getValue(rout long value);")).unwrap());
    assert!(camel.contains("#[allow(non_snake_case)]"));
}

#[test]
fn table_rows_show_layouts() {
    let table = markdown_table(&read(PROBE).unwrap());
    let rows: Vec<&str> = table.lines().collect();
    assert_eq!(rows.len(), 2 + 2 + 3);
    assert_eq!(rows[0], "| method | id | sc | primary input | in buffers | primary output | out buffers |");
    assert_eq!(
        rows[2],
        format!("| `open` | 0 | 0x{OPEN_SCALARS:08X} | 0: u32 uri count (4 B) | [1] uri (string) | — | [2] handle (out remote_handle64) |")
    );
    assert_eq!(
        rows[3],
        format!("| `close` | 1 | 0x{CLOSE_SCALARS:08X} | — | [0] handle (in remote_handle64) | — | — |")
    );
    assert_eq!(
        rows[5],
        "| `execute` | 3 | 0x03020200 | 0: i32 graph · 4: u32 inputs count · 8: u32 outputs capacity (12 B) | \
         [1] inputs (octet) | 0: u64 dsp_ticks (8 B) | [3] outputs (octet) |"
    );
    assert_eq!(rows[6], "| `unload` | 4 | 0x04010000 | 0: i32 context_id (4 B) | — | — | — |");
}
