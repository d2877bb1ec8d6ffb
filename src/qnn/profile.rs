//! Profiling: event ids, `QnnProfile_EventData_t`, event types, units and levels.

use core::ffi::c_char;

/// `QnnProfile_EventId_t`.
pub type ProfileEventId = u64;

c_enum! {
    /// `profileCreate` level (a `uint32_t` with `#define`d values in C).
    pub struct ProfileLevel = "QnnProfile_Level_t" {
        BASIC = 1 => "QNN_PROFILE_LEVEL_BASIC",
        DETAILED = 2 => "QNN_PROFILE_LEVEL_DETAILED",
        BACKEND = 1000 => "QNN_PROFILE_LEVEL_BACKEND",
    }
}

c_enum! {
    /// What a profile event measures (a `uint32_t` with `#define`d values in C).
    pub struct ProfileEventType = "QnnProfile_EventType_t" {
        INIT = 100 => "QNN_PROFILE_EVENTTYPE_INIT",
        FINALIZE = 300 => "QNN_PROFILE_EVENTTYPE_FINALIZE",
        EXECUTE = 400 => "QNN_PROFILE_EVENTTYPE_EXECUTE",
        NODE = 404 => "QNN_PROFILE_EVENTTYPE_NODE",
        EXECUTE_QUEUE_WAIT = 405 => "QNN_PROFILE_EVENTTYPE_EXECUTE_QUEUE_WAIT",
        EXECUTE_PREPROCESS = 406 => "QNN_PROFILE_EVENTTYPE_EXECUTE_PREPROCESS",
        EXECUTE_DEVICE = 407 => "QNN_PROFILE_EVENTTYPE_EXECUTE_DEVICE",
        EXECUTE_POSTPROCESS = 408 => "QNN_PROFILE_EVENTTYPE_EXECUTE_POSTPROCESS",
        DEINIT = 500 => "QNN_PROFILE_EVENTTYPE_DEINIT",
        TRACE = 600 => "QNN_PROFILE_EVENTTYPE_TRACE",
        BACKEND = 1000 => "QNN_PROFILE_EVENTTYPE_BACKEND",
    }
}

c_enum! {
    /// Unit of a profile event's value (a `uint32_t` with `#define`d values in C).
    pub struct ProfileEventUnit = "QnnProfile_EventUnit_t" {
        MICROSEC = 1 => "QNN_PROFILE_EVENTUNIT_MICROSEC",
        BYTES = 2 => "QNN_PROFILE_EVENTUNIT_BYTES",
        CYCLES = 3 => "QNN_PROFILE_EVENTUNIT_CYCLES",
        COUNT = 4 => "QNN_PROFILE_EVENTUNIT_COUNT",
        OBJECT = 5 => "QNN_PROFILE_EVENTUNIT_OBJECT",
        NONE = 6 => "QNN_PROFILE_EVENTUNIT_NONE",
        BACKEND = 1000 => "QNN_PROFILE_EVENTUNIT_BACKEND",
    }
}

/// `QnnProfile_EventData_t`, filled in by `profileGetEventData`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ProfileEventData {
    /// `type`.
    pub event_type: ProfileEventType,
    /// `unit`.
    pub unit: ProfileEventUnit,
    /// `value`.
    pub value: u64,
    /// `identifier`: backend-owned NUL-terminated name of the event.
    pub identifier: *const c_char,
}
