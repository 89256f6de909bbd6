//! Server-sent events: turns the bytes of a streamed reply, in whatever pieces they arrive,
//! into events (name and data), following the WHATWG framing rules (LF, CRLF or CR lines).

/// One event: its `event:` name ("message" when none) and its data lines joined by "\n".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub event: String,
    pub data: String,
}

/// An incremental decoder; feed it bytes, collect events.
#[derive(Debug, Default)]
pub struct SseDecoder {
    line: Vec<u8>,
    /// The last byte was CR, so a following LF belongs to the same line break.
    after_cr: bool,
    event: String,
    data: String,
    has_data: bool,
}

impl SseDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Decodes `bytes`, returning the events they complete.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        for &b in bytes {
            if std::mem::take(&mut self.after_cr) && b == b'\n' {
                continue;
            }
            match b {
                b'\n' => self.end_line(&mut out),
                b'\r' => {
                    self.end_line(&mut out);
                    self.after_cr = true;
                }
                _ => self.line.push(b),
            }
        }
        out
    }

    /// The stream ended: an event whose lines all arrived is delivered even without its
    /// blank line; a line cut off in the middle is dropped.
    pub fn finish(&mut self) -> Option<SseEvent> {
        if !self.line.is_empty() {
            self.line.clear();
            return None;
        }
        let mut out = Vec::new();
        self.dispatch(&mut out);
        out.pop()
    }

    fn end_line(&mut self, out: &mut Vec<SseEvent>) {
        let raw = std::mem::take(&mut self.line);
        let line = String::from_utf8_lossy(&raw);
        if line.is_empty() {
            return self.dispatch(out);
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (&*line, ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = value.to_string(),
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = std::mem::take(&mut self.event);
        if std::mem::take(&mut self.has_data) {
            let event = if event.is_empty() { "message".to_string() } else { event };
            out.push(SseEvent { event, data: std::mem::take(&mut self.data) });
        }
    }
}
