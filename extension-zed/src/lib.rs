//! Laya's Zed extension: finds the `laya` binary, starts `laya serve`, and hands Zed's `lsp.laya` settings to it.
//!
//! Zed shows no generic LSP ghost text, so everything Laya offers arrives as completion items and
//! as diagnostics with quick fixes; this file only decides how the server is started and configured.

use zed_extension_api::{self as zed, serde_json, settings::LspSettings, LanguageServerId, Result};

/// The language server's name in `extension.toml` and in Zed's `lsp` settings.
const SERVER: &str = "laya";

/// What to do when `laya` cannot be found.
const NOT_FOUND: &str = "Laya's server `laya` was not found on PATH. Build it with `make build` in the Laya \
repository and put target/release on PATH, or set lsp.laya.binary.path in Zed's settings.";

struct Laya;

impl zed::Extension for Laya {
    fn new() -> Self {
        Laya
    }

    fn language_server_command(&mut self, id: &LanguageServerId, worktree: &zed::Worktree) -> Result<zed::Command> {
        let (path, arguments, env) = match lsp_settings(worktree).binary {
            Some(b) => (b.path, b.arguments, b.env),
            None => (None, None, None),
        };
        let found = path.filter(|p| !p.trim().is_empty()).or_else(|| worktree.which(SERVER));
        let Some(command) = found else {
            zed::set_language_server_installation_status(
                id,
                &zed::LanguageServerInstallationStatus::Failed(NOT_FOUND.to_string()),
            );
            return Err(NOT_FOUND.to_string());
        };
        zed::set_language_server_installation_status(id, &zed::LanguageServerInstallationStatus::None);
        let mut env: Vec<(String, String)> = env.unwrap_or_default().into_iter().collect();
        env.sort();
        Ok(zed::Command { command, args: server_args(arguments), env })
    }

    fn language_server_initialization_options(
        &mut self,
        _id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<Option<serde_json::Value>> {
        Ok(lsp_settings(worktree).initialization_options)
    }

    fn language_server_workspace_configuration(
        &mut self,
        _id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<Option<serde_json::Value>> {
        let s = lsp_settings(worktree);
        Ok(Some(workspace_configuration(s.initialization_options, s.settings)))
    }
}

/// The user's `lsp.laya` settings for this worktree; none when Zed has none (or cannot read them).
fn lsp_settings(worktree: &zed::Worktree) -> LspSettings {
    LspSettings::for_worktree(SERVER, worktree).unwrap_or_default()
}

/// `serve` followed by the user's `binary.arguments`, unless those already begin with `serve`.
fn server_args(user: Option<Vec<String>>) -> Vec<String> {
    let user = user.unwrap_or_default();
    if user.first().map(String::as_str) == Some("serve") {
        return user;
    }
    std::iter::once("serve".to_string()).chain(user).collect()
}

/// `{"laya": settings}` for `workspace/didChangeConfiguration`.
///
/// Zed sends this right after `initialize` and again on every settings change. The server merges
/// what arrives into its current settings (keys given override, keys left out keep theirs, a null
/// resets one), so a key removed from `lsp.laya.settings` would keep its old value there. This
/// carries the initialization options as the base with `lsp.laya.settings` over them key by key,
/// so that what the server holds is always the whole of what the user set. Settings the user
/// already wrapped as `{"laya": {...}}` are unwrapped first.
fn workspace_configuration(init: Option<serde_json::Value>, settings: Option<serde_json::Value>) -> serde_json::Value {
    let unwrap = |v: serde_json::Value| match v {
        serde_json::Value::Object(mut m) if m.len() == 1 && m.contains_key(SERVER) => {
            m.remove(SERVER).unwrap_or_default()
        }
        other => other,
    };
    let merged = match (init.map(unwrap), settings.map(unwrap)) {
        (Some(serde_json::Value::Object(mut base)), Some(serde_json::Value::Object(over))) => {
            base.extend(over);
            serde_json::Value::Object(base)
        }
        (_, Some(over)) => over,
        (Some(base), None) => base,
        (None, None) => serde_json::Value::Object(Default::default()),
    };
    serde_json::json!({ SERVER: merged })
}

zed::register_extension!(Laya);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn args_start_with_serve_once() {
        assert_eq!(server_args(None), ["serve"]);
        assert_eq!(server_args(Some(vec!["--log-level".into(), "info".into()])), ["serve", "--log-level", "info"]);
        assert_eq!(server_args(Some(vec!["serve".into(), "--stdio".into()])), ["serve", "--stdio"]);
    }

    #[test]
    fn workspace_configuration_is_wrapped_and_merged() {
        assert_eq!(workspace_configuration(None, None), json!({"laya": {}}));
        assert_eq!(workspace_configuration(None, Some(json!({"threshold": 0.5}))), json!({"laya": {"threshold": 0.5}}));
        assert_eq!(
            workspace_configuration(
                Some(json!({"userDictionary": "/w", "threshold": 0.2})),
                Some(json!({"threshold": 0.5}))
            ),
            json!({"laya": {"userDictionary": "/w", "threshold": 0.5}})
        );
        assert_eq!(
            workspace_configuration(Some(json!({"ghostText": false})), None),
            json!({"laya": {"ghostText": false}})
        );
        assert_eq!(
            workspace_configuration(None, Some(json!({"laya": {"debounceMs": 100}}))),
            json!({"laya": {"debounceMs": 100}})
        );
    }

    #[test]
    fn not_found_message_says_what_to_do() {
        assert_eq!(
            NOT_FOUND,
            "Laya's server `laya` was not found on PATH. Build it with `make build` in the Laya repository and \
             put target/release on PATH, or set lsp.laya.binary.path in Zed's settings."
        );
    }
}
