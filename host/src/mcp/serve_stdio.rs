//! `corral mcp serve` over stdio: each line of stdin goes to the SDK, except a line that is not
//! JSON, which is answered with a JSON-RPC parse error (-32700) here; both answer on stdout.

use super::serve::Server;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// How much of one line is kept: a longer one is answered as a parse error and dropped.
const MAX_LINE: usize = 64 << 20;

/// Why serving over stdio ended badly.
#[derive(Debug, thiserror::Error)]
pub enum StdioError {
    #[error("the MCP client did not start the session: {0}")]
    Start(String),
    #[error("the MCP service stopped: {0}")]
    Stopped(String),
}

/// The answer to a line that is not JSON (its id cannot be known: JSON-RPC says null).
fn parse_error(why: &str) -> String {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32700, "message": format!("Parse error: {why}")},
    })
    .to_string()
}

/// Serves `server` on stdin and stdout until stdin ends (the client left) or `stop` completes;
/// calls still running are then dropped, and the commands they started killed with them.
pub async fn run(server: Server, stop: impl Future<Output = ()>) -> Result<(), StdioError> {
    serve(server, tokio::io::stdin(), tokio::io::stdout(), stop).await
}

/// [`run`] on any pair of streams (tests use in-memory ones).
pub async fn serve<R, W>(
    server: Server,
    input: R,
    output: W,
    stop: impl Future<Output = ()>,
) -> Result<(), StdioError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    use rmcp::ServiceExt;
    use rmcp::service::ServerInitializeError as Init;
    let (sdk_in, feed) = tokio::io::duplex(1 << 16);
    let (sdk_out, drain) = tokio::io::duplex(1 << 16);
    let (errors, error_lines) = mpsc::unbounded_channel();
    let reader = tokio::spawn(read(input, feed, errors));
    let writer = tokio::spawn(write(drain, error_lines, output));
    tokio::pin!(stop);
    let running = tokio::select! {
        r = server.serve((sdk_in, sdk_out)) => match r {
            Ok(running) => Some(running),
            // The client left before the handshake: there is nothing to serve.
            Err(Init::ConnectionClosed(_) | Init::Cancelled) => None,
            Err(e) => {
                reader.abort();
                return Err(StdioError::Start(e.to_string()));
            }
        },
        () = &mut stop => None,
    };
    let result = match running {
        None => Ok(()),
        Some(running) => {
            let ct = running.cancellation_token();
            tokio::select! {
                r = running.waiting() => r.map(|_| ()).map_err(|e| StdioError::Stopped(e.to_string())),
                () = &mut stop => {
                    ct.cancel();
                    Ok(())
                }
            }
        }
    };
    reader.abort();
    // Everything the SDK wrote goes out before the end.
    let _ = writer.await;
    result
}

/// Copies lines from `input` to the SDK, answering the ones that are not JSON itself.
async fn read<R: AsyncRead + Unpin>(
    input: R,
    mut feed: tokio::io::DuplexStream,
    errors: mpsc::UnboundedSender<String>,
) {
    let mut input = BufReader::new(input);
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = match (&mut input).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if n > MAX_LINE && !line.ends_with(b"\n") {
            let _ = errors.send(parse_error(&format!("a message is longer than {} MiB", MAX_LINE >> 20)));
            // Skip the rest of that line.
            let mut rest = Vec::new();
            if input.read_until(b'\n', &mut rest).await.is_err() {
                break;
            }
            continue;
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(text) {
            let _ = errors.send(parse_error(&e.to_string()));
            continue;
        }
        if feed.write_all(text).await.is_err() || feed.write_all(b"\n").await.is_err() {
            break;
        }
    }
    // Dropping `feed` tells the SDK the client left.
}

/// Writes the SDK's lines and the parse errors to `output`, whole lines at a time.
async fn write<W: AsyncWrite + Unpin>(
    drain: tokio::io::DuplexStream,
    mut errors: mpsc::UnboundedReceiver<String>,
    mut output: W,
) {
    let mut lines = BufReader::new(drain);
    let mut line = Vec::new();
    let mut errors_open = true;
    loop {
        tokio::select! {
            n = lines.read_until(b'\n', &mut line) => {
                if !matches!(n, Ok(n) if n > 0) {
                    break;
                }
                if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
                    break;
                }
                line.clear();
            }
            e = errors.recv(), if errors_open => match e {
                Some(e) => {
                    let out = format!("{e}\n");
                    if output.write_all(out.as_bytes()).await.is_err() || output.flush().await.is_err() {
                        break;
                    }
                }
                None => errors_open = false,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn lines_that_are_not_json_are_answered_here_and_the_rest_go_on() {
        let input: &[u8] =
            b"{\"jsonrpc\":\"2.0\",\"id\":1}\n\n  \r\n{nope\n\xff\xfe\n[1,2]\r\n{\"tail\":true}";
        let (feed, mut sdk) = tokio::io::duplex(1 << 16);
        let (errors, mut answers) = mpsc::unbounded_channel();
        read(input, feed, errors).await;
        let mut passed = String::new();
        sdk.read_to_string(&mut passed).await.unwrap();
        assert_eq!(passed, "{\"jsonrpc\":\"2.0\",\"id\":1}\n[1,2]\n{\"tail\":true}\n");
        let mut got = Vec::new();
        while let Ok(a) = answers.try_recv() {
            got.push(serde_json::from_str::<serde_json::Value>(&a).unwrap());
        }
        assert_eq!(got.len(), 2, "{got:?}");
        for a in got {
            assert_eq!(a["error"]["code"], -32700);
            assert!(a["id"].is_null());
            assert!(a["error"]["message"].as_str().unwrap().starts_with("Parse error: "));
        }
    }
}
