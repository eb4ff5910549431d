//! Cicada's loosely synchronised per-worker clocks (Cicada section 3.1; CCBench section 2).
//!
//! Every worker draws timestamps from its own clock, a reading of one monotonic time source
//! (nanoseconds since the protocol was created), so no shared counter is touched per
//! transaction. A timestamp is the clock value with the worker id in its low bits, which makes
//! timestamps of different workers distinct:
//!
//! ```text
//!  63  62                                                    10 9                 0
//! +----+-------------------------------------------------------+-------------------+
//! | 0  | clock: ns since start (+ boost), strictly increasing   | worker id         |
//! +----+-------------------------------------------------------+-------------------+
//! ```
//!
//! Bit 63 stays clear: it is the record word's lock bit. A worker's clock never repeats a value
//! (the next value is at least the last plus one). After an abort the clock is boosted (Cicada's
//! clock boosting): the retry's timestamp is pushed a little into the future, so it is less
//! likely to be older than the transactions it conflicted with. Cicada's one-sided
//! synchronisation (copying a faster worker's clock now and then) is off, as CCBench ran it: the
//! shared time source keeps the clocks within a few microseconds of each other anyway.

use std::time::Instant;

/// Bits of a timestamp that hold the worker id (up to `config::MAX_WORKERS` = 1024 workers).
pub const WORKER_BITS: u32 = 10;

/// How far an aborted attempt's retry is pushed ahead, in nanoseconds (CCBench: one
/// microsecond's worth of clock cycles).
pub const BOOST_NS: u64 = 1_000;

/// The shared time source every worker clock reads.
pub struct TimeSource {
    origin: Instant,
}

impl TimeSource {
    /// A source starting now.
    pub fn new() -> Self {
        TimeSource {
            origin: Instant::now(),
        }
    }

    /// Nanoseconds since the source started, shifted into timestamp position (worker id 0):
    /// a lower bound of every timestamp any worker draws after this call.
    #[inline]
    pub fn now(&self) -> u64 {
        let ns = u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX >> 1);
        ns.min(u64::MAX >> (WORKER_BITS + 1)) << WORKER_BITS
    }
}

impl Default for TimeSource {
    fn default() -> Self {
        TimeSource::new()
    }
}

/// One worker's clock.
#[derive(Debug)]
pub struct WorkerClock {
    id: u64,
    /// The last timestamp drawn (0 before the first).
    last: u64,
    /// Clock boost in effect (timestamp units), set by an abort, cleared by a commit.
    boost: u64,
}

impl WorkerClock {
    /// The clock of worker `id` (`id < 2^WORKER_BITS`).
    pub fn new(id: usize) -> Self {
        assert!(id < 1 << WORKER_BITS, "Cicada: worker id {id} too large");
        WorkerClock {
            id: id as u64,
            last: 0,
            boost: 0,
        }
    }

    /// A new timestamp: at least `now` (a reading of the source), above every earlier one of
    /// this worker, with the worker id in its low bits.
    #[inline]
    pub fn next(&mut self, now: u64) -> u64 {
        let clock = (now + self.boost).max(self.last + (1 << WORKER_BITS)) >> WORKER_BITS;
        self.last = (clock << WORKER_BITS) | self.id;
        self.last
    }

    /// The attempt aborted: boost the next timestamps.
    #[inline]
    pub fn boost(&mut self) {
        self.boost = BOOST_NS << WORKER_BITS;
    }

    /// The attempt committed: no boost any more.
    #[inline]
    pub fn settle(&mut self) {
        self.boost = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_unique_increasing_and_carry_the_worker() {
        let source = TimeSource::new();
        let mut a = WorkerClock::new(3);
        let mut b = WorkerClock::new(5);
        let now = source.now();
        let (a1, b1) = (a.next(now), b.next(now));
        assert_ne!(a1, b1, "same reading, different workers");
        assert_eq!(a1 & ((1 << WORKER_BITS) - 1), 3);
        assert_eq!(b1 & ((1 << WORKER_BITS) - 1), 5);
        // The same reading again still gives a larger timestamp.
        let a2 = a.next(now);
        assert!(a2 > a1);
        assert!(a1 >= now);
        // A boost pushes the next timestamp at least a microsecond ahead of the reading.
        a.boost();
        let later = source.now();
        let a3 = a.next(later);
        assert!(a3 >= later + (BOOST_NS << WORKER_BITS));
        a.settle();
        assert!(
            a.next(later) > a3,
            "never backwards, even after the boost ends"
        );
        assert_eq!(a3 >> 63, 0);
    }
}
