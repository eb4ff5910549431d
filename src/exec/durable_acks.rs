//! The durable acknowledgement of logged commits, as both executors give it: a commit that
//! wrote is acknowledged only once the log's durable frontier reaches its epoch, and its
//! durable latency (first attempt's start to acknowledgement) is recorded apart from the commit
//! latency (`WorkerStats::durable_latency`).
//!
//! Group commit does not hold a worker: it queues the commit and runs its next transaction
//! while earlier ones wait for their epoch (SiloR); each later commit acknowledges, in commit
//! order, every queued one the frontier has passed, so a latency is taken at most one
//! transaction late. `--log-sync txn` waits for a flush the commit itself starts, which blocks
//! the thread: the coroutine executor refuses it (its thread's other transactions would stop,
//! and one of them may hold the very epoch the flush must close).

use crate::log::{LogSync, Logger};
use crate::metrics::WorkerStats;
use std::collections::VecDeque;
use std::time::Instant;

/// A commit waiting for the log's durable frontier to reach its epoch.
#[derive(Clone, Copy)]
struct PendingAck {
    epoch: u64,
    /// The protocol worker that committed it (`--log-acks` lists per worker).
    worker: usize,
    txn_id: u64,
    /// Where its latency counts from.
    first_start: Instant,
    /// Measured (its latency is recorded).
    counted: bool,
}

/// One executor thread's commits waiting for their durable acknowledgement, oldest first.
pub struct DurableAcks {
    pending: VecDeque<PendingAck>,
}

impl Default for DurableAcks {
    fn default() -> Self {
        DurableAcks {
            pending: VecDeque::with_capacity(1024),
        }
    }
}

/// The commit a worker just made, for [`DurableAcks::queue`].
pub struct Committed {
    /// The protocol worker.
    pub worker: usize,
    /// Its transaction id.
    pub txn_id: u64,
    /// The epoch it committed in (`Txn::take_committed_epoch`); `None`: it wrote nothing
    /// logged, and has nothing to wait for.
    pub epoch: Option<u64>,
    /// Its first attempt's start.
    pub first_start: Instant,
    /// Whether it ended inside the measured window.
    pub counted: bool,
}

impl DurableAcks {
    /// After a commit: queues it (with `--log-sync txn`, first waits for a flush it starts),
    /// then acknowledges every queued commit the durable frontier has reached.
    pub fn queue(&mut self, log: &Logger, c: Committed, stats: &mut WorkerStats) {
        if let Some(epoch) = c.epoch {
            if log.sync_mode() == LogSync::Txn && !log.wait_durable(epoch) {
                return; // the log failed: never acknowledged
            }
            self.pending.push_back(PendingAck {
                epoch,
                worker: c.worker,
                txn_id: c.txn_id,
                first_start: c.first_start,
                counted: c.counted,
            });
        }
        self.acknowledge(log, stats);
    }

    /// Acknowledges the queued commits at or below the durable frontier, in commit order.
    pub fn acknowledge(&mut self, log: &Logger, stats: &mut WorkerStats) {
        let durable = log.acknowledged_through();
        let now = Instant::now();
        while let Some(a) = self.pending.front().copied() {
            if a.epoch > durable {
                break;
            }
            self.pending.pop_front();
            log.acknowledged(a.worker, a.txn_id, a.epoch);
            if a.counted {
                stats
                    .durable_latency
                    .saturating_record(super::thread::nanos(now - a.first_start).max(1));
            }
        }
    }

    /// At the end of the run: waits until every queued commit is durable and acknowledges it
    /// (or, if the log failed, drops them unacknowledged). It blocks the thread: call it when
    /// nothing else runs on the thread (a coroutine thread's slots have all finished).
    pub fn drain(&mut self, log: &Logger, stats: &mut WorkerStats) {
        // What is durable already is acknowledged even if the log fails while we wait.
        self.acknowledge(log, stats);
        if let Some(last) = self.pending.back()
            && !log.wait_durable(last.epoch)
        {
            self.pending.clear();
            return;
        }
        self.acknowledge(log, stats);
    }
}
