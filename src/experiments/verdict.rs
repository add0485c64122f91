//! The grading vocabulary: a claim's verdict and the figure it is graded on against the paper's
//! value (read by the claims table and by the grading over seeds).

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum Verdict {
    /// Same direction and a magnitude within the stated tolerance of the paper's.
    Replicated,
    /// Same qualitative direction, a different magnitude.
    Differs,
    /// The effect is absent or reversed.
    NotReplicated,
    /// Runs or probes the claim needs are not complete yet.
    Incomplete,
    /// windtunnel's figure for a metric the paper gives no number for: not a replication, only
    /// whether it points the way the paper's claim does.
    FindingAgrees,
    FindingDisagrees,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Replicated => "replicated",
            Verdict::Differs => "differs",
            Verdict::NotReplicated => "not replicated",
            Verdict::Incomplete => "incomplete",
            Verdict::FindingAgrees => "finding (paper's direction)",
            Verdict::FindingDisagrees => "finding (against the paper's direction)",
        }
    }

    /// A finding: the paper has no figure to compare with; only the direction is graded.
    pub fn finding(direction: bool) -> Self {
        if direction { Verdict::FindingAgrees } else { Verdict::FindingDisagrees }
    }

    /// Evidence in the direction of the paper's claim (whatever the magnitude).
    pub fn in_direction(self) -> bool {
        matches!(self, Verdict::Replicated | Verdict::Differs | Verdict::FindingAgrees)
    }

    /// Replicated when `close`, else Differs when `direction`, else NotReplicated.
    pub fn grade(direction: bool, close: bool) -> Self {
        match (direction, close) {
            (true, true) => Verdict::Replicated,
            (true, false) => Verdict::Differs,
            _ => Verdict::NotReplicated,
        }
    }
}

/// The figure a row grades and the paper's value for it: over seeds, "differs" means the
/// paper's value lies outside the seeds' range of this figure.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Measure {
    /// What the figure is ("T3(2e-3) / T3(3e-4)").
    pub name: String,
    /// windtunnel's figure: one value, or one per K where the row spans several.
    pub values: Vec<f64>,
    /// The paper's value, as an interval (lo = hi for a single number).
    pub paper: (f64, f64),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_grades() {
        assert_eq!(Verdict::grade(true, true), Verdict::Replicated);
        assert_eq!(Verdict::grade(true, false), Verdict::Differs);
        assert_eq!(Verdict::grade(false, true), Verdict::NotReplicated);
    }
}
