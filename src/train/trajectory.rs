//! Trajectory references (`export --steps`, `wt.trajectory`): a run's first steps with their
//! losses, learning rates and gradient norms, and its parameters along the way.

use super::trainer::Trainer;
use crate::error::{Error, Result};
use crate::io::tensors::Tensor;
use crate::io::weights::{FileMeta, param_tensors};
use crate::numerics::Scalar;

/// Train `steps` steps from the trainer's state and collect a trajectory reference: `losses`,
/// `lr` and `grad_norm_sq` per step (the format of the TransformerLens harness's dumps,
/// golden/tl/traj_*), the parameters after the last step under TL names, and with `every` the
/// parameters after every `every` steps as `step_NNNNNN.<name>`. No periodic eval is paid for.
pub fn trajectory_tensors<S: Scalar>(
    tr: &mut Trainer<S>,
    steps: u64,
    every: Option<u64>,
) -> Result<(Vec<Tensor>, String)> {
    let (mut losses, mut lr, mut gn2) = (vec![], vec![], vec![]);
    let mut out = vec![];
    for s in 1..=steps {
        // Ctrl-C (the Python binding sets the flag when the interpreter sees SIGINT).
        if super::progress::interrupted() {
            return Err(Error::Interrupted { step: s - 1, run: None });
        }
        let stats = tr.step()?;
        losses.push(stats.loss);
        lr.push(tr.state.last_lr);
        gn2.push(stats.grad_norm_sq);
        if every.is_some_and(|k| s % k == 0 && s < steps) {
            out.extend(
                param_tensors(&tr.model).into_iter().map(|t| Tensor { name: format!("step_{s:06}.{}", t.name), ..t }),
            );
        }
    }
    out.extend(param_tensors(&tr.model));
    let n = vec![steps as usize];
    out.push(Tensor::from_scalars("losses", n.clone(), &losses));
    out.push(Tensor::from_scalars("lr", n.clone(), &lr));
    out.push(Tensor::from_scalars("grad_norm_sq", n, &gn2));
    Ok((out, FileMeta::new("trajectory", &tr.model.cfg, S::NAME).to_json()))
}
