use super::{Dtype, Outcome};
use crate::io::golden::{fixture_hashes, render};

#[derive(clap::Args)]
pub struct Args {
    /// Scalar type of the computation.
    #[arg(long, default_value = "f32", value_parser = super::dtype_parser())]
    dtype: Dtype,
}

pub fn run(a: Args) -> crate::Result<Outcome> {
    let rows = match a.dtype {
        Dtype::F32 => fixture_hashes::<f32>(),
        Dtype::F64 => fixture_hashes::<f64>(),
    };
    print!("{}", render(&rows));
    Ok(Outcome::Ok)
}
