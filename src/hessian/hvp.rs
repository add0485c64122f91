//! Exact Hessian-vector products by forward-over-reverse differentiation: the model is run in
//! dual numbers with the parameters' tangents set to `u`; the tangent of the gradient is `H·u`.
//! The loss is the trained loss (mean CE over all scored target tokens, spec §7.8).

use crate::model::{Model, Workspace};
use crate::numerics::dual::Dual;
use crate::task::Batch;

pub struct Hvp {
    model: Model<Dual>,
    ws: Workspace<Dual>,
    grads: Vec<Dual>,
    batch: Batch,
    /// Loss and gradient (value parts) of the last application.
    pub loss: f64,
    pub grad: Vec<f64>,
    /// Number of products computed.
    pub calls: usize,
}

impl Hvp {
    /// An HVP operator at the parameters of `model` (widened exactly to f64) on `batch`.
    pub fn new(model: &Model<f64>, batch: Batch) -> Self {
        let dual: Model<Dual> = model.cast();
        let ws = dual.workspace(batch.batch_size, batch.seq_len);
        let grads = dual.new_grads();
        let n = dual.layout.total;
        Hvp { model: dual, ws, grads, batch, loss: f64::NAN, grad: vec![0.0; n], calls: 0 }
    }

    pub fn dim(&self) -> usize {
        self.model.layout.total
    }

    /// `out = H·u`.
    pub fn apply(&mut self, u: &[f64], out: &mut [f64]) {
        assert_eq!(u.len(), self.dim());
        for (p, &t) in self.model.params.iter_mut().zip(u) {
            p.t = t;
        }
        let loss = self.model.loss_and_grad(&mut self.ws, &self.batch, &mut self.grads);
        self.loss = loss.v;
        for ((o, g), gv) in out.iter_mut().zip(&self.grads).zip(self.grad.iter_mut()) {
            *o = g.t;
            *gv = g.v;
        }
        self.calls += 1;
    }
}
