//! The author's training loop (spec §6.5), step by step:
//! `zero_grad → forward/backward → pre-clip grad norm → (clip) → AdamW step → schedule step →
//! window sums → step += 1`, and every `eval_every` steps one [`Record`] evaluated at the
//! post-update parameters (candidate loss with `Random(step)`, z-shuffle on the window's last
//! batch).

use super::batcher::{Batcher, Order, read_order_file};
use super::checkpoint::{TrainState, is_checkpoint_step};
use super::eval::{BatchStats, batch_stats, candidate_eval, z_shuffle_stats};
use super::progress::{Progress, Silent};
use super::record::Record;
use super::tau::Thresholds;
use crate::config::RunConfig;
use crate::error::{Error, Result};
use crate::model::{Model, Workspace};
use crate::numerics::Scalar;
use crate::optim::clip::{clip_grad_norm, total_sq_norm};
use crate::optim::{AdamW, AdamWParams, lr_multiplier};
use crate::task::{Batch, Mapping, TrainSet, generate, train_split};
use std::path::Path;
use std::time::Instant;

pub struct Trainer<S: Scalar> {
    pub cfg: RunConfig,
    pub mapping: Mapping,
    pub train: TrainSet,
    pub model: Model<S>,
    pub opt: AdamW<S>,
    pub state: TrainState,
    grads: Vec<S>,
    ws: Workspace<S>,
    batcher: Batcher,
}

/// Keeps what the loop produces (the display is a [`Progress`]). The CLI writes a run directory;
/// tests keep records in memory.
pub trait Sink<S: Scalar> {
    fn record(&mut self, trainer: &Trainer<S>, record: &Record) -> Result<()>;
    fn checkpoint(&mut self, trainer: &Trainer<S>) -> Result<()>;
    /// Ctrl-C after a step: keep what continuing needs, and say where.
    fn interrupt(&mut self, trainer: &Trainer<S>) -> Error {
        Error::Interrupted { step: trainer.state.step, run: None }
    }
}

impl<S: Scalar> Trainer<S> {
    /// Build the data, the batch order and the optimizer for `cfg`, starting from `model`.
    /// `base_dir` resolves a relative `train.data_order` path.
    pub fn new(cfg: RunConfig, model: Model<S>, base_dir: &Path) -> Result<Self> {
        cfg.validate()?;
        if model.cfg.resolved() != cfg.model.resolved() {
            return Err(Error::other("initial weights were built for another model config"));
        }
        let mapping = generate(&cfg.data)?;
        let train = train_split(&mapping);
        if train.is_empty() {
            return Err(Error::config("data.probe_fraction", "leaves no training examples"));
        }
        let order = match &cfg.train.data_order {
            Some(p) => read_order_file(&base_dir.join(p), train.len())?,
            None => Order::Seeded(cfg.train.order_seed),
        };
        // Every caller (train, export --steps, bench, Python's trajectory) is refused here
        // rather than aborted by the allocator.
        let b = cfg.train.batch_size.min(train.len());
        let bytes = crate::model::memory::training_bytes(&cfg.model, b, train.seq_len(), std::mem::size_of::<S>());
        crate::memory::check(&format!("training at batch {b}"), bytes)?;
        let batcher = Batcher::new(order, train.len(), cfg.train.batch_size);
        let hp = AdamWParams::of(&cfg.train);
        let opt = AdamW::new(hp, model.layout.total);
        let ws = model.workspace(cfg.train.batch_size.min(train.len()), train.seq_len());
        let grads = model.new_grads();
        Ok(Trainer { cfg, mapping, train, model, opt, state: TrainState::default(), grads, ws, batcher })
    }

    /// Replace the model, optimizer moments and state with those of a resumed run.
    pub fn restore(&mut self, model: Model<S>, opt: AdamW<S>, state: TrainState) {
        self.model = model;
        self.opt = opt;
        self.state = state;
    }

    pub fn ln_k(&self) -> f64 {
        self.thresholds().ln_k
    }

    pub fn thresholds(&self) -> Thresholds {
        Thresholds::new(self.cfg.data.k)
    }

    fn batch_at(&mut self, step: u64) -> Result<Batch> {
        let idx = self.batcher.indices(step)?;
        Ok(Batch::gather(&self.train, &idx))
    }

    /// One optimizer step. A non-finite loss or gradient stops with an error *before* the
    /// parameters are touched.
    pub fn step(&mut self) -> Result<BatchStats> {
        let t0 = Instant::now();
        let s = self.state.step;
        let batch = self.batch_at(s)?;
        let tc = &self.cfg.train;
        let lr = tc.lr * lr_multiplier(tc.schedule, s, tc.warmup_steps, tc.max_steps);
        let loss = self.model.loss_and_grad(&mut self.ws, &batch, &mut self.grads);
        let gn2 = total_sq_norm(&self.model.layout, &self.grads);
        if !loss.is_finite() || !gn2.is_finite() {
            return Err(Error::Diverged {
                step: s,
                message: format!(
                    "training diverged at step {s}: loss {} and squared gradient norm {gn2} (lr {lr:e}); \
                     parameters were not updated, and the last good checkpoint is kept",
                    loss.value()
                ),
            });
        }
        let stats = BatchStats { grad_norm_sq: gn2, ..batch_stats(&self.model, &self.ws, &batch, loss) };
        let (gn2_clipped, clipped) = match tc.grad_clip {
            Some(max_norm) => {
                clip_grad_norm(&mut self.grads, gn2, max_norm);
                let after = total_sq_norm(&self.model.layout, &self.grads);
                (after, after < gn2 * 0.999)
            }
            None => (gn2, false),
        };
        self.opt.step(&mut self.model.params, &self.grads, lr);
        let st = &mut self.state;
        st.step += 1;
        st.examples_seen += batch.batch_size as u64;
        st.last_lr = lr;
        st.window.add(&stats, gn2, gn2_clipped, clipped);
        st.train_seconds += t0.elapsed().as_secs_f64();
        Ok(stats)
    }

    /// The eval record at the current step (post-update parameters); resets the window and
    /// updates T1 and the stopping rules.
    pub fn evaluate(&mut self) -> Result<Record> {
        let t0 = Instant::now();
        let step = self.state.step;
        let (epoch, _) = self.batcher.locate(step.saturating_sub(1));
        let mut r = Record {
            step,
            epoch,
            examples_seen: self.state.examples_seen,
            tokens_seen: self.state.examples_seen * self.train.seq_len() as u64,
            lr: self.state.last_lr,
            ..Record::default()
        };
        self.state.window.fill(&mut r);
        let c = candidate_eval(&self.model, &mut self.ws, &self.mapping, self.cfg.train.candidate_groups, step as i64);
        r.candidate_loss = Some(c.loss);
        r.candidate_accuracy = Some(c.accuracy);
        r.candidate_top3 = Some(c.top3);
        if step > 0 {
            let last = self.batch_at(step - 1)?;
            if self.cfg.data.task.has_z() {
                let z = z_shuffle_stats(&self.model, &mut self.ws, &last, self.cfg.train.order_seed, step);
                r.loss_z_shuffled = Some(z.first_target_shuffled);
                r.dz_paper = Some(z.first_target_shuffled - r.first_target_loss);
                r.first_target_loss_eval = Some(z.first_target_clean);
                r.dz_clean = Some(z.first_target_shuffled - z.first_target_clean);
                r.all_target_loss_eval = Some(z.all_target_clean);
                r.all_target_loss_z_shuffled = Some(z.all_target_shuffled);
                r.dz_all_clean = Some(z.all_target_shuffled - z.all_target_clean);
            }
        }
        self.state.window = Default::default();
        self.state.observe(&self.cfg, &r);
        self.state.eval_seconds += t0.elapsed().as_secs_f64();
        let total = self.state.train_seconds + self.state.eval_seconds;
        r.wall_time_s = total;
        r.steps_per_s = if total > 0.0 { step as f64 / total } else { 0.0 };
        Ok(r)
    }

    pub fn finished(&self) -> bool {
        self.state.step >= self.cfg.train.max_steps || self.state.stopped.is_some()
    }

    /// Train until `max_steps` or a stopping rule, keeping records and checkpoints in `sink`,
    /// without a display.
    pub fn run(&mut self, sink: &mut dyn Sink<S>) -> Result<()> {
        self.run_reporting(sink, &mut Silent)
    }

    /// [`Trainer::run`], telling `progress` about every step and record. A fresh run writes the
    /// step-0 checkpoint first.
    pub fn run_reporting(&mut self, sink: &mut dyn Sink<S>, progress: &mut dyn Progress) -> Result<()> {
        progress.start(self.state.step, self.cfg.train.max_steps);
        if self.state.step == 0 {
            sink.checkpoint(self)?;
        }
        let tc = self.cfg.train.clone();
        while !self.finished() {
            self.step()?;
            let step = self.state.step;
            progress.step(step);
            if step.is_multiple_of(tc.eval_every) {
                let r = self.evaluate()?;
                sink.record(self, &r)?;
                progress.record(&r);
            }
            if is_checkpoint_step(step, tc.checkpoint_every, tc.max_steps) || self.finished() {
                sink.checkpoint(self)?;
            }
            if super::progress::interrupted() && !self.finished() {
                return Err(sink.interrupt(self));
            }
        }
        Ok(())
    }
}

/// A sink that keeps records in memory and writes nothing (tests, sweeps in one process).
#[derive(Default)]
pub struct MemorySink {
    pub records: Vec<Record>,
}

impl<S: Scalar> Sink<S> for MemorySink {
    fn record(&mut self, _: &Trainer<S>, record: &Record) -> Result<()> {
        self.records.push(record.clone());
        Ok(())
    }
    fn checkpoint(&mut self, _: &Trainer<S>) -> Result<()> {
        Ok(())
    }
}
