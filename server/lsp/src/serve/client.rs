//! `laya serve`'s language service inside this process, for `laya stress` and `laya bench
//! --replay`: the same service and frame guard on its own runtime thread, over a pair of OS
//! pipes read and written as `laya serve` reads stdin and writes stdout (`on_threads`), driven by laya-harness's client (the test
//! suite's). In process, so the harness can read and trim the server's memory.

use std::time::Duration;

use anyhow::{anyhow, Context};
use laya_harness::Client;
use serde_json::{json, Value};

/// The running service: stop it after the client's `shutdown`.
pub struct InProcess {
    thread: std::thread::JoinHandle<()>,
    engine: laya_engine::Engine,
}

/// Starts the service and returns a client of it, initialized with these position encodings.
pub fn start(encodings: &[&str]) -> anyhow::Result<(Client, InProcess)> {
    let (server_in, client_out) = std::io::pipe()?;
    let (client_in, server_out) = std::io::pipe()?;
    let (service, socket, engine) = super::service(None);
    let thread = std::thread::Builder::new().name("laya-service".into()).spawn(move || {
        let Ok(rt) = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() else { return };
        let (input, output, writer) = super::on_threads(rt.handle(), server_in, server_out);
        rt.block_on(super::serve_on(input, output, service, socket));
        let _ = writer.join();
        rt.shutdown_background();
    })?;
    let mut c = Client::connect(client_in, client_out);
    let init = c.initialize(json!({"general": {"positionEncodings": encodings}}), json!({}));
    if init.get("error").is_some() {
        return Err(anyhow!("initialize failed: {init}"));
    }
    Ok((c, InProcess { thread, engine }))
}

impl InProcess {
    /// Shuts the service down through `c` and waits for its thread and the engine to end.
    pub fn stop(self, c: Client) -> anyhow::Result<()> {
        c.shutdown().map_err(|e| anyhow!(e))?;
        self.thread.join().map_err(|_| anyhow!("the service thread panicked"))?;
        self.engine.stop();
        Ok(())
    }
}

/// A request whose answer the run needs: an error when none comes.
pub fn ask(c: &mut Client, method: &str, params: Value) -> anyhow::Result<Value> {
    c.try_request(method, params).map_err(|e| anyhow!(e))
}

/// Waits for the model to load (at most two minutes).
pub fn wait_for_model(c: &mut Client) -> anyhow::Result<()> {
    c.wait_for_model(Duration::from_secs(120)).map_err(|e| anyhow!(e)).context("waiting for the model")
}
