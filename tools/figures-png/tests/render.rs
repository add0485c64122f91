//! Every committed report figure rendered to PNG (resvg, the system's fonts), as a reader's viewer
//! would: it parses, it has its stated size, and the data panel holds ink beyond the frame.
//! The PNGs land in target/figures-png/ to be looked at (newcomer issue: "render every figure").
//! Run: cargo test --release --manifest-path tools/figures-png/Cargo.toml

use std::path::{Path, PathBuf};

fn svgs() -> Vec<PathBuf> {
    let mut v = vec![];
    for dir in ["results/paper/figures", "results/ci/figures"] {
        let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(dir);
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            if e.path().extension().is_some_and(|x| x == "svg") {
                v.push(e.path());
            }
        }
    }
    v.sort();
    v
}

/// Non-white pixels in the rectangle (x0, y0)–(x1, y1) of an RGBA image.
fn ink(p: &resvg::tiny_skia::Pixmap, x0: u32, y0: u32, x1: u32, y1: u32) -> usize {
    let mut n = 0;
    for y in y0..y1.min(p.height()) {
        for x in x0..x1.min(p.width()) {
            let c = p.pixel(x, y).unwrap();
            if c.alpha() > 0 && (c.red() < 230 || c.green() < 230 || c.blue() < 230) {
                n += 1;
            }
        }
    }
    n
}

fn render(svg: &Path, fonts: &std::sync::Arc<resvg::usvg::fontdb::Database>) -> resvg::tiny_skia::Pixmap {
    let text = std::fs::read_to_string(svg).unwrap();
    let opt = resvg::usvg::Options { fontdb: fonts.clone(), ..Default::default() };
    let tree = resvg::usvg::Tree::from_str(&text, &opt).unwrap_or_else(|e| panic!("{}: {e}", svg.display()));
    let size = tree.size().to_int_size();
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height()).unwrap();
    pixmap.fill(resvg::tiny_skia::Color::WHITE);
    resvg::render(&tree, resvg::tiny_skia::Transform::default(), &mut pixmap.as_mut());
    pixmap
}

/// The system's fonts, with the generic `sans-serif` of the figures mapped to one that exists
/// (fontdb's default, Arial, is rarely installed on Linux). None when the system has no font.
fn system_fonts() -> Option<resvg::usvg::fontdb::Database> {
    let mut db = resvg::usvg::fontdb::Database::new();
    db.load_system_fonts();
    let families: Vec<String> = db.faces().flat_map(|f| f.families.iter().map(|(n, _)| n.clone())).collect();
    let sans = ["DejaVu Sans", "Liberation Sans", "Noto Sans", "Arial", "Helvetica"]
        .into_iter()
        .find(|f| families.iter().any(|x| x == f))
        .map(String::from)
        .or_else(|| families.first().cloned())?;
    db.set_sans_serif_family(sans);
    Some(db)
}

#[test]
fn every_committed_figure_renders_to_a_png_with_data_in_its_panel() {
    let fonts = system_fonts();
    if fonts.is_none() {
        eprintln!("no system font: figures render without their text (Debian: apt-get install fonts-dejavu-core)");
    }
    let has_text = fonts.is_some();
    let fonts = std::sync::Arc::new(fonts.unwrap_or_default());
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/figures-png");
    std::fs::create_dir_all(&out).unwrap();
    let figures = svgs();
    assert!(figures.len() >= 20, "found {} figures", figures.len());
    for svg in &figures {
        let p = render(svg, &fonts);
        assert!(p.width() >= 400 && p.height() >= 250, "{}: {}×{}", svg.display(), p.width(), p.height());
        // The data panel (inside the axes' margins) holds more than its frame: marks or lines.
        let (w, h) = (p.width(), p.height());
        let panel = ink(&p, w / 8, h / 8, w * 7 / 10, h * 8 / 10);
        assert!(panel > 300, "{}: {panel} inked pixels in the data panel", svg.display());
        // Tick labels and the x-axis label below the panel, the legend's text beside it.
        if has_text {
            let below = ink(&p, w / 8, h * 88 / 100, w * 7 / 10, h);
            assert!(below > 200, "{}: {below} inked pixels of text under the panel", svg.display());
        }
        let scale = svg.parent().unwrap().parent().unwrap().file_name().unwrap().to_string_lossy().into_owned();
        let name = format!("{scale}-{}.png", svg.file_stem().unwrap().to_string_lossy());
        p.save_png(out.join(name)).unwrap();
    }
}

#[test]
fn an_empty_panel_is_caught() {
    let svg = r#"<svg xmlns="http://www.w3.org/2000/svg" width="800" height="500"><rect x="0" y="0" width="800" height="500" fill="white"/><text x="10" y="20">title only</text></svg>"#;
    let path = std::env::temp_dir().join(format!("wt-empty-{}.svg", std::process::id()));
    std::fs::write(&path, svg).unwrap();
    let p = render(&path, &std::sync::Arc::new(resvg::usvg::fontdb::Database::new()));
    std::fs::remove_file(&path).ok();
    assert_eq!(ink(&p, 100, 62, 560, 400), 0);
}
