//! The `laya` binary's entry point: parses the command line and dispatches to a subcommand.
//! Commands live in `cli/`, one file each; this file owns only argument parsing and logging.

mod cli;
mod edge;
mod serve;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "laya",
    version = cli::doctor::LONG_VERSION.as_str(),
    about = "Local, private typing decisions: next words and candidate ranking from a small language model on your machine",
    long_about = "Laya keeps a small 4-bit language model resident through MLX and answers the small decisions of \
                  typing — which word comes next, which candidate fits — in milliseconds, with nothing leaving \
                  the machine.\n\nThe model is the default SmolLM2-135M-Instruct (installed by `make model`) unless \
                  --model or LAYA_MODEL names a GGUF file or an mlx-lm model folder."
)]
struct Cli {
    /// Log level for messages on stderr (error, warn, info, debug, trace); also LAYA_LOG.
    #[arg(long, global = true, env = "LAYA_LOG", default_value = "warn")]
    log_level: String,

    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Args, Clone)]
pub struct ModelArgs {
    /// Model to use: a GGUF file or an mlx-lm folder. Default: LAYA_MODEL, then the default
    /// model in $XDG_CACHE_HOME/laya/models.
    #[arg(long, value_name = "PATH")]
    model: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// The most likely next words after TEXT; when TEXT ends inside a word, completions of that word.
    Complete(cli::complete::Args),
    /// Misspellings and confused words in TEXT, with suggestions ranked in context.
    Check(cli::check::Args),
    /// Log-probability of each candidate as the continuation of a context, best first.
    Rank(cli::rank::Args),
    /// Toneless pinyin to hanzi, the model ranking the dictionary's readings in context.
    Convert(cli::convert::Args),
    /// MLX version, device, model path, architecture, parameter count, memory and load time.
    Doctor(cli::doctor::Args),
    /// Engine latency (prefill, decode, scoring, appending) beside llama.cpp and MLX-Python.
    Bench(cli::bench::Args),
    /// The language server: speaks LSP over stdio (editors start it).
    Serve(serve::Args),
    /// How good the decisions are: next-word ghost text, misspellings alone and in context.
    Eval(cli::eval::Args),
    /// The language server under fuzzing, load and bad input, with a summary table.
    Stress(cli::stress::Args),
}

/// MLX's CPU allocator calls malloc for every array; glibc serves the large ones (logits, KV
/// buffers) with mmap and returns them at once, so each forward paid for page faults and
/// munmaps (a fifth of a decode step in the profile). Keep freed memory in the heap instead.
fn tune_malloc() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 256 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 512 << 20);
        libc::mallopt(libc::M_TOP_PAD, 64 << 20);
    }
}

fn main() -> ExitCode {
    tune_malloc();
    let cli = Cli::parse();
    let filter = tracing_subscriber::EnvFilter::try_new(&cli.log_level).unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
    let result = match cli.command {
        Command::Complete(a) => cli::complete::run(a),
        Command::Rank(a) => cli::rank::run(a),
        Command::Check(a) => cli::check::run(a),
        Command::Convert(a) => cli::convert::run(a),
        Command::Doctor(a) => cli::doctor::run(a),
        Command::Bench(a) => cli::bench::run(a),
        Command::Eval(a) => cli::eval::run(a),
        Command::Stress(a) => cli::stress::run(a),
        Command::Serve(a) => serve::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("laya: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
