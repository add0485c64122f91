//! safetensors files: a dtype-tagged tensor type, atomic writes, and a reader that turns every
//! malformed file into a clear error (never a panic).
//!
//! Metadata is a single `__metadata__` key, `"windtunnel"`, holding one JSON string, so the header
//! bytes are deterministic (safetensors serialises its metadata map in hash order).

use crate::error::{Error, Result};
use crate::numerics::{Dtype, Scalar};
use safetensors::{SafeTensors, View};
use std::borrow::Cow;
use std::path::Path;

/// The one metadata key windtunnel writes.
pub const META_KEY: &str = "windtunnel";

#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    F32(Vec<f32>),
    F64(Vec<f64>),
    I64(Vec<i64>),
    /// A dtype windtunnel does not compute with (U64, F8, …); kept by name, compared as a failure.
    Other(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    pub name: String,
    pub shape: Vec<usize>,
    pub values: Values,
}

impl Tensor {
    pub fn from_scalars<S: Scalar>(name: impl Into<String>, shape: Vec<usize>, xs: &[S]) -> Tensor {
        let values = match S::DTYPE {
            Dtype::F32 => Values::F32(xs.iter().map(|x| x.value() as f32).collect()),
            Dtype::F64 => Values::F64(xs.iter().map(|x| x.value()).collect()),
        };
        Tensor { name: name.into(), shape, values }
    }

    pub fn i64(name: impl Into<String>, shape: Vec<usize>, xs: Vec<i64>) -> Tensor {
        Tensor { name: name.into(), shape, values: Values::I64(xs) }
    }

    pub fn dtype_name(&self) -> &str {
        match &self.values {
            Values::F32(_) => "F32",
            Values::F64(_) => "F64",
            Values::I64(_) => "I64",
            Values::Other(d) => d,
        }
    }

    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// Values widened to f64 (exact for f32 and for |i64| < 2⁵³); `None` for other dtypes.
    pub fn to_f64(&self) -> Option<Vec<f64>> {
        match &self.values {
            Values::F32(v) => Some(v.iter().map(|&x| x as f64).collect()),
            Values::F64(v) => Some(v.clone()),
            Values::I64(v) => Some(v.iter().map(|&x| x as f64).collect()),
            Values::Other(_) => None,
        }
    }

    /// Values converted to the scalar type S (f64 → f32 rounds to nearest).
    pub fn to_scalars<S: Scalar>(&self) -> Option<Vec<S>> {
        match &self.values {
            Values::F32(v) => Some(v.iter().map(|&x| S::from_f64(x as f64)).collect()),
            Values::F64(v) => Some(v.iter().map(|&x| S::from_f64(x)).collect()),
            _ => None,
        }
    }

    fn bytes(&self) -> Vec<u8> {
        match &self.values {
            Values::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Values::F64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Values::I64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Values::Other(_) => vec![],
        }
    }
}

/// Borrowed bytes in the shape the safetensors crate serialises.
struct Raw {
    dtype: safetensors::Dtype,
    shape: Vec<usize>,
    data: Vec<u8>,
}

impl View for &Raw {
    fn dtype(&self) -> safetensors::Dtype {
        self.dtype
    }
    fn shape(&self) -> &[usize] {
        &self.shape
    }
    fn data(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(&self.data)
    }
    fn data_len(&self) -> usize {
        self.data.len()
    }
}

/// Serialise tensors (sorted by the crate: alignment, then name) with optional metadata JSON.
pub fn to_bytes(tensors: &[Tensor], metadata: Option<&str>) -> Result<Vec<u8>> {
    let mut raws = Vec::with_capacity(tensors.len());
    for t in tensors {
        let dtype = match &t.values {
            Values::F32(_) => safetensors::Dtype::F32,
            Values::F64(_) => safetensors::Dtype::F64,
            Values::I64(_) => safetensors::Dtype::I64,
            Values::Other(d) => return Err(Error::other(format!("cannot write tensor {} of dtype {d}", t.name))),
        };
        if t.numel() * dtype.bitsize() / 8 != t.bytes().len() {
            return Err(Error::other(format!("tensor {}: shape {:?} does not match its data", t.name, t.shape)));
        }
        raws.push((t.name.clone(), Raw { dtype, shape: t.shape.clone(), data: t.bytes() }));
    }
    #[allow(clippy::disallowed_types)] // one key: no iteration order can reach the file
    let meta = metadata.map(|m| std::collections::HashMap::from([(META_KEY.to_string(), m.to_string())])); // determinism: one-key map
    safetensors::serialize(raws.iter().map(|(n, r)| (n.as_str(), r)), meta)
        .map_err(|e| Error::other(format!("safetensors serialisation failed: {e}")))
}

/// Write atomically: a temporary file in the same directory, fsync, then rename. An
/// interrupted write leaves the previous file (or none), never a truncated one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().ok_or_else(|| Error::other(format!("{} is not a file path", path.display())))?;
    let tmp = dir.join(format!(".{}.{}.tmp", name.to_string_lossy(), std::process::id()));
    let result = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        if let Ok(d) = std::fs::File::open(dir) {
            d.sync_all().ok();
        }
        Ok(())
    })();
    if result.is_err() {
        std::fs::remove_file(&tmp).ok();
    }
    result.map_err(|e| Error::io(path, e))
}

pub fn write(path: &Path, tensors: &[Tensor], metadata: Option<&str>) -> Result<()> {
    write_atomic(path, &to_bytes(tensors, metadata)?)
}

/// A parsed safetensors file: tensors sorted by name, and windtunnel's metadata if present.
#[derive(Clone, Debug)]
pub struct TensorFile {
    pub tensors: Vec<Tensor>,
    pub metadata: Option<String>,
}

impl TensorFile {
    pub fn get(&self, name: &str) -> Option<&Tensor> {
        self.tensors.binary_search_by(|t| t.name.as_str().cmp(name)).ok().map(|i| &self.tensors[i])
    }
}

/// Memory to read a file of `len` bytes: the bytes twice, and the header's entries parsed (a
/// million one-float tensors, 78 MB of header, measured 1.1 GB: 14 bytes per header byte).
fn read_bytes(path: &Path, len: u64) -> u128 {
    use std::io::Read;
    let mut n = [0u8; 8];
    let header = std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut n)).map_or(0, |_| u64::from_le_bytes(n));
    2 * len as u128 + 16 * header.min(len) as u128
}

/// Read and validate a safetensors file.
pub fn read(path: &Path) -> Result<TensorFile> {
    // A device or pipe (/dev/zero) has no size to check and may never end: only regular files.
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return Err(Error::format(path, "not a regular file (a safetensors file is expected)"));
    }
    crate::memory::check(&format!("reading {}", path.display()), read_bytes(path, meta.len()))?;
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    from_bytes(&bytes).map_err(|m| Error::format(path, m))
}

/// The windtunnel metadata of a safetensors file, reading its header only (the tensors of a
/// resume state are megabytes; `--status` wants one number from it). By hand: the crate's
/// `read_metadata` insists on the whole file.
pub fn read_metadata(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).ok()?;
    let mut n = [0u8; 8];
    f.read_exact(&mut n).ok()?;
    let len = u64::from_le_bytes(n).min(std::fs::metadata(path).ok()?.len());
    let mut header = vec![0u8; usize::try_from(len).ok()?];
    f.read_exact(&mut header).ok()?;
    let v: serde_json::Value = serde_json::from_slice(&header).ok()?;
    Some(v.get("__metadata__")?.get(META_KEY)?.as_str()?.to_string())
}

fn from_bytes(bytes: &[u8]) -> std::result::Result<TensorFile, String> {
    if bytes.len() < 8 {
        return Err(format!("not a safetensors file: {} bytes, shorter than the 8-byte header length", bytes.len()));
    }
    let st = SafeTensors::deserialize(bytes).map_err(|e| format!("not a valid safetensors file ({e})"))?;
    let (_, meta) = SafeTensors::read_metadata(bytes).map_err(|e| format!("not a valid safetensors file ({e})"))?;
    let metadata = meta.metadata().as_ref().and_then(|m| m.get(META_KEY).cloned());
    let mut tensors = Vec::new();
    for (name, view) in st.iter() {
        let shape = view.shape().to_vec();
        let data = view.data();
        let values = decode(view.dtype(), data);
        tensors.push(Tensor { name: name.to_string(), shape, values });
    }
    tensors.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(TensorFile { tensors, metadata })
}

/// Raw little-endian bytes of a dtype → values: f16 and bf16 widen exactly to f32, i32 to i64;
/// dtypes windtunnel does not compute with are kept by name.
fn decode(dtype: safetensors::Dtype, data: &[u8]) -> Values {
    match dtype {
        safetensors::Dtype::F32 => {
            Values::F32(data.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect())
        }
        safetensors::Dtype::F64 => {
            Values::F64(data.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect())
        }
        safetensors::Dtype::I64 => {
            Values::I64(data.chunks_exact(8).map(|c| i64::from_le_bytes(c.try_into().unwrap())).collect())
        }
        safetensors::Dtype::I32 => {
            Values::I64(data.chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().unwrap()) as i64).collect())
        }
        // Smaller integers and bools widen to i64 exactly (token ids and masks come in any of them).
        safetensors::Dtype::I16 => {
            Values::I64(data.chunks_exact(2).map(|c| i16::from_le_bytes([c[0], c[1]]) as i64).collect())
        }
        safetensors::Dtype::U16 => {
            Values::I64(data.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]]) as i64).collect())
        }
        safetensors::Dtype::U32 => {
            Values::I64(data.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap()) as i64).collect())
        }
        safetensors::Dtype::I8 => Values::I64(data.iter().map(|&b| b as i8 as i64).collect()),
        safetensors::Dtype::U8 | safetensors::Dtype::BOOL => Values::I64(data.iter().map(|&b| b as i64).collect()),
        safetensors::Dtype::BF16 => Values::F32(
            data.chunks_exact(2).map(|c| f32::from_bits((u16::from_le_bytes([c[0], c[1]]) as u32) << 16)).collect(),
        ),
        safetensors::Dtype::F16 => {
            Values::F32(data.chunks_exact(2).map(|c| f16_to_f32(u16::from_le_bytes([c[0], c[1]]))).collect())
        }
        other => Values::Other(format!("{other:?}")),
    }
}

impl Tensor {
    /// A tensor from raw little-endian bytes and a safetensors dtype name (`F32`, `F64`, `I64`,
    /// `I32`, `F16`, `BF16`; others are kept by name and cannot be compared), checked against
    /// the shape. The Python package's way in.
    pub fn from_raw(name: &str, dtype: &str, shape: Vec<usize>, data: &[u8]) -> std::result::Result<Tensor, String> {
        let dt: safetensors::Dtype =
            serde_json::from_value(serde_json::Value::String(dtype.to_string())).map_err(|_| {
                format!("tensor {name}: unknown dtype {dtype:?} (allowed F32, F64, I64, I32, F16, BF16, …)")
            })?;
        let numel = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
        if numel.and_then(|n| n.checked_mul(dt.bitsize() / 8)) != Some(data.len()) {
            return Err(format!("tensor {name}: {} bytes do not hold shape {shape:?} of {dtype}", data.len()));
        }
        Ok(Tensor { name: name.to_string(), shape, values: decode(dt, data) })
    }

    /// The values as raw little-endian bytes (empty for a dtype windtunnel does not hold).
    pub fn raw_bytes(&self) -> Vec<u8> {
        self.bytes()
    }
}

/// IEEE half → single (exact).
fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as u32;
    let frac = (h & 0x3ff) as u32;
    let bits = match (exp, frac) {
        (0, 0) => sign,
        (0, _) => {
            // Subnormal: normalise.
            let mut e = 127 - 15 + 1;
            let mut f = frac;
            while f & 0x400 == 0 {
                f <<= 1;
                e -= 1;
            }
            sign | (e << 23) | ((f & 0x3ff) << 13)
        }
        (0x1f, _) => sign | 0x7f80_0000 | (frac << 13),
        _ => sign | ((exp + 127 - 15) << 23) | (frac << 13),
    };
    f32::from_bits(bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_and_errors() {
        let ts = vec![
            Tensor::from_scalars("b", vec![2], &[1.5f32, -2.0]),
            Tensor::from_scalars("a", vec![1, 2], &[0.1f64, 3.0]),
            Tensor::i64("tokens", vec![3], vec![1, 2, -100]),
        ];
        let bytes = to_bytes(&ts, Some("{\"x\":1}")).unwrap();
        let f = from_bytes(&bytes).unwrap();
        assert_eq!(f.metadata.as_deref(), Some("{\"x\":1}"));
        assert_eq!(f.get("a").unwrap().values, Values::F64(vec![0.1, 3.0]));
        assert_eq!(f.get("b").unwrap().values, Values::F32(vec![1.5, -2.0]));
        assert_eq!(f.get("tokens").unwrap().values, Values::I64(vec![1, 2, -100]));
        assert_eq!(to_bytes(&ts, Some("{\"x\":1}")).unwrap(), bytes, "deterministic bytes");
        for cut in [0, 5, 8, 20, bytes.len() - 1] {
            assert!(from_bytes(&bytes[..cut]).is_err(), "truncated at {cut}");
        }
        assert!(from_bytes(b"this is not a safetensors file at all").is_err());
        let mut bad = bytes.clone();
        bad[0] = 0xff;
        assert!(from_bytes(&bad).is_err());
    }

    #[test]
    fn raw_bytes_are_checked_against_dtype_and_shape() {
        let t = Tensor::from_raw("x", "I32", vec![2], &[1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]).unwrap();
        assert_eq!(t.values, Values::I64(vec![1, -1]));
        let f = Tensor::from_scalars("y", vec![], &[0.5f64]);
        assert_eq!(Tensor::from_raw("y", "F64", vec![], &f.raw_bytes()).unwrap(), f);
        assert!(Tensor::from_raw("x", "I32", vec![3], &[0; 8]).unwrap_err().contains("do not hold shape [3]"));
        for (dtype, bytes) in [("I8", vec![0xffu8]), ("I16", vec![0xff, 0xff])] {
            assert_eq!(Tensor::from_raw("x", dtype, vec![1], &bytes).unwrap().values, Values::I64(vec![-1]), "{dtype}");
        }
        for (dtype, bytes, v) in [("U8", vec![200u8], 200), ("BOOL", vec![1], 1), ("U16", vec![0xff, 0xff], 65535)] {
            assert_eq!(Tensor::from_raw("x", dtype, vec![1], &bytes).unwrap().values, Values::I64(vec![v]), "{dtype}");
        }
        assert!(matches!(Tensor::from_raw("x", "U64", vec![1], &[0; 8]).unwrap().values, Values::Other(_)));
        assert!(Tensor::from_raw("x", "Q7", vec![1], &[0]).unwrap_err().contains("unknown dtype \"Q7\""));
        assert!(Tensor::from_raw("x", "F32", vec![usize::MAX, 2], &[]).is_err(), "overflowing shape");
    }

    #[test]
    fn half_precision_decodes_exactly() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x0001), f32::from_bits(0x3380_0000)); // 2^-24
        assert_eq!(f16_to_f32(0x7bff), 65504.0);
        assert!(f16_to_f32(0x7c00).is_infinite());
    }
}
