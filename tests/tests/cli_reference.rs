//! docs/cli.md against `--help`: every option that `lard SUBCOMMAND --help`
//! prints, for every subcommand `lard --help` lists, must be documented in
//! that subcommand's section of docs/cli.md (the section whose heading
//! starts with `` ## `lard SUBCOMMAND``): named in the heading's synopsis or
//! in the first cell of a table row, where the reference defines options.
//! A mention in passing (an exit status, another option's text) does not
//! count. A new option fails this test until the reference documents it.
//! The man pages `make install` writes hold the same options, and the
//! documentation they point to is installed where they say.

use lard_e2e::*;
use std::process::Command;

/// Options every clap command has; the reference need not repeat them.
const IMPLICIT: &[&str] = &["-h", "--help", "-V", "--version"];

/// The output of `lard ARGS` (which must succeed).
fn help(args: &[&str]) -> String {
    let out = Command::new(lard()).args(args).output().expect("run lard");
    assert!(
        out.status.success(),
        "lard {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("help is UTF-8")
}

/// The subcommands a top-level `--help` lists (its `Commands:` block,
/// without clap's `help`).
fn subcommands(top: &str) -> Vec<String> {
    top.lines()
        .skip_while(|l| l.trim() != "Commands:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// The option names a subcommand's `--help` defines: on each line that
/// starts (after indentation) with `-X` or `--name`, the names before the
/// value or the description (`-L, --sysroot <DIR>` gives `-L` and
/// `--sysroot`). Lines of possible values (`- rr: ...`) are not options.
fn options(help: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in help.lines() {
        let t = line.trim_start();
        if !(t.starts_with("--") || t.starts_with('-') && t[1..].starts_with(char::is_alphanumeric))
        {
            continue;
        }
        for word in t.split_whitespace() {
            let name = word.trim_end_matches(',');
            if !name.starts_with('-') || name.len() < 2 {
                break;
            }
            out.push(name.to_string());
        }
    }
    out.retain(|o| !IMPLICIT.contains(&o.as_str()));
    out.dedup();
    out
}

/// The section of `doc` for `lard SUB`: from its `` ## `lard SUB`` heading
/// to the next `## ` heading.
fn section<'a>(doc: &'a str, sub: &str) -> Option<&'a str> {
    let heading = format!("## `lard {sub}");
    let start = doc.lines().position(|l| {
        l.starts_with(&heading) && {
            // `## `lard cc-accuracy` must not match `lard cc`.
            let rest = &l[heading.len()..];
            rest.starts_with(' ') || rest.starts_with('`')
        }
    })?;
    let offset: usize = doc.lines().take(start).map(|l| l.len() + 1).sum();
    let body = &doc[offset..];
    let end = body[1..].find("\n## ").map(|i| i + 1).unwrap_or(body.len());
    Some(&body[..end])
}

/// Whether `text` names `option` as a whole word (`--detector` is not
/// named by `--detector-thread`).
fn names(text: &str, option: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '-' || c == '_';
    text.match_indices(option).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + option.len()..].chars().next();
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

/// Where a section defines options: its heading (the synopsis) and the
/// first cell of each table row.
fn definitions(sec: &str) -> String {
    let mut lines = sec.lines();
    let mut out = lines.next().unwrap_or("").to_string();
    for l in lines {
        if let Some(row) = l.strip_prefix('|') {
            out.push('\n');
            out.push_str(row.split('|').next().unwrap_or(""));
        }
    }
    out
}

/// The options of `help` that `sec` does not define.
fn missing(help: &str, sec: &str) -> Vec<String> {
    let defined = definitions(sec);
    options(help)
        .into_iter()
        .filter(|o| !names(&defined, o))
        .collect()
}

#[test]
fn cli_reference_names_every_option_of_every_subcommand() {
    let doc = std::fs::read_to_string(root().join("docs/cli.md")).expect("docs/cli.md");
    let subs = subcommands(&help(&["--help"]));
    assert!(
        ["run", "disasm", "jumble"]
            .iter()
            .all(|s| subs.iter().any(|x| x == s)),
        "`lard --help` lists no run/disasm/jumble: {subs:?}"
    );
    let mut problems = Vec::new();
    for sub in &subs {
        let Some(sec) = section(&doc, sub) else {
            problems.push(format!("no section \"## `lard {sub} ...`\""));
            continue;
        };
        let text = help(&[sub, "--help"]);
        for o in missing(&text, sec) {
            problems.push(format!("`lard {sub}`: {o}"));
        }
    }
    assert!(
        problems.is_empty(),
        "docs/cli.md does not document what `--help` prints:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn the_check_finds_a_missing_option() {
    let help = "Usage: lard run [OPTIONS]\n\nOptions:\n      --sched <SCHED>\n          \
                Scheduler\n          - rr: round-robin\n  -L, --sysroot <DIR>\n          \
                Sysroot\n      --detector <D>\n      --detector-thread\n  -h, --help\n";
    assert_eq!(
        options(help),
        [
            "--sched",
            "-L",
            "--sysroot",
            "--detector",
            "--detector-thread"
        ]
    );
    let doc = "# x\n\n## `lard run [OPTIONS]`\n\n| `--sched rr` | |\n| `--sysroot DIR`, `-L DIR` | |\n\
               | `--detector-thread` | not `--detector` |\n\n## `lard runner`\n\n| `--detector` | |\n";
    let sec = section(doc, "run").expect("the run section");
    assert!(!sec.contains("lard runner"), "{sec}");
    // `--detector` appears only inside `--detector-thread`, in a row's
    // description and in another section: missing.
    assert_eq!(missing(help, sec), ["--detector"]);
    assert!(section(doc, "ru").is_none());
}

/// A mistyped subcommand gets a suggestion, transpositions included
/// (clap's own similarity misses `rnu`), and clap's usage status 2; help
/// still goes to stdout.
#[test]
fn a_mistyped_subcommand_is_suggested_the_right_one() {
    for (typed, near) in [("rnu", "run"), ("exlpore", "explore"), ("og", "go")] {
        let o = Command::new(lard()).arg(typed).output().unwrap();
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{typed}: {e}");
        assert!(e.contains(&format!("'{near}'")), "{typed}: {e}");
    }
    let help = Command::new(lard())
        .args(["run", "--help"])
        .output()
        .unwrap();
    assert!(help.status.success());
    assert!(String::from_utf8_lossy(&help.stdout).contains("Usage: lard run"));
}

/// `make install-docs` (what `make install` runs for the documentation):
/// a man page per subcommand `lard --help` lists, each rendered by `man`
/// with every option that subcommand's `--help` prints and pointing to
/// the installed docs/cli.md, which is there.
#[test]
fn man_pages_per_subcommand_hold_every_option_and_find_the_docs() {
    let stage = root()
        .join("target/e2e-guests")
        .join(format!("install-docs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&stage);
    let o = Command::new("make")
        .args(["-s", "-C"])
        .arg(root())
        .arg("install-docs")
        .arg(format!("DESTDIR={}", stage.display()))
        .arg("PREFIX=/opt/lard")
        .arg(format!("LARD={}", lard().display()))
        .env_remove("MAKEFLAGS")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let prefix = stage.join("opt/lard");
    assert!(prefix.join("share/doc/lard/docs/cli.md").is_file());
    assert!(prefix.join("share/doc/lard/README.md").is_file());
    let mut problems = Vec::new();
    let mut subs = subcommands(&help(&["--help"]));
    subs.push(String::new());
    for sub in &subs {
        let name = if sub.is_empty() {
            "lard".to_string()
        } else {
            format!("lard-{sub}")
        };
        let page = prefix.join(format!("share/man/man1/{name}.1"));
        let out = Command::new("man")
            .arg("-l")
            .arg(&page)
            .env("LC_ALL", "C")
            .env("MANWIDTH", "200")
            .env("MAN_KEEP_FORMATTING", "")
            .output()
            .expect("man (man-db) renders the pages");
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        if !out.status.success() || text.is_empty() {
            problems.push(format!(
                "{name}: man -l failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
            continue;
        }
        let args: Vec<&str> = if sub.is_empty() {
            vec!["--help"]
        } else {
            vec![sub.as_str(), "--help"]
        };
        for o in options(&help(&args)) {
            if !names(&text, &o) {
                problems.push(format!("{name}: {o}"));
            }
        }
        if !text.contains("/opt/lard/share/doc/lard/docs/cli.md") {
            problems.push(format!("{name}: no pointer to the installed docs/cli.md"));
        }
    }
    let _ = std::fs::remove_dir_all(&stage);
    assert!(
        problems.is_empty(),
        "man pages:\n  {}",
        problems.join("\n  ")
    );
}
