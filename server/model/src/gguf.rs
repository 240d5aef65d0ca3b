//! Reads and validates a GGUF file's header (metadata and tensor table) before any tensor is read.
//!
//! We check that every tensor's bytes lie inside the file, that its rows hold whole blocks and
//! that its type is one we can use; `gguf_tensors` then reads the tensors at those offsets (MLX's
//! own GGUF loader trusted the file, read past the end of truncated ones, and knew few types).
//! The parsed metadata also gives us the list of keys and the tokenizer arrays.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use crate::error::ModelError;

const MAGIC: &[u8; 4] = b"GGUF";

/// One metadata value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Uint(u64),
    Int(i64),
    Float(f64),
    Bool(bool),
    String(String),
    Array(Vec<Value>),
}

impl Value {
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::Uint(v) => Some(v),
            Value::Int(v) if v >= 0 => Some(v as u64),
            _ => None,
        }
    }
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::Float(v) => Some(v),
            Value::Uint(v) => Some(v as f64),
            Value::Int(v) => Some(v as f64),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
}

/// The GGML tensor types Laya can load, and the bytes each block of elements takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(non_camel_case_types)] // ggml's names
pub enum TensorType {
    F32,
    F16,
    BF16,
    Q4_0,
    Q4_1,
    Q5_0,
    Q5_1,
    Q8_0,
    Q2_K,
    Q3_K,
    Q4_K,
    Q5_K,
    Q6_K,
}

/// The types of [`TensorType`], for error messages.
pub const SUPPORTED_TYPES: &str = "F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K and Q6_K";

impl TensorType {
    fn from_ggml(id: u32) -> Result<Self, String> {
        Ok(match id {
            0 => Self::F32,
            1 => Self::F16,
            2 => Self::Q4_0,
            3 => Self::Q4_1,
            6 => Self::Q5_0,
            7 => Self::Q5_1,
            8 => Self::Q8_0,
            10 => Self::Q2_K,
            11 => Self::Q3_K,
            12 => Self::Q4_K,
            13 => Self::Q5_K,
            14 => Self::Q6_K,
            30 => Self::BF16,
            other => return Err(ggml_type_name(other)),
        })
    }
    /// (elements per block, bytes per block). A row (the innermost dimension) holds whole blocks.
    pub fn block(self) -> (u64, u64) {
        match self {
            Self::F32 => (1, 4),
            Self::F16 | Self::BF16 => (1, 2),
            Self::Q4_0 => (32, 18),
            Self::Q4_1 => (32, 20),
            Self::Q5_0 => (32, 22),
            Self::Q5_1 => (32, 24),
            Self::Q8_0 => (32, 34),
            Self::Q2_K => (256, 84),
            Self::Q3_K => (256, 110),
            Self::Q4_K => (256, 144),
            Self::Q5_K => (256, 176),
            Self::Q6_K => (256, 210),
        }
    }
}

fn ggml_type_name(id: u32) -> String {
    let name = match id {
        9 => "Q8_1",
        15 => "Q8_K",
        16..=23 => "IQ (i-quant)",
        24 => "I8",
        25 => "I16",
        26 => "I32",
        27 => "I64",
        28 => "F64",
        29 => "IQ1_M",
        34 => "TQ1_0",
        35 => "TQ2_0",
        39 => "MXFP4",
        _ => return format!("GGML type {id}"),
    };
    name.to_string()
}

#[derive(Debug, Clone)]
pub struct TensorInfo {
    pub name: String,
    /// GGUF order: innermost (contiguous) dimension first.
    pub dims: Vec<u64>,
    pub ty: TensorType,
    /// Absolute offset of the tensor's bytes in the file.
    pub offset: u64,
    pub nbytes: u64,
}

#[derive(Debug)]
pub struct GgufHeader {
    pub version: u32,
    pub metadata: BTreeMap<String, Value>,
    pub tensors: Vec<TensorInfo>,
    pub file_len: u64,
}

impl GgufHeader {
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.metadata.get(key)
    }
    pub fn str(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Value::as_str)
    }
    pub fn u64(&self, key: &str) -> Option<u64> {
        self.get(key).and_then(Value::as_u64)
    }
    pub fn f64(&self, key: &str) -> Option<f64> {
        self.get(key).and_then(Value::as_f64)
    }
    pub fn strings(&self, key: &str) -> Option<Vec<&str>> {
        self.get(key)?.as_array()?.iter().map(Value::as_str).collect()
    }
    pub fn tensor(&self, name: &str) -> Option<&TensorInfo> {
        self.tensors.iter().find(|t| t.name == name)
    }
}

/// A reader that knows its position and refuses to read past the end of the file.
struct Cursor<R> {
    inner: R,
    pos: u64,
    len: u64,
}

impl<R: Read> Cursor<R> {
    fn bytes(&mut self, n: u64, what: &str) -> Result<Vec<u8>, String> {
        if n > self.len.saturating_sub(self.pos) {
            return Err(format!(
                "{what} needs {n} bytes at offset {} but the file ends at {}: it is truncated, \
                 download it again",
                self.pos, self.len
            ));
        }
        let mut buf = vec![0u8; n as usize];
        self.inner.read_exact(&mut buf).map_err(|e| format!("reading {what} at offset {}: {e}", self.pos))?;
        self.pos += n;
        Ok(buf)
    }
    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], String> {
        let v = self.bytes(N as u64, what)?;
        Ok(v.try_into().expect("length checked"))
    }
    fn u32(&mut self, what: &str) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }
    fn u64(&mut self, what: &str) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }
    fn string(&mut self, what: &str) -> Result<String, String> {
        let n = self.u64(what)?;
        let b = self.bytes(n, what)?;
        String::from_utf8(b).map_err(|_| format!("{what} is not valid UTF-8"))
    }
    fn value(&mut self, ty: u32, what: &str) -> Result<Value, String> {
        Ok(match ty {
            0 => Value::Uint(self.array::<1>(what)?[0] as u64),
            1 => Value::Int(self.array::<1>(what)?[0] as i8 as i64),
            2 => Value::Uint(u16::from_le_bytes(self.array(what)?) as u64),
            3 => Value::Int(i16::from_le_bytes(self.array(what)?) as i64),
            4 => Value::Uint(self.u32(what)? as u64),
            5 => Value::Int(i32::from_le_bytes(self.array(what)?) as i64),
            6 => Value::Float(f32::from_le_bytes(self.array(what)?) as f64),
            7 => Value::Bool(self.array::<1>(what)?[0] != 0),
            8 => Value::String(self.string(what)?),
            9 => {
                let elem = self.u32(what)?;
                let count = self.u64(what)?;
                // Every element takes at least one byte: a count beyond the file is corrupt, and
                // checking first keeps a bad count from allocating gigabytes.
                if count > self.len.saturating_sub(self.pos) {
                    return Err(format!(
                        "{what}: an array of {count} elements cannot fit in the {} bytes left: \
                         the file is truncated or corrupt",
                        self.len.saturating_sub(self.pos)
                    ));
                }
                let mut out = Vec::with_capacity(count as usize);
                for _ in 0..count {
                    out.push(self.value(elem, what)?);
                }
                Value::Array(out)
            }
            10 => Value::Uint(self.u64(what)?),
            11 => Value::Int(i64::from_le_bytes(self.array(what)?)),
            12 => Value::Float(f64::from_le_bytes(self.array(what)?)),
            other => return Err(format!("{what} has unknown value type {other}")),
        })
    }
}

/// Parses and validates the header of the GGUF file at `path`.
pub fn read_header(path: &Path) -> Result<GgufHeader, ModelError> {
    let corrupt = |reason: String| ModelError::Corrupt { path: path.to_path_buf(), reason };
    let (mut c, version, n_tensors, metadata) = metadata_of(path)?;
    let len = c.len;

    let mut raw = Vec::with_capacity(n_tensors as usize);
    for _ in 0..n_tensors {
        let name = c.string("tensor name").map_err(corrupt)?;
        let n_dims = c.u32(&name).map_err(corrupt)?;
        if n_dims == 0 || n_dims > 4 {
            return Err(corrupt(format!("tensor {name} has {n_dims} dimensions")));
        }
        let dims = (0..n_dims).map(|_| c.u64(&name)).collect::<Result<Vec<_>, _>>().map_err(corrupt)?;
        let ty = c.u32(&name).map_err(corrupt)?;
        let offset = c.u64(&name).map_err(corrupt)?;
        raw.push((name, dims, ty, offset));
    }

    let alignment = metadata.get("general.alignment").and_then(Value::as_u64).unwrap_or(32).max(1);
    let data_start = c.pos.div_ceil(alignment) * alignment;
    let mut tensors = Vec::with_capacity(raw.len());
    for (name, dims, ty, offset) in raw {
        let ty = TensorType::from_ggml(ty).map_err(|t| ModelError::UnsupportedQuantization {
            path: path.to_path_buf(),
            detail: format!(
                "tensor {name} is {t}; Laya loads GGUF tensors of type {SUPPORTED_TYPES} \
                 (convert the model with llama.cpp's `llama-quantize MODEL OUT Q4_K_M`, or use an \
                 mlx-community checkpoint)"
            ),
        })?;
        let elems = dims.iter().try_fold(1u64, |a, &d| a.checked_mul(d).filter(|_| d <= i32::MAX as u64));
        let (per_block, block_bytes) = ty.block();
        // ggml stores whole blocks per row: a row length that is not a multiple of the block
        // cannot come from llama.cpp.
        if dims[0] % per_block != 0 {
            return Err(corrupt(format!(
                "tensor {name} is {ty:?}, whose rows hold whole blocks of {per_block} values, but its \
                 rows hold {} values (shape {dims:?})",
                dims[0]
            )));
        }
        let nbytes = match elems {
            Some(n) => (n / per_block).checked_mul(block_bytes),
            None => None,
        };
        let Some(nbytes) = nbytes else {
            return Err(corrupt(format!("tensor {name} has impossible shape {dims:?} for {ty:?}")));
        };
        let start = data_start.checked_add(offset);
        match start.and_then(|s| s.checked_add(nbytes)) {
            Some(end) if end <= len => {}
            _ => {
                return Err(corrupt(format!(
                    "tensor {name} ({nbytes} bytes at data offset {offset}) lies past the end of the \
                     file ({len} bytes): the file is truncated, download it again"
                )))
            }
        }
        tensors.push(TensorInfo { name, dims, ty, offset: data_start + offset, nbytes });
    }
    Ok(GgufHeader { version, metadata, tensors, file_len: len })
}

/// The metadata of the GGUF file at `path` alone, its tensors unread: enough for the tokenizer,
/// whatever the tensors' types (`tensors` is empty).
pub fn read_metadata(path: &Path) -> Result<GgufHeader, ModelError> {
    let (c, version, _, metadata) = metadata_of(path)?;
    Ok(GgufHeader { version, metadata, tensors: Vec::new(), file_len: c.len })
}

/// Opens a GGUF file and reads it up to its tensor infos: (the reader there, version, tensor
/// count, metadata).
#[allow(clippy::type_complexity)]
fn metadata_of(path: &Path) -> Result<(Cursor<BufReader<File>>, u32, u64, BTreeMap<String, Value>), ModelError> {
    let corrupt = |reason: String| ModelError::Corrupt { path: path.to_path_buf(), reason };
    let file = File::open(path).map_err(|e| ModelError::io(path, e))?;
    let len = file.metadata().map_err(|e| ModelError::io(path, e))?.len();
    let mut c = Cursor { inner: BufReader::with_capacity(1 << 20, file), pos: 0, len };

    let magic = c.array::<4>("magic").map_err(corrupt)?;
    if &magic != MAGIC {
        return Err(corrupt("not a GGUF file (the first 4 bytes are not \"GGUF\")".into()));
    }
    let version = c.u32("version").map_err(corrupt)?;
    if !(2..=3).contains(&version) {
        return Err(corrupt(format!("GGUF version {version} is not supported (2 and 3 are)")));
    }
    let n_tensors = c.u64("tensor count").map_err(corrupt)?;
    let n_kv = c.u64("metadata count").map_err(corrupt)?;
    if n_tensors > len || n_kv > len {
        return Err(corrupt(format!("impossible counts: {n_tensors} tensors, {n_kv} metadata keys")));
    }

    let mut metadata = BTreeMap::new();
    for _ in 0..n_kv {
        let key = c.string("metadata key").map_err(corrupt)?;
        let ty = c.u32(&key).map_err(corrupt)?;
        let value = c.value(ty, &key).map_err(corrupt)?;
        metadata.insert(key, value);
    }

    Ok((c, version, n_tensors, metadata))
}
