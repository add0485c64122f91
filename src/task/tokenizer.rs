//! The author's character tokenizer and sequence layout (spec §3).
//!
//! Ids: `<PAD>`=0, `<BOS>`=1, `<EOS>`=2, `<SEP>`=3, then `a..z` = 4..29 and `0..9` = 30..39.
//! Sequences (`left`/`right` swap for the A-first tasks):
//! - with a selector: `BOS left SEP z SEP right EOS`;
//! - without (`b_to_a`, `a_to_b`, INFERRED from spec §3): `BOS left SEP right EOS`.
//!
//! Labels are −100 everywhere except the `right` characters and the EOS.

use serde::{Deserialize, Serialize};

pub const ALPHABET: &str = "abcdefghijklmnopqrstuvwxyz0123456789";
pub const PAD: u32 = 0;
pub const BOS: u32 = 1;
pub const EOS: u32 = 2;
pub const SEP: u32 = 3;
pub const D_VOCAB: usize = 40;
/// Label value for "not scored" (PyTorch's `ignore_index`).
pub const IGNORE: i32 = -100;

/// The four task directions of the author's code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskKind {
    /// `(B, z) → A`: the paper's main task.
    BzToA,
    /// `(A, z) → B`: forward direction, z redundant.
    AzToB,
    /// `B → A` without a selector.
    BToA,
    /// `A → B` without a selector.
    AToB,
}

impl TaskKind {
    pub const ALL: [TaskKind; 4] = [TaskKind::BzToA, TaskKind::AzToB, TaskKind::BToA, TaskKind::AToB];

    pub fn name(self) -> &'static str {
        match self {
            TaskKind::BzToA => "bz_to_a",
            TaskKind::AzToB => "az_to_b",
            TaskKind::BToA => "b_to_a",
            TaskKind::AToB => "a_to_b",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == s)
    }
    /// B is the left (input) string and A the target.
    pub fn b_first(self) -> bool {
        matches!(self, TaskKind::BzToA | TaskKind::BToA)
    }
    pub fn has_z(self) -> bool {
        matches!(self, TaskKind::BzToA | TaskKind::AzToB)
    }
}

/// Token id of an alphabet character.
pub fn char_id(c: u8) -> Option<u32> {
    match c {
        b'a'..=b'z' => Some(4 + (c - b'a') as u32),
        b'0'..=b'9' => Some(30 + (c - b'0') as u32),
        _ => None,
    }
}

/// Character of a token id, or a bracketed name for specials.
pub fn id_str(id: u32) -> String {
    match id {
        PAD => "<PAD>".into(),
        BOS => "<BOS>".into(),
        EOS => "<EOS>".into(),
        SEP => "<SEP>".into(),
        4..=39 => (ALPHABET.as_bytes()[(id - 4) as usize] as char).to_string(),
        _ => format!("<{id}?>"),
    }
}

/// One tokenised example.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Encoded {
    pub tokens: Vec<u32>,
    pub labels: Vec<i32>,
    /// First z position and one past the last (empty range for tasks without z).
    pub z_start: usize,
    pub z_end: usize,
    /// Position of the first target token.
    pub target_start: usize,
}

fn push_str(tokens: &mut Vec<u32>, s: &str) {
    for c in s.bytes() {
        tokens.push(char_id(c).expect("generator only emits alphabet characters"));
    }
}

/// Encode `(b, z, a)` for `task`, as the author's `CharTokenizer.encode_sequence`.
pub fn encode(task: TaskKind, b: &str, z: &str, a: &str) -> Encoded {
    let (left, right) = if task.b_first() { (b, a) } else { (a, b) };
    let mut tokens = vec![BOS];
    push_str(&mut tokens, left);
    tokens.push(SEP);
    let z_start = tokens.len();
    if task.has_z() {
        push_str(&mut tokens, z);
        tokens.push(SEP);
    }
    let z_end = if task.has_z() { z_start + z.len() } else { z_start };
    let target_start = tokens.len();
    push_str(&mut tokens, right);
    tokens.push(EOS);
    let mut labels = vec![IGNORE; target_start];
    labels.extend(tokens[target_start..].iter().map(|&t| t as i32));
    Encoded { tokens, labels, z_start, z_end, target_start }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_example_encodes_exactly() {
        // spec §3: (3zmf8m, xa, fqe7)
        let e = encode(TaskKind::BzToA, "3zmf8m", "xa", "fqe7");
        assert_eq!(e.tokens, vec![1, 33, 29, 16, 9, 38, 16, 3, 27, 4, 3, 9, 20, 8, 37, 2]);
        let mut want = vec![-100; 11];
        want.extend([9, 20, 8, 37, 2]);
        assert_eq!(e.labels, want);
        assert_eq!((e.z_start, e.z_end, e.target_start), (8, 10, 11));
    }

    #[test]
    fn az_to_b_scores_b_and_eos_at_positions_9_to_15() {
        let e = encode(TaskKind::AzToB, "3zmf8m", "xa", "fqe7");
        assert_eq!(e.tokens.len(), 16);
        assert_eq!(e.target_start, 9);
        assert_eq!(e.labels.iter().filter(|&&l| l != IGNORE).count(), 7);
    }
}
