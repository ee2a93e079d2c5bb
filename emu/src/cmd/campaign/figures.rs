//! The figures of `lard campaign collect`, drawn as SVG with plotters, and
//! the page that shows them with the summary table.
//!
//! * `cpu.svg`: mean CPU seconds per program and configuration;
//! * `overhead.svg` (when a `detector` axis has `none`): each
//!   configuration's CPU time over the same configuration with
//!   `detector=none` — the shape of RADISH's Figure 7;
//! * `races.svg`: mean distinct racy PCs per program and configuration —
//!   what the LARD paper's Table 3 counts;
//! * `table3.svg` (when runs compared detector variants with LARD,
//!   `--detectors`): false and missed racy accesses per variant — the LARD
//!   paper's Table 3;
//! * `behaviour.svg` (when programs carry an `expect`ed behaviour): the
//!   percentage of runs that crashed, exited otherwise, printed something
//!   else or hit the instruction bound — JUMBLE's Figure 9;
//! * `accuracy.svg` (when programs carry ground truth): precision and
//!   recall per configuration.

use super::collect::{Accuracy, Cell, VariantCount};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::fmt::Write as _;
use std::path::Path;

/// A grouped bar chart: one group per entry of `groups`, one bar per
/// series (`series[i].1[g]`, absent values are left out).
struct Bars<'a> {
    title: &'a str,
    y_label: &'a str,
    groups: Vec<String>,
    series: Vec<(String, Vec<Option<f64>>)>,
    /// A logarithmic y axis (counts spanning orders of magnitude; a bar
    /// below 1 is not drawn).
    log: bool,
}

/// A tick label: integers without decimals, others with at most two.
fn tick(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// The palette (colour-blind safe, Okabe–Ito).
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(240, 228, 66),
    RGBColor(0, 0, 0),
];

fn draw(path: &Path, b: &Bars) -> Result<(), String> {
    let ymax = b
        .series
        .iter()
        .flat_map(|(_, v)| v.iter().flatten())
        .fold(0.0f64, |m, &x| m.max(x));
    let ymax = match (b.log, ymax > 0.0) {
        (true, _) => ymax.max(1.0).log10().ceil().max(1.0),
        (false, true) => ymax * 1.15,
        (false, false) => 1.0,
    };
    let scale = |v: f64| if b.log { v.max(1.0).log10() } else { v };
    let n = b.groups.len().max(1);
    // The legend gets its own column right of the plot, so that it never
    // hides a bar.
    let longest = b
        .series
        .iter()
        .map(|(s, _)| s.chars().count())
        .max()
        .unwrap_or(0);
    let legend_w = (longest as u32 * 8 + 40).clamp(100, 480);
    let width = (160 * n as u32 + 120).clamp(640, 2400) + legend_w;
    let root = SVGBackend::new(path, (width, 480)).into_drawing_area();
    let e = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let (plot, legend) = root.split_horizontally(width - legend_w);
    let mut chart = ChartBuilder::on(&plot)
        .caption(b.title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(90)
        .build_cartesian_2d(-0.5f64..n as f64 - 0.5, 0.0..ymax)
        .map_err(|x| e(&x))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_labels(if b.log { ymax as usize + 1 } else { 10 })
        .y_label_formatter(&|v| match b.log {
            false => tick(*v),
            true if v.fract() == 0.0 => tick(10f64.powf(*v)),
            true => String::new(),
        })
        .y_desc(b.y_label)
        .draw()
        .map_err(|x| e(&x))?;
    // The group names under the axis, one per group centre.
    let label = ("sans-serif", 14)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    for (i, g) in b.groups.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(i as f64, 0.0));
        plot.draw(&Text::new(g.clone(), (px, py + 8), label.clone()))
            .map_err(|x| e(&x))?;
    }
    let m = b.series.len().max(1) as f64;
    let width = 0.8 / m;
    for (si, (name, values)) in b.series.iter().enumerate() {
        let color = PALETTE[si % PALETTE.len()];
        let x0 = -0.4 + si as f64 * width;
        chart
            .draw_series(values.iter().enumerate().filter_map(|(g, v)| {
                let v = scale((*v)?);
                let x = g as f64 + x0;
                Some(Rectangle::new(
                    [(x, 0.0), (x + width * 0.95, v)],
                    color.filled(),
                ))
            }))
            .map_err(|x| e(&x))?;
        let y = 48 + 22 * si as i32;
        legend
            .draw(&Rectangle::new([(4, y - 6), (16, y + 6)], color.filled()))
            .map_err(|x| e(&x))?;
        legend
            .draw(&Text::new(
                name.clone(),
                (22, y),
                ("sans-serif", 14)
                    .into_font()
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Left, VPos::Center)),
            ))
            .map_err(|x| e(&x))?;
    }
    root.present().map_err(|x| e(&x))?;
    Ok(())
}

/// Programs and configurations in first-seen order.
fn axes(cells: &[Cell]) -> (Vec<String>, Vec<String>) {
    let (mut p, mut c) = (Vec::new(), Vec::new());
    for x in cells {
        if !p.contains(&x.program) {
            p.push(x.program.clone());
        }
        if !c.contains(&x.configuration) {
            c.push(x.configuration.clone());
        }
    }
    (p, c)
}

fn grid(cells: &[Cell], f: impl Fn(&Cell) -> Option<f64>) -> Bars<'static> {
    let (programs, configurations) = axes(cells);
    let series = configurations
        .iter()
        .map(|conf| {
            let v = programs
                .iter()
                .map(|p| {
                    cells
                        .iter()
                        .find(|c| &c.program == p && &c.configuration == conf)
                        .and_then(&f)
                })
                .collect();
            (conf.clone(), v)
        })
        .collect();
    Bars {
        title: "",
        y_label: "",
        groups: programs,
        series,
        log: false,
    }
}

/// The configuration with `detector=none` in place of its detector.
fn baseline_of(configuration: &str) -> Option<String> {
    let parts: Vec<&str> = configuration.split(", ").collect();
    let i = parts.iter().position(|p| p.starts_with("detector="))?;
    let mut b = parts.clone();
    b[i] = "detector=none";
    Some(b.join(", "))
}

/// Draws every figure that `cells` and `acc` have data for into `dir`;
/// returns the files written.
pub fn draw_all(
    dir: &Path,
    cells: &[Cell],
    acc: &[Accuracy],
    variants: &[VariantCount],
) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut b = grid(cells, |c| Some(c.cpu));
    b.title = "CPU time";
    b.y_label = "seconds (mean over runs)";
    draw(&dir.join("cpu.svg"), &b)?;
    out.push("cpu.svg".to_string());
    let has_baseline = cells
        .iter()
        .any(|c| c.configuration.split(", ").any(|p| p == "detector=none"));
    if has_baseline {
        let cells_no_base: Vec<Cell> = cells
            .iter()
            .filter(|c| !c.configuration.split(", ").any(|p| p == "detector=none"))
            .cloned()
            .collect();
        let mut b = grid(&cells_no_base, |c| {
            let base = baseline_of(&c.configuration)?;
            let bc = cells
                .iter()
                .find(|x| x.program == c.program && x.configuration == base)?;
            (bc.cpu > 0.0).then(|| c.cpu / bc.cpu)
        });
        b.title = "Overhead over detector=none";
        b.y_label = "CPU time / CPU time without detection";
        draw(&dir.join("overhead.svg"), &b)?;
        out.push("overhead.svg".to_string());
    }
    if cells.iter().any(|c| c.pcs.is_some()) {
        let mut b = grid(cells, |c| c.pcs);
        b.title = "Distinct racy PCs";
        b.y_label = "racy PCs (mean over runs)";
        draw(&dir.join("races.svg"), &b)?;
        out.push("races.svg".to_string());
    }
    // LARD is the reference of Table 3: its own column is zero by definition.
    let variants: Vec<&VariantCount> = variants.iter().filter(|v| v.name != "lard").collect();
    if !variants.is_empty() {
        let b = Bars {
            title: "False and missed racy accesses against LARD (Table 3)",
            y_label: "racy dynamic accesses, all runs (log scale)",
            log: true,
            groups: variants.iter().map(|v| v.name.clone()).collect(),
            series: vec![
                (
                    "false".into(),
                    variants.iter().map(|v| Some(v.false_dre as f64)).collect(),
                ),
                (
                    "missed".into(),
                    variants.iter().map(|v| Some(v.missed_dre as f64)).collect(),
                ),
            ],
        };
        draw(&dir.join("table3.svg"), &b)?;
        out.push("table3.svg".to_string());
    }
    if cells.iter().any(|c| c.misbehaved.is_some()) {
        let mut b = grid(cells, Cell::misbehaved_percent);
        b.title = "Erroneous behaviour observed (JUMBLE Figure 9)";
        b.y_label = "% of runs";
        draw(&dir.join("behaviour.svg"), &b)?;
        out.push("behaviour.svg".to_string());
    }
    if !acc.is_empty() {
        let b = Bars {
            title: "Accuracy against ground truth",
            y_label: "per run",
            log: false,
            groups: acc.iter().map(|a| a.configuration.clone()).collect(),
            series: vec![
                (
                    "precision".into(),
                    acc.iter().map(|a| Some(a.precision())).collect(),
                ),
                (
                    "recall".into(),
                    acc.iter().map(|a| Some(a.recall())).collect(),
                ),
            ],
        };
        draw(&dir.join("accuracy.svg"), &b)?;
        out.push("accuracy.svg".to_string());
    }
    Ok(out)
}

/// HTML-escapes `s`.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `index.html`: the figures and the summary table.
pub fn page(
    name: &str,
    cells: &[Cell],
    acc: &[Accuracy],
    variants: &[VariantCount],
    figures: &[String],
) -> String {
    let mut s = format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>lard campaign {n}</title>\n\
         <style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}\
         td,th{{border:1px solid #ccc;padding:2px 8px;text-align:right}}\
         td:first-child,td:nth-child(2){{text-align:left}}</style></head><body>\n\
         <h1>lard campaign {n}</h1>\n<p>Files: <a href=\"runs.csv\">runs.csv</a>, \
         <a href=\"summary.csv\">summary.csv</a>, <a href=\"summary.json\">summary.json</a>.</p>\n",
        n = esc(name)
    );
    for f in figures {
        let _ = writeln!(s, "<p><img src=\"{}\" alt=\"{}\"></p>", esc(f), esc(f));
    }
    s.push_str(
        "<table><tr><th>program</th><th>configuration</th><th>runs</th><th>failed</th>\
         <th>wall s</th><th>CPU s</th><th>RSS MiB</th><th>racy PCs</th><th>racy runs</th>\
         <th>misbehaved</th></tr>\n",
    );
    for c in cells {
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td><td>{:.3}</td>\
             <td>{:.1}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&c.program),
            esc(&c.configuration),
            c.runs,
            c.failed,
            c.wall,
            c.cpu,
            c.rss_kb as f64 / 1024.0,
            c.pcs
                .map(|p| format!("{p:.1}"))
                .unwrap_or_else(|| "-".into()),
            c.racy_runs,
            c.misbehaved.map_or_else(|| "-".into(), |m| m.to_string())
        );
    }
    s.push_str("</table>\n");
    if !variants.is_empty() {
        s.push_str(
            "<h2>Detector variants against LARD</h2><table><tr><th>variant</th><th>racy accesses</th>\
             <th>false</th><th>missed</th></tr>\n",
        );
        for v in variants {
            let _ = writeln!(
                s,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&v.name),
                v.dre,
                v.false_dre,
                v.missed_dre
            );
        }
        s.push_str("</table>\n");
    }
    if !acc.is_empty() {
        s.push_str(
            "<h2>Accuracy</h2><table><tr><th>configuration</th><th>precision</th><th>recall</th>\
             <th>TP</th><th>FP</th><th>FN</th><th>TN</th></tr>\n",
        );
        for a in acc {
            let _ = writeln!(
                s,
                "<tr><td>{}</td><td>{:.3}</td><td>{:.3}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&a.configuration),
                a.precision(),
                a.recall(),
                a.tp,
                a.fp,
                a.fn_,
                a.tn
            );
        }
        s.push_str("</table>\n");
    }
    s.push_str("</body></html>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_baseline_swaps_the_detector_only() {
        assert_eq!(
            baseline_of("detector=lardish, sched=rr").as_deref(),
            Some("detector=none, sched=rr")
        );
        assert_eq!(baseline_of("sched=rr"), None);
    }

    #[test]
    fn figures_are_svg_files() {
        let dir = std::env::temp_dir().join(format!("lard-fig-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cell = |p: &str, c: &str, cpu: f64| Cell {
            program: p.into(),
            configuration: c.into(),
            runs: 1,
            failed: 0,
            wall: cpu,
            cpu,
            rss_kb: 1,
            pcs: Some(1.0),
            racy_runs: 1,
            racy: Some(true),
            misbehaved: None,
        };
        let cells = vec![
            cell("a", "detector=none", 1.0),
            cell("a", "detector=fasttrack", 3.0),
        ];
        let files = draw_all(&dir, &cells, &[], &[]).unwrap();
        assert_eq!(files, ["cpu.svg", "overhead.svg", "races.svg"]);
        let svg = std::fs::read_to_string(dir.join("overhead.svg")).unwrap();
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.contains("detector=fasttrack"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
