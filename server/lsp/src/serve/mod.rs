//! `laya serve`: the language server over stdio. Starts the inference thread, then serves LSP
//! with tower-lsp-server; the custom requests are `textDocument/inlineCompletion` (LSP 3.18,
//! not in tower-lsp-server's trait yet), `laya/rank`, `laya/stats` and
//! `laya/documentText` (the server's copy of a document).

mod backend;
mod engine;
pub mod replay;
mod settings;

use tower_lsp_server::{ClientSocket, LspService, Server};

pub use settings::Settings;

#[derive(clap::Args)]
pub struct Args {
    /// Speak LSP over stdin/stdout (the default and only transport; editors pass it).
    #[arg(long)]
    stdio: bool,
}

/// The language service with its inference thread, ready to serve on any transport, and the
/// engine handle whose `stop` must be called once serving is over.
pub fn service() -> (LspService<backend::Backend>, ClientSocket, engine::Engine) {
    let defaults = Settings::default();
    let engine = engine::Engine::start(defaults.budget_bytes());
    let handle = engine.clone();
    let (service, socket) = LspService::build(|client| backend::Backend::new(client, engine, defaults))
        .custom_method("textDocument/inlineCompletion", backend::Backend::inline_completion)
        .custom_method("laya/rank", backend::Backend::rank)
        .custom_method("laya/stats", backend::Backend::stats)
        .custom_method("laya/documentText", backend::Backend::document_text)
        .finish();
    (service, socket, handle)
}

pub fn run(_args: Args) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let engine = rt.block_on(async {
        let (service, socket, engine) = service();
        Server::new(tokio::io::stdin(), tokio::io::stdout(), socket).serve(service).await;
        engine
    });
    // Let the job in progress finish and the thread end before the process tears down MLX.
    engine.stop();
    Ok(())
}
