//! Where in a TOML file an error is, for one-line messages `FILE:LINE:COL:
//! message`: a syntax error's place from the parser's span, a
//! checker's error (`name must be a string`, `program 2: unknown key
//! `x``, `axes.seed: no values`) from the key it names.

/// 1-based line and column of byte `offset` in `text`.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// A TOML syntax error as `FILE:LINE:COL: message` on one line.
pub fn syntax_error(file: &str, text: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim().replace('\n', " ");
    match e.span() {
        Some(span) => {
            let (line, col) = line_col(text, span.start);
            format!("{file}:{line}:{col}: {message}")
        }
        None => format!("{file}: {message}"),
    }
}

/// A checker's error `message` about `text` as `FILE:LINE:COL: message`,
/// placed at the key it names, or `FILE: message` when no key is found.
pub fn checked_error(file: &str, text: &str, message: &str) -> String {
    match locate(text, message) {
        Some((line, col)) => format!("{file}:{line}:{col}: {message}"),
        None => format!("{file}: {message}"),
    }
}

/// One line of the file: its number (1-based), its text, and the table
/// header it lies under (`program` for lines after `[[program]]`, with the
/// header's index among equal ones).
struct Line<'a> {
    no: usize,
    text: &'a str,
    table: String,
    index: usize,
}

fn lines(text: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut table = String::new();
    let mut counts: std::collections::HashMap<String, usize> = Default::default();
    let mut index = 0;
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if let Some(h) = t.strip_prefix('[') {
            let name = h
                .trim_start_matches('[')
                .split(']')
                .next()
                .unwrap_or("")
                .trim();
            table = name.to_string();
            let n = counts.entry(table.clone()).or_default();
            *n += 1;
            index = *n;
        }
        out.push(Line {
            no: i + 1,
            text: l,
            table: table.clone(),
            index,
        });
    }
    out
}

/// The column of key `key` defined on line `l` (`key =` or `"key" =`).
fn defines(l: &str, key: &str) -> Option<usize> {
    let t = l.trim_start();
    let rest = t
        .strip_prefix(key)
        .or_else(|| t.strip_prefix(&format!("\"{key}\"")))?;
    rest.trim_start()
        .starts_with('=')
        .then(|| l.len() - t.len() + 1)
}

/// The place of the key `message` is about.
fn locate(text: &str, message: &str) -> Option<(usize, usize)> {
    let all = lines(text);
    let quoted = message
        .split('`')
        .nth(1)
        .filter(|_| message.contains("unknown key `"));
    // `program N: …` / `program NAME: …`: within that [[program]].
    if let Some(rest) = message.strip_prefix("program ") {
        let (which, what) = rest.split_once(':').unwrap_or((rest, ""));
        // (A program without `name` is named by its command: then every
        // [[program]] is searched for the key.)
        let index = match which.parse::<usize>() {
            Ok(n) => Some(n),
            Err(_) => all
                .iter()
                .filter(|l| l.table == "program")
                .find(|l| {
                    defines(l.text, "name").is_some() && l.text.contains(&format!("\"{which}\""))
                })
                .map(|l| l.index),
        };
        let table: Vec<&Line> = all
            .iter()
            .filter(|l| l.table == "program" && index.is_none_or(|i| l.index == i))
            .collect();
        let key = quoted.map(str::to_string).or_else(|| {
            what.split_whitespace()
                .next()
                .map(|w| w.trim_end_matches(':').to_string())
        });
        if let Some(key) = key {
            if let Some((l, col)) = table
                .iter()
                .find_map(|l| defines(l.text, &key).map(|c| (l.no, c)))
            {
                return Some((l, col));
            }
        }
        let head = table.first()?;
        return Some((head.no, head.text.len() - head.text.trim_start().len() + 1));
    }
    // `KEY …`, `a.b.c: …`, or `unknown key `k`` at the top level.
    let path = match quoted {
        Some(k) => k.to_string(),
        None => message.split([' ', ':']).next().unwrap_or("").to_string(),
    };
    if path.is_empty() {
        return None;
    }
    let parts: Vec<&str> = path.split('.').collect();
    // The longest table prefix that is a header, then the key under it.
    for split in (0..parts.len()).rev() {
        let (table, key) = (parts[..split].join("."), parts[split]);
        let found = all
            .iter()
            .filter(|l| l.table == table)
            .find_map(|l| defines(l.text, key).map(|c| (l.no, c)));
        if found.is_some() {
            return found;
        }
        let full = parts[..=split].join(".");
        if let Some(l) = all.iter().find(|l| {
            let t = l.text.trim();
            t == format!("[{full}]") || t == format!("[[{full}]]")
        }) {
            return Some((l.no, l.text.len() - l.text.trim_start().len() + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAMPAIGN: &str = "name = 3\ntimeout = 5\n\n[axes]\nseed = []\n\n\
                            [[program]]\nname = \"a\"\ncommand = [\"x\"]\n\n\
                            [[program]]\nname = \"b\"\n  colour = 1\n";

    #[test]
    fn a_checker_error_is_placed_at_its_key() {
        let at = |m: &str| locate(CAMPAIGN, m);
        assert_eq!(at("name must be a string"), Some((1, 1)));
        assert_eq!(at("axes.seed: no values"), Some((5, 1)));
        assert_eq!(at("program b: unknown key `colour`"), Some((13, 3)));
        assert_eq!(at("program 2: no command"), Some((11, 1)));
        assert_eq!(at("unknown key `timeout`"), Some((2, 1)));
        assert_eq!(at("no [[program]]"), None);
    }

    #[test]
    fn a_syntax_error_has_line_and_column() {
        let text = "name = \"x\"\ntimeout = = 3\n";
        let e = text.parse::<toml::Table>().unwrap_err();
        let m = syntax_error("c.toml", text, &e);
        assert!(m.starts_with("c.toml:2:"), "{m}");
        assert!(!m.contains('\n'), "{m}");
    }
}
