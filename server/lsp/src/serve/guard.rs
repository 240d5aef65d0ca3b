//! The frame guard between the editor and tower-lsp-server: reads LSP frames, answers the ones
//! that are not JSON-RPC itself and passes only well-formed messages on.
//!
//! Why: tower-lsp-server reads through tokio-util's `FramedRead`, which ends the stream after the
//! first decode error, so one malformed message (or a body that is JSON but not JSON-RPC) used
//! to end the whole session. Here a bad message gets its JSON-RPC error and the session goes
//! on. Lone UTF-16 surrogates (which editors' buffers may hold and JSON may escape, but a Rust
//! string cannot) become U+FFFD, one UTF-16 unit each, so positions stay in step.

use serde_json::{json, Value};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tower_lsp_server::jsonrpc::{Request, Response};

/// Messages longer than this are read past and refused (an allocation of whatever a
/// Content-Length claims would otherwise abort the process).
pub const MAX_MESSAGE_BYTES: usize = 512 << 20;

/// `body` as one LSP frame.
pub fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

fn error_frame(code: i64, message: String, id: Value) -> Vec<u8> {
    frame(json!({"jsonrpc": "2.0", "error": {"code": code, "message": message}, "id": id}).to_string().as_bytes())
}

/// What to do with one body: pass it on (possibly repaired) or answer it with an error.
enum Verdict {
    Pass(Vec<u8>),
    Refuse(Vec<u8>),
}

fn judge(body: Vec<u8>) -> Verdict {
    let accepted = |b: &[u8]| serde_json::from_slice::<Request>(b).is_ok() || serde_json::from_slice::<Response>(b).is_ok();
    if accepted(&body) {
        return Verdict::Pass(body);
    }
    if let Some(fixed) = replace_lone_surrogates(&body) {
        if accepted(&fixed) {
            tracing::debug!("a message held lone UTF-16 surrogates: passed on with U+FFFD in their place");
            return Verdict::Pass(fixed);
        }
    }
    match serde_json::from_slice::<Value>(&body) {
        Ok(v) => {
            let id = v.get("id").filter(|id| id.is_i64() || id.is_string()).cloned().unwrap_or(Value::Null);
            tracing::warn!("refused a message that is JSON but not a JSON-RPC 2.0 request, notification or response");
            Verdict::Refuse(error_frame(-32600, "Invalid request: not a JSON-RPC 2.0 message".into(), id))
        }
        Err(e) => {
            tracing::warn!("refused a message that is not JSON: {e}");
            Verdict::Refuse(error_frame(-32700, format!("Parse error: {e}"), Value::Null))
        }
    }
}

/// `\uD800`-style escapes not part of a surrogate pair, replaced by `\uFFFD`; None if there are none.
fn replace_lone_surrogates(body: &[u8]) -> Option<Vec<u8>> {
    let hex = |b: &[u8]| std::str::from_utf8(b).ok().and_then(|s| u16::from_str_radix(s, 16).ok());
    let (mut out, mut i, mut changed) = (Vec::with_capacity(body.len()), 0, false);
    while i < body.len() {
        if body[i] == b'\\' && i + 1 < body.len() {
            if body[i + 1] == b'u' && i + 6 <= body.len() {
                if let Some(u) = hex(&body[i + 2..i + 6]) {
                    let high = (0xD800..0xDC00).contains(&u);
                    let low = (0xDC00..0xE000).contains(&u);
                    let next_low =
                        body.get(i + 6..i + 12).is_some_and(|n| n.starts_with(b"\\u") && hex(&n[2..]).is_some_and(|v| (0xDC00..0xE000).contains(&v)));
                    if high && next_low {
                        out.extend_from_slice(&body[i..i + 12]);
                        i += 12;
                        continue;
                    }
                    if high || low {
                        out.extend_from_slice(b"\\uFFFD");
                        i += 6;
                        changed = true;
                        continue;
                    }
                }
            }
            out.extend_from_slice(&body[i..i + 2]); // any other escape, kept whole
            i += 2;
            continue;
        }
        out.push(body[i]);
        i += 1;
    }
    changed.then_some(out)
}

/// Reads frames from `input` until it ends: well-formed messages go to `server`, answers to bad
/// ones to `answers`. Dropping `server` at the end lets the service see the end of input.
pub async fn read_input<R, S>(input: R, mut server: S, answers: mpsc::UnboundedSender<Vec<u8>>)
where
    R: AsyncRead + Unpin,
    S: AsyncWrite + Unpin,
{
    let mut rd = BufReader::with_capacity(1 << 16, input);
    loop {
        let mut len: Option<usize> = None;
        let mut bad_header = false;
        let mut saw_any = false;
        loop {
            let mut line = Vec::new();
            match rd.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let l = String::from_utf8_lossy(&line);
            let l = l.trim_end_matches(['\r', '\n']);
            if l.is_empty() {
                if saw_any {
                    break;
                }
                continue; // stray blank lines between messages
            }
            saw_any = true;
            match l.split_once(':') {
                Some((k, v)) if k.trim().eq_ignore_ascii_case("content-length") => match v.trim().parse::<usize>() {
                    Ok(n) => len = Some(n),
                    Err(_) => bad_header = true,
                },
                Some(_) => {} // Content-Type and the like
                None => bad_header = true,
            }
        }
        let Some(len) = len.filter(|_| !bad_header) else {
            tracing::warn!("refused a message whose header has no valid Content-Length");
            let _ = answers.send(error_frame(-32700, "Parse error: a message header needs a valid Content-Length".into(), Value::Null));
            continue;
        };
        if len > MAX_MESSAGE_BYTES {
            tracing::warn!("refused a message of {len} bytes (the limit is {MAX_MESSAGE_BYTES})");
            let mut rest = (&mut rd).take(len as u64);
            if tokio::io::copy(&mut rest, &mut tokio::io::sink()).await.unwrap_or(0) < len as u64 {
                return;
            }
            let msg = format!("Invalid request: a message of {len} bytes is over Laya's limit of {MAX_MESSAGE_BYTES} bytes");
            let _ = answers.send(error_frame(-32600, msg, Value::Null));
            continue;
        }
        let mut body = vec![0; len];
        if rd.read_exact(&mut body).await.is_err() {
            return;
        }
        match judge(body) {
            Verdict::Pass(b) => {
                if server.write_all(&frame(&b)).await.is_err() || server.flush().await.is_err() {
                    return;
                }
            }
            Verdict::Refuse(answer) => {
                let _ = answers.send(answer);
            }
        }
    }
}

/// Reads one frame written by a trusted writer (the service, or a server for a test client):
/// its header bytes and its body; None at the end of the stream.
pub async fn read_frame<R: AsyncBufRead + Unpin>(rd: &mut R) -> Option<(Vec<u8>, Vec<u8>)> {
    let mut head = Vec::new();
    let mut len = 0usize;
    loop {
        let mut line = Vec::new();
        if rd.read_until(b'\n', &mut line).await.unwrap_or(0) == 0 {
            return None;
        }
        head.extend_from_slice(&line);
        let l = String::from_utf8_lossy(&line);
        let l = l.trim_end_matches(['\r', '\n']);
        if l.is_empty() {
            break;
        }
        if let Some((_, v)) = l.split_once(':').filter(|(k, _)| k.trim().eq_ignore_ascii_case("content-length")) {
            len = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; len];
    rd.read_exact(&mut body).await.ok()?;
    Some((head, body))
}

/// Copies the service's frames from `server` to `output`, with the guard's own answers put
/// between frames; ends when the service's output ends.
pub async fn write_output<R, W>(server: R, mut output: W, mut answers: mpsc::UnboundedReceiver<Vec<u8>>)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin,
{
    let (frames_tx, mut frames_rx) = mpsc::unbounded_channel::<Vec<u8>>();
    // The service writes well-formed frames: split them so that answers never land inside one.
    tokio::spawn(async move {
        let mut rd = BufReader::new(server);
        while let Some((mut head, body)) = read_frame(&mut rd).await {
            head.extend_from_slice(&body);
            if frames_tx.send(head).is_err() {
                return;
            }
        }
    });
    loop {
        let next = tokio::select! {
            f = frames_rx.recv() => f,
            a = answers.recv() => match a {
                Some(a) => Some(a),
                None => frames_rx.recv().await,
            },
        };
        let Some(bytes) = next else { break };
        if output.write_all(&bytes).await.is_err() || output.flush().await.is_err() {
            break;
        }
    }
    let _ = output.flush().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        let fixed = replace_lone_surrogates(br#"{"t":"a\ud800b\udc00c\ud83d\ude00\\ud800"}"#).unwrap();
        assert_eq!(String::from_utf8(fixed).unwrap(), r#"{"t":"a\uFFFDb\uFFFDc\ud83d\ude00\\ud800"}"#);
        assert!(replace_lone_surrogates(br#"{"t":"\ud83d\ude00"}"#).is_none());
    }

    #[test]
    fn bodies_are_judged() {
        assert!(matches!(judge(br#"{"jsonrpc":"2.0","method":"x"}"#.to_vec()), Verdict::Pass(_)));
        assert!(matches!(judge(br#"[1,2,3]"#.to_vec()), Verdict::Refuse(_)));
        assert!(matches!(judge(br#"{"jsonrpc": "2.0", "id": 1, "m"#.to_vec()), Verdict::Refuse(_)));
        let Verdict::Refuse(a) = judge(br#"{"jsonrpc":"1.0","id":7,"method":"x"}"#.to_vec()) else { panic!("accepted JSON-RPC 1.0") };
        assert!(String::from_utf8(a).unwrap().contains(r#""id":7"#));
    }
}
