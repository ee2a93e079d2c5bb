//! `lard run --report-html FILE`: the reported races as one self-contained
//! page (no file or network fetched when it is opened): the summary
//! sentence, then per race the data (a heap block with its allocation
//! site and the source around it), both accesses with thread, logical
//! unit, instruction and stack, and the source lines around every frame;
//! then the threads of the run. A script fills the table of contents
//! from the races on the page.

use crate::binary::dwarf::lines::Frame;
use crate::machine::Machine;
use crate::observe::callstack;
use crate::observe::detect::{data_name, kind_name, unit_text, RaceLog, RacePair};
use lard_detector_hw::event::ThreadKey;
use lard_detector_hw::RaceKind;
use std::collections::HashMap;
use std::fmt::Write as _;

/// Lines of source shown before and after a racy line.
const CONTEXT: u32 = 3;

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em;max-width:70em;color:#222}\
h1{font-size:1.4em}h2{font-size:1.15em;border-bottom:1px solid #ccc;padding-bottom:.2em}\
h3{font-size:1em;margin:.8em 0 .3em}#summary{font-size:1.2em;font-weight:bold}\
.meta,.insn{color:#555;font-family:monospace;font-size:.9em}\
.access{border-left:4px solid #c33;padding-left:1em;margin:1em 0}\
.access.previous{border-color:#e90}.data{background:#f4f4f4;padding:.5em}\
ol.stack{padding-left:1.5em}pre.snippet{background:#f8f8f8;padding:.4em;margin:.3em 0;overflow-x:auto}\
pre.snippet mark{background:#fd8;display:inline-block;width:100%}\
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left}";

/// The table of contents, built from the page's races when it is shown.
const SCRIPT: &str = "document.addEventListener('DOMContentLoaded',function(){\
var toc=document.getElementById('toc');var races=document.querySelectorAll('section.race');\
var ul=document.createElement('ul');races.forEach(function(r){var li=document.createElement('li');\
var a=document.createElement('a');a.href='#'+r.id;a.textContent=r.querySelector('h2').textContent;\
li.appendChild(a);ul.appendChild(li);});toc.appendChild(ul);\
toc.setAttribute('data-races',String(races.length));});";

/// `text` escaped for HTML.
fn esc(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            '\'' => s.push_str("&#39;"),
            c => s.push(c),
        }
    }
    s
}

/// Source files read for snippets (`None`: not readable).
#[derive(Default)]
struct Sources(HashMap<String, Option<Vec<String>>>);

impl Sources {
    /// The lines around `line` of `file`, the racy one marked.
    fn snippet(&mut self, file: &str, line: u32) -> Option<String> {
        let lines = self
            .0
            .entry(file.to_string())
            .or_insert_with(|| {
                std::fs::read_to_string(file)
                    .ok()
                    .map(|t| t.lines().map(str::to_string).collect())
            })
            .as_ref()?;
        if line == 0 || line as usize > lines.len() {
            return None;
        }
        let first = line.saturating_sub(CONTEXT).max(1);
        let last = (line + CONTEXT).min(lines.len() as u32);
        let mut s = String::from("<pre class=\"snippet\">");
        for n in first..=last {
            let text = format!("{n:>5}  {}", lines[n as usize - 1]);
            if n == line {
                let _ = write!(s, "<mark>{}</mark>", esc(&text));
            } else {
                s += &esc(&text);
            }
            s.push('\n');
        }
        s += "</pre>";
        Some(s)
    }
}

/// One frame: function and place, and the source around its line.
fn frame_html(f: &Frame, src: &mut Sources) -> String {
    let place = match (&f.file, f.line) {
        (Some(file), Some(line)) => format!("{file}:{line}"),
        (Some(file), None) => file.clone(),
        _ => "??".into(),
    };
    let snippet = match (&f.file, f.line) {
        (Some(file), Some(line)) => src.snippet(file, line).unwrap_or_default(),
        _ => String::new(),
    };
    format!(
        "<li><code class=\"fn\">{}</code> <span class=\"loc\">{}</span>{snippet}</li>",
        esc(f.function.as_deref().unwrap_or("??")),
        esc(&place)
    )
}

fn stack_html(m: &Machine, site: u64, src: &mut Sources) -> String {
    let frames: Vec<Frame> = callstack::chains(m, site).0.concat();
    if frames.is_empty() {
        return "<p class=\"meta\">no source lines (built without -g)</p>".into();
    }
    let items: String = frames.iter().map(|f| frame_html(f, src)).collect();
    format!("<ol class=\"stack\" start=\"0\">{items}</ol>")
}

fn access_html(
    m: &Machine,
    class: &str,
    title: String,
    (thread, clock): (ThreadKey, u64),
    site: u64,
    src: &mut Sources,
) -> String {
    let unit = unit_text(m, thread, clock).map_or(String::new(), |u| {
        format!("<p class=\"unit\">logical thread: {}</p>", esc(&u))
    });
    format!(
        "<div class=\"access {class}\"><h3>{}</h3>{unit}<p class=\"insn\">{}</p>{}</div>",
        esc(&title),
        esc(&m.describe_pc(site)),
        stack_html(m, site, src)
    )
}

fn race_html(
    m: &Machine,
    i: usize,
    (site, prev): (u64, u64),
    p: &RacePair,
    src: &mut Sources,
) -> String {
    let data = data_name(m, p.addr);
    let mut s = format!(
        "<section class=\"race\" id=\"race-{n}\" data-kind=\"{kind}\" data-count=\"{count}\">\
         <h2>Race {n}: {kind} race on {}</h2>",
        esc(&data),
        n = i + 1,
        kind = kind_name(p.kind),
        count = p.count
    );
    let _ = write!(
        s,
        "<div class=\"data\"><p>{} racy access(es) of {} bytes at {:#x}: {}</p>",
        p.count,
        p.size,
        p.addr,
        esc(&data)
    );
    if let Some(b) = m.obs.binary.as_ref().and_then(|rt| rt.heap_block(p.addr)) {
        let site = b.site.wrapping_sub(1);
        let frames = m.obs.objects.frames(site);
        let _ = write!(
            s,
            "<p class=\"heap\">heap block of {} bytes at {:#x}, allocated by {}{}:</p>",
            b.size,
            b.addr,
            b.thread,
            if b.live { "" } else { " (freed)" }
        );
        if let Some(f) = frames.first() {
            let _ = write!(
                s,
                "<ol class=\"stack alloc\" start=\"0\">{}</ol>",
                frame_html(f, src)
            );
        }
    }
    s += "</div>";
    let access = if p.write { "write" } else { "read" };
    s += &access_html(
        m,
        "current",
        format!(
            "{access} of {} bytes by thread {} (kernel {})",
            p.size, p.thread, p.kthread
        ),
        (p.thread, p.clock),
        site,
        src,
    );
    let prev_access = match p.kind {
        RaceKind::ReadWrite => "read",
        _ => "write",
    };
    s += &access_html(
        m,
        "previous",
        format!("previous {prev_access} by thread {}", p.prev_thread),
        (p.prev_thread, p.prev_clock),
        prev,
        src,
    );
    s += "</section>";
    s
}

/// The threads of the run: kernel thread, language thread, instructions.
fn threads_html(m: &Machine) -> String {
    let mut rows = String::new();
    for t in &m.cpu.threads {
        let _ = write!(
            rows,
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            t.tid,
            t.lthread.map_or("—".to_string(), |l| format!("T{l}")),
            t.insns
        );
    }
    format!(
        "<section id=\"threads\"><h2>Threads</h2><table><tr><th>kernel thread</th>\
         <th>language thread</th><th>instructions</th></tr>{rows}</table></section>"
    )
}

/// The page of the races of `log` (the reported ones), for a run started
/// by `command_line`; `summary` is the text report's last sentence.
pub fn html(log: &RaceLog, m: &Machine, command_line: &str, summary: &str) -> String {
    let mut src = Sources::default();
    let races: String = log
        .pairs
        .iter()
        .enumerate()
        .map(|(i, (key, p))| race_html(m, i, *key, p, &mut src))
        .collect();
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>lard: {summary}</title><style>{STYLE}</style></head><body>\
         <h1>lard race report ({detector})</h1><p id=\"summary\">{summary}</p>\
         <p class=\"meta\">{command}</p><nav id=\"toc\"></nav>{races}{threads}\
         <script>{SCRIPT}</script></body></html>\n",
        summary = esc(summary.trim()),
        detector = log.detector,
        command = esc(command_line),
        threads = threads_html(m),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped() {
        assert_eq!(esc("a<b> & \"c\""), "a&lt;b&gt; &amp; &quot;c&quot;");
    }
}
