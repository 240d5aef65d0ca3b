//! Facts about the MLX runtime Laya runs on: its version and its default device.

/// The version of the MLX library linked in (e.g. "0.32.2").
pub fn mlx_version() -> String {
    // SAFETY: mlx_version fills a string we own and free; its data is a NUL-terminated C string
    // that lives until mlx_string_free.
    unsafe {
        let mut s = mlx_sys::mlx_string_new();
        let v = if mlx_sys::mlx_version(&mut s) == 0 {
            std::ffi::CStr::from_ptr(mlx_sys::mlx_string_data(s)).to_string_lossy().into_owned()
        } else {
            "unknown".to_string()
        };
        mlx_sys::mlx_string_free(s);
        v
    }
}

/// "cpu" or "gpu" (Metal on macOS, CUDA on Linux): where MLX runs by default.
pub fn device_name() -> &'static str {
    match mlx_rs::Device::try_default().and_then(|d| d.get_type()) {
        Ok(mlx_rs::DeviceType::Gpu) if cfg!(target_os = "macos") => "gpu (Metal)",
        Ok(mlx_rs::DeviceType::Gpu) => "gpu (CUDA)",
        Ok(mlx_rs::DeviceType::Cpu) => "cpu",
        Err(_) => "unknown",
    }
}
