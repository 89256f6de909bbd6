//! Guest stdout and stderr: kept up to a byte limit and silently dropped beyond it, so a
//! plugin that floods its output loses the excess instead of trapping.

use bytes::Bytes;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};

#[derive(Debug, Default)]
struct Buffer {
    kept: Vec<u8>,
    dropped: u64,
}

/// A bounded capture of one guest output stream.
#[derive(Debug, Clone)]
pub struct CapturePipe {
    buf: Arc<Mutex<Buffer>>,
    limit: usize,
}

/// What a pipe captured.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captured {
    /// The first bytes written, up to the limit.
    pub bytes: Vec<u8>,
    /// How many bytes were written past the limit and dropped.
    pub dropped: u64,
}

impl CapturePipe {
    /// A pipe that keeps at most `limit` bytes.
    pub fn new(limit: usize) -> Self {
        CapturePipe { buf: Arc::new(Mutex::new(Buffer::default())), limit }
    }

    fn accept(&self, data: &[u8]) {
        if let Ok(mut b) = self.buf.lock() {
            let room = self.limit.saturating_sub(b.kept.len());
            let take = room.min(data.len());
            b.kept.extend_from_slice(&data[..take]);
            b.dropped += (data.len() - take) as u64;
        }
    }

    /// The captured bytes so far.
    pub fn captured(&self) -> Captured {
        self.buf.lock().map(|b| Captured { bytes: b.kept.clone(), dropped: b.dropped }).unwrap_or_default()
    }
}

impl IsTerminal for CapturePipe {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for CapturePipe {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }
    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

impl OutputStream for CapturePipe {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.accept(&bytes);
        Ok(())
    }
    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }
    fn check_write(&mut self) -> StreamResult<usize> {
        // Always ready: beyond the limit the bytes are counted and dropped.
        Ok(64 * 1024)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for CapturePipe {
    async fn ready(&mut self) {}
}

impl AsyncWrite for CapturePipe {
    fn poll_write(self: Pin<&mut Self>, _cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        self.accept(buf);
        Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_first_bytes_and_counts_the_rest() {
        let mut p = CapturePipe::new(5);
        p.write(Bytes::from_static(b"abc")).unwrap();
        p.write(Bytes::from_static(b"defgh")).unwrap();
        assert_eq!(p.check_write().unwrap(), 64 * 1024);
        let c = p.captured();
        assert_eq!(c.bytes, b"abcde");
        assert_eq!(c.dropped, 3);
    }
}
