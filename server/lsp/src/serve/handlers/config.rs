//! `workspace/didChangeConfiguration`: keys given override the current settings, keys left
//! out keep theirs, a null value resets one; the model reloads when its path changes.

use serde_json::Value;
use tower_lsp_server::ls_types::*;

use laya_engine::Job;

use crate::serve::backend::Backend;
use crate::serve::settings::{self, Settings};
pub async fn did_change_configuration(b: &Backend, params: DidChangeConfigurationParams) {
    // Keys given override the current settings; keys left out keep theirs (Zed sends `{}`
    // right after start-up, which must not undo the initializationOptions).
    let v = params.settings.get("laya").cloned().unwrap_or(params.settings);
    if !v.is_object() {
        // `null` (a client that only says "something changed"): nothing to apply.
        tracing::debug!("didChangeConfiguration without settings: kept the current ones");
        return;
    }
    let merged = match (serde_json::to_value(b.settings()), v) {
        (Ok(Value::Object(mut cur)), Value::Object(new)) => {
            for (k, val) in new {
                if val.is_null() {
                    cur.remove(&k);
                } else {
                    cur.insert(k, val);
                }
            }
            Value::Object(cur)
        }
        (_, other) => other,
    };
    match Settings::from_value(&merged) {
        Ok(new) => {
            let old = b.settings();
            let reload = new.model_path != old.model_path
                || new.multilingual_model_path != old.multilingual_model_path
                || new.lexicon_path != old.lexicon_path;
            if let Ok(mut cur) = b.settings.write() {
                *cur = new.clone();
            }
            b.engine.send(Job::SetBudget { bytes: new.budget_bytes() });
            // The dictionary is read again (another file, or this one edited by hand): its
            // words replace the ones known before.
            if let Some(path) = new.dictionary() {
                match settings::read_words(&path) {
                    Ok(words) => b.engine.send(Job::SetUserWords { words }),
                    Err(e) => b.client.show_message(MessageType::ERROR, format!("Laya settings: userDictionary: {e}")).await,
                }
            }
            if reload {
                b.spawn_load();
            }
            b.recheck_all();
        }
        Err(e) => b.client.show_message(MessageType::ERROR, format!("Laya settings: {e}")).await,
    }
}
