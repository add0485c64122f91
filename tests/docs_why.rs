//! docs/REPLICATION.md's "Why windtunnel's numbers differ" is prose, so it is checked rather than
//! generated: each bullet names what it quotes (`<!-- quotes: suite, …; runs: run, … -->`), and
//! every figure of three or more digits in it must be found there — in those suites of
//! `results/paper/report.json`, those runs' summary, probes and metrics, or the paper's numbers
//! (report.json's `paper`, docs/SPEC.md). A figure left behind by a regenerated report fails.

use std::path::Path;

const SECTION: &str = "## Why windtunnel's numbers differ from the paper's";

/// The figures in `text`: `2250`, `1.156`, `−0.32`, `1e-7`, `50,000` (as written, sign kept).
fn figures(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = vec![];
    let mut i = 0;
    while i < chars.len() {
        let prev = if i > 0 { chars[i - 1] } else { ' ' };
        let starts =
            chars[i].is_ascii_digit() && !(prev.is_alphanumeric() || prev == '.' || prev == '§' || prev == '_');
        if !starts {
            i += 1;
            continue;
        }
        let neg = i > 0 && (prev == '−' || prev == '-') && (i < 2 || !chars[i - 2].is_alphanumeric());
        let mut s = String::from(if neg { "-" } else { "" });
        while i < chars.len() {
            let c = chars[i];
            let next_digit = chars.get(i + 1).is_some_and(|d| d.is_ascii_digit() || *d == '-');
            let sep = (c == ',' || c == '.') && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit());
            let exp = c == 'e' && next_digit;
            let exp_sign = c == '-' && s.ends_with('e');
            if !(c.is_ascii_digit() || sep || exp || exp_sign) {
                break;
            }
            if c != ',' {
                s.push(c);
            }
            i += 1;
        }
        out.push(s);
    }
    out
}

/// Three or more significant digits: small counts and labels (K = 20, §7.4, 35 %) are not figures.
fn is_figure(s: &str) -> bool {
    let mantissa = s.trim_start_matches('-').split('e').next().unwrap_or("");
    mantissa.trim_start_matches(['0', '.']).chars().filter(char::is_ascii_digit).count() >= 3 || s.contains('e')
}

/// Every number in a source, for matching a rounded figure.
fn numbers(source: &str) -> Vec<f64> {
    figures(source).iter().filter_map(|s| s.parse().ok()).collect()
}

/// Whether `fig` (as written) is in `source`: literally (thousands separators aside) or as a
/// number that rounds to it at the figure's precision.
fn found(fig: &str, source: &str, values: &[f64]) -> bool {
    let Ok(v) = fig.parse::<f64>() else { return false };
    if source.contains(fig) || source.contains(&fig.replace('-', "−")) {
        return true;
    }
    if fig.contains('e') {
        return values.iter().any(|x| (x - v).abs() <= v.abs() * 0.05);
    }
    let decimals = fig.split('.').nth(1).map_or(0, str::len) as u64;
    let scale = windtunnel::numerics::math::powi_f64(10.0, decimals);
    values.iter().any(|x| (x * scale).round() == (v * scale).round())
}

/// The figures of `bullet` found in no source.
fn unsourced(bullet: &str, source: &str) -> Vec<String> {
    let values = numbers(source);
    let prose = match bullet.find("<!--") {
        Some(a) => format!("{}{}", &bullet[..a], &bullet[a + bullet[a..].find("-->").map_or(0, |b| b + 3)..]),
        None => bullet.to_string(),
    };
    figures(&prose).into_iter().filter(|f| is_figure(f) && !found(f, source, &values)).collect()
}

/// The suites and runs a bullet declares it quotes.
fn declared(bullet: &str) -> Option<(Vec<String>, Vec<String>)> {
    let a = bullet.find("<!-- quotes:")? + "<!-- quotes:".len();
    let decl = &bullet[a..a + bullet[a..].find("-->")?];
    let (suites, runs) = decl.split_once("; runs:").unwrap_or((decl, ""));
    let list = |s: &str| s.split(',').map(|x| x.trim().to_string()).filter(|x| !x.is_empty()).collect();
    Some((list(suites), list(runs)))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// What a run's figures come from: its summary and its probes' JSON (not its metric records:
/// among thousands of logged values nearly any two-decimal figure rounds to one).
fn run_source(dir: &Path) -> String {
    let mut s = read(&dir.join("summary.json"));
    if let Ok(entries) = std::fs::read_dir(dir.join("probes")) {
        let mut paths: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
        paths.sort();
        for p in paths.iter().filter(|p| p.extension().is_some_and(|x| x == "json")) {
            s += &read(p);
        }
    }
    s
}

#[test]
fn every_figure_in_the_why_section_is_the_reports() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = read(&root.join("docs/REPLICATION.md"));
    let a = doc.find(SECTION).expect("docs/REPLICATION.md has the Why section");
    let section = &doc[a..a + doc[a + 3..].find("\n## ").map_or(doc.len() - a, |b| b + 3)];
    let report: serde_json::Value = serde_json::from_str(&read(&root.join("results/paper/report.json"))).unwrap();
    let paper = report["paper"].to_string() + &read(&root.join("docs/SPEC.md"));
    let bullets: Vec<&str> = section.split("\n- **").skip(1).collect();
    assert!(bullets.len() >= 8, "the Why section has {} bullets", bullets.len());
    let mut wrong = vec![];
    for bullet in bullets {
        let title = bullet.split("**").next().unwrap_or(bullet);
        let Some((suites, runs)) = declared(bullet) else {
            wrong.push(format!("{title}: no <!-- quotes: suite, …; runs: … --> line"));
            continue;
        };
        let mut source = paper.clone();
        for name in &suites {
            let suite = report["suites"].as_array().unwrap().iter().find(|s| s["suite"] == name.as_str());
            source += &suite.unwrap_or_else(|| panic!("{title}: no suite {name} in report.json")).to_string();
        }
        for run in &runs {
            source += &run_source(&root.join("results/paper/runs").join(run));
        }
        let missing = unsourced(bullet, &source);
        if !missing.is_empty() {
            wrong.push(format!("{title}: {} not in {suites:?} / runs {runs:?}", missing.join(", ")));
        }
    }
    assert!(wrong.is_empty(), "figures in docs/REPLICATION.md's Why section without a source:\n{}", wrong.join("\n"));
}

#[test]
fn a_figure_the_report_no_longer_holds_is_flagged() {
    let source = r#"{"t1": 3050, "ratio": 1.1560243, "lambda": -2.7713, "steps": 50000}"#;
    let ok = "T1 = 3050, 1.156·ln K, −2.77, 50,000 steps, K = 20 (§7.4) <!-- quotes: lr -->";
    assert_eq!(unsourced(ok, source), Vec::<String>::new());
    assert_eq!(unsourced("T1 = 3051 and 1.157, −2.78, 1e-7", source), ["3051", "1.157", "-2.78", "1e-7"]);
    assert_eq!(
        declared("x <!-- quotes: lr, batch; runs: canonical_k10 -->"),
        Some((vec!["lr".into(), "batch".into()], vec!["canonical_k10".into()]))
    );
    assert_eq!(declared("no declaration"), None);
}
