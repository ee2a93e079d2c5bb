//! `lard manpages DIR [--docs DIR]` (hidden; `make install` runs it): one
//! man page per command and subcommand (`lard.1`, `lard-run.1`,
//! `lard-campaign-run.1`, …), made by clap_mangen from the same clap
//! definitions `--help` prints, each ending with where the documentation
//! it cites (`docs/cli.md`, …) is installed.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Writes the pages of `cmd` and of every subcommand it shows (hidden ones
/// and `help` left out) into `dir`; `docs` is the directory the
/// documentation is installed in (`PREFIX/share/doc/lard`), named in each
/// page. Returns the files written.
pub fn write(cmd: clap::Command, dir: &Path, docs: Option<&Path>) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    let mut names = Vec::new();
    collect(&cmd, &mut names);
    let mut written = Vec::new();
    page(&cmd, dir, docs, &names, &mut written)?;
    Ok(written)
}

/// The page names of `cmd` and its shown subcommands, depth first.
fn collect(cmd: &clap::Command, out: &mut Vec<String>) {
    out.push(page_name(cmd));
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        collect(sub, out);
    }
}

fn page_name(cmd: &clap::Command) -> String {
    cmd.get_display_name()
        .unwrap_or_else(|| cmd.get_name())
        .to_string()
}

fn page(
    cmd: &clap::Command,
    dir: &Path,
    docs: Option<&Path>,
    names: &[String],
    written: &mut Vec<PathBuf>,
) -> std::io::Result<()> {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        page(sub, dir, docs, names, written)?;
    }
    let man = clap_mangen::Man::new(cmd.clone())
        .manual("lard")
        .source(format!("lard {}", env!("CARGO_PKG_VERSION")));
    let path = dir.join(man.get_filename());
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path)?);
    man.render(&mut f)?;
    f.write_all(see_also(&page_name(cmd), docs, names).as_bytes())?;
    f.flush()?;
    written.push(path);
    Ok(())
}

/// `text` with roff's special characters escaped.
fn roff(text: &str) -> String {
    text.replace('\\', "\\\\").replace('-', "\\-")
}

/// The SEE ALSO section: the other pages, and where `docs/…` is.
fn see_also(this: &str, docs: Option<&Path>, names: &[String]) -> String {
    let others: Vec<String> = names
        .iter()
        .filter(|n| n.as_str() != this)
        .map(|n| format!("\\fB{}\\fR(1)", roff(n)))
        .collect();
    let mut s = format!(
        ".SH \"SEE ALSO\"\n{},\n\\fBlard\\-cc\\fR(1).\n",
        others.join(",\n")
    );
    if let Some(d) = docs {
        s += &format!(
            ".PP\nThe documents this page cites as docs/NAME.md are installed in\n\\fI{}\\fR: \
             every option, exit status and report format is in \\fI{}\\fR.\n",
            roff(&d.join("docs").display().to_string()),
            roff(&d.join("docs/cli.md").display().to_string())
        );
    }
    s
}
