//! `laya serve`: the language server over stdio. Starts the inference thread, then serves LSP
//! with tower-lsp-server; the custom requests are `textDocument/inlineCompletion` (LSP 3.18,
//! not in tower-lsp-server's trait yet), `laya/rank`, `laya/stats` and
//! `laya/documentText` (the server's copy of a document).

mod backend;
mod client;
mod diagnostics;
pub mod guard;
mod handlers;
mod proto;
pub mod replay;
mod settings;
pub mod stress;
pub(crate) mod workspace;

use laya_engine::{Engine, EngineOptions};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tower_lsp_server::{ClientSocket, LspService, Server};

pub use settings::Settings;

#[derive(clap::Args)]
pub struct Args {
    /// Speak LSP over stdin/stdout (the default and only transport; editors pass it).
    #[arg(long)]
    stdio: bool,
}

/// The language service with its inference thread, ready to serve on any transport, and the
/// engine handle whose `stop` must be called once serving is over. `fault_panic_on`: the
/// suite's fault seam (see [`laya_engine::EngineOptions`]).
pub fn service(fault_panic_on: Option<String>) -> (LspService<backend::Backend>, ClientSocket, Engine) {
    let defaults = Settings::default();
    let locations = crate::edge::edge().locations.clone();
    let engine = Engine::start(EngineOptions { budget_bytes: defaults.budget_bytes(), fault_panic_on, locations });
    let handle = engine.clone();
    let (service, socket) = LspService::build(|client| backend::Backend::new(client, engine, defaults))
        .custom_method("textDocument/inlineCompletion", backend::Backend::inline_completion)
        .custom_method("laya/rank", backend::Backend::rank)
        .custom_method("laya/convert", backend::Backend::convert)
        .custom_method("laya/stats", backend::Backend::stats)
        .custom_method("laya/documentText", backend::Backend::document_text)
        .finish();
    (service, socket, handle)
}

/// Messages handled at once (see serve_on).
const MAX_IN_FLIGHT: usize = 512;

/// Serves `service` on `input`/`output` through the frame guard (guard.rs) until the input
/// ends or the client says `exit`.
pub async fn serve_on<R, W>(input: R, output: W, service: LspService<backend::Backend>, socket: ClientSocket)
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (to_service, service_in) = tokio::io::duplex(1 << 20);
    let (service_out, from_service) = tokio::io::duplex(1 << 20);
    let (answers_tx, answers_rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(guard::read_input(input, to_service, answers_tx));
    let writer = tokio::spawn(guard::write_output(from_service, output, answers_rx));
    // tower-lsp-server handles 4 messages at a time by default: four requests waiting for the
    // model then held up every keystroke behind them (found by `laya stress`). Requests wait
    // cheaply on the engine, which drops the stale ones, so let many be in flight.
    Server::new(service_in, service_out, socket).concurrency_level(MAX_IN_FLIGHT).serve(service).await;
    // The service's output is closed now: let the last frames reach the client.
    let _ = writer.await;
}

/// Bytes between blocking I/O and the runtime: a thread of its own reads `input` into one
/// in-memory pipe and another writes what comes out of the other pipe to `output`, flushing
/// each piece. tokio's own stdin and stdout run every read and write as a task of its blocking
/// pool, and those hand-offs cost each keystroke's answer about 0.5 ms (the replay's ghost text
/// p50 went from 1.2 to 1.8 ms over pipes). The returned thread ends once the service's output
/// is closed and written out: join it before the process exits.
pub fn on_threads<R, W>(rt: &tokio::runtime::Handle, mut input: R, mut output: W) -> (DuplexStream, DuplexStream, std::thread::JoinHandle<()>)
where
    R: std::io::Read + Send + 'static,
    W: std::io::Write + Send + 'static,
{
    let (mut to_service, service_in) = tokio::io::duplex(1 << 16);
    let (service_out, mut from_service) = tokio::io::duplex(1 << 16);
    let h = rt.clone();
    // A reader still blocked on its input when the session ends is left behind: the process
    // exits without it (a client may keep stdin open after `exit`).
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 1 << 16];
        while let Ok(n @ 1..) = input.read(&mut buf) {
            if h.block_on(to_service.write_all(&buf[..n])).is_err() {
                break;
            }
        }
    });
    let h = rt.clone();
    let writer = std::thread::spawn(move || {
        let mut buf = vec![0u8; 1 << 16];
        while let Ok(n @ 1..) = h.block_on(from_service.read(&mut buf)) {
            if output.write_all(&buf[..n]).and_then(|_| output.flush()).is_err() {
                break;
            }
        }
    });
    (service_in, service_out, writer)
}

pub fn run(_args: Args) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let (service, socket, engine) = service(crate::edge::edge().fault_panic_on.clone());
    let (input, output, writer) = on_threads(rt.handle(), std::io::stdin(), std::io::stdout());
    rt.block_on(serve_on(input, output, service, socket));
    // Let the last frames reach the client.
    let _ = writer.join();
    // The guard may still be waiting on stdin (a client that keeps it open after `exit`): a
    // plain drop of the runtime would wait for that read forever.
    rt.shutdown_background();
    // Let the job in progress finish and the thread end before the process tears down MLX.
    engine.stop();
    Ok(())
}
