//! `lard campaign`: one mechanism for many-run jobs (docs/campaigns.md).
//!
//! A campaign file ([`spec`]) names programs and the axes to cross;
//! `lard campaign run` ([`runner`]) makes its share of the runs, one
//! result file per run named by a hash of its parameters (resumable,
//! shardable); `lard campaign slurm` ([`slurm`]) makes a Slurm job array
//! of shards; `lard campaign collect` ([`collect`], [`figures`]) merges the
//! results into tables, SVG figures and a page.

pub mod collect;
pub mod figures;
pub mod runner;
pub mod slurm;
pub mod spec;

use std::path::Path;

/// What `lard campaign collect` wrote, and the text table it prints.
#[derive(Clone, Debug)]
pub struct Collected {
    /// Result files read.
    pub runs: usize,
    /// The files written into the directory.
    pub files: Vec<String>,
    /// The summary table as text.
    pub text: String,
}

/// Merges the results in `dir` into `runs.csv`, `runs.json`,
/// `summary.csv`, `summary.json`, the figures and `index.html`.
pub fn collect_dir(dir: &Path) -> Result<Collected, String> {
    let rows = collect::load(dir)?;
    if rows.is_empty() {
        return Err(format!("{}: no campaign results", dir.display()));
    }
    let cells = collect::cells(&rows);
    let acc = collect::accuracy(&rows);
    let variants = collect::variant_totals(&rows);
    let write = |name: &str, text: String| {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(|e| format!("cannot write {}: {e}", p.display()))
    };
    write("runs.csv", collect::runs_csv(&rows))?;
    write("runs.json", format!("{}\n", collect::runs_json(&rows)))?;
    write("summary.csv", collect::summary_csv(&cells))?;
    write(
        "summary.json",
        format!("{}\n", collect::summary_json(&cells, &acc, &variants)),
    )?;
    let figures = figures::draw_all(dir, &cells, &acc, &variants)?;
    let name = dir
        .file_name()
        .map_or_else(|| "campaign".into(), |n| n.to_string_lossy().into_owned());
    write(
        "index.html",
        figures::page(&name, &cells, &acc, &variants, &figures),
    )?;
    let mut files: Vec<String> = [
        "runs.csv",
        "runs.json",
        "summary.csv",
        "summary.json",
        "index.html",
    ]
    .map(String::from)
    .to_vec();
    files.extend(figures);
    Ok(Collected {
        runs: rows.len(),
        files,
        text: collect::text(&cells, &acc, &variants),
    })
}
