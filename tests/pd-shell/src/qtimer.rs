//! The aDSP's QTimer (19.2 MHz) from a monotonic clock's seconds and nanoseconds.

/// QTimer ticks per second.
pub const TICKS_PER_SECOND: u64 = 19_200_000;

/// Ticks of a 19.2 MHz timer after `seconds` and `nanoseconds` (ns × 24 / 1250, computed per part so that
/// nothing overflows for thousands of years of uptime).
pub fn ticks(seconds: u64, nanoseconds: u64) -> u64 {
    seconds.wrapping_mul(TICKS_PER_SECOND).wrapping_add(nanoseconds % 1_000_000_000 * 24 / 1250)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_19_2_per_microsecond() {
        assert_eq!(ticks(0, 0), 0);
        assert_eq!(ticks(1, 0), 19_200_000);
        assert_eq!(ticks(0, 1_000), 19);
        assert_eq!(ticks(0, 999_999_999), 19_199_999);
        let century = 100 * 365 * 24 * 3600;
        assert_eq!(ticks(century, 500_000_000), century * 19_200_000 + 9_600_000);
    }
}
