//! Checks a `.safetensors` file's header against its size before MLX reads it, so a truncated
//! or corrupt download gets a clear error instead of a read past the end.

use std::io::Read;
use std::path::Path;

use crate::error::{ModelError, Result};

pub(crate) fn check(path: &Path) -> Result<()> {
    let corrupt = |reason: String| ModelError::Corrupt { path: path.to_path_buf(), reason };
    let mut f = std::fs::File::open(path).map_err(|e| ModelError::io(path, e))?;
    let len = f.metadata().map_err(|e| ModelError::io(path, e))?.len();
    let mut n = [0u8; 8];
    f.read_exact(&mut n).map_err(|_| corrupt("shorter than a safetensors header".into()))?;
    let header_len = u64::from_le_bytes(n);
    if header_len > len.saturating_sub(8) || header_len > 100 << 20 {
        return Err(corrupt(format!("header of {header_len} bytes does not fit in a {len}-byte file")));
    }
    let mut header = vec![0u8; header_len as usize];
    f.read_exact(&mut header).map_err(|e| corrupt(format!("reading the header: {e}")))?;
    let header: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&header).map_err(|e| corrupt(format!("header is not valid JSON: {e}")))?;
    let data_len = len - 8 - header_len;
    for (name, info) in &header {
        if name == "__metadata__" {
            continue;
        }
        let end = info
            .get("data_offsets")
            .and_then(|o| o.get(1))
            .and_then(|e| e.as_u64())
            .ok_or_else(|| corrupt(format!("tensor {name} has no data_offsets")))?;
        if end > data_len {
            return Err(corrupt(format!(
                "tensor {name} ends at byte {end} of the data but the file holds {data_len}: \
                 the file is truncated, download it again"
            )));
        }
    }
    Ok(())
}
