//! The process's environment, read once, here at the binary's edge: where the model, the
//! lexicon, the pinyin dictionary and the user dictionary are by default, the switches for Laya's CPU kernels (on/off, instruction set, threads)
//! and the GPU check, and the suite's
//! fault seam. The library crates read no environment; they get these as options.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use laya_decide::{LEXICON_RELATIVE, PINYIN_RELATIVE};
use laya_engine::Locations;
use laya_model::cpu_kernels::KernelOptions;
use laya_model::{default_model_path_in, multilingual_model_path_in, xdg_home, LoadOptions, ModelLocations};

/// What the environment says, for every command of this process.
#[derive(Debug, Clone)]
pub struct Edge {
    /// The model and lexicon defaults, and how models load.
    pub locations: Locations,
    /// The user's config folder (`$XDG_CONFIG_HOME`, else `~/.config`; None without $HOME): the
    /// default user dictionary lives there.
    pub config_home: Option<PathBuf>,
    /// `LAYA_FAULT_PANIC_ON`: see [`laya_engine::EngineOptions::fault_panic_on`].
    pub fault_panic_on: Option<String>,
}

/// The environment as this process started with it (read on first use).
pub fn edge() -> &'static Edge {
    static EDGE: OnceLock<Edge> = OnceLock::new();
    EDGE.get_or_init(read)
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn read() -> Edge {
    let xdg = |name: &str, fallback: &str| xdg_home(std::env::var_os(name), std::env::var_os("HOME"), fallback);
    let cache_home = xdg("XDG_CACHE_HOME", ".cache").unwrap_or_else(|| PathBuf::from("."));
    let models = ModelLocations {
        from_env: var("LAYA_MODEL").map(PathBuf::from),
        default: default_model_path_in(&cache_home),
        multilingual: multilingual_model_path_in(&cache_home),
    };
    let load = LoadOptions {
        cpu_kernels: laya_model::cpu_kernels::available() && var("LAYA_CPU_KERNELS").as_deref() != Some("0"),
        check_gpu: var("LAYA_ALLOW_CUDA").as_deref() != Some("1"),
        gpu_kernels: var("LAYA_GPU_KERNELS").as_deref() != Some("0"),
        kernels: KernelOptions { isa: parsed("LAYA_CPU_ISA"), threads: parsed("LAYA_THREADS").filter(|&n: &usize| n > 0) },
        gpu_dtype: var("LAYA_GPU_DTYPE").and_then(|v| match v.as_str() {
            "f32" => Some(laya_model::Dtype::Float32),
            "f16" => Some(laya_model::Dtype::Float16),
            "bf16" => Some(laya_model::Dtype::Bfloat16),
            _ => {
                eprintln!("laya: ignoring LAYA_GPU_DTYPE={v:?}: expected f32, f16 or bf16");
                None
            }
        }),
    };
    // The pinyin dictionary: `LAYA_PINYIN_DICT`, else `.deps/pinyin/zh.tsv` beside the binary's
    // repository (or install prefix), else under the current directory.
    let pinyin = var("LAYA_PINYIN_DICT").map(PathBuf::from).or_else(|| beside_binary(PINYIN_RELATIVE));
    let locations = Locations { models, lexicon: default_lexicon(), pinyin, load };
    Edge { locations, config_home: xdg("XDG_CONFIG_HOME", ".config"), fault_panic_on: var("LAYA_FAULT_PANIC_ON") }
}

/// `name`'s value parsed, or None when unset; a value that does not parse is reported and ignored.
fn parsed<T: std::str::FromStr<Err: std::fmt::Display>>(name: &str) -> Option<T> {
    let v = var(name)?;
    v.parse().map_err(|e| eprintln!("laya: ignoring {name}={v:?}: {e}")).ok()
}

/// The lexicon's default place: `LAYA_LEXICON`, else `.deps/lexicon/en.tsv` beside the binary's
/// repository (or install prefix), else under the current directory.
fn default_lexicon() -> Option<PathBuf> {
    if let Some(p) = var("LAYA_LEXICON") {
        return Some(PathBuf::from(p));
    }
    beside_binary(LEXICON_RELATIVE)
}

/// The file `rel` (a path like `.deps/lexicon/en.tsv`) in the binary's repository or install
/// prefix (the first of its folders' ancestors that has it), else under the current directory.
pub fn beside_binary(rel: &str) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = vec![];
    if let Ok(exe) = std::env::current_exe().and_then(|p| p.canonicalize()) {
        dirs.extend(exe.ancestors().skip(1).map(Path::to_path_buf));
    }
    if let Ok(cwd) = std::env::current_dir() {
        dirs.push(cwd);
    }
    dirs.into_iter().map(|d| d.join(rel)).find(|p| p.is_file())
}
