//! Where a log file's bytes go: a real file, or (tests) a simulated device that loses what was
//! not synced.
//!
//! A SIGKILL keeps the page cache, so killing a process never loses a written byte; power loss
//! does. [`MemDevice`] keeps written and synced bytes apart (LazyFS's idea): [`MemDevice::crash`]
//! returns what survives power loss (the synced prefix), and a test can then tear the tail at
//! every offset or fail writes (a full disk) at a chosen byte.

use std::fs::File;
use std::io::{self, Write};
use std::sync::{Arc, Mutex};

/// An append-only log device. Called only by the flusher (never per operation), hence `dyn`.
pub trait LogDevice: Send {
    /// Appends `bytes` (all of them, or an error).
    fn append(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// Makes everything appended so far durable (`fdatasync` for a file).
    fn sync(&mut self) -> io::Result<()>;
    /// Appends `parts` one after another (all of them, or an error): a log's flush writes
    /// several workers' buffers and a marker.
    fn append_parts(&mut self, parts: &[&[u8]]) -> io::Result<()> {
        parts.iter().try_for_each(|p| self.append(p))
    }
}

impl LogDevice for File {
    fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.write_all(bytes)
    }

    /// One `writev` for all the parts where the kernel takes them whole (it takes up to
    /// `IOV_MAX` slices and may write fewer bytes; the loop goes on from there).
    fn append_parts(&mut self, parts: &[&[u8]]) -> io::Result<()> {
        let mut slices: Vec<io::IoSlice> = parts.iter().map(|p| io::IoSlice::new(p)).collect();
        let mut rest = slices.as_mut_slice();
        while !rest.is_empty() {
            match self.write_vectored(rest) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => io::IoSlice::advance_slices(&mut rest, n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn sync(&mut self) -> io::Result<()> {
        self.sync_data()
    }
}

/// What a [`MemDevice`] holds: every byte appended, how many were synced, and where writes
/// start failing.
#[derive(Debug, Default)]
pub struct MemState {
    /// Every byte appended (the page cache's view).
    pub written: Vec<u8>,
    /// Bytes known to be on the medium.
    pub synced: usize,
    /// A write that would pass this many bytes fails with `StorageFull` after writing up to it
    /// (a full disk); `None` for no limit.
    pub capacity: Option<usize>,
    /// Syncs done.
    pub syncs: u64,
}

/// A simulated device shared between the log that writes it and the test that crashes it.
#[derive(Debug, Clone, Default)]
pub struct MemDevice(pub Arc<Mutex<MemState>>);

impl MemDevice {
    /// An empty device that fails writes past `capacity` bytes.
    pub fn with_capacity(capacity: Option<usize>) -> Self {
        let d = MemDevice::default();
        d.0.lock().expect("device lock").capacity = capacity;
        d
    }

    /// What survives a power loss now: the synced bytes.
    pub fn crash(&self) -> Vec<u8> {
        let s = self.0.lock().expect("device lock");
        s.written[..s.synced].to_vec()
    }

    /// Every byte written, synced or not (what a process kill leaves).
    pub fn written(&self) -> Vec<u8> {
        self.0.lock().expect("device lock").written.clone()
    }
}

impl LogDevice for MemDevice {
    fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        let mut s = self.0.lock().expect("device lock");
        if let Some(cap) = s.capacity
            && s.written.len() + bytes.len() > cap
        {
            let room = cap.saturating_sub(s.written.len());
            s.written.extend_from_slice(&bytes[..room]);
            return Err(io::Error::new(
                io::ErrorKind::StorageFull,
                "no space left on device (simulated)",
            ));
        }
        s.written.extend_from_slice(bytes);
        Ok(())
    }

    fn sync(&mut self) -> io::Result<()> {
        let mut s = self.0.lock().expect("device lock");
        s.synced = s.written.len();
        s.syncs += 1;
        Ok(())
    }
}
