use super::{Dtype, Outcome};
use crate::check::horizon::measure;
use crate::error::Result;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    run: super::train::RunArgs,
    /// f32 (default) or f64.
    #[arg(long, value_parser = super::dtype_parser())]
    dtype: Option<Dtype>,
    /// Index into the flat parameter buffer of the parameter moved by one ulp (default: the
    /// middle one, inside a block's weights; index 0 is the embedding of a token never seen).
    #[arg(long)]
    param: Option<usize>,
    #[command(flatten)]
    out: super::Output,
}

pub fn run(a: Args) -> Result<Outcome> {
    let cfg = a.run.load()?;
    a.out.note(format!(
        "training the run twice ({} steps at most each), one parameter one ulp apart",
        cfg.train.max_steps
    ));
    let h = crate::with_scalar!(a.dtype.unwrap_or(Dtype::F32), S => measure::<S>(&cfg, a.param)?);
    a.out.emit(&serde_json::json!(h));
    if a.out.text() {
        print!("{}", h.render());
    }
    Ok(Outcome::Ok)
}
