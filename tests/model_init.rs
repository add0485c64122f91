//! windtunnel's init: TL's gpt2 scheme (N(0, σ²) on every `W_` tensor in registration order,
//! biases 0, LN weights 1) drawn from `Stream(seed, Init, 0)`, with a published test vector.

use windtunnel::model::{Model, ModelConfig};

#[test]
fn init_test_vector_and_structure() {
    let m = Model::<f32>::init(&ModelConfig::canonical(), 42);
    // First normals of Stream(42, Init, 0) are −1.94199…, 0.99048…, −0.11235…, 0.50984…, times σ = 0.8/√128.
    assert_eq!(&m.params[0..4], &[-0.13731992f32, 0.07003809, -0.007944642, 0.036051475]);
    let wu = &m.layout.entries[m.layout.w_u];
    assert_eq!(&m.params[wu.offset..wu.offset + 2], &[0.037235033f32, -0.022626126]);
    for (i, e) in m.layout.entries.iter().enumerate() {
        let v = m.layout.view(&m.params, i);
        if e.name.contains("W_") {
            let var = v.iter().map(|&x| (x as f64) * (x as f64)).sum::<f64>() / v.len() as f64;
            let sigma = windtunnel::numerics::math::sqrt(var);
            assert!((sigma - 0.0707107).abs() < 0.008, "{}: σ = {sigma}", e.name);
        } else if e.name.ends_with(".w") {
            assert!(v.iter().all(|&x| x == 1.0), "{}", e.name);
        } else {
            assert!(v.iter().all(|&x| x == 0.0), "{}", e.name);
        }
    }
}

#[test]
fn f64_init_is_the_unrounded_f32_init() {
    let a = Model::<f32>::init(&ModelConfig::canonical(), 7);
    let b = Model::<f64>::init(&ModelConfig::canonical(), 7);
    assert!(a.params.iter().zip(&b.params).all(|(&x, &y)| x == y as f32));
    assert_ne!(Model::<f32>::init(&ModelConfig::canonical(), 8).params, a.params);
}
