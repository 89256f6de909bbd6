//! SSE framing: any split of the bytes gives the same events; LF, CRLF and CR lines;
//! comments, event names, multi-line data; the end of a stream.

use super::*;

const WIRE: &str = ": a comment first\r\n\
                    event: message_start\r\n\
                    data: {\"a\":1}\r\n\
                    \r\n\
                    data: first line\n\
                    data:second line\n\
                    id: 7\n\
                    retry: 100\n\
                    \n\
                    :ping\r\r\
                    data: ünïcödé ✓\r\r\
                    data: [DONE]\n\n";

fn expected() -> Vec<SseEvent> {
    let ev = |e: &str, d: &str| SseEvent { event: e.into(), data: d.into() };
    vec![
        ev("message_start", "{\"a\":1}"),
        ev("message", "first line\nsecond line"),
        ev("message", "ünïcödé ✓"),
        ev("message", "[DONE]"),
    ]
}

#[test]
fn every_split_of_the_bytes_gives_the_same_events() {
    for size in 1..=WIRE.len() {
        assert_eq!(sse_events(WIRE, size), expected(), "pieces of {size} bytes");
    }
}

#[test]
fn a_crlf_split_between_chunks_is_one_line_break() {
    let mut d = SseDecoder::new();
    assert!(d.feed(b"data: a\r").is_empty());
    assert!(d.feed(b"\ndata: b\r").is_empty(), "the LF after CR is not a blank line");
    let out = d.feed(b"\n\r\n");
    assert_eq!(out, [SseEvent { event: "message".into(), data: "a\nb".into() }]);
}

#[test]
fn an_event_name_applies_to_one_event_only() {
    let out = sse_events("event: ping\ndata: {}\n\ndata: x\n\n", 3);
    assert_eq!(out[0].event, "ping");
    assert_eq!(out[1].event, "message");
}

#[test]
fn a_field_without_data_dispatches_nothing() {
    assert!(sse_events("event: lonely\n\n: just a comment\n\n", 2).is_empty());
}

#[test]
fn at_the_end_a_whole_last_event_counts_and_a_cut_line_does_not() {
    assert_eq!(sse_events("data: whole\n", 4), [SseEvent { event: "message".into(), data: "whole".into() }]);
    assert_eq!(sse_events("data: whole\n\ndata: {\"cho", 4).len(), 1);
}
