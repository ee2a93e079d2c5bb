//! Suppressions (`lard run --suppressions FILE`): races a team has looked
//! at and decided not to fix now, in ThreadSanitizer's file format, so that
//! a run reports (and fails on) new races only.
//!
//! A file has one entry per line, `TYPE:PATTERN`; `#` starts a comment,
//! blank lines are skipped. Types:
//!
//! * `race:PATTERN` suppresses a race when PATTERN matches a function
//!   name, a source file or a module (shared object) name in either
//!   access's stack, or the name of the global the race is on;
//! * `called_from_lib:LIB` suppresses a race when either access's stack
//!   runs through a loaded library (not the executable) whose name
//!   matches LIB.
//!
//! A pattern matches as ThreadSanitizer's does: anywhere in the name,
//! unless it starts with `^` (at the start) or ends with `$` (at the end);
//! `*` matches any run of characters. The file's format is docs/cli.md's
//! ("Suppressions").

use super::RaceNames;
use std::path::Path;

/// What an entry matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// `race:`: names and modules of either stack.
    Race,
    /// `called_from_lib:`: a library in either stack.
    CalledFromLib,
}

/// One `TYPE:PATTERN` line.
#[derive(Clone, Debug)]
struct Entry {
    kind: Kind,
    pattern: String,
}

/// The entries of one file, and how the report names the file.
#[derive(Clone, Debug)]
struct File {
    name: String,
    entries: Vec<Entry>,
}

/// Every `--suppressions` file of a run, in the order given.
#[derive(Clone, Debug, Default)]
pub struct Suppressions {
    files: Vec<File>,
}

impl Suppressions {
    /// Reads the files; the report names each as `shown` (what the user
    /// typed). The error is one line: the file that cannot be read, or
    /// `FILE:LINE: what is wrong`.
    pub fn load(files: &[(String, &Path)]) -> Result<Suppressions, String> {
        let mut out = Suppressions::default();
        for (shown, path) in files {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("--suppressions: cannot read {shown}: {e}"))?;
            out.add(shown, &text)?;
        }
        Ok(out)
    }

    /// Adds the entries of file `name` with contents `text`.
    pub fn add(&mut self, name: &str, text: &str) -> Result<(), String> {
        let mut entries = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = |what: &str| format!("{name}:{}: {what}: {line}", i + 1);
            let Some((kind, pattern)) = line.split_once(':') else {
                return Err(bad("not a suppression (TYPE:PATTERN)"));
            };
            let kind = match kind.trim() {
                "race" => Kind::Race,
                "called_from_lib" => Kind::CalledFromLib,
                _ => {
                    return Err(bad(
                        "unknown suppression type (lard knows race: and called_from_lib:)",
                    ))
                }
            };
            let pattern = pattern.trim();
            if pattern.is_empty() || pattern == "^" || pattern == "$" {
                return Err(bad("empty pattern"));
            }
            entries.push(Entry {
                kind,
                pattern: pattern.to_string(),
            });
        }
        self.files.push(File {
            name: name.to_string(),
            entries,
        });
        Ok(())
    }

    /// True when no file was given.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// How many files were given.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// The first file with an entry that suppresses a race with these
    /// names, by index.
    pub fn file_of(&self, race: &RaceNames) -> Option<usize> {
        self.files.iter().position(|f| {
            f.entries.iter().any(|e| match e.kind {
                Kind::Race => race
                    .names
                    .iter()
                    .chain(&race.libraries)
                    .chain(&race.executable)
                    .any(|n| matches(&e.pattern, n)),
                Kind::CalledFromLib => race.libraries.iter().any(|n| matches(&e.pattern, n)),
            })
        })
    }

    /// How the report names file `i`.
    pub fn name(&self, i: usize) -> &str {
        &self.files[i].name
    }
}

/// Whether `pattern` matches `name` as ThreadSanitizer's `TemplateMatch`
/// does: a substring, anchored by a leading `^` or a trailing `$`, with
/// `*` for any characters.
pub fn matches(pattern: &str, name: &str) -> bool {
    let (start, p) = match pattern.strip_prefix('^') {
        Some(p) => (true, p),
        None => (false, pattern),
    };
    let (end, p) = match p.strip_suffix('$') {
        Some(p) => (true, p),
        None => (false, p),
    };
    let glob = format!(
        "{}{p}{}",
        if start { "" } else { "*" },
        if end { "" } else { "*" }
    );
    glob_match(glob.as_bytes(), name.as_bytes())
}

/// `*`-only glob matching over bytes (iterative, backtracking to the
/// last star).
fn glob_match(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, si));
            pi += 1;
        } else if pi < p.len() && p[pi] == s[si] {
            pi += 1;
            si += 1;
        } else if let Some((sp, ss)) = star {
            pi = sp + 1;
            si = ss + 1;
            star = Some((sp, ss + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(names: &[&str], libraries: &[&str]) -> RaceNames {
        RaceNames {
            names: names.iter().map(|s| s.to_string()).collect(),
            libraries: libraries.iter().map(|s| s.to_string()).collect(),
            executable: Vec::new(),
        }
    }

    #[test]
    fn patterns_match_as_thread_sanitizer_templates_do() {
        let cases = [
            ("deposit", "deposit", true),
            ("posi", "deposit", true),
            ("^dep", "deposit", true),
            ("^pos", "deposit", false),
            ("sit$", "deposit", true),
            ("dep$", "deposit", false),
            ("^deposit$", "deposit", true),
            ("d*t", "deposit", true),
            ("^d*s$", "deposit", false),
            ("racy_*.c", "/src/racy_sum.c", true),
            ("*", "anything", true),
            ("libfoo.so", "libbar.so.1", false),
        ];
        for (p, n, want) in cases {
            assert_eq!(matches(p, n), want, "{p} against {n}");
        }
    }

    #[test]
    fn a_file_parses_its_types_and_comments() {
        let mut s = Suppressions::default();
        s.add(
            "s.supp",
            "# known races\n\nrace:deposit\n  called_from_lib:libfoo.so\n",
        )
        .unwrap();
        assert_eq!(s.file_of(&names(&["deposit"], &[])), Some(0));
        assert_eq!(s.file_of(&names(&["record"], &[])), None);
        assert_eq!(s.file_of(&names(&[], &["libfoo.so.1"])), Some(0));
        assert_eq!(s.file_of(&names(&["libfoo.so"], &[])), None);
    }

    #[test]
    fn a_bad_line_names_file_and_line() {
        let mut s = Suppressions::default();
        let e = s.add("s.supp", "race:ok\n\nrcae:deposit\n").unwrap_err();
        assert!(e.starts_with("s.supp:3: unknown suppression type"), "{e}");
        let e = s.add("t.supp", "# c\ndeposit\n").unwrap_err();
        assert!(e.starts_with("t.supp:2: not a suppression"), "{e}");
        let e = s.add("u.supp", "race:\n").unwrap_err();
        assert!(e.starts_with("u.supp:1: empty pattern"), "{e}");
        assert!(!e.contains('\n'));
    }
}
