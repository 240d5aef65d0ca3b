//! `laya doctor` and `laya --version`: what Laya runs on — MLX, the device, the model — and
//! how long loading it takes.

use std::sync::LazyLock;

use serde_json::json;

use super::{load_model, out, peak_rss_bytes};
use crate::ModelArgs;

pub static LONG_VERSION: LazyLock<String> =
    LazyLock::new(|| format!("{} (MLX {}, device {})", env!("CARGO_PKG_VERSION"), laya_model::mlx_version(), laya_model::device_name()));

#[derive(clap::Args)]
pub struct Args {
    /// One JSON object on stdout instead of a report.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    model: ModelArgs,
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let (model, load_ms) = load_model(&args.model)?;
    let c = &model.config;
    let i = &model.info;
    let format = match i.format {
        laya_model::Format::Gguf => "GGUF",
        laya_model::Format::MlxLm => "mlx-lm folder",
    };
    let rss = peak_rss_bytes();
    if args.json {
        let v = json!({
            "laya": env!("CARGO_PKG_VERSION"),
            "mlx": laya_model::mlx_version(),
            "device": laya_model::device_name(),
            "model": i.path,
            "format": format,
            "architecture": c.arch.name(),
            "parameters": c.parameter_count(),
            "layers": c.n_layers, "hidden": c.hidden, "heads": c.n_heads, "kv_heads": c.n_kv_heads,
            "vocab": c.vocab, "context": c.context_len,
            "quantization": i.quantization,
            "compute_dtype": format!("{:?}", i.compute_dtype).to_lowercase(),
            "kernels": i.kernels,
            "weight_bytes": i.weight_bytes,
            "peak_rss_bytes": rss,
            "load_ms": load_ms,
            "gpu_check": i.gpu_check,
        });
        return out(&v.to_string());
    }
    let mut rows = vec![
        ("laya", env!("CARGO_PKG_VERSION").to_string()),
        ("MLX", laya_model::mlx_version()),
        ("device", laya_model::device_name().to_string()),
        ("model", i.path.display().to_string()),
        ("format", format.to_string()),
        (
            "architecture",
            format!(
                "{} ({} layers, hidden {}, {}/{} heads, vocab {}, context {})",
                c.arch.name(),
                c.n_layers,
                c.hidden,
                c.n_heads,
                c.n_kv_heads,
                c.vocab,
                c.context_len
            ),
        ),
        ("parameters", format!("{:.1} M", c.parameter_count() as f64 / 1e6)),
        ("quantization", i.quantization.clone()),
        ("activations", format!("{:?}", i.compute_dtype).to_lowercase()),
        ("matmul kernels", i.kernels.clone()),
        ("weights in memory", format!("{:.1} MiB", mib(i.weight_bytes))),
        ("peak RSS", rss.map_or("unknown".into(), |b| format!("{:.1} MiB", mib(b as usize)))),
        ("load time", format!("{load_ms:.0} ms")),
    ];
    if let Some(check) = &i.gpu_check {
        rows.push(("GPU check", check.clone()));
    }
    for (k, v) in rows {
        out(&format!("{k:>18}  {v}"))?;
    }
    Ok(())
}
