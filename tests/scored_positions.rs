//! Training computes only the positions the loss needs (`forward_scored`); the loss and all 70
//! gradients must be bit-identical to the full forward+backward whose hashes are golden.

use windtunnel::check::golden::{FIXTURE_SEED, fixture_batch, parse, tensor_hash};
use windtunnel::model::{Model, ModelConfig};
use windtunnel::numerics::Scalar;

fn check<S: Scalar>() {
    let golden = parse(
        &std::fs::read_to_string(format!("{}/golden/canonical_{}.txt", env!("CARGO_MANIFEST_DIR"), S::NAME)).unwrap(),
    );
    let want = |k: &str| golden.iter().find(|(n, _)| n == k).unwrap().1.clone();
    let model = Model::<S>::init(&ModelConfig::canonical(), FIXTURE_SEED);
    let batch = fixture_batch();
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let mut ws = model.workspace(batch.batch_size, batch.seq_len);
            let mut g = model.new_grads();
            let loss = model.loss_and_grad(&mut ws, &batch, &mut g);
            assert_eq!(ws.t_run, 15, "the EOS input position is skipped");
            assert_eq!(tensor_hash(&[loss]), want("loss"));
            for (i, e) in model.layout.entries.iter().enumerate() {
                assert_eq!(tensor_hash(model.layout.view(&g, i)), want(&format!("grad.{}", e.name)), "{}", e.name);
            }
        });
    }
}

#[test]
fn scored_positions_f32_match_full_pass_bits() {
    check::<f32>();
}

#[test]
fn scored_positions_f64_match_full_pass_bits() {
    check::<f64>();
}
