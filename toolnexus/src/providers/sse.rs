//! A server-sent events decoder (the WHATWG `text/event-stream` rules), linear in the bytes it
//! receives: each byte is looked at once when its chunk arrives, and a line that spans many
//! chunks is assembled once, when its end arrives. (`eventsource-stream`, used before, parsed
//! its whole buffer again on every chunk: an 8 MB line in 64 KiB pieces cost six times as
//! much as in one piece.)

/// One dispatched event: its type (`message` when the stream named none) and its data (the
/// `data` lines joined by `\n`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Event {
    pub(super) event: String,
    pub(super) data: String,
}

/// Bytes that are not UTF-8 in a line of the stream.
#[derive(Debug)]
pub(super) struct NotUtf8(pub(super) std::str::Utf8Error);

impl std::fmt::Display for NotUtf8 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a line of the event stream is not UTF-8: {}", self.0)
    }
}

impl std::error::Error for NotUtf8 {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

/// Decodes a `text/event-stream` body fed in chunks cut anywhere ([`Decoder::feed`]).
#[derive(Debug, Default)]
pub(super) struct Decoder {
    /// The unfinished line: the bytes after the last line end seen.
    line: Vec<u8>,
    /// The last chunk ended with `\r`: a `\n` at the start of the next one ends no new line.
    after_cr: bool,
    /// Whether a line ended already (a byte order mark is dropped from the first line only).
    seen_line: bool,
    /// The event type buffer.
    event: String,
    /// The data buffer (each `data` line followed by `\n`).
    data: String,
}

impl Decoder {
    /// Feeds one chunk; every event it completes goes to `out`, in order.
    ///
    /// # Errors
    ///
    /// A line that is not UTF-8 (the stream is broken from there on).
    pub(super) fn feed(
        &mut self,
        mut chunk: &[u8],
        out: &mut impl FnMut(Event),
    ) -> Result<(), NotUtf8> {
        if self.after_cr {
            self.after_cr = false;
            chunk = chunk.strip_prefix(b"\n").unwrap_or(chunk);
        }
        while let Some(end) = chunk.iter().position(|&b| b == b'\n' || b == b'\r') {
            let (line, rest) = chunk.split_at(end);
            if self.line.is_empty() {
                self.line_done(line, out)?;
            } else {
                let mut whole = std::mem::take(&mut self.line);
                whole.extend_from_slice(line);
                self.line_done(&whole, out)?;
                // keep the allocation for the next long line
                whole.clear();
                self.line = whole;
            }
            chunk = match rest {
                [b'\r'] => {
                    self.after_cr = true;
                    &[]
                }
                [b'\r', b'\n', rest @ ..] | [_, rest @ ..] => rest,
                [] => &[],
            };
        }
        self.line.extend_from_slice(chunk);
        Ok(())
    }

    /// One complete line (without its end).
    fn line_done(&mut self, mut line: &[u8], out: &mut impl FnMut(Event)) -> Result<(), NotUtf8> {
        if !self.seen_line {
            self.seen_line = true;
            line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        }
        if line.is_empty() {
            self.dispatch(out);
            return Ok(());
        }
        let line = std::str::from_utf8(line).map_err(NotUtf8)?;
        let (field, value) = match line.split_once(':') {
            Some(("", _)) => return Ok(()), // a comment
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
            }
            "event" => value.clone_into(&mut self.event),
            // `id` and `retry` steer reconnection, which a model reply does not do
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self, out: &mut impl FnMut(Event)) {
        let mut data = std::mem::take(&mut self.data);
        let event = std::mem::take(&mut self.event);
        if data.is_empty() {
            return;
        }
        data.pop(); // the `\n` after the last data line
        let event = if event.is_empty() {
            "message".to_owned()
        } else {
            event
        };
        out(Event { event, data });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(chunks: &[&[u8]]) -> Result<Vec<(String, String)>, String> {
        let mut d = Decoder::default();
        let mut events = Vec::new();
        for c in chunks {
            d.feed(c, &mut |e| events.push((e.event, e.data)))
                .map_err(|e| e.to_string())?;
        }
        Ok(events)
    }

    fn ev(event: &str, data: &str) -> (String, String) {
        (event.to_owned(), data.to_owned())
    }

    #[test]
    fn fields_lines_and_events_as_the_spec_reads_them() {
        let stream = b"\xEF\xBB\xBFdata: a\ndata:b\n\n: keep-alive\n\nevent: delta\ndata\ndata:  two spaces\nid: 7\nretry: 10\n\ndata: no end";
        let want = vec![ev("message", "a\nb"), ev("delta", "\n two spaces")];
        assert_eq!(decode(&[stream]).unwrap(), want);
        // cut at every byte, the same events (the unfinished last event is dropped)
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(decode(&bytes).unwrap(), want);
    }

    #[test]
    fn cr_lf_and_crlf_end_lines_even_across_chunks() {
        let want = vec![ev("message", "x"), ev("message", "y")];
        assert_eq!(
            decode(&[b"data: x\r\n\r\ndata: y\r\rdata: z"]).unwrap(),
            want
        );
        assert_eq!(
            decode(&[b"data: x\r", b"\n\r", b"\ndata: y\n", b"\n"]).unwrap(),
            want
        );
        // a lone CR at a chunk's end, then a new line (not an LF)
        assert_eq!(decode(&[b"data: x\r", b"\rdata: y\r\n\n"]).unwrap(), want);
    }

    #[test]
    fn an_event_without_data_is_not_dispatched_and_resets_its_type() {
        assert_eq!(
            decode(&[b"event: ping\n\ndata: d\n\n"]).unwrap(),
            vec![ev("message", "d")]
        );
    }

    #[test]
    fn multibyte_characters_split_across_chunks_read_whole() {
        let s = "data: h\u{e9}llo \u{1f600}\n\n".as_bytes();
        let bytes: Vec<&[u8]> = s.chunks(1).collect();
        assert_eq!(
            decode(&bytes).unwrap(),
            vec![ev("message", "h\u{e9}llo \u{1f600}")]
        );
    }

    #[test]
    fn a_line_that_is_not_utf8_is_an_error() {
        assert_eq!(
            decode(&[b"data: \xff\n\n"]).unwrap_err(),
            "a line of the event stream is not UTF-8: invalid utf-8 sequence of 1 bytes from index 6"
        );
    }
}
