//! `windtunnel._native`: the Rust side of the Python package. Tensors cross as
//! `(name, dtype, shape, bytes)` tuples (safetensors dtype names, little-endian bytes); the
//! Python side (`windtunnel/__init__.py`) turns them into numpy arrays. Every operation is the
//! library's own (the CLI's `data`, `export`, `export --steps`, `verify`), so both front ends
//! give the same bits and the same judgements.

use pyo3::exceptions::{PyKeyboardInterrupt, PyMemoryError, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::path::{Path, PathBuf};
use windtunnel::check::verify::{VerifyOpts, verify as verify_files};
use windtunnel::config::RunConfig;
use windtunnel::error::Error;
use windtunnel::io::tensors::{self, Tensor, TensorFile};
use windtunnel::io::{export, weights};
use windtunnel::model::ModelConfig;
use windtunnel::numerics::{Dtype, Scalar};
use windtunnel::task::{generate, sha_gen, sha_train, train_split};

/// A tensor as it crosses into Python.
type Out<'py> = (String, String, Vec<usize>, Bound<'py, PyBytes>);
/// A tensor as it comes from Python.
type In<'py> = (String, String, Vec<usize>, Bound<'py, PyBytes>);

/// The library's errors as Python's: bad values are `ValueError`, files `OSError`.
fn py_err(e: Error) -> PyErr {
    match e {
        Error::Config { .. } | Error::Format { .. } => PyValueError::new_err(e.to_string()),
        Error::Io { .. } => PyOSError::new_err(e.to_string()),
        Error::Other(_) | Error::Locked(_) | Error::Diverged { .. } | Error::Refused(_) | Error::Slurm(_) => {
            PyRuntimeError::new_err(e.to_string())
        }
        Error::Memory { .. } => PyMemoryError::new_err(e.to_string()),
        Error::Interrupted { .. } => PyKeyboardInterrupt::new_err(e.to_string()),
    }
}

/// Run `work` without the GIL on a thread of its own while this thread checks for signals: Ctrl-C
/// sets the library's interrupt flag (the step loop stops after its step) and is raised here as
/// the interpreter's own KeyboardInterrupt.
fn interruptible<T: Send>(py: Python<'_>, work: impl FnOnce() -> windtunnel::error::Result<T> + Send) -> PyResult<T> {
    use std::sync::atomic::Ordering;
    use windtunnel::train::progress::INTERRUPT;
    let mut signal: Option<PyErr> = None;
    let out = py.detach(|| {
        std::thread::scope(|scope| {
            let handle = scope.spawn(work);
            while !handle.is_finished() {
                std::thread::sleep(std::time::Duration::from_millis(20));
                if signal.is_none()
                    && let Err(e) = Python::attach(|py| py.check_signals())
                {
                    INTERRUPT.store(true, Ordering::Relaxed);
                    signal = Some(e);
                }
            }
            handle.join()
        })
    });
    INTERRUPT.store(false, Ordering::Relaxed);
    let out = out.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
    match (signal, out) {
        // The step loop saw the flag: KeyboardInterrupt saying where it stopped.
        (Some(_), Err(e @ Error::Interrupted { .. })) => Err(py_err(e)),
        // Any other end after Ctrl-C: the interpreter's own KeyboardInterrupt.
        (Some(signal), _) => Err(signal),
        (None, out) => out.map_err(py_err),
    }
}

fn to_py<'py>(py: Python<'py>, ts: &[Tensor]) -> Vec<Out<'py>> {
    ts.iter()
        .map(|t| (t.name.clone(), t.dtype_name().to_string(), t.shape.clone(), PyBytes::new(py, &t.raw_bytes())))
        .collect()
}

/// Tensors from Python as a file (sorted by name, as `tensors::read` gives them).
fn from_py(ts: Vec<In<'_>>, what: &str) -> PyResult<TensorFile> {
    let mut tensors = Vec::with_capacity(ts.len());
    for (name, dtype, shape, data) in ts {
        tensors.push(Tensor::from_raw(&name, &dtype, shape, data.as_bytes()).map_err(PyValueError::new_err)?);
    }
    tensors.sort_by(|a, b| a.name.cmp(&b.name));
    if let Some(w) = tensors.windows(2).find(|w| w[0].name == w[1].name) {
        return Err(PyValueError::new_err(format!("{what}: two tensors named {}", w[0].name)));
    }
    Ok(TensorFile { tensors, metadata: None })
}

fn config(path: Option<PathBuf>, sets: &[String]) -> PyResult<RunConfig> {
    RunConfig::load(path.as_deref(), sets).map_err(py_err)
}

/// The library's own Dtype parse (f32/float32, f64/float64), as a ValueError naming `dtype`.
fn dtype_of(dtype: &str) -> PyResult<Dtype> {
    dtype.parse().map_err(|e: String| PyValueError::new_err(format!("invalid `dtype`: {e}")))
}

/// Read a safetensors file: its tensors and windtunnel's metadata JSON, if any.
#[pyfunction]
fn read(py: Python<'_>, path: PathBuf) -> PyResult<(Vec<Out<'_>>, Option<String>)> {
    let f = tensors::read(&path).map_err(py_err)?;
    if let Some(t) = f.tensors.iter().find(|t| matches!(t.values, tensors::Values::Other(_))) {
        let (name, d) = (&t.name, t.dtype_name());
        let allowed = "allowed floats F64/F32/F16/BF16, integers up to 32 bits, I64, BOOL";
        return Err(PyValueError::new_err(format!(
            "{}: tensor {name} has dtype {d}, which windtunnel does not read ({allowed})",
            path.display()
        )));
    }
    Ok((to_py(py, &f.tensors), f.metadata))
}

/// Write a safetensors file atomically.
#[pyfunction]
#[pyo3(signature = (path, tensors, metadata=None))]
fn write(path: PathBuf, tensors: Vec<In<'_>>, metadata: Option<String>) -> PyResult<()> {
    let f = from_py(tensors, "write")?;
    tensors::write(&path, &f.tensors, metadata.as_deref()).map_err(py_err)
}

/// The training set of a config (`tokens`, `labels` [D, T], train order) and its hashes as JSON.
#[pyfunction]
#[pyo3(signature = (config=None, sets=vec![]))]
fn data(py: Python<'_>, config: Option<PathBuf>, sets: Vec<String>) -> PyResult<(Vec<Out<'_>>, String)> {
    let cfg = self::config(config, &sets)?;
    let mapping = generate(&cfg.data).map_err(py_err)?;
    let train = train_split(&mapping);
    let hashes = serde_json::json!({
        "sha_gen": sha_gen(&mapping), "sha_train": sha_train(&train), "examples": train.len(),
        "k": cfg.data.k, "n_b": cfg.data.n_b, "z_length": cfg.data.effective_z_length(),
    });
    Ok((to_py(py, &export::train_set_tensors(&train)), hashes.to_string()))
}

/// `export --batch-size SIZE --batch-seed SEED`'s batch of the config's train set.
#[pyfunction]
#[pyo3(signature = (size, seed, config=None, sets=vec![]))]
fn batch(py: Python<'_>, size: usize, seed: u64, config: Option<PathBuf>, sets: Vec<String>) -> PyResult<Vec<Out<'_>>> {
    let cfg = self::config(config, &sets)?;
    let b = export::sample_batch(&cfg.data, size, seed).map_err(py_err)?;
    Ok(to_py(py, &export::batch_tensors(&b)))
}

/// A model's parameters under TL names: `init` is `seed:N` or a weights file (default: the
/// config's `train.init`, as `export`).
#[pyfunction]
#[pyo3(signature = (init, dtype, config=None, sets=vec![]))]
fn init<'py>(
    py: Python<'py>,
    init: Option<String>,
    dtype: &str,
    config: Option<PathBuf>,
    sets: Vec<String>,
) -> PyResult<(Vec<Out<'py>>, String)> {
    let cfg = self::config(config, &sets)?;
    let init = init.unwrap_or_else(|| cfg.train.init.clone());
    fn params<S: Scalar>(init: &str, cfg: &RunConfig) -> windtunnel::error::Result<(Vec<Tensor>, String)> {
        let m = weights::init_model::<S>(init, &cfg.model)?;
        Ok((weights::param_tensors(&m), weights::FileMeta::new("params", &m.cfg, S::NAME).to_json()))
    }
    let (ts, meta) = windtunnel::with_scalar!(dtype_of(dtype)?, S => params::<S>(&init, &cfg)).map_err(py_err)?;
    Ok((to_py(py, &ts), meta))
}

/// Forward and backward of the parameters in `tensors` on their `tokens`/`labels`: the export
/// file's tensors (parameters, batch, logits, loss, grad.*, and with `hooks` cache.*).
/// Without `config` and `sets`, the model config recorded in `metadata` (a windtunnel or harness
/// file's) is used, else the canonical one.
#[pyfunction]
#[pyo3(signature = (tensors, dtype, hooks=true, config=None, sets=vec![], metadata=None))]
#[allow(clippy::too_many_arguments)]
fn reference<'py>(
    py: Python<'py>,
    tensors: Vec<In<'py>>,
    dtype: &str,
    hooks: bool,
    config: Option<PathBuf>,
    sets: Vec<String>,
    metadata: Option<String>,
) -> PyResult<(Vec<Out<'py>>, String)> {
    let recorded = config.is_none() && sets.is_empty();
    let cfg = self::config(config, &sets)?;
    let mut file = from_py(tensors, "reference")?;
    file.metadata = metadata;
    let here = Path::new("<arrays>");
    let batch = export::batch_from_file(&file, here).map_err(py_err)?;
    let expected = (!recorded).then_some(&cfg.model);
    fn run<S: Scalar>(
        f: &TensorFile,
        expected: Option<&ModelConfig>,
        b: &windtunnel::task::Batch,
        hooks: bool,
    ) -> windtunnel::error::Result<(Vec<Tensor>, String)> {
        let model = weights::model_from_file::<S>(f, Path::new("<arrays>"), expected)?;
        export::export_tensors(&model, b, hooks)
    }
    let dtype = dtype_of(dtype)?;
    let out = py.detach(|| windtunnel::with_scalar!(dtype, S => run::<S>(&file, expected, &batch, hooks)));
    let (ts, meta) = out.map_err(py_err)?;
    Ok((to_py(py, &ts), meta))
}

/// A trajectory reference (`export --steps`): train `steps` steps from `init` (`seed:N`, a file,
/// or parameters in `params`) with the config's data order and schedule.
#[pyfunction]
#[pyo3(signature = (steps, dtype, init=None, params=None, every=None, config=None, sets=vec![]))]
#[allow(clippy::too_many_arguments)]
fn trajectory<'py>(
    py: Python<'py>,
    steps: u64,
    dtype: &str,
    init: Option<String>,
    params: Option<Vec<In<'py>>>,
    every: Option<u64>,
    config: Option<PathBuf>,
    sets: Vec<String>,
) -> PyResult<(Vec<Out<'py>>, String)> {
    if !(1..=1_000_000).contains(&steps) || every == Some(0) {
        return Err(PyValueError::new_err(format!(
            "invalid `steps`/`every`: {steps}/{every:?} (allowed steps 1..=1000000, every ≥ 1)"
        )));
    }
    let cfg = self::config(config, &sets)?;
    let params = params.map(|p| from_py(p, "params")).transpose()?;
    let init = init.unwrap_or_else(|| cfg.train.init.clone());
    fn run<S: Scalar>(
        cfg: RunConfig,
        init: &str,
        params: Option<&TensorFile>,
        steps: u64,
        every: Option<u64>,
    ) -> windtunnel::error::Result<(Vec<Tensor>, String)> {
        let model = match params {
            Some(f) => weights::model_from_file::<S>(f, Path::new("<params>"), Some(&cfg.model))?,
            None => weights::init_model::<S>(init, &cfg.model)?,
        };
        let mut tr = windtunnel::train::Trainer::new(cfg, model, Path::new("."))?;
        windtunnel::train::trajectory::trajectory_tensors(&mut tr, steps, every)
    }
    let dtype = dtype_of(dtype)?;
    let (ts, meta) = interruptible(
        py,
        || windtunnel::with_scalar!(dtype, S => run::<S>(cfg, &init, params.as_ref(), steps, every)),
    )?;
    Ok((to_py(py, &ts), meta))
}

/// `verify`: (passed, report JSON, the full text report, the failures-only text report).
#[pyfunction]
#[pyo3(signature = (reference, other, preset=None, rtol=None, atol=None, keys=vec![], exclude=vec![], rename=vec![], label="other".to_string()))]
#[allow(clippy::too_many_arguments)]
fn verify<'py>(
    reference: Vec<In<'py>>,
    other: Vec<In<'py>>,
    preset: Option<String>,
    rtol: Option<f64>,
    atol: Option<f64>,
    keys: Vec<String>,
    exclude: Vec<String>,
    rename: Vec<(String, String)>,
    label: String,
) -> PyResult<(bool, String, String, String)> {
    let elementwise = match (rtol, atol) {
        (Some(r), Some(a)) => Some((r, a)),
        (None, None) => None,
        _ => return Err(PyValueError::new_err("invalid `rtol`/`atol`: give both or neither")),
    };
    if preset.is_some() && elementwise.is_some() {
        return Err(PyValueError::new_err("invalid `preset`: give a preset or rtol/atol, not both"));
    }
    let opts = VerifyOpts { preset, elementwise, keys, exclude, rename };
    let r = from_py(reference, "reference")?;
    let o = from_py(other, &label)?;
    let report = verify_files(&r, o, &opts, &label).map_err(py_err)?;
    Ok((report.passed, report.to_json().to_string(), report.render(false, true), report.render(true, false)))
}

/// `python -m windtunnel ARGS`: the command-line tool in this process; its exit code.
#[pyfunction]
fn main(py: Python<'_>, argv: Vec<String>) -> u8 {
    py.detach(|| windtunnel::cli::run(argv.into_iter().map(Into::into).collect()))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    windtunnel::config::check_environment().map_err(py_err)?;
    m.add("ARITHMETIC", windtunnel::numerics::ARITHMETIC)?;
    m.add_function(wrap_pyfunction!(read, m)?)?;
    m.add_function(wrap_pyfunction!(write, m)?)?;
    m.add_function(wrap_pyfunction!(data, m)?)?;
    m.add_function(wrap_pyfunction!(batch, m)?)?;
    m.add_function(wrap_pyfunction!(init, m)?)?;
    m.add_function(wrap_pyfunction!(reference, m)?)?;
    m.add_function(wrap_pyfunction!(trajectory, m)?)?;
    m.add_function(wrap_pyfunction!(verify, m)?)?;
    m.add_function(wrap_pyfunction!(main, m)?)?;
    Ok(())
}
