//! The directory a log's segments and checkpoints are created, renamed and removed in: the file
//! system, or (tests) a simulated directory that loses what was not synced.
//!
//! Power loss keeps a file's synced bytes only ([`MemDevice`]), and a directory's entries only
//! as of its last sync: a file created, renamed or removed since is, after the crash, as it
//! was at that sync (the pessimistic reading of POSIX, which promises nothing more without the
//! directory's `fsync`). [`MemDirectory::crash`] returns exactly that: every entry of the last
//! directory sync, with its file's synced bytes. A checkpoint is written to a `.tmp`, synced,
//! renamed and the directory synced (`checkpoint` module docs), so a crash never leaves a
//! `.ckpt` that is not complete; `checkpoint/power_tests.rs` cuts a run with checkpoints at
//! random moments and at each of those steps.

use super::device::{LogDevice, MemDevice};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// A log directory's operations, by file name. Called by the flusher at a rotation and by the
/// checkpointer (never per operation), hence `dyn`.
pub trait Directory: Send + Sync {
    /// Creates `name` (it must not exist), empty, open for appending.
    fn create(&self, name: &str) -> io::Result<Box<dyn LogDevice>>;
    /// Renames `from` to `to`, replacing `to`.
    fn rename(&self, from: &str, to: &str) -> io::Result<()>;
    /// Removes `name`.
    fn remove(&self, name: &str) -> io::Result<()>;
    /// Makes the creations, renames and removals so far durable.
    fn sync(&self) -> io::Result<()>;
}

/// A directory of the file system.
#[derive(Debug, Clone)]
pub struct DiskDirectory(pub PathBuf);

impl Directory for DiskDirectory {
    fn create(&self, name: &str) -> io::Result<Box<dyn LogDevice>> {
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(self.0.join(name))?;
        Ok(Box::new(file))
    }

    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        std::fs::rename(self.0.join(from), self.0.join(to))
    }

    fn remove(&self, name: &str) -> io::Result<()> {
        std::fs::remove_file(self.0.join(name))
    }

    fn sync(&self) -> io::Result<()> {
        File::open(&self.0)?.sync_all()
    }
}

/// What a [`MemDirectory`] holds: its entries now, and as of its last sync.
#[derive(Debug, Default)]
struct MemEntries {
    now: BTreeMap<String, MemDevice>,
    synced: BTreeMap<String, MemDevice>,
}

/// A simulated directory of [`MemDevice`]s, shared between the log that writes it and the
/// test that crashes it.
#[derive(Debug, Clone, Default)]
pub struct MemDirectory(Arc<Mutex<MemEntries>>);

impl MemDirectory {
    /// What survives a power loss now: each entry of the last directory sync with its file's
    /// synced bytes. Every device is locked while it is read (lock order: the directory, then
    /// its devices; devices never take the directory's), so the cut is of one instant.
    pub fn crash(&self) -> BTreeMap<String, Vec<u8>> {
        let entries = self.0.lock().expect("directory lock");
        let devices: Vec<_> = entries
            .synced
            .iter()
            .map(|(name, d)| (name, d.0.lock().expect("device lock")))
            .collect();
        devices
            .iter()
            .map(|(name, s)| ((*name).clone(), s.written[..s.synced].to_vec()))
            .collect()
    }
}

impl Directory for MemDirectory {
    fn create(&self, name: &str) -> io::Result<Box<dyn LogDevice>> {
        let mut entries = self.0.lock().expect("directory lock");
        if entries.now.contains_key(name) {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                name.to_string(),
            ));
        }
        let device = MemDevice::default();
        entries.now.insert(name.to_string(), device.clone());
        Ok(Box::new(device))
    }

    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        let mut entries = self.0.lock().expect("directory lock");
        let device = entries
            .now
            .remove(from)
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, from.to_string()))?;
        entries.now.insert(to.to_string(), device);
        Ok(())
    }

    fn remove(&self, name: &str) -> io::Result<()> {
        let mut entries = self.0.lock().expect("directory lock");
        entries
            .now
            .remove(name)
            .map(|_| ())
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, name.to_string()))
    }

    fn sync(&self) -> io::Result<()> {
        let mut entries = self.0.lock().expect("directory lock");
        entries.synced = entries.now.clone();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crash_keeps_the_synced_entries_with_their_synced_bytes() {
        let dir = MemDirectory::default();
        let mut a = dir.create("a").unwrap();
        a.append(b"synced").unwrap();
        a.sync().unwrap();
        a.append(b" lost").unwrap();
        dir.sync().unwrap();
        let mut b = dir.create("b.tmp").unwrap();
        b.append(b"b").unwrap();
        b.sync().unwrap();
        dir.rename("b.tmp", "b").unwrap();
        // The rename is not durable yet: "b" is not there, nor was "b.tmp" ever.
        let cut = dir.crash();
        assert_eq!(cut.keys().collect::<Vec<_>>(), ["a"]);
        assert_eq!(cut["a"], b"synced");
        dir.sync().unwrap();
        assert_eq!(dir.crash()["b"], b"b");
        dir.remove("a").unwrap();
        assert!(
            dir.crash().contains_key("a"),
            "a removal is durable at the sync"
        );
    }
}
