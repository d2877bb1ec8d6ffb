//! Self-tests of the embedding API ([`crate::embed`]): the contract model of libQnnLpai, linked in and registered
//! as a built-in library by the program (see [`crate::testing`]), runs the `contract_single` fixture frame by frame from a binary used in place (and from one that has
//! to be copied) with the fixture's reference outputs, with libQnnSystem or with a metadata record and no
//! libQnnSystem at all; the fake backend shows the teardown order and the refusals.

use super::fake::{self, Event, Settings};
use crate::embed::{Direction, Embed};
use crate::platform::libraries::register_builtin_libraries;
use crate::runtime::{BackendOptions, Binary, Borrowed, Libraries, LoadRequest, PersistentBinary, RuntimeError};
use crate::testing::contract_single::{BINARY, FRAMES};
use crate::testing::{contract_model_registered, contract_record};
use crate::testing::{CONTRACT_LPAI_LIBRARY as LPAI_LIBRARY_NAME, CONTRACT_SYSTEM_LIBRARY as SYSTEM_LIBRARY_NAME};
use lpai_direct::metadata::{Record, Writer};
use lpai_direct::qnn::DataType;

/// Arena for one embedding on the contract model (the libraries, tensors, scratch and persistent memory).
const ARENA_BYTES: usize = 16 * 1024;

/// Firmware's copy of the binary: at the contract model's start alignment (128), padded to its size alignment.
#[repr(C, align(128))]
struct Model([u8; 384]);

impl Model {
    /// The fixture's binary at `offset` bytes past the alignment.
    fn at(offset: usize) -> Model {
        let mut model = Model([0; 384]);
        if let Some(place) = model.0.get_mut(offset..) {
            lpai_direct::codec::copy_prefix(place, BINARY);
        }
        model
    }
}

/// Room for the contract model's metadata record.
const RECORD_BYTES: usize = 256;

/// `record` written again with its graphs called `name`; its length.
fn renamed(record: &[u8], name: &str, out: &mut [u8]) -> Option<usize> {
    let record = Record::parse(record).ok()?;
    let mut writer = Writer::new(out);
    writer.header(record.graph_count() as u32, &record.binary_hash());
    for graph in record.graphs() {
        writer.graph(name, graph.inputs.len() as u32, graph.outputs.len() as u32);
        for tensor in graph.inputs.chain(graph.outputs) {
            writer.tensor(&tensor);
        }
    }
    writer.finish().ok()
}

/// Loads `binary` in place (or its copy) with its metadata from libQnnSystem.
fn load<'m>(embed: &mut Embed<Borrowed<'m>>, binary: PersistentBinary<'m>) -> Result<(), RuntimeError> {
    embed.load(&LoadRequest::new(Binary::InPlace(binary)))
}

/// Loads `binary` in place (or its copy) with its metadata from `record`.
fn load_with_record<'m>(
    embed: &mut Embed<Borrowed<'m>>,
    binary: PersistentBinary<'m>,
    record: &[u8],
) -> Result<(), RuntimeError> {
    embed.load(&LoadRequest::new(Binary::InPlace(binary)).with_record(record)?)
}

/// Feeds every fixture frame and checks each output against the reference; false on the first difference.
fn run_frames(embed: &mut Embed<Borrowed<'_>>) -> Result<bool, RuntimeError> {
    for (input, reference) in FRAMES {
        let buffer = embed.input_mut(0)?;
        if buffer.len() != input.len() {
            return Ok(false);
        }
        buffer.copy_from_slice(input);
        if embed.execute_frame()?.is_none() || embed.output(0)? != reference {
            return Ok(false);
        }
    }
    Ok(true)
}

crate::self_tests! {
    fn the_embedding_runs_the_contract_fixture_frame_by_frame_on_a_binary_in_place() {
        check!(contract_model_registered());
        let model = Model::at(0);
        let libraries = expect_ok!(Libraries::open(LPAI_LIBRARY_NAME, Some(SYSTEM_LIBRARY_NAME), &BackendOptions::default()));
        let mut arena = [0u8; ARENA_BYTES];
        let mut embed = Embed::new(Borrowed::new(&libraries, &mut arena));
        check!(embed.backend().is_lpai() && !embed.is_loaded() && embed.graph_count() == 0);
        check!(embed.execute_frame() == Err(RuntimeError::NoSuchGraph));
        check!(embed.tensor_count(Direction::Input) == 0 && embed.last_execute_us().is_none());
        let binary = expect_some!(PersistentBinary::padded(&model.0, BINARY.len()));
        expect_ok!(load(&mut embed, binary));
        check!(embed.binary_in_place() == Some(true) && embed.graph_count() == 1);
        check!(expect_ok!(embed.graph_name()) == "single" && embed.graph_index("single") == Some(0));
        check!(embed.tensor_count(Direction::Input) == 1 && embed.tensor_count(Direction::Output) == 1);
        let input = expect_ok!(embed.tensor(Direction::Input, 0));
        check!(input.name == "in" && input.c_name == Some(c"in") && input.id == 1 && input.bytes == 16);
        check!(input.dimensions == [1, 16] && input.data_type == DataType::UFIXED_POINT_8);
        let scale = expect_some!(input.quantization);
        check!(scale.scale == 0.0625 && scale.offset == -128);
        let output = expect_ok!(embed.tensor(Direction::Output, 0));
        check!(output.name == "out" && output.id == 2 && output.dimensions == [1, 16]);
        check!(matches!(output.quantization, Some(q) if q.scale == 0.125 && q.offset == -100));
        check!(matches!(embed.tensor(Direction::Output, 1), Err(RuntimeError::NoSuchTensor { index: 1 })));

        // The buffers are bound at load: the same memory every frame.
        let address = expect_ok!(embed.input_mut(0)).as_ptr();
        check!(expect_ok!(run_frames(&mut embed)));
        check!(expect_ok!(embed.input_mut(0)).as_ptr() == address);
        check!(embed.last_execute_us().is_some());
        check!(embed.arena_used() > 0 && embed.arena_used() < embed.arena_capacity());

        check!(embed.select_graph(1) == Err(RuntimeError::NoSuchGraph));
        check!(matches!(embed.input_mut(1), Err(RuntimeError::NoSuchTensor { index: 1 })));
        let again = expect_some!(PersistentBinary::padded(&model.0, BINARY.len()));
        check!(matches!(load(&mut embed, again), Err(RuntimeError::TooMany { limit: 1, .. })));
    }

    fn the_embedding_copies_a_binary_it_cannot_use_in_place_and_gives_the_same_outputs() {
        check!(contract_model_registered());
        for (offset, padded) in [(8, true), (0, false)] {
            let model = Model::at(offset);
            let memory = expect_some!(model.0.get(offset..));
            let binary = if padded {
                expect_some!(PersistentBinary::padded(memory, BINARY.len()))
            } else {
                // Exactly the binary: 340 bytes, not a multiple of the model's size alignment (64).
                PersistentBinary::new(expect_some!(memory.get(..BINARY.len())))
            };
            let libraries = expect_ok!(Libraries::open(LPAI_LIBRARY_NAME, Some(SYSTEM_LIBRARY_NAME), &BackendOptions::default()));
            let mut arena = [0u8; ARENA_BYTES];
            let mut embed = Embed::new(Borrowed::new(&libraries, &mut arena));
            expect_ok!(load(&mut embed, binary));
            check!(embed.binary_in_place() == Some(false));
            check!(embed.arena_used() > BINARY.len());
            check!(expect_ok!(run_frames(&mut embed)));
        }
    }

    fn dropping_the_embedding_frees_the_context_then_the_libraries() {
        let session = fake::begin(Settings::LPAI);
        check!(register_builtin_libraries(fake::BUILTINS).is_ok());
        let bytes = expect_some!(super::binary(&fake::binary::ONE_GRAPH));
        let mut model = Model([0; 384]);
        lpai_direct::codec::copy_prefix(&mut model.0, &bytes);
        let libraries = expect_ok!(Libraries::open(c"libQnnLpaiFake.so", Some(c"libQnnSystemFake.so"), &BackendOptions::default()));
        let mut arena = [0u8; super::ARENA_BYTES];
        let mut embed = Embed::new(Borrowed::new(&libraries, &mut arena));
        expect_ok!(load(&mut embed, expect_some!(PersistentBinary::padded(&model.0, bytes.len()))));
        check!(session.record().contexts[0].binary_address == model.0.as_ptr() as usize);
        for frame in [[1u8, 2, 3, 4], [5, 6, 7, 8]] {
            lpai_direct::codec::copy_prefix(expect_ok!(embed.input_mut(0)), &frame);
            check!(expect_ok!(embed.execute_frame()).is_some());
        }
        check!(expect_ok!(embed.output(0)) == [6, 7, 8, 9]);
        // EARLY_TERMINATION: not ready yet, and the last ready frame's time is kept.
        session.configure(|settings| settings.early_terminations = 1);
        let before = embed.last_execute_us();
        check!(expect_ok!(embed.execute_frame()).is_none() && embed.last_execute_us() == before);
        check!(expect_ok!(embed.execute_frame()).is_some());
        drop(embed);
        let freed = session.record();
        check!(freed.contexts[0].binary_intact_at_free == Some(true) && freed.position(Event::BackendFree).is_none());
        check!(freed.in_order(&[Event::ContextFree(0), Event::SystemContextFree(0)]));
        check!(freed.system_contexts_live == 0);
        drop(libraries);
        let record = session.record();
        check!(record.in_order(&[Event::ContextFree(0), Event::BackendFree]) && record.contexts_live_at_backend_free == 0);
    }

    fn an_arena_too_small_for_the_model_is_refused_and_frees_what_it_made() {
        let session = fake::begin(Settings::LPAI);
        check!(register_builtin_libraries(fake::BUILTINS).is_ok());
        let bytes = expect_some!(super::binary(&fake::binary::ONE_GRAPH));
        let mut model = Model([0; 384]);
        lpai_direct::codec::copy_prefix(&mut model.0, &bytes);
        let libraries = expect_ok!(Libraries::open(c"libQnnLpaiFake.so", Some(c"libQnnSystemFake.so"), &BackendOptions::default()));
        // Too small for the graph's tensors and LPAI memory: the context is created, then freed when the arena
        // runs out.
        let mut arena = [0u8; 600];
        let mut embed = Embed::new(Borrowed::new(&libraries, &mut arena));
        let binary = expect_some!(PersistentBinary::padded(&model.0, bytes.len()));
        check!(matches!(load(&mut embed, binary), Err(RuntimeError::Arena(_))));
        check!(!embed.is_loaded() && embed.execute_frame() == Err(RuntimeError::NoSuchGraph));
        let record = session.record();
        check!(record.context_create_calls == 1 && !record.contexts[0].live && record.system_contexts_live == 0);
    }

    fn the_embedding_runs_the_contract_fixture_from_a_metadata_record_with_no_system_library() {
        check!(contract_model_registered());
        let mut record = [0u8; RECORD_BYTES];
        let length = expect_some!(contract_record(&mut record));
        let record = expect_some!(record.get(..length));
        let model = Model::at(0);
        let libraries = expect_ok!(Libraries::open(LPAI_LIBRARY_NAME, None, &BackendOptions::default()));
        check!(libraries.system().is_none());
        let mut arena = [0u8; ARENA_BYTES];
        let mut embed = Embed::new(Borrowed::new(&libraries, &mut arena));
        // Without libQnnSystem a load needs the record.
        let binary = expect_some!(PersistentBinary::padded(&model.0, BINARY.len()));
        check!(load(&mut embed, binary) == Err(RuntimeError::NoMetadata) && !embed.is_loaded());
        let binary = expect_some!(PersistentBinary::padded(&model.0, BINARY.len()));
        expect_ok!(load_with_record(&mut embed, binary, record));
        check!(embed.binary_in_place() == Some(true) && embed.graph_count() == 1);
        check!(expect_ok!(embed.graph_name()) == "single" && embed.graph_c_name() == Ok(c"single"));
        // The same tensors libQnnSystem describes.
        let input = expect_ok!(embed.tensor(Direction::Input, 0));
        check!(input.name == "in" && input.c_name == Some(c"in") && input.id == 1 && input.bytes == 16);
        check!(input.dimensions == [1, 16] && input.data_type == DataType::UFIXED_POINT_8);
        check!(matches!(input.quantization, Some(q) if q.scale == 0.0625 && q.offset == -128));
        let output = expect_ok!(embed.tensor(Direction::Output, 0));
        check!(output.name == "out" && output.id == 2 && output.dimensions == [1, 16] && output.bytes == 16);
        check!(matches!(output.quantization, Some(q) if q.scale == 0.125 && q.offset == -100));
        // Equal outputs, frame by frame.
        check!(expect_ok!(run_frames(&mut embed)));
        check!(embed.last_execute_us().is_some());
        let again = expect_some!(PersistentBinary::padded(&model.0, BINARY.len()));
        check!(matches!(load_with_record(&mut embed, again, record), Err(RuntimeError::TooMany { limit: 1, .. })));
    }

    fn a_metadata_record_that_does_not_match_the_binary_or_is_malformed_is_refused() {
        check!(contract_model_registered());
        let mut record = [0u8; RECORD_BYTES];
        let length = expect_some!(contract_record(&mut record));
        let record = expect_some!(record.get(..length));
        let mut other = [0u8; RECORD_BYTES];
        let other_length = expect_some!(renamed(record, "other", &mut other));
        let other = expect_some!(other.get(..other_length));
        let model = Model::at(0);
        let libraries = expect_ok!(Libraries::open(LPAI_LIBRARY_NAME, None, &BackendOptions::default()));
        let mut arena = [0u8; ARENA_BYTES];
        let mut embed = Embed::new(Borrowed::new(&libraries, &mut arena));
        let binary = || PersistentBinary::padded(&model.0, BINARY.len());
        // Another graph name: refused at load, naming the record's graph.
        let refused = load_with_record(&mut embed, expect_some!(binary()), other);
        check!(matches!(&refused, Err(RuntimeError::RecordGraphMissing { graph, .. }) if graph == "other"));
        check!(!embed.is_loaded());
        let message = crate::message!(expect_some!(refused.err()));
        check!(message.rendered().as_str().contains("names graph other, which the context binary does not have"));
        // Untrusted bytes: truncated, empty, or not a record at all, each refused with where.
        for bytes in [expect_some!(record.get(..length - 1)), &[], &BINARY[..64]] {
            let refused = load_with_record(&mut embed, expect_some!(binary()), bytes);
            check!(matches!(refused, Err(RuntimeError::MalformedRecord(_))));
        }
        let refused = load_with_record(&mut embed, expect_some!(binary()), expect_some!(record.get(..8)));
        let message = crate::message!(expect_some!(refused.err()));
        check!(message.rendered().as_str().starts_with("the metadata record is malformed (byte "));
        check!(!embed.is_loaded());
        // The embedding is still usable: the matching record loads and runs.
        expect_ok!(load_with_record(&mut embed, expect_some!(binary()), record));
        check!(expect_ok!(run_frames(&mut embed)));
    }

    fn a_record_works_with_a_system_library_too_and_gives_the_same_outputs() {
        check!(contract_model_registered());
        let mut record = [0u8; RECORD_BYTES];
        let length = expect_some!(contract_record(&mut record));
        let record = expect_some!(record.get(..length));
        let model = Model::at(0);
        let libraries = expect_ok!(Libraries::open(LPAI_LIBRARY_NAME, Some(SYSTEM_LIBRARY_NAME), &BackendOptions::default()));
        check!(libraries.system().is_some());
        let mut arena = [0u8; ARENA_BYTES];
        let mut embed = Embed::new(Borrowed::new(&libraries, &mut arena));
        expect_ok!(load_with_record(&mut embed, expect_some!(PersistentBinary::padded(&model.0, BINARY.len())), record));
        check!(expect_ok!(run_frames(&mut embed)));
    }
}
