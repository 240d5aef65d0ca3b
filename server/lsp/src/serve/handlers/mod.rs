//! The LSP methods, one file per method or family; `impl LanguageServer` only delegates. The
//! custom requests (inlineCompletion, laya/rank, laya/stats, laya/documentText) are registered
//! in serve/mod.rs.

mod actions;
mod completion;
mod config;
pub mod custom;
mod inline;
mod lifecycle;
mod sync;

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::LanguageServer;

use super::backend::Backend;

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        lifecycle::initialize(self, params).await
    }

    async fn initialized(&self, params: InitializedParams) {
        lifecycle::initialized(self, params).await
    }

    async fn shutdown(&self) -> Result<()> {
        lifecycle::shutdown(self).await
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        sync::did_open(self, params).await
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        sync::did_change(self, params).await
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        sync::did_close(self, params).await
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        config::did_change_configuration(self, params).await
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        completion::completion(self, params).await
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        actions::code_action(self, params).await
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        actions::execute_command(self, params).await
    }
}
