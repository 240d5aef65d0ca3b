//! `laya bench`: the engine's latency on the workloads a typing assistant runs (prefill, one
//! decode step, scoring candidates, appending keystrokes), beside llama.cpp and MLX's own Python
//! on the same model and the same tokens in the same run, as a table of ratios, JSON and an SVG.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context};
use laya_model::{KvCache, LoadOptions, Model};
use serde_json::{json, Value};

use super::{cpu_report, load_average, ms, out, peak_rss_bytes};
use crate::ModelArgs;

#[derive(clap::Args)]
pub struct Args {
    /// A short run (few repetitions) that checks everything works; numbers are rough.
    #[arg(long)]
    quick: bool,
    /// Timed repetitions per workload (default 30, 3 with --quick).
    #[arg(long)]
    reps: Option<usize>,
    /// Split the repetitions into this many rounds of Laya then each peer, so that a shift in the
    /// machine's load during the run falls on every engine alike (default 5, 1 with --quick).
    #[arg(long)]
    rounds: Option<usize>,
    /// Peers to run beside Laya: llama.cpp, mlx-python, all or none.
    #[arg(long, default_value = "all", value_parser = ["all", "none", "llama.cpp", "mlx-python"])]
    peers: String,
    /// Also run Laya with MLX's own CPU kernels (to show what Laya's kernels change).
    #[arg(long)]
    mlx_kernels: bool,
    /// One JSON object on stdout instead of tables.
    #[arg(long)]
    json: bool,
    /// Write the JSON report to this file as well.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Write a picture of the latencies (SVG) to this file.
    #[arg(long, value_name = "FILE.svg")]
    svg: Option<PathBuf>,
    /// Run only these workloads (comma-separated; default all): prefill_64, prefill_512, decode_64,
    /// decode_512, score_8, append_2.
    #[arg(long, value_delimiter = ',', value_parser = WORKLOADS)]
    only: Vec<String>,
    /// Threads for llama.cpp (Laya uses every core, or LAYA_THREADS).
    #[arg(long, default_value_t = std::thread::available_parallelism().map_or(2, |n| n.get()))]
    threads: usize,
    /// Instead of the engine workloads: type prose character by character into the language
    /// service (`laya serve`'s own code path) and report per-keystroke latency.
    #[arg(long)]
    replay: bool,
    /// The prose the replay types (default: tests/data/prose-sample.txt).
    #[arg(long, value_name = "FILE.txt", requires = "replay")]
    replay_file: Option<PathBuf>,
    /// Milliseconds between keystrokes in the replay (100 = a quick typist, 120 words a minute);
    /// 500 after the end of a sentence or paragraph.
    #[arg(long, default_value_t = 100, requires = "replay")]
    pace_ms: u64,
    /// Characters to type in the replay (default 1,500; 300 with --quick).
    #[arg(long, requires = "replay")]
    chars: Option<usize>,
    #[command(flatten)]
    model: ModelArgs,
}

/// Prose for the prompts (repeated to 512 tokens) and the candidates of `score_8`.
const PROSE: &str = "It was a bright cold day in April, and the clocks were striking thirteen. Winston Smith, \
his chin nuzzled into his breast in an effort to escape the vile wind, slipped quickly through the glass doors \
of Victory Mansions, though not quickly enough to prevent a swirl of gritty dust from entering along with him. \
The hallway smelt of boiled cabbage and old rag mats. At one end of it a coloured poster, too large for indoor \
display, had been tacked to the wall. It depicted simply an enormous face, more than a metre wide: the face of a \
man of about forty-five, with a heavy black moustache and ruggedly handsome features. ";
const CANDIDATES: [&str; 8] = [" the", " a", " his", " slowly", " without looking", " into the room", " and", " suddenly"];

/// Latencies of one workload, in milliseconds.
#[derive(Clone, Default)]
struct Samples(Vec<f64>);

impl Samples {
    fn quantile(&self, q: f64) -> f64 {
        laya_harness::stats::quantile(&self.0, q)
    }
    fn summary(&self, check: Value) -> Value {
        json!({
            "median_ms": self.quantile(0.5), "p10_ms": self.quantile(0.1), "p90_ms": self.quantile(0.9),
            "reps": self.0.len(), "samples_ms": self.0, "check": check,
        })
    }
}

struct Spec {
    only: Vec<String>,
    prompt64: Vec<u32>,
    prompt512: Vec<u32>,
    candidates: Vec<Vec<u32>>,
    reps: usize,
    warmup: usize,
    /// Peers stop a workload after this much timed work (MLX-Python's prefill_512 takes ~50 s).
    max_seconds: f64,
}

const WORKLOADS: [&str; 6] = ["prefill_64", "prefill_512", "decode_64", "decode_512", "score_8", "append_2"];

fn spec(model: &Model, reps: usize, warmup: usize) -> anyhow::Result<Spec> {
    let once = model.tokenizer.encode(PROSE)?;
    let ids: Vec<u32> = once.iter().copied().cycle().take(513).collect();
    let candidates = CANDIDATES
        .iter()
        .map(|c| {
            model.tokenizer.encode(c).map(|mut t| {
                t.truncate(3);
                t
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Spec { only: vec![], prompt64: ids[..64].to_vec(), prompt512: ids[..512].to_vec(), candidates, reps, warmup, max_seconds: 30.0 })
}

impl Spec {
    fn to_json(&self, model_path: &Path, threads: usize) -> Value {
        let (t64, t512) = (self.prompt512[64], self.prompt512[511]);
        let mut v = json!({
            "model": model_path, "threads": threads, "reps": self.reps, "warmup": self.warmup,
            "max_seconds": self.max_seconds,
            "workloads": {
                "prefill_64": {"prompt": self.prompt64},
                "prefill_512": {"prompt": self.prompt512},
                "decode_64": {"prompt": self.prompt64, "token": t64},
                "decode_512": {"prompt": self.prompt512[..511], "token": t512},
                "score_8": {"prompt": self.prompt64, "candidates": self.candidates},
                "append_2": {"prompt": self.prompt64, "tokens": [self.prompt512[64], self.prompt512[65]]},
            }
        });
        if let Some(w) = v["workloads"].as_object_mut() {
            w.retain(|k, _| self.wants(k));
        }
        v
    }

    fn wants(&self, workload: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|w| w == workload)
    }
}

/// Progress on stderr: a bar with an ETA on a terminal, a line per step otherwise.
struct Progress {
    total: usize,
    done: usize,
    start: Instant,
    tty: bool,
}

impl Progress {
    fn new(total: usize) -> Self {
        Self { total, done: 0, start: Instant::now(), tty: std::io::stderr().is_terminal() }
    }
    fn step(&mut self, what: &str) {
        self.done += 1;
        let elapsed = self.start.elapsed().as_secs_f64();
        let eta = elapsed / self.done as f64 * (self.total - self.done) as f64;
        let mut e = std::io::stderr().lock();
        if self.tty {
            let width = 24;
            let filled = width * self.done / self.total.max(1);
            let _ = write!(
                e,
                "\r\x1b[2K[{}{}] {}/{} {what:<28} {elapsed:5.1}s, ~{eta:.0}s left",
                "#".repeat(filled),
                " ".repeat(width - filled),
                self.done,
                self.total
            );
            if self.done == self.total {
                let _ = writeln!(e);
            }
        } else {
            let _ = writeln!(e, "bench: [{}/{}] {what} ({elapsed:.1}s, ~{eta:.0}s left)", self.done, self.total);
        }
    }
}

fn time<T>(s: &Spec, mut f: impl FnMut() -> anyhow::Result<T>) -> anyhow::Result<(Samples, T)> {
    let mut last = None;
    for _ in 0..s.warmup {
        last = Some(f()?);
    }
    let mut samples = Vec::with_capacity(s.reps);
    for _ in 0..s.reps {
        let t = Instant::now();
        last = Some(f()?);
        samples.push(ms(t));
    }
    Ok((Samples(samples), last.expect("reps >= 1")))
}

fn argmax(v: &[f32]) -> (usize, f32) {
    v.iter().copied().enumerate().fold((0, f32::NEG_INFINITY), |a, (i, x)| if x > a.1 { (i, x) } else { a })
}

/// Runs every workload on Laya's engine.
fn run_laya(model: &Model, s: &Spec, progress: &mut Progress, label: &str) -> anyhow::Result<BTreeMap<String, Value>> {
    let mut r = BTreeMap::new();
    for (name, prompt) in [("prefill_64", &s.prompt64), ("prefill_512", &s.prompt512)] {
        if !s.wants(name) {
            continue;
        }
        let (t, lp) = time(s, || {
            let mut c = KvCache::new();
            model.prefill(&mut c, prompt)?;
            Ok(model.next_logprobs(&c)?)
        })?;
        let (id, p) = argmax(&lp);
        r.insert(name.to_string(), t.summary(json!({"argmax": id, "logprob": p})));
        progress.step(&format!("{label} {name}"));
    }
    for (name, prompt, token) in [("decode_64", &s.prompt64[..], s.prompt512[64]), ("decode_512", &s.prompt512[..511], s.prompt512[511])] {
        if !s.wants(name) {
            continue;
        }
        let mut base = KvCache::new();
        model.prefill(&mut base, prompt)?;
        let (t, lp) = time(s, || {
            let mut c = base.fork();
            let lp = model.step(&mut c, &[token])?;
            Ok(lp.as_slice::<f32>().to_vec())
        })?;
        let (id, p) = argmax(&lp);
        r.insert(name.to_string(), t.summary(json!({"argmax": id, "logprob": p})));
        progress.step(&format!("{label} {name}"));
    }
    let mut base = KvCache::new();
    model.prefill(&mut base, &s.prompt64)?;
    if s.wants("score_8") {
        let (t, scores) = time(s, || Ok(model.score(&base, &s.candidates)?))?;
        let totals: Vec<f32> = scores.iter().map(|c| c.total).collect();
        r.insert("score_8".into(), t.summary(json!({"totals": totals})));
        progress.step(&format!("{label} score_8"));
    }
    if !s.wants("append_2") {
        return Ok(r);
    }
    let appended: Vec<u32> = [&s.prompt64[..], &s.prompt512[64..66]].concat();
    let (t, lp) = time(s, || {
        let mut c = base.fork();
        model.prefill(&mut c, &appended)?;
        Ok(model.next_logprobs(&c)?)
    })?;
    let (id, p) = argmax(&lp);
    r.insert("append_2".into(), t.summary(json!({"argmax": id, "logprob": p})));
    progress.step(&format!("{label} append_2"));
    Ok(r)
}

/// The venv python and engine name of a peer.
fn peer_python(root: &Path, peer: &str) -> (PathBuf, &'static str, &'static str) {
    match peer {
        "llama.cpp" => (root.join(".deps/llamacpp/bin/python"), "llamacpp", "make bench-peers (builds llama-cpp-python, ~4 min)"),
        _ => (root.join(".deps/pyref/bin/python"), "mlx", "make pyref"),
    }
}

/// The repository root: where bench/peers.py lives (the binary runs from target/release).
fn repo_root() -> anyhow::Result<PathBuf> {
    // (A binary rebuilt while it runs has no path any more: then only the working directory.)
    if let Ok(mut dir) = std::env::current_exe().and_then(|p| p.canonicalize()) {
        while dir.pop() {
            if dir.join("bench/peers.py").is_file() {
                return Ok(dir);
            }
        }
    }
    let cwd = std::env::current_dir()?;
    if cwd.join("bench/peers.py").is_file() {
        return Ok(cwd);
    }
    bail!("bench/peers.py not found: run `laya bench` from the Laya repository (or pass --peers none)")
}

fn run_peer(peer: &str, spec_path: &Path) -> anyhow::Result<Value> {
    let root = repo_root()?;
    let (python, engine, fix) = peer_python(&root, peer);
    if !python.exists() {
        bail!("{peer} is not set up ({} is missing): run `{fix}`, or pass --peers none", python.display());
    }
    let output = Command::new(&python)
        .arg(root.join("bench/peers.py"))
        .arg(engine)
        .arg("--spec")
        .arg(spec_path)
        .output()
        .with_context(|| format!("running {}", python.display()))?;
    if !output.status.success() {
        use std::os::unix::process::ExitStatusExt;
        let how = match output.status.signal() {
            Some(4) => " (killed by SIGILL: built for instructions this CPU lacks; rebuild it on this machine)".to_string(),
            Some(n) => format!(" (killed by signal {n})"),
            None => format!(" (exit status {})", output.status.code().unwrap_or(-1)),
        };
        bail!("{peer} benchmark failed{how}:\n{}", String::from_utf8_lossy(&output.stderr));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(stdout.lines().last().unwrap_or("")).with_context(|| format!("{peer} printed no JSON: {stdout}"))
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.replay {
        return replay(&args);
    }
    let (reps, warmup) = match (args.reps, args.quick) {
        (Some(0), _) => bail!("--reps must be at least 1"),
        (Some(r), q) => (r, if q { 1 } else { 3 }),
        (None, true) => (3, 1),
        (None, false) => (30, 3),
    };
    let locations = &crate::edge::edge().locations;
    let path = locations.models.resolve(args.model.model.as_deref())?;
    let peers: Vec<&str> = match args.peers.as_str() {
        "all" => vec!["llama.cpp", "mlx-python"],
        "none" => vec![],
        p => vec![p],
    };
    let start = Instant::now();
    let model = Model::load_with(&path, locations.load).with_context(|| format!("loading {}", path.display()))?;
    let load_ms = ms(start);
    let mut s = spec(&model, reps, warmup)?;
    s.only = args.only.clone();
    if args.quick {
        s.max_seconds = 2.0;
    }
    let n_workloads = WORKLOADS.iter().filter(|w| s.wants(w)).count();

    let rounds = args.rounds.unwrap_or(if args.quick { 1 } else { 5 }).clamp(1, reps);
    s.reps = reps.div_ceil(rounds);
    let steps = (n_workloads * (1 + args.mlx_kernels as usize) + peers.len()) * rounds;
    let mut progress = Progress::new(steps);
    let dir = tempfile::tempdir()?;
    let spec_path = dir.path().join("spec.json");
    std::fs::write(&spec_path, s.to_json(&path, args.threads).to_string())?;
    let mlx_kernels = if args.mlx_kernels { Some(Model::load_with(&path, LoadOptions { cpu_kernels: false, ..locations.load })?) } else { None };

    // Every round runs Laya, then each peer, on the same spec; the samples of all rounds are pooled.
    let mut engines = serde_json::Map::new();
    let mut failures = vec![];
    for _ in 0..rounds {
        let laya = run_laya(&model, &s, &mut progress, "laya")?;
        merge(&mut engines, "laya", json!({"engine": "laya", "kernels": model.info.kernels, "load_ms": load_ms, "workloads": laya}));
        if let Some(m) = &mlx_kernels {
            let r = run_laya(m, &s, &mut progress, "laya (MLX kernels)")?;
            merge(&mut engines, "laya-mlx-kernels", json!({"engine": "laya with MLX's CPU kernels", "workloads": r}));
        }
        for peer in &peers {
            if engines.get(*peer).is_some_and(|e| e.get("failed").is_some()) {
                continue;
            }
            match run_peer(peer, &spec_path) {
                Ok(v) => merge(&mut engines, peer, v),
                Err(e) => {
                    failures.push(format!("{e:#}"));
                    engines.insert(peer.to_string(), json!({"failed": true}));
                }
            }
            progress.step(peer);
        }
    }
    engines.retain(|_, e| e.get("failed").is_none());
    if let Some(e) = engines.get_mut("laya") {
        e["peak_rss_bytes"] = json!(peak_rss_bytes());
    }
    let report = json!({
        "model": path,
        "mlx": laya_model::mlx_version(),
        "device": laya_model::device_name(),
        "threads": args.threads,
        "reps": s.reps * rounds,
        "rounds": rounds,
        "load_average": load_average(),
        "cores": std::thread::available_parallelism().map_or(0, |n| n.get()),
        "cpu": cpu_report(),
        "engines": engines,
        "ratios": ratios(&engines),
        "errors": failures,
    });
    if let Some(p) = &args.out {
        std::fs::write(p, serde_json::to_string_pretty(&report)?).with_context(|| format!("writing {}", p.display()))?;
    }
    if let Some(p) = &args.svg {
        std::fs::write(p, svg(&report)).with_context(|| format!("writing {}", p.display()))?;
    }
    if args.json {
        out(&report.to_string())?;
    } else {
        print_tables(&report)?;
    }
    if !failures.is_empty() {
        bail!("{} peer(s) could not run:\n{}", failures.len(), failures.join("\n"));
    }
    Ok(())
}

/// Adds one round's report of an engine to the pooled one: samples are concatenated and the
/// quantiles recomputed; everything else (checks, configuration) is kept from the first round.
fn merge(engines: &mut serde_json::Map<String, Value>, name: &str, round: Value) {
    let Some(pooled) = engines.get_mut(name) else {
        engines.insert(name.to_string(), round);
        return;
    };
    let Some(workloads) = round["workloads"].as_object() else { return };
    for (w, r) in workloads {
        let Some(p) = pooled["workloads"].get_mut(w) else { continue };
        let mut all: Vec<f64> = p["samples_ms"].as_array().into_iter().flatten().filter_map(Value::as_f64).collect();
        all.extend(r["samples_ms"].as_array().into_iter().flatten().filter_map(Value::as_f64));
        let samples = Samples(all);
        for (key, q) in [("median_ms", 0.5), ("p10_ms", 0.1), ("p90_ms", 0.9), ("min_ms", 0.0)] {
            p[key] = json!(samples.quantile(q));
        }
        p["reps"] = json!(samples.0.len());
        p["samples_ms"] = json!(samples.0);
    }
    if let (Some(peak), Some(r)) = (pooled.get("peak_rss_bytes").and_then(Value::as_u64), round["peak_rss_bytes"].as_u64()) {
        pooled["peak_rss_bytes"] = json!(peak.max(r));
    }
}

fn median(engines: &serde_json::Map<String, Value>, engine: &str, w: &str) -> Option<f64> {
    engines.get(engine)?["workloads"][w]["median_ms"].as_f64()
}

/// laya / peer for every workload both ran (below 1 = Laya is faster).
fn ratios(engines: &serde_json::Map<String, Value>) -> Value {
    let mut r = serde_json::Map::new();
    for peer in engines.keys().filter(|k| *k != "laya") {
        let per: serde_json::Map<String, Value> =
            WORKLOADS.iter().filter_map(|w| Some((w.to_string(), json!(median(engines, "laya", w)? / median(engines, peer, w)?)))).collect();
        r.insert(peer.clone(), Value::Object(per));
    }
    Value::Object(r)
}

fn print_tables(report: &Value) -> anyhow::Result<()> {
    let engines = report["engines"].as_object().expect("engines");
    let names: Vec<&String> = engines.keys().collect();
    out(&format!(
        "model {}  |  MLX {} on {}  |  {} reps  |  load average {}",
        report["model"].as_str().unwrap_or(""),
        report["mlx"].as_str().unwrap_or(""),
        report["device"].as_str().unwrap_or(""),
        report["reps"],
        report["load_average"].as_str().unwrap_or("?")
    ))?;
    let cpu = &report["cpu"];
    let features: Vec<&str> = cpu["features"].as_array().map(|a| a.iter().filter_map(|f| f.as_str()).collect()).unwrap_or_default();
    out(&format!("cpu {}  |  {}  |  kernels: {}", cpu["model"].as_str().unwrap_or("?"), features.join(" "), cpu["kernels"].as_str().unwrap_or("?")))?;
    let mut header = format!("{:<12}", "median ms");
    for n in &names {
        header += &format!(" {:>18}", n);
    }
    for n in names.iter().filter(|n| **n != "laya") {
        header += &format!(" {:>16}", format!("laya/{n}"));
    }
    out(&header)?;
    for w in WORKLOADS {
        let mut line = format!("{w:<12}");
        for n in &names {
            line += &match median(engines, n, w) {
                Some(m) => format!(" {m:>18.2}"),
                None => format!(" {:>18}", "-"),
            };
        }
        for n in names.iter().filter(|n| **n != "laya") {
            line += &match report["ratios"][n.as_str()][w].as_f64() {
                Some(r) => format!(" {:>15.2}x", r),
                None => format!(" {:>16}", "-"),
            };
        }
        out(&line)?;
    }
    let mut rss = format!("{:<12}", "peak RSS MB");
    for n in &names {
        rss += &match engines[n.as_str()]["peak_rss_bytes"].as_f64() {
            Some(b) => format!(" {:>18.0}", b / 1e6),
            None => format!(" {:>18}", "-"),
        };
    }
    out(&rss)
}

/// Medians with p10-p90 whiskers per workload and engine, on a log scale.
fn svg(report: &Value) -> String {
    let engines = report["engines"].as_object().expect("engines");
    let colors = ["#d9480f", "#1c7ed6", "#2b8a3e", "#862e9c"];
    let (w, row_h, left, top) = (900.0, 22.0, 130.0, 40.0);
    let bars: Vec<(&str, &str, usize, f64, f64, f64)> = WORKLOADS
        .iter()
        .flat_map(|wl| {
            engines.iter().enumerate().filter_map(move |(i, (name, e))| {
                let s = &e["workloads"][*wl];
                Some((*wl, name.as_str(), i, s["median_ms"].as_f64()?, s["p10_ms"].as_f64()?, s["p90_ms"].as_f64()?))
            })
        })
        .collect();
    let lo = bars.iter().map(|b| b.4).fold(f64::INFINITY, f64::min).max(0.01);
    let hi = bars.iter().map(|b| b.5).fold(0.0, f64::max).max(lo * 10.0);
    let (l0, l1) = (lo.log10().floor(), hi.log10().ceil());
    let x = |v: f64| left + (v.max(lo).log10() - l0) / (l1 - l0) * (w - left - 30.0);
    let height = top + row_h * bars.len() as f64 + WORKLOADS.len() as f64 * 8.0 + 40.0;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <text x=\"10\" y=\"20\" font-size=\"14\">laya bench: median latency (bar) and p10-p90 (whisker), ms, log scale</text>\n"
    );
    for d in (l0 as i32)..=(l1 as i32) {
        let v = 10f64.powi(d);
        let xv = x(v);
        s += &format!("<line x1=\"{xv:.1}\" y1=\"{top}\" x2=\"{xv:.1}\" y2=\"{:.1}\" stroke=\"#ddd\"/>\n", height - 30.0);
        s += &format!("<text x=\"{xv:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{v}</text>\n", height - 15.0);
    }
    let mut y = top;
    let mut last = "";
    for (wl, name, i, med, p10, p90) in &bars {
        if *wl != last {
            if !last.is_empty() {
                y += 8.0;
            }
            s += &format!("<text x=\"10\" y=\"{:.1}\">{wl}</text>\n", y + 14.0);
            last = wl;
        }
        let c = colors[i % colors.len()];
        s += &format!(
            "<rect x=\"{left}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{c}\" opacity=\"0.75\"><title>{name} {wl}: {med:.2} ms</title></rect>\n",
            y + 3.0,
            (x(*med) - left).max(1.0),
            row_h - 6.0
        );
        s += &format!(
            "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#333\"/>\n",
            x(*p10),
            y + row_h / 2.0,
            x(*p90),
            y + row_h / 2.0
        );
        s += &format!("<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\">{name} {med:.1}</text>\n", x(*p90) + 4.0, y + 15.0);
        y += row_h;
    }
    s + "</svg>\n"
}

/// `laya bench --replay`: see serve/replay.rs.
fn replay(args: &Args) -> anyhow::Result<()> {
    if args.model.model.is_some() {
        bail!("--replay uses the server's model setting: set LAYA_MODEL instead of --model");
    }
    let file = match &args.replay_file {
        Some(f) => f.clone(),
        None => repo_root()
            .map_err(|_| anyhow::anyhow!("the replay's default text, tests/data/prose-sample.txt, is in the Laya repository: run from there or pass --replay-file FILE.txt"))?
            .join("tests/data/prose-sample.txt"),
    };
    let text = std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
    let limit = args.chars.unwrap_or(if args.quick { 300 } else { 1500 });
    let report = crate::serve::replay::run(crate::serve::replay::Replay { text, pace_ms: args.pace_ms, limit })?;
    if let Some(p) = &args.out {
        std::fs::write(p, serde_json::to_string_pretty(&report)?).with_context(|| format!("writing {}", p.display()))?;
    }
    if args.json {
        return out(&report.to_string());
    }
    out(&format!(
        "replay of {} ({} characters at {} ms a key), load average {}",
        file.display(),
        report["characters"],
        args.pace_ms,
        report["load_average"].as_str().unwrap_or("?")
    ))?;
    out(&format!("cpu {}  |  kernels: {}", report["cpu"]["model"].as_str().unwrap_or("?"), report["cpu"]["kernels"].as_str().unwrap_or("?")))?;
    let row = |name: &str, v: &Value| {
        format!(
            "{name:<34} p50 {:>7.2}  p95 {:>7.2}  p99 {:>7.2} ms  (n {})",
            v["p50_ms"].as_f64().unwrap_or(f64::NAN),
            v["p95_ms"].as_f64().unwrap_or(f64::NAN),
            v["p99_ms"].as_f64().unwrap_or(f64::NAN),
            v["n"]
        )
    };
    out(&row("ghost text, per keystroke", &report["ghost_text"]))?;
    out(&row("  of which engine jobs", &report["ghost_engine"]))?;
    out(&row("typo re-check (asked to answer)", &report["typo_recheck_engine"]))?;
    out(&format!("{:<34} {}", "  re-checks cut short by a key", report["typo_rechecks_interrupted"]))?;
    for (name, f, t) in [
        ("forwards per ghost-text job", "forwards_per_ghost_job", "token_positions_per_ghost_job"),
        ("forwards per whole re-check", "forwards_per_recheck", "token_positions_per_recheck"),
    ] {
        let (f, t) = (&report[f], &report[t]);
        let n = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
        out(&format!(
            "{name:<34} mean {:.2} (p50 {:.1}, p95 {:.1}); token positions mean {:.1} (p50 {:.1}, p95 {:.1})",
            n(&f["mean"]),
            n(&f["p50"]),
            n(&f["p95"]),
            n(&t["mean"]),
            n(&t["p50"]),
            n(&t["p95"])
        ))?;
    }
    out(&format!("{:<34} {} ({} forwards, while idle)", "ghost texts worked out ahead", report["speculations"], report["speculative_forwards"]))?;
    out(&format!(
        "{:<34} {} (a forward each, while idle; {} left for want of time)",
        "next letters' first steps ahead", report["letter_steps"], report["letter_steps_skipped"]
    ))?;
    out(&format!("{:<34} {} ({} forwards, while idle)", "words scored ahead of re-checks", report["checked_ahead"], report["check_ahead_forwards"]))?;
    out(&format!("{:<34} {:.1}%", "keystrokes that re-prefilled", 100.0 * report["reprefill_share"].as_f64().unwrap_or(0.0)))?;
    out(&format!("{:<34} {} (digest {})", "suggestions shown", report["suggestions_shown"], report["suggestions_digest"].as_str().unwrap_or("-")))?;
    out(&format!(
        "{:<34} {:.1} MB (budget {:.0} MB)",
        "KV caches",
        report["cache_bytes"].as_f64().unwrap_or(0.0) / 1e6,
        report["budget_bytes"].as_f64().unwrap_or(0.0) / 1e6
    ))
}
