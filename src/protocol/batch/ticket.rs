//! A worker's place in the batches: the batch it is a member of, the last one it took part in,
//! and its transaction's first batch (which orders it within later ones).

/// Ranks give the age this many batches at most; older transactions tie on age and are ordered
/// by worker id.
const AGE_CAP: u64 = (1 << 14) - 1;
/// Bits of the worker id in a rank (a run has at most 1024 workers).
const WORKER_BITS: u32 = 10;
/// Ranks are below this (24 bits: what a reservation word keeps beside a 40-bit batch id).
pub const RANK_LIMIT: u32 = 1 << 24;

/// One worker's ticket ([`Batches::register`](super::Batches::register)).
#[derive(Debug)]
pub struct BatchTicket {
    /// The worker's id (its rank's last part).
    worker: u32,
    /// The batch the worker is a member of now (0: none).
    pub(super) batch: u64,
    /// How many members joined that batch before this one (its place in the sequencer's
    /// arrival order).
    position: u32,
    /// The last batch the worker was a member of (it waits for a later one).
    pub(super) last: u64,
    /// The current transaction's first batch (0: it has not joined one yet); kept across its
    /// retries.
    first: u64,
    /// The worker is not live: it left ([`Batches::leave`](super::Batches::leave)) for good,
    /// or until it [rejoins](super::Batches::rejoin) (away between transactions).
    pub(super) left: bool,
}

impl BatchTicket {
    pub(super) fn new(worker: usize) -> Self {
        BatchTicket {
            worker: (worker as u32) & ((1 << WORKER_BITS) - 1),
            batch: 0,
            position: 0,
            last: 0,
            first: 0,
            left: false,
        }
    }

    pub(super) fn joined(&mut self, batch: u64, position: u64) {
        self.batch = batch;
        self.position = position as u32;
        self.last = batch;
        if self.first == 0 {
            self.first = batch;
        }
    }

    /// A new transaction starts (not a retry): its age counts from the batch it joins next.
    pub fn new_transaction(&mut self) {
        self.first = 0;
    }

    /// The worker's id (the last part of its rank; ids past 1023 wrap).
    pub fn worker(&self) -> usize {
        self.worker as usize
    }

    /// The batch the worker is a member of (0: none).
    pub fn batch(&self) -> u64 {
        self.batch
    }

    /// How many members joined the ticket's batch before it: the batch in arrival order, as a
    /// sequencer appends transactions to it (batched Calvin's order). Unique within a batch,
    /// `0..members`, and fixed once the member joined.
    pub fn position(&self) -> u32 {
        debug_assert!(self.batch != 0, "placed within a batch");
        self.position
    }

    /// The member's place in its batch, lower first: its transaction's age in batches (older
    /// first, capped at 16383 batches), then its worker id. Unique within a batch (one member
    /// per worker), and the same whatever order the members joined in.
    pub fn rank(&self) -> u32 {
        debug_assert!(self.batch != 0, "ranked within a batch");
        let age = (self.batch - self.first).min(AGE_CAP);
        (((AGE_CAP - age) << WORKER_BITS) as u32) | self.worker
    }
}
