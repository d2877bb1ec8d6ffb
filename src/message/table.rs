//! The one table of messages: each one's place in the table is its id on the wire, and its template is its words,
//! a `{}` where each value said with it goes (`lpai_direct::message`). The DSP carries the ids alone; the HLOS side
//! renders with the templates. A changed template changes the build id (`build.rs` hashes this file).

use super::places;

/// Declares the table: the `Message` enum, its templates and its ids.
macro_rules! messages {
    ($( $(#[$doc:meta])* $name:ident = $template:literal, )*) => {
        /// A message of the table; `as u16` is its id on the wire.
        #[repr(u16)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Message {
            $( $(#[$doc])* #[doc = concat!("`", $template, "`")] $name, )*
        }

        /// Every message, in id order.
        const ALL: &[Message] = &[$( Message::$name, )*];

        /// How many messages the table holds.
        pub(super) const COUNT: usize = ALL.len();

        impl Message {
            /// The message's words, a `{}` for each value said with it.
            pub const fn template(self) -> &'static str {
                match self {
                    $( Message::$name => $template, )*
                }
            }

            /// The message whose id is `id`.
            pub const fn from_id(id: u16) -> Option<Message> {
                let index = id as usize;
                if index < COUNT {
                    Some(ALL[index])
                } else {
                    None
                }
            }

            /// How many values it is said with.
            pub const fn places(self) -> usize {
                places(self.template())
            }
        }
    };
}

messages! {
    // The platform's services (dsp/src/platform).
    NotFound = "not found",
    PlatformFailed = "failed with platform error {}",
    NeedsBuffer = "needs a buffer of {} bytes",
    UnsupportedService = "not available on this platform",
    NotLoadable = "cannot be loaded (not a shared library for this CPU, or its dependencies are missing)",
    BuiltinNameTaken = "another built-in library is registered as {}",
    BuiltinTableFull = "the table of built-in libraries is full ({})",
    NotUtf8Name = "(a name that is not UTF-8)",
    Nothing = "",
    Text = "{}",
    Dotted = "{}.{}.{}",

    // Runtime errors (dsp/src/runtime/error.rs, arena.rs).
    ArenaFull = "arena full: {} bytes (aligned to {}) requested, {} of {} bytes free",
    StepFailed = "{}: {}",
    MissingSymbol = "not a QNN library: it does not export {}",
    NoProviders = "the QNN library lists no interface provider",
    UnsupportedApi = "provider {} speaks QNN core API {}; this runtime needs {}.x with x >= {}",
    MissingFunction = "the QNN provider does not implement {}",
    QnnCallFailed = "{} failed: {} ({})",
    PersistentBinaryRefusedRequired =
        "the backend refused the PERSISTENT_BINARY context config ({}, {}) although it reports that it requires a \
         persistent binary",
    PersistentBinaryRefused =
        "the backend refused the PERSISTENT_BINARY context config ({}, {}); it reads the binary only while loading, \
         so run without asking for a persistent binary",
    BinarySize = "a context binary of {} bytes cannot be loaded",
    MalformedBinary = "not a usable QNN context binary (truncated or corrupt): libQnnSystem answered {} ({})",
    TooMany = "{} {}, but this runtime holds at most {}",
    NoSuchGraph = "no such graph in the context",
    NoSuchCore =
        "core_selection {} names a core this LPAI does not have: it reports {} eNPU core(s) (ENPU_CORE_NUM), bits 0 \
         to {}",
    CoreMix = "core_selection {} {}",
    CoreMixUnsupported =
        "selects more than one core, which LPAI does not yet support (QnnLpaiGraph.h: with several bits set the \
         behaviour is undefined); select one core (one bit, 1 << core) or any core (0)",
    NoSuchTensor = "the graph has no tensor number {}",
    UnsupportedDataType = "tensor {}: cannot convert {} ({}) to or from float32",
    TensorSize = "tensor {}: expected {} bytes, got {}",
    BadAlignment = "the backend asks for a start alignment of {} bytes, which is not a power of two",
    NeverCompleted = "graphExecute answered EARLY_TERMINATION {} times in a row; giving up",
    RecordGraphMissing =
        "the metadata record names graph {}, which the context binary does not have (graphRetrieve failed: {} ({}))",
    RecordTensorsRefused =
        "graph {}: graphExecute refused the tensors the metadata record describes ({}, {}): their ids, count or \
         sizes do not match the context binary",
    RecordForAnotherBinary =
        "the metadata record was made for another binary (the SHA-256 it carries is not the binary's): the binary \
         changed after it was checked, or the record belongs to another one",
    MalformedRecord = "the metadata record is malformed ({}): {}",
    RecordAtByte = "byte {}",
    RecordAtGraph = "byte {}, graph {}",
    RecordAtTensor = "byte {}, tensor {}",
    RecordAtGraphTensor = "byte {}, graph {}, tensor {}",
    NoMetadata =
        "no libQnnSystem was opened, so the binary's tensor metadata must come with it: load with a metadata record \
         (lpai-net-run inspect BIN --emit_metadata FILE makes one)",
    FrameInFlight =
        "graph {}: a frame is still executing, so {} is refused: wait for it (wait_frame, or poll_frame until it is \
         no longer pending) first",
    NoFrameStarted = "graph {}: no frame was started (start_frame) to poll or wait for",
    FrameTimedOut = "graph {}: the backend has not completed the frame after {} ms; it is still in flight (wait or \
         poll again)",
    InputSets = "input_sets {}: a graph has 1 input set, or 2 to fill one while the other executes",
    OpPackageRefused = "op package {}: backendRegisterOpPackage failed: {} ({}){}",
    OpPackageRefusedProvider = "op package {}:{}: backendRegisterOpPackage failed: {} ({}){}",
    OpPackageNotFound = ": it could not be opened (missing, or not a library)",
    OpPackageNoProvider = ": it does not export that interface provider",
    OpPackageInitFailed = ": its own initialisation failed",
    OpPackageVersion = ": its interface version is not this backend's",
    OpPackageDuplicate = ": an op of that package and name is registered already",
    OpPackageNotSupported = ": this backend takes no op packages",
    OpPackageNoPath = ": no path or interface provider",

    // The QNN functions a runtime error or log line names (dsp/src/runtime/error.rs: `check`, `require`,
    // `RuntimeError::Qnn`, `QnnFailure`; the symbols `RuntimeError::MissingSymbol` names).
    QnnInterfaceGetProviders = "QnnInterface_getProviders",
    QnnSystemInterfaceGetProviders = "QnnSystemInterface_getProviders",
    QnnBackendCreate = "backendCreate",
    QnnBackendGetProperty = "backendGetProperty",
    QnnBackendRegisterOpPackage = "backendRegisterOpPackage",
    QnnBackendFree = "backendFree",
    QnnContextCreateFromBinary = "contextCreateFromBinary",
    QnnContextFree = "contextFree",
    QnnProfileCreate = "profileCreate",
    QnnProfileGetEvents = "profileGetEvents",
    QnnProfileGetSubEvents = "profileGetSubEvents",
    QnnProfileGetEventData = "profileGetEventData",
    QnnGraphRetrieve = "graphRetrieve",
    QnnGraphSetConfig = "graphSetConfig",
    QnnGraphGetProperty = "graphGetProperty",
    QnnGraphFinalize = "graphFinalize",
    QnnGraphExecute = "graphExecute",
    QnnGraphExecuteAsync = "graphExecuteAsync",
    QnnSystemContextCreate = "systemContextCreate",
    QnnSystemContextGetBinaryInfo = "systemContextGetBinaryInfo",

    // The steps a runtime error says failed (`RuntimeError::Platform`, `RuntimeError::LibraryNotLoaded`).
    StepLoadingBackendLibrary = "loading the QNN backend library",
    StepLoadingSystemLibrary = "loading the QNN system library",
    StepReadingContextBinary = "reading the context binary",
    StepWaitingForCompletion = "waiting for the frame's completion",
    StepKeepingLibraries = "keeping the libraries",

    // What overflowed a fixed table or bound (`RuntimeError::TooMany`).
    TooManyGraphs = "graphs",
    TooManyGraphConfigs = "graph configs",
    TooManyIslandGraphNames = "island graph names",
    TooManyContextBinaries = "context binaries per arena",
    TooManyWaitingThreads = "threads of the PD waiting for frames at once",
    TooManyInputBytes = "input bytes",
    TooManyOutputBytes = "output bytes",
    TooManyLpaiGraphMemoryBytes = "LPAI graph memory bytes",

    // What a frame in flight refuses (`RuntimeError::FrameInFlight`).
    RefusedSecondStartFrame = "a second start_frame",
    RefusedSynchronousExecute = "a synchronous execute",
    RefusedWritingInputSet = "writing the input set the frame reads",
    RefusedReadingOutput = "reading an output",
    RefusedBindingOutput = "binding an output",
    RefusedSetPerformance = "set_performance",
    RefusedLoad = "load",
    RefusedSelectGraph = "select_graph",

    // What the runtime logs (dsp/src/runtime, dsp/src/embed.rs).
    LpaiHwInfo = "LPAI backend {}: HW_INFO target {} hw {}",
    NotLpaiSkippingHwInfo = "backend {} (id {}) is not LPAI: skipping the HW_INFO config",
    NotLpaiSkippingAlignment = "backend {} is not LPAI: skipping ALIGNMENT_REQ and REQUIRE_PERSISTENT_BINARY",
    LpaiAlignment = "LPAI alignment: start {}, size {}; persistent binary required: {}",
    NoEnpuCoreNum = "the backend does not report ENPU_CORE_NUM: core_selection is not checked against it",
    EnpuCores = "LPAI eNPU cores: {}",
    RegisteringOpPackage = "registering op package {} (interface provider {})",
    NoProfileCreate = "backend {} has no profileCreate: running without QNN profile events",
    ContextLoaded = "context loaded: {} graph(s), binary {} B, arena used {} B",
    NotLpaiSkippingIsland = "backend {} is not LPAI: skipping ENABLE_ISLAND",
    AskingPersistentBinary = "asking for PERSISTENT_BINARY ({})",
    BackendRequiresIt = "the backend requires it",
    Requested = "requested",
    FrameOutlivedClose =
        "graph {}: a frame is still executing {} ms after its context was asked to close: the context and its memory \
         are leaked, never freed",
    NotLpaiSkippingGraphSetup =
        "graph {}: backend {} is not LPAI: skipping scratch/persistent memory, perf config, core affinity and \
         re-finalize",
    LpaiGraphMemory = "graph {}: LPAI scratch {} B, persistent {} B, finalized",
    NotLpaiSkippingPerformance = "graph {}: not on LPAI: skipping PERF_CFG and CORE_AFFINITY",
    BinaryInPlace = "context binary used in place at {} ({} B), no copy",
    BinaryMisaligned = "context binary at {} ({} B) not at a multiple of {} as the backend wants: copied into the arena",
    BinaryNotPadded =
        "context binary at {} ({} B, {} B of memory) not padded to a multiple of {} B: copied into the arena",
    LibrariesKeptForContexts =
        "the QNN libraries were dropped while {} context(s) on them live on (leaked, or closed with a frame that never \
         ended): they stay loaded",
    ExecutesSynchronously = "graph {}: the backend executes synchronously ({}): frames run inside start_frame",
    AnsweredNotSupported = "it answered QNN_COMMON_ERROR_NOT_SUPPORTED to graphExecuteAsync",
    NoExecuteAsync = "its function table has no graphExecuteAsync",
    EmbedLoaded = "embed: loaded {} graph(s), binary {}, metadata from {}, arena used {} of {} B",
    InPlace = "in place",
    Copied = "copied",
    ARecord = "a record",
    LibQnnSystem = "libQnnSystem",

    // The skel's refusals (dsp/src/skel).
    ConfigurePathTooLong = "configure: a library path is longer than {} bytes",
    ConfigureArenaTooLarge = "configure: arena_bytes {} is more than this skel allows ({})",
    ConfigureWithContexts =
        "configure: unload every context before changing the backend, system library or LPAI hardware",
    OpPackagePathTooLong = "register_op_package: a path, provider or target is longer than {} bytes",
    OpPackageEmpty = "register_op_package: the package path and its interface provider must not be empty",
    OpPackageAfterLoad =
        "register_op_package {}: a context is loaded; op packages are registered before any load (unload every \
         context first)",
    OpPackageRegisterFailed = "register_op_package: {}",
    NoSuchContext = "no loaded context has id {}",
    NoSuchGraphIndex = "context {} has {} graph(s); there is no graph {}",
    ExecuteSizes = "execute: got {} input bytes and room for {} output bytes; the graph takes {} and gives {}",
    BeyondAddressable = "more than this processor can address",
    LoadRecordMalformed = "{}: the metadata record is malformed ({}): {}",
    LoadMemoryType =
        "{}: the load flags ask for LPAI memory type {}, which is none of QnnLpaiMem_MemType_t's (1 DDR, 2 LLC, 3 \
         TCM, 4 PSRAM)",
    LoadNeedsRecord =
        "{}: configure named no system library, so the binary's metadata must come with it: use load_with_metadata \
         or load_file_with_metadata",
    ContextSlotsFull = "all {} context slots of this handle are in use; unload one first",
    ContextBinaryUnreadable = "context binary {}: {}",
    ArenaBeyondLimit = "a context binary of {} bytes needs more arena than this skel allows ({} bytes)",
    ArenaNotReserved = "cannot reserve {} bytes for the context's arena",
    LibraryFailed = "{} {}: {}",
    SystemLibrary = "system library",
    Backend = "backend",
    UnknownMethod = "unknown method id {}",
    MalformedCall = "malformed {} call (sc {}): {}",
    // Why the codec refused a call (lpai_direct_idl::Refusal, said by dsp/src/skel/mod.rs's `refusal_message`).
    RefusedCounts = "the sc word's buffer or handle counts do not match the method",
    RefusedNullBuffer = "a buffer has a length but a null address",
    RefusedOverlap = "outputs overlap another buffer",
    RefusedPastAddressSpace = "a buffer runs past the end of the address space",
    RefusedShortPrimary = "a primary buffer is shorter than its layout",
    RefusedShortSequence = "a sequence or string is shorter than its count",
    RefusedUnterminated = "a string does not end in NUL",
    MethodAnswers = "method {} answers AEE {} after QNN error {}",

    // The direct-mode job (dsp/src/skel/job.rs).
    NoSuchInput = "no such input",
    MoreInputFiles = "more input files than the graph has inputs",
    FewerInputFiles = "fewer input files than the graph has inputs",
    NoSuchOutput = "no such output",
    JobOutputMissing = "the job selects an output the graph does not have",
    APath = "(a path)",
    FileIs = "{}: ",
    ResultDirectoryIs = "{}/Result_{}: ",
    ResultFileIs = "{}/Result_{}/{}: ",
    RecordFileIs = "{}/{}{}{}{}: ",
    FileSize = "holds {} bytes, the tensor takes {}",
    PathTooLong = "the path is longer than {} bytes",
    JobNoMemory = "the PD heap cannot give the job's buffers",
    JobMalformed = "run_job: byte {} of the job: {}",
    JobNoSuchContext = "run_job: no loaded context has id {}",
    JobFailed = "run_job: inference {}: {}{}",
    JobNoSuchGraph = "run_job: context {} has no graph {}",

    // The audio module (dsp/src/audio).
    CapiFormatRefused = "lpai-direct capi: input media format refused: {}",
    CapiConfigEntry = "lpai-direct capi: configuration line {}: op_packages entry {} {}",
    CapiConfigLine = "lpai-direct capi: configuration line {}: {}",
    CapiModelKey =
        "lpai-direct capi: configuration key {} changes the model: set it before PARAM_ID_LPAI_DIRECT_MODEL, or \
         close the graph",
    CapiFrameRefused = "lpai-direct capi: frame refused: {}",
    CapiInferenceFailed = "lpai-direct capi: inference failed: {}",
    CapiChannelBeyond = "lpai-direct capi: channel {} is not in a {}-channel format",
    CapiNoMemoryForModel = "lpai-direct capi: the PD heap cannot hold the model",
    CapiNotConvertible = "lpai-direct capi: the model's first input or output is not convertible to float",
    CapiLoadFailed = "lpai-direct capi: loading the model: {}",
    CapiNoLoadStack = "lpai-direct capi: the PD heap cannot hold a load stack of {} bytes (load_stack=)",
    CapiLoadStackUsed = "lpai-direct capi: the load used {} bytes of its {}-byte stack",
    CapiLoadStackHigh =
        "lpai-direct capi: the load used {} bytes of its {}-byte stack, over three quarters: set a larger load_stack=",
    CapiLoadStackExhausted = "lpai-direct capi: the load used {} bytes, all of its {}-byte stack: set a larger load_stack=",

    // The embedding's C API (dsp/embed).
    EmbedSetsAfterLoad = "set_input_sets: a context binary is loaded; the sets apply to a load",
    EmbedSetsCount = "set_input_sets: a graph has 1 input set, or 2",
    EmbedPollFrameArgument = "poll_frame: null or misaligned frame",
    EmbedWaitFrameArgument = "wait_frame: null or misaligned ready",
    EmbedInputArgument = "input: null or misaligned data or bytes",
    EmbedOutputArgument = "output: null or misaligned data or bytes",
    EmbedExecuteFrameArgument = "execute_frame: null or misaligned ready",
    EmbedLastExecuteArgument = "last_execute_us: null or misaligned micros",
    EmbedNoFrameReady = "last_execute_us: no frame has been ready yet",
    EmbedArenaUsedArgument = "arena_used: null or misaligned used or capacity",
    EmbedArenaUsedNotCreated = "arena_used: the embedding was not created (see the create error)",
    EmbedMemoryTypesAfterLoad = "set_memory_types: a context binary is loaded; the types apply to a load",
    EmbedMemoryTypeUnknown = "set_memory_types: a memory type is LPAI_DIRECT_EMBED_MEMORY_DDR (1), _LLC (2), _TCM (3) or _PSRAM (4)",
    EmbedOpPackageArguments = "register_op_package: the path and the interface provider are strings (the target may be NULL)",
    EmbedOpPackageNotCreated = "register_op_package: create failed; destroy the handle",
    EmbedOpPackageAfterLoad = "register_op_package: a context binary is loaded; op packages are registered before the load",
    EmbedLoadNotCreated = "load: the embedding was not created (see the create error)",
    EmbedLoadTwice = "load: a context binary is already loaded (one per embedding)",
    EmbedLoadBinaryArgument = "load: the binary is null, empty, larger than its buffer, or its buffer wraps around memory",
    EmbedLoadOverlap = "load: the binary overlaps the embedding's arena",
    EmbedRecordArgument = "load_with_metadata: the record is null or empty",
    EmbedRecordOverlap = "load_with_metadata: the metadata record wraps around memory or overlaps the embedding's arena",
    EmbedLoadLarger = "load: the binary is larger than its buffer",
    EmbedInPlaceArgument = "binary_in_place: null or misaligned in_place",
    EmbedGraphCountArgument = "graph_count: null or misaligned count",
    EmbedGraphNameArgument = "graph_name: null or misaligned name",
    EmbedFindGraphArgument = "find_graph: null or not UTF-8 name, or null index",
    EmbedTensorCountArgument = "tensor_count: direction not 0 or 1, or null count",
    EmbedTensorInfoArgument = "tensor_info: direction not 0 or 1, or null info",
    EmbedNotLoaded = "{}: no context binary is loaded",
    EmbedDestroyInFlight =
        "destroy: a frame is still executing (the backend writes its outputs): wait for it \
         (lpai_direct_embed_wait_frame) first",

    // What is wrong with a metadata record (src/metadata/reader.rs, `MetadataError`), said after where it is
    // (`RecordAt...`) by the skel, the embedding and the HLOS side alike.
    RecordEndsEarly = "the record ends early",
    RecordNameEmpty = "a name is empty",
    RecordNameHoldsNul = "a name holds a NUL byte",
    RecordNameNotUtf8 = "a name is not UTF-8",
    RecordNameTooLong = "a name is longer than 255 bytes",
    RecordTooManyTensors = "a graph has more than 64 inputs or outputs",
    RecordTensorType = "the tensor type is not a Qnn_TensorType_t",
    RecordElementSize = "the data type has no known element size",
    RecordUnquantizedScale = "an unquantized tensor has a scale or an offset",
    RecordScaleNotPositive = "a SCALE_OFFSET scale is not a positive finite number",
    RecordQuantizationKind = "the quantization is neither none (0) nor SCALE_OFFSET (1)",
    RecordRankTooLarge = "the rank is larger than 8",
    RecordTensorTooLarge = "the tensor holds more than 4 GiB",
    RecordNoMagic = "not a metadata record (no LPMD magic)",
    RecordVersion = "the record's version is not 2",
    RecordGraphCount = "a record holds 1 to 8 graphs",
    RecordGraphNamesRepeat = "two graphs have the same name",
    RecordTensorIdsRepeat = "two tensors of the graph have the same id",
    RecordBytesAfterLastGraph = "bytes follow the last graph",

    // What is wrong with an entry of an op package list (src/op_package.rs, `OpPackageError`), said after
    // `entry N 'TEXT' ` (`--op_packages`) or the entry's number (the audio module's `op_packages=`).
    OpPackageOneTooMany = "is one too many: at most 4 op packages are registered",
    OpPackageEntryEmpty = "is empty: each comma-separated entry is PATH:PROVIDER[:TARGET]",
    OpPackageEntryHoldsNul = "contains a NUL byte",
    OpPackageMoreFields = "has more than three fields: write PATH:PROVIDER[:TARGET]",
    OpPackageNoInterfaceProvider = "has no interface provider: write PATH:PROVIDER[:TARGET]",
    OpPackageEmptyPath = "has an empty path: write PATH:PROVIDER[:TARGET]",
    OpPackageEmptyInterfaceProvider = "has an empty interface provider: write PATH:PROVIDER[:TARGET]",
    OpPackageEmptyTarget = "has an empty target: leave out the last colon for the backend's default target",

    // What is wrong with the audio module's configuration (dsp/src/audio/config.rs, `ConfigError`), said after
    // `configuration line N: ` (`CapiConfigLine`); an op_packages= entry's own refusal is one of the group above.
    ConfigNotTerminated = "the configuration is not NUL-terminated",
    ConfigNotKeyValue = "a line is not `key=value`",
    ConfigNotDecimal = "the value is not a decimal number",
    ConfigBadBackend = "a bad backend path",
    ConfigBadSystemLibrary = "a bad system_library path",
    ConfigMemoryType = "a memory type is ddr, llc, tcm or psram",
    ConfigIsland = "island is 0 or 1",
    ConfigUnknownKey = "an unknown key",
    ConfigHopZero = "hop must be at least 1",
    ConfigLoadStack = "load_stack is from 16384 to 1048576 bytes",
    ConfigCoreMix = "core_selection selects more than one core: LPAI does not yet support a mix",
    ConfigKeyTwice = "a key given twice",
    ConfigOpPackagesNotUtf8 = "op_packages is not UTF-8",
    ConfigOpPackagesTooLong = "op_packages holds more than 512 bytes of paths, providers and targets",

    // Why the audio module refuses an input media format (dsp/src/audio/format.rs, `FormatError`), said after
    // `input media format refused: ` (`CapiFormatRefused`).
    FormatNotFixedPoint = "only fixed-point PCM is taken (the data format is not FIXED_POINT)",
    FormatNotPcm = "only PCM is taken (the bitstream format is not MEDIA_FMT_ID_PCM)",
    FormatChannels = "the module takes 1 to 8 channels",
    FormatUnsigned = "PCM samples must be signed",
    FormatSample = "samples must be 16-bit Q15, or 32-bit Q27 or Q31",
    FormatInterleaving =
        "the data interleaving is none of CAPI's layouts (0 interleaved, 1 packed, 2 unpacked, 3 unpacked V2)",
    FormatNoSamplingRate = "the sampling rate is not given",
    FormatPayloadShort = "the payload is too short",
    FormatChannelTypesShort = "the payload is too short for its channel types",

    // What is wrong with a direct-mode job (src/job.rs, `JobError`), said after `run_job: byte N of the job: `
    // (`JobMalformed`); the stub's own check of a job it encodes says the path ones in the same words.
    JobEndsEarly = "the job ends inside this field",
    JobPathTooLong = "a path or name is longer than 511 bytes",
    JobPathEmpty = "a path or name is empty",
    JobPathHoldsNul = "a path or name holds a NUL byte",
    JobNameHoldsSlash = "a file or directory name holds a `/`",
    JobNoMagic = "not a job: it does not start with `LPJB`",
    JobVersion = "the job's version is not 2",
    JobOutputCount = "output_count is not 1 to 32",
    JobInputCount = "input_count is not 1 to 32",
    JobInferenceCountZero = "inference_count is 0",
    JobOutputForm = "an output's form is neither 0 (native) nor 1 (float)",
    JobPathCount = "an inference's path count is not input_count",
    JobBytesAfterLastInference = "bytes follow the last inference",
}
