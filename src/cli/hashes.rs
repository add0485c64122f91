use super::{DtypeArg, Outcome};
use crate::io::golden::{fixture_hashes, render};

#[derive(clap::Args)]
pub struct Args {
    /// Scalar type of the computation.
    #[arg(long, value_enum, default_value = "f32")]
    dtype: DtypeArg,
}

pub fn run(a: Args) -> crate::Result<Outcome> {
    let rows = match a.dtype {
        DtypeArg::F32 => fixture_hashes::<f32>(),
        DtypeArg::F64 => fixture_hashes::<f64>(),
    };
    print!("{}", render(&rows));
    Ok(Outcome::Ok)
}
