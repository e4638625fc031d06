//! Standard output for reports and query results.

use std::io::{self, StdoutLock, Write};

/// Locked standard output that goes quiet, without error, once its reader has
/// gone (`hapticd inspect FILE | head`); other write errors name stdout.
pub struct Stdout {
    inner: StdoutLock<'static>,
    closed: bool,
}

impl Stdout {
    pub fn lock() -> Self {
        Self {
            inner: io::stdout().lock(),
            closed: false,
        }
    }

    fn handle<T>(&mut self, result: io::Result<T>, closed: T) -> io::Result<T> {
        match result {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(closed)
            }
            Err(e) => Err(io::Error::new(e.kind(), format!("writing to stdout: {e}"))),
            ok => ok,
        }
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        let result = self.inner.write(buf);
        self.handle(result, buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.closed {
            return Ok(());
        }
        let result = self.inner.flush();
        self.handle(result, ())
    }
}
