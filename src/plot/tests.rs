use super::*;

fn sample() -> LinePlot {
    LinePlot {
        title: "loss".into(),
        x_label: "step".into(),
        y_label: "nats".into(),
        series: vec![Series::line("candidate", vec![(0.0, 2.3), (100.0, 2.2), (200.0, 0.1)])],
        hlines: vec![(std::f64::consts::LN_10, "ln K".into()), (3.58, "ln 36".into())],
        vlines: vec![(150.0, "T1".into())],
        ..Default::default()
    }
}

#[test]
fn plots_render_deterministic_svg_and_csv() {
    let a = line_plot(&sample()).unwrap();
    assert!(a.svg.starts_with("<svg") && a.svg.contains("candidate") && a.svg.contains("T1"));
    assert_eq!(a, line_plot(&sample()).unwrap());
    let lines: Vec<&str> = a.csv.lines().collect();
    assert_eq!(lines[0], "series,kind,step,nats,nats low,nats high");
    assert_eq!(lines[1], "candidate,line,0,2.3,,");
    assert!(lines.contains(&"ln 36,hline,,3.58,,") && lines.contains(&"T1,vline,150,,,"), "{}", a.csv);
    assert_eq!(lines.len(), 1 + 3 + 2 + 1);
}

#[test]
fn log_axes_bands_and_bars_render() {
    let log = LinePlot {
        series: vec![Series::points("τ", vec![(1e3, 450.0), (3.6e4, 8750.0)])],
        bands: vec![Band {
            label: "95% CI, a, b".into(),
            points: vec![(1e3, 400.0, 500.0), (3.6e4, 8000.0, 9000.0)],
            series: 0,
        }],
        log_x: true,
        log_y: true,
        ..sample()
    };
    let f = line_plot(&log).unwrap();
    assert!(f.csv.contains("\"95% CI, a, b\",band,1000,,400,500"), "quoted: {}", f.csv);
    let b =
        bar_chart("ablation", "Δloss", &["L0H0".into(), "L0H1".into()], &[("zero".into(), vec![0.1, 1.7])]).unwrap();
    assert!(b.svg.contains("L0H1"));
    assert_eq!(b.csv, "group,category,Δloss\nzero,L0H0,0.1\nzero,L0H1,1.7\n");
}

#[test]
fn pairs_share_a_colour_open_and_censored_marks_differ_and_ticks_sit_at_the_data() {
    let p = LinePlot {
        series: vec![
            Series::points("windtunnel", vec![(3e-4, 2250.0), (2e-3, 2900.0)]).in_color(4),
            Series::open("author", vec![(3e-4, 2100.0), (2e-3, 7550.0)]).in_color(4),
            Series::above("never", vec![(5e-3, 50_000.0)]).in_color(4),
        ],
        x_ticks: Some(vec![3e-4, 2e-3, 5e-3]),
        log_x: true,
        log_y: true,
        ..sample()
    };
    let f = line_plot(&p).unwrap();
    let purple = "#9467BD"; // PALETTE[4]
    let fills = f.svg.matches(&format!("fill=\"{purple}\"")).count();
    let strokes = f.svg.matches(&format!("stroke=\"{purple}\"")).count();
    // 2 filled circles (+ the legend's), 2 open circles and a triangle (+ the legend's), one colour.
    let with: Vec<&str> = f.svg.lines().filter(|l| l.contains(purple)).collect();
    assert!(fills >= 3 && strokes >= 5, "fills {fills}, strokes {strokes}: {with:#?}");
    assert!(with.iter().any(|l| l.starts_with("<polyline") && l.contains("fill=\"none\"")), "an open triangle");
    let tick = |t: &str| f.svg.contains(&format!(">\n{t}\n</text>"));
    assert!(tick("3e-4") && tick("0.002") && tick("0.005"), "a tick at each x of the data");
    assert!(!tick("0.001"), "no round-number tick between the data");
    assert!(f.csv.contains("never,above (never reached; at the budget),0.005,50000,,"), "{}", f.csv);
    assert!(f.csv.contains("author,points (open),0.0003,2100,,"), "{}", f.csv);
}
