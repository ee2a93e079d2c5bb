//! Subcommands beyond `lard run`, and the guest manifest they read.

pub mod accuracy;
pub mod adversarial;
pub mod campaign;
pub mod cc_accuracy;
pub mod explore;
pub mod jumble;
pub mod manifest;

/// `w` as one shell word (unchanged when it needs no quoting).
pub fn shell_quote(w: &str) -> String {
    let plain = !w.is_empty()
        && w.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
    if plain {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// The progress bar of a many-run command (`lard NAME`, `len` runs, a
/// message when `message` is given), on stderr; hidden unless `show`.
pub fn progress_bar(
    show: bool,
    name: &str,
    len: u64,
    message: Option<&str>,
) -> indicatif::ProgressBar {
    if !show {
        return indicatif::ProgressBar::hidden();
    }
    let b = indicatif::ProgressBar::new(len);
    let msg = if message.is_some() { "{msg}, " } else { "" };
    b.set_style(
        indicatif::ProgressStyle::with_template(&format!(
            "lard {name} {{bar:40}} {{pos}}/{{len}} runs, {msg}{{elapsed}} (eta {{eta}})"
        ))
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    if let Some(m) = message {
        b.set_message(m.to_string());
    }
    b
}
