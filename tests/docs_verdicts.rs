//! Every verdict in docs/REPLICATION.md comes from code: the blocks between
//! `<!-- verdicts:ci -->` and `<!-- verdicts:paper -->` markers must equal the tables rendered
//! from the committed `report.json` files. On a mismatch the test prints the block to paste.

use windtunnel::experiments::report::verdict_table;

fn block<'a>(doc: &'a str, scale: &str) -> &'a str {
    let open = format!("<!-- verdicts:{scale} -->\n");
    let close = format!("<!-- /verdicts:{scale} -->");
    let a = doc.find(&open).unwrap_or_else(|| panic!("docs/REPLICATION.md lacks {open:?}")) + open.len();
    let b = doc[a..].find(&close).unwrap_or_else(|| panic!("docs/REPLICATION.md lacks {close:?}")) + a;
    &doc[a..b]
}

#[test]
fn the_documented_verdicts_are_the_reports() {
    let root = env!("CARGO_MANIFEST_DIR");
    let doc = std::fs::read_to_string(format!("{root}/docs/REPLICATION.md")).unwrap();
    for (scale, json) in [("ci", "docs/replication/ci/report.json"), ("paper", "results/paper/report.json")] {
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(format!("{root}/{json}")).unwrap()).unwrap();
        let want = verdict_table(&report);
        assert!(want.lines().count() > 10, "{json} has too few rows to mean anything");
        assert_eq!(
            block(&doc, scale),
            want,
            "docs/REPLICATION.md's {scale} verdicts differ from {json}; paste:\n{want}"
        );
    }
}
