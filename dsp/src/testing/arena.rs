//! Self-tests of the arena: alignment, the high-water mark, and refusals of what does not fit.

use crate::runtime::arena::{Arena, ArenaFull};

crate::self_tests! {
    fn arena_aligns_and_reports_its_high_water_mark() {
        let mut buffer = [0xAAu8; 256];
        let arena = Arena::new(&mut buffer);
        let first = arena.bytes(3, 1);
        check!(matches!(&first, Ok(b) if b.len() == 3 && b.iter().all(|&x| x == 0)));
        let aligned = arena.bytes(16, 64);
        check!(matches!(&aligned, Ok(b) if (b.as_ptr() as usize).is_multiple_of(64)));
        check!(arena.used() >= 19 && arena.used() <= 3 + 63 + 16);
        let words = arena.slice(4, 7u32);
        check!(matches!(&words, Ok(w) if w == &[7, 7, 7, 7] && (w.as_ptr() as usize).is_multiple_of(4)));
    }

    fn arena_refuses_what_does_not_fit() {
        let mut buffer = [0u8; 32];
        let arena = Arena::new(&mut buffer);
        check!(arena.bytes(33, 1).is_err());
        check!(arena.bytes(8, 3).is_err());
        check!(arena.bytes(32, 1).is_ok());
        let error = arena.bytes(1, 1);
        check!(matches!(error, Err(ArenaFull { requested: 1, available: 0, capacity: 32, .. })));
        check!(arena.slice(usize::MAX / 2, 0u64).is_err());
    }
}
