//! What drives and measures Laya from outside, shared by the test suite, `laya stress` and
//! `laya bench --replay`: an LSP client ([`Client`]), an independent model of LSP's edit rules
//! ([`LspText`]) to check the server's copy of a document against, a small seeded generator
//! ([`Rng`]) and the one definition of a latency percentile ([`stats`]).
//!
//! It depends on no Laya crate, so what it checks is not computed by the code it checks.

mod client;
mod lsp_text;
mod rng;
pub mod stats;

pub use client::{frame, wait_exit, Client};
pub use lsp_text::{Encoding, LspText};
pub use rng::Rng;
