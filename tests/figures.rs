//! Every figure of the committed paper report (which `paper_report` proves is what the current
//! code renders) is checked as a reader would: both axes labelled, at least three numeric tick
//! labels on each numeric axis and none printed as `1000.0`, every legend entry beside the data
//! (never over it), and the CSV of its values beside it.

use std::path::{Path, PathBuf};

/// The data panel's right edge: the legend starts here (`plot::line` and `plot::bar`).
const DATA_RIGHT: f64 = 730.0;

struct Text {
    x: f64,
    y: f64,
    text: String,
}

fn texts(svg: &str) -> Vec<Text> {
    let attr = |tag: &str, name: &str| -> f64 {
        let k = format!(" {name}=\"");
        let a = tag.find(&k).unwrap_or_else(|| panic!("no {name} in {tag}")) + k.len();
        tag[a..a + tag[a..].find('"').unwrap()].parse().unwrap()
    };
    svg.split("<text ")
        .skip(1)
        .map(|t| {
            let (tag, rest) = t.split_once('>').unwrap();
            let tag = &format!(" {tag}");
            let body = rest.split("</text>").next().unwrap().trim();
            Text { x: attr(tag, "x"), y: attr(tag, "y"), text: unescape(body) }
        })
        .collect()
}

fn unescape(s: &str) -> String {
    s.replace("&apos;", "'").replace("&quot;", "\"").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
}

/// The most tick labels that share one coordinate (`by_y`: an x axis's labels share y).
fn ticks_on_one_axis(t: &[Text], by_y: bool) -> usize {
    let numeric: Vec<&Text> = t.iter().filter(|t| t.x < DATA_RIGHT && t.text.parse::<f64>().is_ok()).collect();
    numeric
        .iter()
        .map(|a| numeric.iter().filter(|b| if by_y { b.y == a.y } else { b.x == a.x }).count())
        .max()
        .unwrap_or(0)
}

fn csv_field(line: &str, i: usize) -> String {
    // Fields may be quoted (a label with a comma): split outside quotes.
    let (mut fields, mut cur, mut quoted) = (vec![], String::new(), false);
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    fields.push(cur);
    fields.get(i).cloned().unwrap_or_default()
}

fn check(svg_path: &Path) {
    let name = svg_path.display();
    let svg = std::fs::read_to_string(svg_path).unwrap();
    let csv = std::fs::read_to_string(svg_path.with_extension("csv")).unwrap_or_else(|_| panic!("{name}: no CSV"));
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    let rows: Vec<&str> = lines.collect();
    let t = texts(&svg);
    if rows.is_empty() {
        assert!(t.iter().any(|x| x.text == "no data yet"), "{name}: no values, and the figure does not say so");
        return;
    }
    let has = |s: &str| t.iter().any(|x| x.text == s);
    let bar = header.starts_with("group,category,");
    let y_label = csv_field(header, if bar { 2 } else { 3 });
    assert!(has(&y_label), "{name}: no y-axis label {y_label:?}");
    if !bar {
        let x_label = csv_field(header, 2);
        assert!(has(&x_label), "{name}: no x-axis label {x_label:?}");
        assert!(ticks_on_one_axis(&t, true) >= 3, "{name}: fewer than 3 x tick labels");
    }
    assert!(ticks_on_one_axis(&t, false) >= 3, "{name}: fewer than 3 y tick labels");
    for x in t.iter().filter(|x| x.text.parse::<f64>().is_ok()) {
        assert!(!x.text.ends_with(".0"), "{name}: tick label {:?}", x.text);
    }
    // Every entry (series, band, reference line) is in the legend panel, right of the data.
    let mut labels: Vec<String> = rows.iter().map(|r| csv_field(r, 0)).collect();
    labels.dedup();
    for label in labels {
        // A long label wraps: its first line is a prefix of it.
        let beside = t.iter().any(|x| x.x > DATA_RIGHT && !x.text.is_empty() && label.starts_with(&x.text));
        assert!(beside, "{name}: {label:?} is not in the legend beside the data");
    }
}

fn svgs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "svg"))
        .collect();
    v.sort();
    v
}

#[test]
fn every_committed_report_figure_reads_well_and_has_its_csv() {
    for dir in ["results/paper/figures", "docs/replication/ci/figures"] {
        let figures = svgs(&Path::new(env!("CARGO_MANIFEST_DIR")).join(dir));
        assert!(figures.len() >= 15, "{dir}: {} figures", figures.len());
        for f in &figures {
            check(f);
        }
    }
}

#[test]
fn the_checker_catches_what_it_is_for() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("figure-checks");
    std::fs::create_dir_all(&dir).unwrap();
    let good = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/paper/figures/d_scaling.svg");
    let svg = std::fs::read_to_string(&good).unwrap();
    let csv = std::fs::read_to_string(good.with_extension("csv")).unwrap();
    let bad = |name: &str, svg: String, csv: Option<&str>| {
        let p = dir.join(format!("{name}.svg"));
        std::fs::write(&p, svg).unwrap();
        match csv {
            Some(c) => std::fs::write(p.with_extension("csv"), c).unwrap(),
            None => {
                let _ = std::fs::remove_file(p.with_extension("csv"));
            }
        }
        std::panic::catch_unwind(|| check(&p)).is_err()
    };
    assert!(!bad("good", svg.clone(), Some(&csv)), "the committed figure passes");
    assert!(bad("no_csv", svg.clone(), None));
    assert!(bad("legend_over_data", svg.replace("x=\"770\"", "x=\"600\""), Some(&csv)));
    assert!(bad("float_ticks", svg.replace(">\n10000\n<", ">\n10000.0\n<"), Some(&csv)));
    assert!(bad("unlabelled", svg.replace("T1 (steps)", ""), Some(&csv)));
}
