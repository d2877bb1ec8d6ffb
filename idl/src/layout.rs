//! Method descriptions and qaic's layout rules: which buffer each parameter travels in, at which offset.
//!
//! - Buffers: [primary input][one per `in` sequence or string][primary output][one per `rout` sequence or string].
//! - The primary input holds every `in` scalar and, for every sequence or string (`in` or `rout`), a u32 element
//!   count (strings count their NUL; a `rout` count is the caller's capacity), in declaration order, each field
//!   naturally aligned. The primary output holds every `rout` scalar the same way. A primary buffer exists only
//!   when it has a field; its size is its last field's end rounded up to its largest alignment.

/// Whether a parameter goes to the callee or comes back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// `in`.
    In,
    /// `rout`.
    Rout,
}

/// A parameter's IDL type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `octet`, `int8`, `uint8`, `char`.
    Byte,
    /// `short`, `unsigned short`.
    Half,
    /// `long`, `unsigned long`, `int32`, `uint32`, `float`.
    Word,
    /// `long long`, `unsigned long long`, `int64`, `uint64`, `double`.
    Double,
    /// `sequence<T>` with elements of this many bytes.
    Sequence {
        /// Bytes per element.
        element_bytes: u32,
    },
    /// `string` (NUL-terminated; its count includes the NUL).
    String,
}

impl Kind {
    /// Size (and natural alignment) of a scalar; `None` for sequences and strings.
    pub const fn scalar_bytes(self) -> Option<usize> {
        match self {
            Kind::Byte => Some(1),
            Kind::Half => Some(2),
            Kind::Word => Some(4),
            Kind::Double => Some(8),
            Kind::Sequence { .. } | Kind::String => None,
        }
    }

    /// Bytes per element of a sequence or string; `None` for scalars.
    pub const fn element_bytes(self) -> Option<usize> {
        match self {
            Kind::Sequence { element_bytes } => Some(element_bytes as usize),
            Kind::String => Some(1),
            _ => None,
        }
    }
}

/// One parameter of a method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    /// Its name in the IDL.
    pub name: &'static str,
    /// `in` or `rout`.
    pub direction: Direction,
    /// Its type.
    pub kind: Kind,
}

/// One method of the interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Method {
    /// Its name in the IDL.
    pub name: &'static str,
    /// Method id (open 0, close 1, declared methods from 2).
    pub id: u32,
    /// Parameters in declaration order.
    pub params: &'static [Param],
}

/// Where a parameter travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// An `in` scalar at this offset of the primary input.
    PrimaryIn {
        /// Byte offset.
        offset: usize,
    },
    /// A `rout` scalar at this offset of the primary output.
    PrimaryOut {
        /// Byte offset.
        offset: usize,
    },
    /// A sequence or string in argument `arg`, its count at `count_offset` of the primary input.
    Buffer {
        /// Index into the `remote_arg` array.
        arg: usize,
        /// Byte offset of its u32 count in the primary input.
        count_offset: usize,
        /// `in` or `rout`.
        direction: Direction,
    },
}

/// Most buffers in one direction this codec handles (qaic allows 254; this interface needs 4).
pub const MAX_BUFFERS: usize = 8;
/// Largest primary buffer this codec handles.
pub const MAX_PRIMARY_BYTES: usize = 64;
/// Most parameters of one method this codec handles.
pub const MAX_PARAMS: usize = 8;

const fn align_up(offset: usize, align: usize) -> usize {
    offset.next_multiple_of(align)
}

/// Totals of a method's layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Totals {
    /// Bytes of the primary input (0: none).
    pub primary_in_bytes: usize,
    /// Bytes of the primary output (0: none).
    pub primary_out_bytes: usize,
    /// `in` sequences and strings.
    pub in_sequences: usize,
    /// `rout` sequences and strings.
    pub rout_sequences: usize,
}

impl Method {
    /// Walks the parameters, handing each its slot; returns the totals.
    const fn walk(&self, mut want: usize, found: &mut Option<Slot>) -> Totals {
        let (mut in_end, mut in_align, mut out_end, mut out_align) = (0usize, 1usize, 0usize, 1usize);
        let (mut in_sequences, mut rout_sequences) = (0usize, 0usize);
        let mut index = 0;
        while index < self.params.len() {
            let param = self.params[index];
            let slot = match (param.kind.scalar_bytes(), param.direction) {
                (Some(size), Direction::In) => {
                    let offset = align_up(in_end, size);
                    in_end = offset + size;
                    if size > in_align {
                        in_align = size;
                    }
                    Slot::PrimaryIn { offset }
                }
                (Some(size), Direction::Rout) => {
                    let offset = align_up(out_end, size);
                    out_end = offset + size;
                    if size > out_align {
                        out_align = size;
                    }
                    Slot::PrimaryOut { offset }
                }
                (None, direction) => {
                    let count_offset = align_up(in_end, 4);
                    in_end = count_offset + 4;
                    if 4 > in_align {
                        in_align = 4;
                    }
                    // Argument numbers are fixed up below, once the primary buffers' presence is known.
                    let arg = match direction {
                        Direction::In => {
                            in_sequences += 1;
                            in_sequences
                        }
                        Direction::Rout => {
                            rout_sequences += 1;
                            rout_sequences
                        }
                    };
                    Slot::Buffer { arg, count_offset, direction }
                }
            };
            if want == index {
                *found = Some(slot);
                want = usize::MAX;
            }
            index += 1;
        }
        Totals {
            primary_in_bytes: align_up(in_end, in_align),
            primary_out_bytes: align_up(out_end, out_align),
            in_sequences,
            rout_sequences,
        }
    }

    /// The method's layout totals.
    pub const fn totals(&self) -> Totals {
        self.walk(usize::MAX, &mut None)
    }

    /// Number of input buffers (primary input included).
    pub const fn in_buffers(&self) -> usize {
        let totals = self.totals();
        (totals.primary_in_bytes > 0) as usize + totals.in_sequences
    }

    /// Number of output buffers (primary output included).
    pub const fn out_buffers(&self) -> usize {
        let totals = self.totals();
        (totals.primary_out_bytes > 0) as usize + totals.rout_sequences
    }

    /// The `sc` word of a call to this method.
    pub const fn scalars(&self) -> u32 {
        crate::remote::Scalars {
            attributes: 0,
            method: self.id,
            in_buffers: self.in_buffers() as u32,
            out_buffers: self.out_buffers() as u32,
            in_handles: 0,
            out_handles: 0,
        }
        .word()
    }

    /// Where parameter `index` travels; `None` past the last parameter.
    pub const fn slot(&self, index: usize) -> Option<Slot> {
        let mut found = None;
        let totals = self.walk(index, &mut found);
        match found {
            Some(Slot::Buffer { arg, count_offset, direction: Direction::In }) => {
                let first = (totals.primary_in_bytes > 0) as usize;
                Some(Slot::Buffer { arg: first + arg - 1, count_offset, direction: Direction::In })
            }
            Some(Slot::Buffer { arg, count_offset, direction: Direction::Rout }) => {
                let first = self.in_buffers() + (totals.primary_out_bytes > 0) as usize;
                Some(Slot::Buffer { arg: first + arg - 1, count_offset, direction: Direction::Rout })
            }
            other => other,
        }
    }

    /// Whether the codec can carry this method (ids up to 30, parameters, buffers and primaries within its
    /// limits).
    pub const fn is_supported(&self) -> bool {
        let totals = self.totals();
        self.id < 31
            && self.params.len() <= MAX_PARAMS
            && self.in_buffers() <= MAX_BUFFERS
            && self.out_buffers() <= MAX_BUFFERS
            && totals.primary_in_bytes <= MAX_PRIMARY_BYTES
            && totals.primary_out_bytes <= MAX_PRIMARY_BYTES
    }

    /// Index of the primary output argument, if the method has one.
    pub const fn primary_out_arg(&self) -> Option<usize> {
        if self.totals().primary_out_bytes > 0 {
            Some(self.in_buffers())
        } else {
            None
        }
    }
}

/// A method's layout worked out once: every parameter's slot, direction and type, the totals and the buffer
/// counts, so that a call looks each one up instead of walking the parameters again. Holds no pointer, so the
/// generated codec's `PLANS`, made at compile time, are plain read-only data, 48 bytes each: but for the id and the
/// `sc` word, every value is stored in a byte ([`Plan::of`] checks that each one fits), and the accessors widen
/// them again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    id: u32,
    scalars: u32,
    params: [Packed; MAX_PARAMS],
    count: u8,
    primary_in_bytes: u8,
    primary_out_bytes: u8,
    in_sequences: u8,
    rout_sequences: u8,
    in_buffers: u8,
    out_buffers: u8,
    supported: bool,
}

/// A sequence or string parameter as a [`Plan`] answers it for the codec: where it travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferParam {
    /// Index into the `remote_arg` array.
    pub arg: usize,
    /// Byte offset of its u32 count in the primary input.
    pub count_offset: usize,
    /// Bytes per element (1 for a string).
    pub element_bytes: usize,
    /// Whether it is a `rout` one.
    pub output: bool,
    /// Whether it is a string (NUL-terminated).
    pub string: bool,
}

/// One parameter as a [`Plan`] answers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Planned {
    /// Where it travels.
    pub slot: Slot,
    /// `in` or `rout`.
    pub direction: Direction,
    /// Its type.
    pub kind: Kind,
}

/// One parameter as a [`Plan`] stores it, in four bytes. A slot's direction is its parameter's, so one tag says
/// both; `offset` is a primary scalar's offset or a buffer's count offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Packed {
    /// The slot's tag ([`PRIMARY_IN`], [`PRIMARY_OUT`], [`BUFFER_IN`] or [`BUFFER_ROUT`]) in the high four bits;
    /// the kind's position in [`Kind`]'s declaration (byte, half, word, double, sequence, string) in the low four.
    tag: u8,
    /// Byte offset in the primary buffer (the scalar's, or the count's).
    offset: u8,
    /// Index into the `remote_arg` array (buffers only).
    arg: u8,
    /// Bytes per element of a sequence (0 for every other kind).
    element_bytes: u8,
}

const PRIMARY_IN: u8 = 0;
const PRIMARY_OUT: u8 = 1;
const BUFFER_IN: u8 = 2;
const BUFFER_ROUT: u8 = 3;
/// The kind codes of a sequence and a string (a scalar's is log2 of its bytes: byte 0, half 1, word 2, double 3).
const SEQUENCE: u8 = 4;
const STRING: u8 = 5;

/// `value` in a byte, if it fits.
const fn byte(value: usize) -> Option<u8> {
    if value <= u8::MAX as usize {
        Some(value as u8)
    } else {
        None
    }
}

impl Packed {
    const UNUSED: Packed = Packed { tag: PRIMARY_IN << 4, offset: 0, arg: 0, element_bytes: 0 };

    /// `slot` and `kind` in bytes; `None` when a value does not fit.
    const fn of(slot: Slot, kind: Kind) -> Option<Packed> {
        let (slot, offset, arg) = match slot {
            Slot::PrimaryIn { offset } => (PRIMARY_IN, offset, 0),
            Slot::PrimaryOut { offset } => (PRIMARY_OUT, offset, 0),
            Slot::Buffer { arg, count_offset, direction: Direction::In } => (BUFFER_IN, count_offset, arg),
            Slot::Buffer { arg, count_offset, direction: Direction::Rout } => (BUFFER_ROUT, count_offset, arg),
        };
        let (kind, element_bytes) = match kind {
            Kind::Byte => (0, 0),
            Kind::Half => (1, 0),
            Kind::Word => (2, 0),
            Kind::Double => (3, 0),
            Kind::Sequence { element_bytes } => (SEQUENCE, element_bytes as usize),
            Kind::String => (STRING, 0),
        };
        let (Some(offset), Some(arg), Some(element_bytes)) = (byte(offset), byte(arg), byte(element_bytes)) else {
            return None;
        };
        Some(Packed { tag: slot << 4 | kind, offset, arg, element_bytes })
    }

    /// The parameter in full.
    #[inline]
    const fn planned(self) -> Planned {
        let (offset, arg) = (self.offset as usize, self.arg as usize);
        let (slot, direction) = match self.tag >> 4 {
            PRIMARY_IN => (Slot::PrimaryIn { offset }, Direction::In),
            PRIMARY_OUT => (Slot::PrimaryOut { offset }, Direction::Rout),
            BUFFER_IN => (Slot::Buffer { arg, count_offset: offset, direction: Direction::In }, Direction::In),
            _ => (Slot::Buffer { arg, count_offset: offset, direction: Direction::Rout }, Direction::Rout),
        };
        let kind = match self.tag & 0xF {
            0 => Kind::Byte,
            1 => Kind::Half,
            2 => Kind::Word,
            3 => Kind::Double,
            SEQUENCE => Kind::Sequence { element_bytes: self.element_bytes as u32 },
            _ => Kind::String,
        };
        Planned { slot, direction, kind }
    }
}

impl Plan {
    /// Works out `method`'s layout. A method the codec cannot carry ([`Method::is_supported`]), or one with a
    /// value too large for its byte (a sequence's elements over 255 bytes), is planned as unsupported: with its
    /// id and `sc` word, but no parameters, buffers or primary bytes.
    pub const fn of(method: &Method) -> Plan {
        let mut plan = Plan {
            id: method.id,
            scalars: method.scalars(),
            params: [Packed::UNUSED; MAX_PARAMS],
            count: 0,
            primary_in_bytes: 0,
            primary_out_bytes: 0,
            in_sequences: 0,
            rout_sequences: 0,
            in_buffers: 0,
            out_buffers: 0,
            supported: false,
        };
        if !method.is_supported() {
            return plan;
        }
        let mut index = 0;
        while index < method.params.len() {
            let packed = match method.slot(index) {
                Some(slot) => Packed::of(slot, method.params[index].kind),
                None => None,
            };
            let Some(packed) = packed else { return plan };
            plan.params[index] = packed;
            index += 1;
        }
        let totals = method.totals();
        let counts = [method.params.len(), method.in_buffers(), method.out_buffers()];
        let (Some(count), Some(in_buffers), Some(out_buffers)) = (byte(counts[0]), byte(counts[1]), byte(counts[2]))
        else {
            return plan;
        };
        let (Some(primary_in_bytes), Some(primary_out_bytes), Some(in_sequences), Some(rout_sequences)) = (
            byte(totals.primary_in_bytes),
            byte(totals.primary_out_bytes),
            byte(totals.in_sequences),
            byte(totals.rout_sequences),
        ) else {
            return plan;
        };
        Plan {
            count,
            primary_in_bytes,
            primary_out_bytes,
            in_sequences,
            rout_sequences,
            in_buffers,
            out_buffers,
            supported: true,
            ..plan
        }
    }

    /// The method's id.
    pub const fn id(&self) -> u32 {
        self.id
    }

    /// Parameter `index`: its slot, direction and type; `None` past the last one.
    #[inline]
    pub fn param(&self, index: usize) -> Option<Planned> {
        self.params.get(..self.count as usize)?.get(index).map(|packed| packed.planned())
    }

    /// Parameter `index` as stored; `None` past the last one.
    #[inline]
    fn packed(&self, index: usize) -> Option<Packed> {
        self.params.get(..self.count as usize)?.get(index).copied()
    }

    /// The primary-buffer offset of scalar `index` when it is an `in` (`output` false) or `rout` (`output` true)
    /// scalar of `bytes` bytes (1, 2, 4 or 8); `None` otherwise. Answered from the stored bytes in one comparison,
    /// for the codec's accessors, which run on every call.
    #[inline]
    pub fn scalar_offset(&self, index: usize, output: bool, bytes: usize) -> Option<usize> {
        let slot = if output { PRIMARY_OUT } else { PRIMARY_IN };
        let packed = self.packed(index)?;
        (bytes.is_power_of_two() && bytes <= 8 && packed.tag == slot << 4 | bytes.trailing_zeros() as u8)
            .then_some(packed.offset as usize)
    }

    /// Sequence or string `index` when it travels `in` (`output` false) or `rout` (`output` true): its argument,
    /// the offset of its count in the primary input and its bytes per element; `None` otherwise.
    #[inline]
    pub fn sequence(&self, index: usize, output: bool) -> Option<(usize, usize, usize)> {
        self.buffer_param(index)
            .filter(|buffer| buffer.output == output)
            .map(|buffer| (buffer.arg, buffer.count_offset, buffer.element_bytes))
    }

    /// Parameter `index` when it travels in a buffer of its own (a sequence or string, either way).
    #[inline]
    pub fn buffer_param(&self, index: usize) -> Option<BufferParam> {
        let packed = self.packed(index)?;
        let element_bytes = match packed.tag & 0xF {
            SEQUENCE => packed.element_bytes as usize,
            STRING => 1,
            _ => return None,
        };
        let output = match packed.tag >> 4 {
            BUFFER_IN => false,
            BUFFER_ROUT => true,
            _ => return None,
        };
        let (arg, count_offset) = (packed.arg as usize, packed.offset as usize);
        Some(BufferParam { arg, count_offset, element_bytes, output, string: packed.tag & 0xF == STRING })
    }

    /// Whether parameter `index` is a string.
    #[inline]
    pub fn is_string(&self, index: usize) -> bool {
        self.packed(index).is_some_and(|packed| packed.tag & 0xF == STRING)
    }

    /// [`Method::slot`], looked up.
    #[inline]
    pub fn slot(&self, index: usize) -> Option<Slot> {
        self.param(index).map(|planned| planned.slot)
    }

    /// How many parameters the method has (0 for an unsupported plan).
    pub const fn param_count(&self) -> usize {
        self.count as usize
    }

    /// [`Method::totals`] (all 0 for an unsupported plan).
    pub const fn totals(&self) -> Totals {
        Totals {
            primary_in_bytes: self.primary_in_bytes as usize,
            primary_out_bytes: self.primary_out_bytes as usize,
            in_sequences: self.in_sequences as usize,
            rout_sequences: self.rout_sequences as usize,
        }
    }

    /// [`Method::in_buffers`] (0 for an unsupported plan).
    pub const fn in_buffers(&self) -> usize {
        self.in_buffers as usize
    }

    /// [`Method::out_buffers`] (0 for an unsupported plan).
    pub const fn out_buffers(&self) -> usize {
        self.out_buffers as usize
    }

    /// [`Method::scalars`].
    pub const fn scalars(&self) -> u32 {
        self.scalars
    }

    /// Whether the codec carries the method: [`Method::is_supported`], and every value fits the plan.
    pub const fn is_supported(&self) -> bool {
        self.supported
    }

    /// [`Method::primary_out_arg`] (`None` for an unsupported plan).
    pub const fn primary_out_arg(&self) -> Option<usize> {
        if self.primary_out_bytes > 0 {
            Some(self.in_buffers as usize)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn p(name: &'static str, direction: Direction, kind: Kind) -> Param {
        Param { name, direction, kind }
    }

    #[test]
    fn calculator_sum_matches_qaic() {
        // long sum(in sequence<long> vec, rout long long res): method 2, sc 0x02020100.
        const PARAMS: &[Param] =
            &[p("vec", Direction::In, Kind::Sequence { element_bytes: 4 }), p("res", Direction::Rout, Kind::Double)];
        let sum = Method { name: "sum", id: 2, params: PARAMS };
        assert_eq!(sum.scalars(), 0x0202_0100);
        assert_eq!(sum.slot(0), Some(Slot::Buffer { arg: 1, count_offset: 0, direction: Direction::In }));
        assert_eq!(sum.slot(1), Some(Slot::PrimaryOut { offset: 0 }));
        assert_eq!(sum.primary_out_arg(), Some(2));
    }

    #[test]
    fn probe_interface_matches_what_qaic_generated() {
        const LOAD: &[Param] = &[
            p("binary", Direction::In, Kind::Sequence { element_bytes: 1 }),
            p("path", Direction::In, Kind::String),
            p("context_id", Direction::Rout, Kind::Word),
        ];
        let load = Method { name: "load", id: 2, params: LOAD };
        assert_eq!(load.scalars(), 0x0203_0100);
        assert_eq!(load.totals().primary_in_bytes, 8);
        assert_eq!(load.slot(1), Some(Slot::Buffer { arg: 2, count_offset: 4, direction: Direction::In }));
        assert_eq!(load.primary_out_arg(), Some(3));

        const EXECUTE: &[Param] = &[
            p("graph", Direction::In, Kind::Word),
            p("inputs", Direction::In, Kind::Sequence { element_bytes: 1 }),
            p("outputs", Direction::Rout, Kind::Sequence { element_bytes: 1 }),
            p("dsp_ticks", Direction::Rout, Kind::Double),
        ];
        let execute = Method { name: "execute", id: 3, params: EXECUTE };
        assert_eq!(execute.scalars(), 0x0302_0200);
        assert_eq!(execute.totals().primary_in_bytes, 12);
        assert_eq!(execute.totals().primary_out_bytes, 8);
        assert_eq!(execute.slot(1), Some(Slot::Buffer { arg: 1, count_offset: 4, direction: Direction::In }));
        assert_eq!(execute.primary_out_arg(), Some(2));
        assert_eq!(execute.slot(2), Some(Slot::Buffer { arg: 3, count_offset: 8, direction: Direction::Rout }));

        const UNLOAD: &[Param] = &[p("context_id", Direction::In, Kind::Word)];
        assert_eq!(Method { name: "unload", id: 4, params: UNLOAD }.scalars(), 0x0401_0000);
    }

    #[test]
    fn a_plan_answers_what_the_method_works_out() {
        const PARAMS: &[Param] = &[
            p("graph", Direction::In, Kind::Word),
            p("inputs", Direction::In, Kind::Sequence { element_bytes: 1 }),
            p("outputs", Direction::Rout, Kind::Sequence { element_bytes: 1 }),
            p("dsp_ticks", Direction::Rout, Kind::Double),
        ];
        const EXECUTE: Method = Method { name: "execute", id: 3, params: PARAMS };
        const PLAN: Plan = Plan::of(&EXECUTE);
        for index in 0..=PARAMS.len() {
            assert_eq!(PLAN.slot(index), EXECUTE.slot(index), "parameter {index}");
            let param = PARAMS.get(index).map(|param| (param.direction, param.kind));
            assert_eq!(PLAN.param(index).map(|planned| (planned.direction, planned.kind)), param, "parameter {index}");
        }
        const EVERY_KIND: &[Param] = &[
            p("byte", Direction::In, Kind::Byte),
            p("half", Direction::In, Kind::Half),
            p("text", Direction::In, Kind::String),
            p("words", Direction::Rout, Kind::Sequence { element_bytes: 4 }),
            p("double", Direction::Rout, Kind::Double),
        ];
        let every = Method { name: "every", id: 5, params: EVERY_KIND };
        let plan = Plan::of(&every);
        for (index, param) in EVERY_KIND.iter().enumerate() {
            let expected = Planned { slot: every.slot(index).unwrap(), direction: param.direction, kind: param.kind };
            assert_eq!(plan.param(index), Some(expected), "{}", param.name);
        }
        assert_eq!((PLAN.totals(), PLAN.scalars(), PLAN.primary_out_arg()), (EXECUTE.totals(), 0x0302_0200, Some(2)));
        assert_eq!((PLAN.in_buffers(), PLAN.out_buffers(), PLAN.is_supported()), (2, 2, true));
        const MANY: [Param; MAX_PARAMS + 1] = [p("word", Direction::In, Kind::Word); MAX_PARAMS + 1];
        let too_many = Method { name: "many", id: 4, params: &MANY };
        assert!(!too_many.is_supported() && !Plan::of(&too_many).is_supported());
    }

    #[test]
    fn a_value_too_large_for_its_byte_plans_the_method_as_unsupported() {
        assert_eq!(core::mem::size_of::<Plan>(), 48);
        const LARGEST: &[Param] = &[
            p("first", Direction::Rout, Kind::Sequence { element_bytes: 255 }),
            p("code", Direction::Rout, Kind::Double),
        ];
        let largest = Method { name: "largest", id: 30, params: LARGEST };
        let plan = Plan::of(&largest);
        assert!(plan.is_supported());
        let first = Planned { slot: largest.slot(0).unwrap(), direction: Direction::Rout, kind: LARGEST[0].kind };
        assert_eq!((plan.param(0), plan.slot(1), plan.id()), (Some(first), largest.slot(1), 30));
        assert_eq!((plan.totals(), plan.primary_out_arg()), (largest.totals(), largest.primary_out_arg()));

        const TOO_LARGE: &[Param] = &[p("blocks", Direction::In, Kind::Sequence { element_bytes: 256 })];
        let too_large = Method { name: "too_large", id: 6, params: TOO_LARGE };
        let plan = Plan::of(&too_large);
        assert!(too_large.is_supported() && !plan.is_supported());
        assert_eq!((plan.id(), plan.scalars()), (6, too_large.scalars()));
        assert_eq!((plan.param_count(), plan.param(0), plan.in_buffers(), plan.out_buffers()), (0, None, 0, 0));
        assert_eq!((plan.totals().primary_in_bytes, plan.primary_out_arg()), (0, None));
    }

    #[test]
    fn a_method_without_parameters_has_no_buffers() {
        let nothing = Method { name: "ping", id: 5, params: &[] };
        assert_eq!(nothing.scalars(), 0x0500_0000);
        assert_eq!(nothing.slot(0), None);
    }
}
