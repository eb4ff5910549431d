//! A transaction program of your own, run unchanged in process and over the wire.
//!
//! `Transfers` is a workload written outside the crate: accounts of 16 bytes (a balance, and a
//! count of transfers), and a program that moves money between two of them. The program is
//! generic over `TxnOps`, the operations both the local engine's `Txn` and an interactive
//! session's `RemoteTxn` implement, so the same function runs
//!
//! 1. in process, on the thread executor (`exec::run_threads`), and
//! 2. interactively: a server on a loopback port, clients sending each operation to it and
//!    waiting for the reply (`exec::interactive::loopback::run_loopback`), as `txbench run
//!    --interactive` does for the built-in workloads.
//!
//! Both runs end with the money conserved, which `main` checks.
//!
//! ```sh
//! cargo run --release --example own_program
//! ```

use std::future::Future;
use std::process::ExitCode;
use std::time::Duration;
use txbench::config::ExecConfig;
use txbench::exec::interactive::loopback::run_loopback;
use txbench::exec::run_threads;
use txbench::ids::{RecordId, TableId};
use txbench::protocol::silo::Silo;
use txbench::protocol::{Abort, Protocol, ProtocolOptions};
use txbench::random::FastRng;
use txbench::storage::{Database, TableSpec};
use txbench::txn::TxnOps;
use txbench::workload::Workload;

const ACCOUNTS: TableId = TableId(0);
const START_BALANCE: u64 = 1_000;

/// Transfers between `accounts` accounts.
struct Transfers {
    accounts: u64,
}

/// One transfer: `amount` from `from` to `to`.
#[derive(Default)]
struct Transfer {
    from: u64,
    to: u64,
    amount: u64,
}

fn balance(row: &[u8]) -> u64 {
    u64::from_le_bytes(row[..8].try_into().expect("8 bytes"))
}

/// The program: written once, over any handle.
async fn transfer<Tx: TxnOps>(tx: &mut Tx, t: &Transfer) -> Result<(), Abort> {
    let available = balance(tx.read(ACCOUNTS, RecordId(t.from)).await?);
    if available < t.amount {
        return Ok(()); // nothing to move: commits as a read-only transaction
    }
    for (account, add) in [(t.from, false), (t.to, true)] {
        tx.update(ACCOUNTS, RecordId(account), |row| {
            let b = balance(row);
            let b = if add { b + t.amount } else { b - t.amount };
            row[..8].copy_from_slice(&b.to_le_bytes());
            let n = u64::from_le_bytes(row[8..16].try_into().expect("8 bytes")) + 1;
            row[8..16].copy_from_slice(&n.to_le_bytes());
        })
        .await?;
    }
    Ok(())
}

impl Workload for Transfers {
    type Request = Transfer;

    fn name(&self) -> &'static str {
        "transfers"
    }

    fn tables(&self) -> Vec<TableSpec> {
        vec![TableSpec {
            name: "accounts".into(),
            records: self.accounts,
            payload_bytes: 16,
        }]
    }

    fn load<M: Sync>(&self, db: &Database<M>) {
        let mut row = [0u8; 16];
        row[..8].copy_from_slice(&START_BALANCE.to_le_bytes());
        for i in 0..self.accounts {
            db.table(ACCOUNTS)
                .get(RecordId(i))
                .expect("within the table")
                .payload
                .store(&row);
        }
    }

    fn new_request(&self) -> Transfer {
        Transfer::default()
    }

    fn generate(&self, _worker: usize, rng: &mut FastRng, req: &mut Transfer) {
        req.from = rng.below(self.accounts);
        req.to = (req.from + 1 + rng.below(self.accounts - 1)) % self.accounts;
        req.amount = 1 + rng.below(50);
    }

    fn txn_types(&self) -> &'static [&'static str] {
        &["transfer"]
    }

    fn txn_type(&self, _req: &Transfer) -> usize {
        0
    }

    fn run<'a, Tx: TxnOps>(
        &'a self,
        tx: &'a mut Tx,
        req: &'a Transfer,
    ) -> impl Future<Output = Result<(), Abort>> + 'a {
        transfer(tx, req)
    }
}

/// The money in every account, which transfers conserve.
fn total<M: Sync>(db: &Database<M>, accounts: u64) -> u64 {
    let mut row = [0u8; 16];
    (0..accounts)
        .map(|i| {
            db.table(ACCOUNTS)
                .get(RecordId(i))
                .expect("within the table")
                .payload
                .load(&mut row);
            balance(&row)
        })
        .sum()
}

/// Runs the workload on a fresh database, in process or interactively; returns the commits.
fn run(interactive: bool) -> Result<u64, String> {
    let workload = Transfers { accounts: 32 };
    let cfg = ExecConfig {
        threads: 4,
        duration: Duration::from_millis(300),
        warmup: Duration::ZERO,
        seed: 1,
        record_history: false,
        check_limit_ops: 0,
        adaptive_backoff: false,
        read_phase_extension_ns: 0,
        pin_threads: false,
        core_slice: std::time::Duration::ZERO,
        core_seats: false,
    };
    let protocol = Silo::new(&ProtocolOptions {
        threads: cfg.threads,
        ..ProtocolOptions::default()
    });
    let db: Database<<Silo as Protocol>::RecordMeta> = Database::new(&workload.tables());
    workload.load(&db);
    let outcome = if interactive {
        run_loopback(&protocol, &db, &workload, &cfg, Duration::ZERO)
            .map_err(|e| e.to_string())?
            .clients
            .exec
    } else {
        run_threads(&protocol, &db, &workload, &cfg)
    };
    let money = total(&db, workload.accounts);
    if money != workload.accounts * START_BALANCE {
        return Err(format!("money not conserved: {money}"));
    }
    Ok(outcome
        .workers
        .iter()
        .flat_map(|w| &w.types)
        .map(|t| t.commits)
        .sum())
}

fn main() -> ExitCode {
    for interactive in [false, true] {
        let how = if interactive {
            "over loopback sessions"
        } else {
            "in process"
        };
        match run(interactive) {
            Ok(commits) => println!("{how}: {commits} transfers committed, money conserved"),
            Err(e) => {
                eprintln!("{how}: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
