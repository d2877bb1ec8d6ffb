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
/// generated codec's `PLANS`, made at compile time, are plain read-only data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    id: u32,
    count: usize,
    params: [Planned; MAX_PARAMS],
    totals: Totals,
    in_buffers: usize,
    out_buffers: usize,
    scalars: u32,
    supported: bool,
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

impl Plan {
    /// Works out `method`'s layout; a method the codec cannot carry is planned as unsupported, with no
    /// parameters.
    pub const fn of(method: &Method) -> Plan {
        let unused = Planned { slot: Slot::PrimaryIn { offset: 0 }, direction: Direction::In, kind: Kind::Byte };
        let mut params = [unused; MAX_PARAMS];
        let supported = method.is_supported();
        let mut index = 0;
        while supported && index < method.params.len() {
            let Param { direction, kind, .. } = method.params[index];
            if let Some(slot) = method.slot(index) {
                params[index] = Planned { slot, direction, kind };
            }
            index += 1;
        }
        Plan {
            id: method.id,
            count: if supported { method.params.len() } else { 0 },
            params,
            totals: method.totals(),
            in_buffers: method.in_buffers(),
            out_buffers: method.out_buffers(),
            scalars: method.scalars(),
            supported,
        }
    }

    /// The method's id.
    pub const fn id(&self) -> u32 {
        self.id
    }

    /// Parameter `index`: its slot, direction and type; `None` past the last one.
    #[inline]
    pub fn param(&self, index: usize) -> Option<Planned> {
        self.params.get(..self.count)?.get(index).copied()
    }

    /// [`Method::slot`], looked up.
    #[inline]
    pub fn slot(&self, index: usize) -> Option<Slot> {
        self.param(index).map(|planned| planned.slot)
    }

    /// How many parameters the method has (0 for an unsupported plan).
    pub const fn param_count(&self) -> usize {
        self.count
    }

    /// [`Method::totals`].
    pub const fn totals(&self) -> Totals {
        self.totals
    }

    /// [`Method::in_buffers`].
    pub const fn in_buffers(&self) -> usize {
        self.in_buffers
    }

    /// [`Method::out_buffers`].
    pub const fn out_buffers(&self) -> usize {
        self.out_buffers
    }

    /// [`Method::scalars`].
    pub const fn scalars(&self) -> u32 {
        self.scalars
    }

    /// [`Method::is_supported`].
    pub const fn is_supported(&self) -> bool {
        self.supported
    }

    /// [`Method::primary_out_arg`].
    pub const fn primary_out_arg(&self) -> Option<usize> {
        if self.totals.primary_out_bytes > 0 {
            Some(self.in_buffers)
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
    fn a_method_without_parameters_has_no_buffers() {
        let nothing = Method { name: "ping", id: 5, params: &[] };
        assert_eq!(nothing.scalars(), 0x0500_0000);
        assert_eq!(nothing.slot(0), None);
    }
}
