//! Tensor names of other schemes: a hint when a port's file uses Hugging Face GPT-2 / nanoGPT or
//! other names instead of TransformerLens's, and `verify --rename FILE` to map names one to one.

use crate::error::{Error, Result};
use std::path::Path;

/// A hint when `names` (of the other file) follow a known non-TL scheme.
pub fn scheme_hint(names: &[String]) -> Option<&'static str> {
    let any = |p: &str| names.iter().any(|n| n.starts_with(p) || n.contains(p));
    if any("transformer.h.") || any("transformer.wte") {
        return Some(
            "its names look like Hugging Face GPT-2 / nanoGPT (transformer.h.N.attn.c_attn.weight …): TransformerLens \
             splits c_attn into attn.W_Q/W_K/W_V [n_heads, d_model, d_head], and HF's Conv1D stores [in, out] where \
             nanoGPT's Linear stores [out, in]; convert the weights to TL names (TransformerLens's \
             convert_gpt2_weights does), or map names that correspond one to one with --rename FILE",
        );
    }
    if any("model.layers.") || any("layers.0.") {
        return Some(
            "its names are not TransformerLens's (blocks.N.attn.W_Q, blocks.N.mlp.W_in …; docs/interop.md lists them); \
             map them with --rename FILE (one 'their_name tl_name' pair per line)",
        );
    }
    None
}

/// Read a rename file: one `their_name tl_name` pair per line; blank lines and `#` comments skipped.
pub fn read_rename(path: &Path) -> Result<Vec<(String, String)>> {
    let text = crate::io::read_text(path)?;
    let mut pairs = vec![];
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        match line.split_whitespace().collect::<Vec<_>>()[..] {
            [from, to] => pairs.push((from.to_string(), to.to_string())),
            _ => {
                return Err(Error::format(
                    path,
                    format!("line {}: expected 'their_name tl_name', got {line:?}", i + 1),
                ));
            }
        }
    }
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpt2_names_get_a_hint_and_tl_names_none() {
        let hf = vec!["transformer.wte.weight".to_string(), "transformer.h.0.attn.c_attn.weight".into()];
        assert!(scheme_hint(&hf).is_some_and(|h| h.contains("c_attn") && h.contains("--rename")));
        let tl = vec!["embed.W_E".to_string(), "blocks.0.attn.W_Q".into()];
        assert_eq!(scheme_hint(&tl), None);
    }

    #[test]
    fn rename_files_are_pairs_and_a_bad_line_is_named() {
        let dir = std::env::temp_dir().join(format!("wt-rename-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.txt");
        std::fs::write(&good, "# mine -> TL\nwte embed.W_E\n\nwpe pos_embed.W_pos  # positions\n").unwrap();
        assert_eq!(
            read_rename(&good).unwrap(),
            vec![("wte".into(), "embed.W_E".into()), ("wpe".into(), "pos_embed.W_pos".into())]
        );
        let bad = dir.join("bad.txt");
        std::fs::write(&bad, "wte embed.W_E\nonly_one\n").unwrap();
        let e = read_rename(&bad).unwrap_err().to_string();
        std::fs::remove_dir_all(&dir).ok();
        assert!(e.contains("line 2") && e.contains("only_one"), "{e}");
    }
}
