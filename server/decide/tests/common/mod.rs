//! Where the decide tests find the default model and the lexicon (the tests read the
//! environment themselves, as the binary does; the library reads none).
#![allow(dead_code)] // each test file uses part of it

use std::path::PathBuf;

/// The default model where `make model` puts it.
pub fn default_model_path() -> PathBuf {
    let cache = laya_model::xdg_home(std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME"), ".cache").expect("$HOME is set");
    laya_model::default_model_path_in(&cache)
}

/// The lexicon `make lexicon` builds in this repository (or LAYA_LEXICON).
pub fn default_lexicon_path() -> PathBuf {
    std::env::var_os("LAYA_LEXICON")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").join(laya_decide::LEXICON_RELATIVE))
}
