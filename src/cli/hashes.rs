use super::{Dtype, Outcome};
use crate::io::golden::{fixture_hashes, render};

#[derive(clap::Args)]
pub struct Args {
    /// Scalar type of the computation.
    #[arg(long, default_value = "f32", value_parser = super::dtype_parser())]
    dtype: Dtype,
    #[command(flatten)]
    out: super::Output,
}

pub fn run(a: Args) -> crate::Result<Outcome> {
    let rows = match a.dtype {
        Dtype::F32 => fixture_hashes::<f32>(),
        Dtype::F64 => fixture_hashes::<f64>(),
    };
    let hashes: Vec<_> = rows.iter().map(|(name, hash)| serde_json::json!({"name": name, "hash": hash})).collect();
    a.out.emit(&serde_json::json!({
        "arithmetic": crate::numerics::ARITHMETIC, "dtype": a.dtype.name(), "hashes": hashes,
    }));
    if a.out.text() {
        print!("{}", render(&rows));
    }
    Ok(Outcome::Ok)
}
