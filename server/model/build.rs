//! Builds Laya's CPU kernels (cpu/*.cpp, one file per kernel family) against the prebuilt MLX's headers when the build
//! links a prebuilt MLX (Linux: MLX_PREFIX, set by scripts/bootstrap.sh). On macOS, stock mlx-rs
//! builds MLX itself and Metal runs MLX's own kernels, so nothing is compiled here.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(laya_cpu_kernels)");
    println!("cargo:rerun-if-env-changed=MLX_PREFIX");
    println!("cargo:rerun-if-changed=cpu");
    let Ok(prefix) = std::env::var("MLX_PREFIX") else { return };
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() != Ok("x86_64") {
        return;
    }
    cc::Build::new()
        .cpp(true)
        .std("c++20")
        .files(["pool", "qmm", "attention", "softmax", "block"].map(|f| format!("cpu/{f}.cpp")))
        .include(format!("{prefix}/include"))
        .flag("-O3")
        .flag("-fno-math-errno")
        .warnings(false)
        .compile("laya_cpu");
    println!("cargo:rustc-cfg=laya_cpu_kernels");
}
