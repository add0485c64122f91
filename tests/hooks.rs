//! The TL-named activation cache is consistent with the forward pass it records.

use windtunnel::check::gradcheck::check_batch;
use windtunnel::model::{Model, ModelConfig};

#[test]
fn hook_cache_has_tl_names_shapes_and_consistent_values() {
    let m = Model::<f32>::init(&ModelConfig::canonical(), 3);
    let b = check_batch(3);
    let mut ws = m.workspace(3, b.seq_len);
    m.forward(&mut ws, &b);
    let cache = m.hook_cache(&ws, &b);
    let get = |name: &str| cache.iter().find(|h| h.name == name).unwrap_or_else(|| panic!("missing {name}"));
    assert_eq!(cache.len(), 2 + 4 * 17 + 4, "74 hooks, as TL 3.9's run_with_cache");
    assert_eq!(get("blocks.2.attn.hook_q").shape, vec![3, 16, 4, 32]);
    assert_eq!(get("blocks.0.attn.hook_pattern").shape, vec![3, 4, 16, 16]);
    assert_eq!(get("blocks.3.mlp.hook_post").shape, vec![3, 16, 512]);
    // resid_pre(0) = embed + pos_embed and resid_mid = resid_pre + attn_out, bit for bit.
    let (e, p, r0) = (get("hook_embed"), get("hook_pos_embed"), get("blocks.0.hook_resid_pre"));
    assert!(r0.data.iter().zip(e.data.iter().zip(&p.data)).all(|(r, (x, y))| *r == x + y));
    for l in 0..4 {
        let pre = &get(&format!("blocks.{l}.hook_resid_pre")).data;
        let att = &get(&format!("blocks.{l}.hook_attn_out")).data;
        let mid = &get(&format!("blocks.{l}.hook_resid_mid")).data;
        assert!(mid.iter().zip(pre.iter().zip(att)).all(|(m, (x, y))| *m == x + y));
    }
    // Causal pattern rows sum to 1 and masked scores are -inf.
    let pat = &get("blocks.1.attn.hook_pattern").data;
    let sc = &get("blocks.1.attn.hook_attn_scores").data;
    for row in 0..3 * 4 * 16 {
        let i = row % 16;
        let s: f32 = pat[row * 16..row * 16 + 16].iter().sum();
        assert!((s - 1.0).abs() < 1e-5);
        assert!(sc[row * 16 + i + 1..row * 16 + 16].iter().all(|x| *x == f32::NEG_INFINITY));
    }
    // hook_normalized rows have zero mean and unit mean square (before the affine step).
    let xn = &get("ln_final.hook_normalized").data;
    for r in xn.chunks(128) {
        let mean: f32 = r.iter().sum::<f32>() / 128.0;
        let ms: f32 = r.iter().map(|x| x * x).sum::<f32>() / 128.0;
        assert!(mean.abs() < 1e-5 && (ms - 1.0).abs() < 1e-3);
    }
}
