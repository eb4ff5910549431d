//! Where reports go: a writer that turns every write error into a typed outcome, never a panic.
//!
//! `print!` and `println!` panic when a write fails, and Rust ignores SIGPIPE, so a reader that
//! goes away (`txbench run --format json | head -1`) makes the next write fail with `EPIPE`
//! instead of ending the process quietly as it ends a C program. [`Output`] reports that as
//! [`OutputError::Closed`], which the command line treats as a normal end (exit status 0, no
//! message: the reader took what it wanted), and any other failure (`ENOSPC` on a full disk, `EIO`)
//! as [`OutputError::Failed`], which it reports on stderr with exit status 1, since the results
//! were lost. Writes are flushed line by line (stdout is line-buffered), and [`Output::flush`]
//! catches what is left, so an error surfaces where it happens and not in a destructor that must
//! swallow it.

use std::io::{self, Write};

/// Why output could not be written.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The reader closed its end (`EPIPE`): nobody wants more output.
    #[error("the reader closed the output")]
    Closed,
    /// Any other write error: the output is incomplete.
    #[error("writing the output failed: {0}")]
    Failed(io::Error),
}

impl From<io::Error> for OutputError {
    fn from(e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::BrokenPipe {
            OutputError::Closed
        } else {
            OutputError::Failed(e)
        }
    }
}

impl From<csv::Error> for OutputError {
    fn from(e: csv::Error) -> Self {
        match e.into_kind() {
            csv::ErrorKind::Io(e) => e.into(),
            other => OutputError::Failed(io::Error::other(format!("CSV: {other:?}"))),
        }
    }
}

/// A writer whose errors are [`OutputError`]s.
pub struct Output<W: Write> {
    out: W,
}

impl<W: Write> Output<W> {
    /// Output to `out`.
    pub fn new(out: W) -> Self {
        Output { out }
    }

    /// Writes `text` as it is.
    pub fn write(&mut self, text: &str) -> Result<(), OutputError> {
        Ok(self.out.write_all(text.as_bytes())?)
    }

    /// Writes `text` and a newline.
    pub fn line(&mut self, text: &str) -> Result<(), OutputError> {
        self.write(text)?;
        self.write("\n")
    }

    /// Flushes what is buffered.
    pub fn flush(&mut self) -> Result<(), OutputError> {
        Ok(self.out.flush()?)
    }

    /// The underlying writer, for formatters that write themselves (CSV); convert their errors
    /// with `?` (`From<io::Error>` and `From<csv::Error>`).
    pub fn inner(&mut self) -> &mut W {
        &mut self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer that fails every write with `kind`.
    struct Failing(io::ErrorKind);

    impl Write for Failing {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(self.0.into())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_pipe_is_told_apart_from_a_failure() {
        let closed = Output::new(Failing(io::ErrorKind::BrokenPipe)).line("x");
        assert!(matches!(closed, Err(OutputError::Closed)), "{closed:?}");
        let full = Output::new(Failing(io::ErrorKind::StorageFull)).line("x");
        assert!(matches!(full, Err(OutputError::Failed(_))), "{full:?}");
    }

    #[test]
    fn csv_errors_keep_their_io_kind() {
        let mut out = Output::new(Failing(io::ErrorKind::BrokenPipe));
        let mut w = csv::Writer::from_writer(out.inner());
        let e = w
            .write_record(["a"])
            .and_then(|()| w.flush().map_err(csv::Error::from))
            .expect_err("the writer fails");
        assert!(matches!(OutputError::from(e), OutputError::Closed));
    }

    #[test]
    fn text_arrives_as_written() {
        let mut out = Output::new(Vec::new());
        out.write("a").unwrap();
        out.line("b").unwrap();
        out.flush().unwrap();
        assert_eq!(out.inner().as_slice(), b"ab\n");
    }
}
