//! The stub against scripted transports: answers that need more room get one retry; a handle is closed exactly
//! once, by `close` (which reports the skel's answer) or by drop; when neither FastRPC nor the host skel is
//! available, the error says why for both.

use super::*;
use lpai_direct::codec::RemoteArg;
use std::cell::Cell;
use std::rc::Rc;

/// What a skel from before the version handshake answers to `version` (AEE_EUNSUPPORTED); `None` for other methods.
pub(crate) fn before_versioning(scalars: u32) -> Option<i32> {
    (lpai_direct::codec::Scalars::of(scalars).method == codec::version::ID).then(|| aee::dsp(aee::EUNSUPPORTED))
}

/// Answers every `describe` with success and the next needed length from `lengths`, counting the calls.
struct Answering {
    lengths: Vec<u32>,
    invokes: Rc<Cell<usize>>,
}

impl Transport for Answering {
    fn name(&self) -> &'static str {
        "answering"
    }

    fn place(&self) -> String {
        "the test".into()
    }

    fn open(&mut self, _uri: &CStr) -> Result<u64, i32> {
        Ok(1)
    }

    unsafe fn invoke(&mut self, _handle: u64, scalars: u32, args: *mut RemoteArg) -> i32 {
        if let Some(refused) = before_versioning(scalars) {
            return refused;
        }
        let call = self.invokes.get();
        self.invokes.set(call + 1);
        assert!(call < 8, "the stub keeps calling");
        let length = self.lengths[call.min(self.lengths.len() - 1)];
        let primary_out = codec::describe::METHOD.primary_out_arg().unwrap();
        // SAFETY: describe's primary output holds its u32 description_bytes at offset 0.
        unsafe { (*args.add(primary_out)).buf.pv.cast::<u32>().write_unaligned(length) };
        0
    }

    fn close(&mut self, _handle: u64) -> i32 {
        0
    }
}

fn describe_bytes(lengths: Vec<u32>) -> (Result<Vec<u8>, StubError>, usize) {
    let invokes = Rc::new(Cell::new(0));
    let transport = Answering { lengths, invokes: invokes.clone() };
    let mut stub = Stub::open(Box::new(transport), c"uri").unwrap();
    use codec::describe as m;
    let result = stub.call_for_bytes(m::METHOD, (m::DESCRIPTION, m::DESCRIPTION_BYTES), |e| {
        e.i32(m::CONTEXT_ID, 0)?.u32(m::GRAPH, 0).map(drop)
    });
    (result, invokes.get())
}

#[test]
fn a_bigger_answer_gets_exactly_one_retry() {
    let (bytes, invokes) = describe_bytes(vec![5000, 5000]);
    assert_eq!((bytes.unwrap().len(), invokes), (5000, 2));
    let (bytes, invokes) = describe_bytes(vec![100]);
    assert_eq!((bytes.unwrap().len(), invokes), (100, 1));
    let (bytes, invokes) = describe_bytes(vec![5000, 6000, 7000]);
    assert!(matches!(bytes, Err(StubError::Malformed { method: "describe" })), "{bytes:?}");
    assert_eq!(invokes, 2);
}

#[test]
fn without_fastrpc_or_a_skel_the_error_names_both() {
    let missing_skel = SkelLocation::File { path: "/nonexistent/liblpai_direct_skel.so".into(), named_by: "the test" };
    let fastrpc =
        fastrpc::FastRpcOptions { libraries: vec!["/nonexistent/libadsprpc.so".into()], ..Default::default() };
    let message = default_transport_trying(fastrpc.clone(), &missing_skel, true).err().unwrap().to_string();
    assert!(message.starts_with("FastRPC is not available: tried /nonexistent/libadsprpc.so"), "{message}");
    assert!(message.contains("and the local transport cannot be used either"), "{message}");
    assert!(message.contains("/nonexistent/liblpai_direct_skel.so (from the test) does not exist"), "{message}");
    let message = default_transport_trying(fastrpc, &missing_skel, false).err().unwrap().to_string();
    assert_eq!(message, "the skel library /nonexistent/liblpai_direct_skel.so (from the test) does not exist");
}

/// Counts closes, answering `status` to each.
struct Closing {
    status: i32,
    closes: Rc<Cell<usize>>,
}

impl Transport for Closing {
    fn name(&self) -> &'static str {
        "closing"
    }

    fn place(&self) -> String {
        "the test".into()
    }

    fn open(&mut self, _uri: &CStr) -> Result<u64, i32> {
        Ok(0x4C50_0000_0000_0100)
    }

    unsafe fn invoke(&mut self, _handle: u64, scalars: u32, _args: *mut RemoteArg) -> i32 {
        before_versioning(scalars).unwrap_or(0)
    }

    fn close(&mut self, _handle: u64) -> i32 {
        self.closes.set(self.closes.get() + 1);
        self.status
    }
}

#[test]
fn a_handle_is_closed_once_and_close_reports_the_answer() {
    let closes = Rc::new(Cell::new(0));
    let stub = Stub::open(Box::new(Closing { status: 0, closes: closes.clone() }), c"uri").unwrap();
    assert_eq!(stub.handle(), 0x4C50_0000_0000_0100);
    stub.close().unwrap();
    assert_eq!(closes.get(), 1, "close, then no second close on drop");
    drop(Stub::open(Box::new(Closing { status: 0, closes: closes.clone() }), c"uri").unwrap());
    assert_eq!(closes.get(), 2, "drop closes");
    let refusing = Closing { status: 0x8000_042C_u32 as i32, closes: closes.clone() };
    let error = Stub::from_handle(Box::new(refusing), 42).close().unwrap_err();
    assert!(matches!(error, StubError::Call { method: "close", code: 0x8000_042C, .. }), "{error}");
    assert!(error.to_string().contains("handle 0x2a"), "{error}");
    assert_eq!(closes.get(), 3);
}

/// Answers `version` with the interface it was made with (major, minor), every other call with success.
struct Versioned {
    interface: (u32, u32),
    invokes: Rc<Cell<usize>>,
}

impl Transport for Versioned {
    fn name(&self) -> &'static str {
        "versioned"
    }

    fn place(&self) -> String {
        "the test".into()
    }

    fn skel_source(&self) -> String {
        "/dsp/liblpai_direct_skel.so".into()
    }

    fn open(&mut self, _uri: &CStr) -> Result<u64, i32> {
        Ok(1)
    }

    unsafe fn invoke(&mut self, _handle: u64, scalars: u32, args: *mut RemoteArg) -> i32 {
        self.invokes.set(self.invokes.get() + 1);
        if lpai_direct::codec::Scalars::of(scalars).method != codec::version::ID {
            return 0;
        }
        use codec::version as m;
        let primary = m::METHOD.primary_out_arg().unwrap();
        for (index, value) in [(m::INTERFACE_MAJOR, self.interface.0), (m::INTERFACE_MINOR, self.interface.1)] {
            let Some(lpai_direct::codec::Slot::PrimaryOut { offset }) = m::PLAN.slot(index) else { panic!("a rout") };
            // SAFETY: version's primary output holds its rout scalars at their offsets.
            unsafe { (*args.add(primary)).buf.pv.cast::<u8>().add(offset).cast::<u32>().write_unaligned(value) };
        }
        0
    }

    fn close(&mut self, _handle: u64) -> i32 {
        0
    }
}

#[test]
fn the_handshake_refuses_another_major_and_an_older_minor_lacks_the_newer_methods() {
    let invokes = Rc::new(Cell::new(0));
    let versioned = |interface| Box::new(Versioned { interface, invokes: invokes.clone() });
    let error = Stub::open(versioned((2, 0)), c"uri").err().unwrap();
    assert!(matches!(error, StubError::Incompatible { skel: Version { major: 2, minor: 0 }, .. }), "{error}");
    let message = error.to_string();
    assert!(message.starts_with("the skel /dsp/liblpai_direct_skel.so speaks interface 2.0"), "{message}");
    assert!(message.contains(&format!("this stub {INTERFACE}")), "{message}");

    let mut older = Stub::open(versioned((1, 0)), c"uri").unwrap();
    let asked = invokes.get();
    let error = older.probe().unwrap_err();
    assert_eq!(invokes.get(), asked, "the stub refuses probe without sending it");
    let message = error.to_string();
    assert!(
        message.starts_with("probe needs interface 1.1, but the skel /dsp/liblpai_direct_skel.so speaks 1.0"),
        "{message}"
    );
    older.unload(3).unwrap();
    assert_eq!(invokes.get(), asked + 1, "a method of interface 1.0 is sent");

    let mut minor_1 = Stub::open(versioned((1, 1)), c"uri").unwrap();
    let asked = invokes.get();
    let message = minor_1.register_op_package(c"libA.so", c"ProvideA", None).unwrap_err().to_string();
    assert_eq!(invokes.get(), asked, "the stub refuses register_op_package without sending it");
    assert!(message.starts_with("register_op_package needs interface 1.2, but the skel"), "{message}");
    assert!(message.contains("speaks 1.1"), "{message}");
    minor_1.probe().unwrap_err();
    assert_eq!(invokes.get(), asked + 1, "a method of interface 1.1 is sent");

    let closes = Rc::new(Cell::new(0));
    let unversioned = Stub::open(Box::new(Closing { status: 0, closes }), c"uri").unwrap();
    assert_eq!(*unversioned.skel_version(), SkelVersion::Unversioned, "AEE_EUNSUPPORTED to version: from before it");
    assert_eq!(unversioned.skel_version().interface(), Some(Version { major: 1, minor: 0 }));
}

/// One call as [`Recording`] saw it.
struct Recorded {
    /// The method id.
    method: u32,
    /// The input buffers' bytes, the primary input first.
    inputs: Vec<Vec<u8>>,
}

/// Keeps each call; answers a load with context 5 of 2 graphs.
struct Recording {
    calls: Rc<std::cell::RefCell<Vec<Recorded>>>,
}

impl Transport for Recording {
    fn name(&self) -> &'static str {
        "recording"
    }

    fn place(&self) -> String {
        "the test".into()
    }

    fn open(&mut self, _uri: &CStr) -> Result<u64, i32> {
        Ok(1)
    }

    unsafe fn invoke(&mut self, _handle: u64, scalars: u32, args: *mut RemoteArg) -> i32 {
        if let Some(refused) = before_versioning(scalars) {
            return refused;
        }
        let scalars = lpai_direct::codec::Scalars::of(scalars);
        // SAFETY: the stub's first `in_buffers` arguments are input buffers of their lengths.
        let inputs = (0..scalars.in_buffers as usize)
            .map(|arg| unsafe {
                std::slice::from_raw_parts((*args.add(arg)).buf.pv.cast::<u8>(), (*args.add(arg)).buf.len)
            })
            .map(<[u8]>::to_vec)
            .collect();
        self.calls.borrow_mut().push(Recorded { method: scalars.method, inputs });
        let index = scalars.method as usize - 2;
        let (method, plan) = (&codec::METHODS[index], &codec::PLANS[index]);
        for (name, value) in [("context_id", 5u32), ("graph_count", 2)] {
            let param = method.params.iter().position(|param| param.name == name).unwrap();
            let Some(lpai_direct::codec::Slot::PrimaryOut { offset }) = plan.slot(param) else { panic!("a rout") };
            let primary = method.primary_out_arg().unwrap();
            // SAFETY: a load's primary output holds its rout scalars at their offsets.
            unsafe { (*args.add(primary)).buf.pv.cast::<u8>().add(offset).cast::<u32>().write_unaligned(value) };
        }
        0
    }

    fn close(&mut self, _handle: u64) -> i32 {
        0
    }
}

#[test]
fn each_load_request_goes_by_the_method_that_carries_it() {
    use lpai_direct::codec::Slot;
    let calls = Rc::new(std::cell::RefCell::new(Vec::new()));
    let mut stub = Stub::open(Box::new(Recording { calls: calls.clone() }), c"uri").unwrap();
    let (binary, record, path) = (&b"context binary"[..], &b"metadata record"[..], c"/data/model.bin");
    let requests = [
        (LoadRequest::bytes(binary), codec::load::METHOD, (codec::load::BINARY, binary), None),
        (LoadRequest::file(path), codec::load_file::METHOD, (codec::load_file::PATH, path.to_bytes_with_nul()), None),
        (
            LoadRequest::bytes(binary).with_record(record),
            codec::load_with_metadata::METHOD,
            (codec::load_with_metadata::BINARY, binary),
            Some(codec::load_with_metadata::METADATA),
        ),
        (
            LoadRequest::file(path).with_record(record),
            codec::load_file_with_metadata::METHOD,
            (codec::load_file_with_metadata::PATH, path.to_bytes_with_nul()),
            Some(codec::load_file_with_metadata::METADATA),
        ),
    ];
    for (request, method, (binary_param, binary_bytes), metadata_param) in requests {
        let flags = flags::ISLAND | flags::PERSISTENT_BINARY;
        let loaded = stub.load(&request.with_flags(flags)).unwrap();
        assert_eq!(loaded, Loaded { context: 5, graph_count: 2 }, "{}", method.name);
        let Recorded { method: id, inputs } = calls.borrow_mut().pop().unwrap();
        assert_eq!(id, method.id, "{}", method.name);
        let plan = &codec::PLANS[method.id as usize - 2];
        let Some(Slot::PrimaryIn { offset }) = plan.slot(0) else { panic!("{}: flags first", method.name) };
        assert_eq!(inputs[0][offset..offset + 4], flags.to_le_bytes(), "{}", method.name);
        let argument = |param| match plan.slot(param) {
            Some(Slot::Buffer { arg, .. }) => inputs[arg].clone(),
            _ => panic!("{}: parameter {param} is a buffer", method.name),
        };
        assert_eq!(argument(binary_param), binary_bytes, "{}", method.name);
        assert_eq!(metadata_param.map(argument), request.record.map(<[u8]>::to_vec), "{}", method.name);
    }
}

/// A skel as a script: `version` answers `interface`, `configure` answers `configure`, `failed_library` answers
/// `library`, every other call (`last_error`, with an empty message, among them) success; the transport's search
/// path is `search`. Keeps the method of each call.
struct Scripted {
    interface: (u32, u32),
    configure: i32,
    library: u32,
    search: Option<first_contact::SkelSearch>,
    called: Rc<std::cell::RefCell<Vec<u32>>>,
}

impl Scripted {
    fn new(interface: (u32, u32)) -> Scripted {
        Scripted { interface, configure: 0, library: 0, search: None, called: Rc::default() }
    }
}

/// Writes `value` into the rout scalar `param` of a `method` call's primary output.
///
/// # Safety
/// `args` must hold the arguments of a `method` call.
unsafe fn answer(method: &Method, param: usize, args: *mut RemoteArg, value: u32) {
    let plan = &codec::PLANS[method.id as usize - 2];
    let Some(lpai_direct::codec::Slot::PrimaryOut { offset }) = plan.slot(param) else { panic!("a rout scalar") };
    let primary = method.primary_out_arg().unwrap();
    // SAFETY: the caller's promise: the primary output holds the method's rout scalars at their offsets.
    unsafe { (*args.add(primary)).buf.pv.cast::<u8>().add(offset).cast::<u32>().write_unaligned(value) };
}

impl Transport for Scripted {
    fn name(&self) -> &'static str {
        "scripted"
    }

    fn place(&self) -> String {
        "the test".into()
    }

    fn skel_search(&self) -> Option<first_contact::SkelSearch> {
        self.search.clone()
    }

    fn open(&mut self, _uri: &CStr) -> Result<u64, i32> {
        Ok(1)
    }

    unsafe fn invoke(&mut self, _handle: u64, scalars: u32, args: *mut RemoteArg) -> i32 {
        let method = lpai_direct::codec::Scalars::of(scalars).method;
        self.called.borrow_mut().push(method);
        // SAFETY: each call's arguments are the ones its method describes (the stub encoded them).
        unsafe {
            match method {
                codec::version::ID => {
                    answer(codec::version::METHOD, codec::version::INTERFACE_MAJOR, args, self.interface.0);
                    answer(codec::version::METHOD, codec::version::INTERFACE_MINOR, args, self.interface.1);
                }
                codec::failed_library::ID => {
                    answer(codec::failed_library::METHOD, codec::failed_library::LIBRARY, args, self.library)
                }
                codec::configure::ID => return self.configure,
                _ => {}
            }
        }
        0
    }

    fn close(&mut self, _handle: u64) -> i32 {
        0
    }
}

/// A search of this process's path for a skel opened in `pd` that finds an interface 1.0 skel first, then one of
/// this stub's interface.
fn older_first(pd: fastrpc::Pd) -> first_contact::SkelSearch {
    use dsp_search::{Directory, Found, SearchPath};
    let file = |directory: &str, minor| first_contact::SkelFile {
        found: Found {
            path: format!("{directory}/liblpai_direct_skel.so").into(),
            directory: Directory { path: directory.into(), from_variable: true },
        },
        version: Ok(lpai_direct::version::Record::new(
            Version { major: 1, minor },
            lpai_direct::version::Component::Skel,
            73,
            "test",
        )),
    };
    first_contact::SkelSearch {
        search: SearchPath::new(Some(("ADSP_LIBRARY_PATH", "/data/old;/data/new".into()))),
        found: vec![file("/data/old", 0), file("/data/new", INTERFACE.minor)],
        pd,
        domain: fastrpc::Domain::Adsp,
    }
}

#[test]
fn an_older_skel_first_on_this_process_path_opens_with_a_warning_in_any_pd() {
    for pd in [fastrpc::Pd::User, fastrpc::Pd::Audio] {
        let scripted = Scripted { search: Some(older_first(pd)), ..Scripted::new((1, 0)) };
        let stub = Stub::open(Box::new(scripted), c"uri").unwrap_or_else(|error| panic!("{pd:?}: {error}"));
        assert_eq!(stub.skel_version().interface(), Some(Version { major: 1, minor: 0 }));
        let warning = stub.skel_warning().unwrap();
        assert!(warning.starts_with("the skel answered interface 1.0"), "{warning}");
        assert!(warning.contains("/data/old/liblpai_direct_skel.so first, before /data/new"), "{warning}");
        let names_the_daemon = warning.contains("the audio PD's skel is loaded through its daemon");
        assert_eq!(names_the_daemon, pd == fastrpc::Pd::Audio, "{warning}");
    }
    let current = Scripted { search: Some(older_first(fastrpc::Pd::User)), ..Scripted::new((1, INTERFACE.minor)) };
    assert_eq!(Stub::open(Box::new(current), c"uri").unwrap().skel_warning(), None, "the newest skel answered");
}

/// Configures a stub on `scripted` with `system_library` (empty: none); answers the failure and where it stopped,
/// and the methods sent after open.
fn failed_configure(scripted: Scripted, system_library: &CStr) -> (StubError, LibraryFailure, Vec<u32>) {
    let called = scripted.called.clone();
    let mut stub = Stub::open(Box::new(scripted), c"uri").unwrap();
    let configuration = Configuration::with_libraries(c"libQnnLpai.so".into(), system_library.into(), 0);
    let error = stub.configure(&configuration).unwrap_err();
    let failure = stub.library_failure(&error, !system_library.is_empty());
    let sent = called.borrow().iter().copied().filter(|method| *method != codec::version::ID).collect();
    (error, failure, sent)
}

#[test]
fn a_failed_configure_stops_at_the_library_the_skel_names_by_number() {
    use library_failure::DspLibrary::{Backend, System};
    let unable = aee::dsp(aee::EUNABLETOLOAD);
    let current = |configure, library| Scripted { configure, library, ..Scripted::new((1, INTERFACE.minor)) };
    let (_, failure, sent) = failed_configure(current(unable, 2), c"libQnnSystem.so");
    assert_eq!(failure, LibraryFailure::Unloadable(System));
    let asked = [codec::configure::ID, codec::last_error::ID, codec::failed_library::ID];
    assert_eq!(sent, asked, "the message first, then the library: failed_library clears nothing");
    assert_eq!(failed_configure(current(unable, 1), c"libQnnSystem.so").1, LibraryFailure::Unloadable(Backend));
    let no_symbol = aee::dsp(aee::ENOSUCHSYMBOL);
    assert_eq!(failed_configure(current(no_symbol, 2), c"libQnnSystem.so").1, LibraryFailure::Refused(System));
    let failed = aee::dsp(aee::EFAILED);
    assert_eq!(failed_configure(current(failed, 1), c"").1, LibraryFailure::Refused(Backend));
    let bad_parameter = aee::dsp(aee::EBADPARM);
    assert_eq!(failed_configure(current(bad_parameter, 0), c"").1, LibraryFailure::Neither);
    let (_, failure, _) = failed_configure(current(unable, 7), c"");
    assert!(matches!(&failure, LibraryFailure::Unknown(why) if why.contains("malformed")), "{failure:?}");

    let older = |configure| Scripted { configure, ..Scripted::new((1, INTERFACE.minor - 1)) };
    let (_, failure, sent) = failed_configure(older(unable), c"libQnnSystem.so");
    assert!(!sent.contains(&codec::failed_library::ID), "a skel without failed_library is not asked it");
    let LibraryFailure::Unknown(why) = failure else { panic!("{failure:?}") };
    assert!(why.starts_with("the skel does not say which library it stopped at: failed_library needs"), "{why}");
    let (_, failure, _) = failed_configure(older(unable), c"");
    assert_eq!(failure, LibraryFailure::Unloadable(Backend), "without a system library only the backend loads");
    assert!(matches!(failed_configure(older(failed), c"").1, LibraryFailure::Unknown(_)));
}
