//! `lard campaign slurm`: a Slurm job array whose task I of N runs
//! `lard campaign run FILE --shard I/N` (docs/campaigns.md). The script is
//! written to the results directory; `--submit` hands it to `sbatch`.

use crate::cmd::shell_quote;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What the job array looks like.
#[derive(Clone, Debug)]
pub struct SlurmArgs {
    /// The `lard` executable the tasks run (an absolute path every node
    /// sees).
    pub lard: PathBuf,
    /// The campaign file (absolute).
    pub campaign: PathBuf,
    /// The results directory (absolute, on storage every node sees).
    pub out: PathBuf,
    /// The campaign's name (the job's name).
    pub name: String,
    /// Array tasks (N).
    pub tasks: usize,
    /// CPUs per task (each task's `--jobs`).
    pub cpus: usize,
    /// At most this many tasks at once (`--array=0-N%K`).
    pub array_limit: Option<usize>,
    /// The partition (`--partition`).
    pub partition: Option<String>,
    /// Extra `#SBATCH` options (`--partition=x`, `--time=1:00:00`, …).
    pub sbatch: Vec<String>,
}

/// The job script.
pub fn script(a: &SlurmArgs) -> String {
    let q = |p: &Path| shell_quote(&p.to_string_lossy());
    let mut s = String::from("#!/bin/sh\n");
    s.push_str(&format!(
        "#SBATCH --job-name={}\n",
        shell_quote(&format!("lard-{}", a.name))
    ));
    let limit = a
        .array_limit
        .map_or(String::new(), |k| format!("%{}", k.max(1)));
    s.push_str(&format!(
        "#SBATCH --array=0-{}{limit}\n",
        a.tasks.max(1) - 1
    ));
    if let Some(p) = &a.partition {
        s.push_str(&format!("#SBATCH --partition={}\n", shell_quote(p)));
    }
    s.push_str(&format!("#SBATCH --cpus-per-task={}\n", a.cpus.max(1)));
    s.push_str(&format!(
        "#SBATCH --output={}\n",
        q(&a.out.join("slurm-%A_%a.out"))
    ));
    for o in &a.sbatch {
        s.push_str(&format!("#SBATCH {o}\n"));
    }
    s.push_str(&format!(
        "# Task I of N runs the runs whose index is I modulo N; results are\n\
         # files named by each run's hash, so tasks never collide and a\n\
         # resubmission makes only the runs that have no result yet.\n\
         exec {} campaign run {} --out {} --no-progress \\\n  --shard \"$SLURM_ARRAY_TASK_ID/{}\" --jobs \"${{SLURM_CPUS_PER_TASK:-1}}\"\n",
        q(&a.lard),
        q(&a.campaign),
        q(&a.out),
        a.tasks.max(1)
    ));
    s
}

/// Writes the script to `out/NAME.sbatch` and returns its path.
pub fn write(a: &SlurmArgs) -> Result<PathBuf, String> {
    std::fs::create_dir_all(&a.out)
        .map_err(|e| format!("cannot create {}: {e}", a.out.display()))?;
    let path = a.out.join(format!("{}.sbatch", a.name));
    std::fs::write(&path, script(a))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

/// A submitted job array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Submitted {
    /// The job id.
    pub id: String,
    /// With `--wait`: the highest exit status of the array's tasks when it
    /// is not 0 (`sbatch --wait`'s own exit status).
    pub failed: Option<i32>,
}

/// `sbatch --parsable [--wait] SCRIPT`: the job id, and with `wait`
/// whether a task failed.
pub fn submit(script: &Path, wait: bool) -> Result<Submitted, String> {
    let mut c = Command::new("sbatch");
    c.arg("--parsable");
    if wait {
        c.arg("--wait");
    }
    let o = c
        .arg(script)
        .output()
        .map_err(|e| format!("cannot run sbatch: {e}"))?;
    let out = String::from_utf8_lossy(&o.stdout);
    let id = out
        .lines()
        .next()
        .unwrap_or_default()
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_string();
    if !o.status.success() && (id.is_empty() || !wait) {
        let err = String::from_utf8_lossy(&o.stderr);
        return Err(format!(
            "sbatch failed: {}",
            err.lines().last().unwrap_or("no message")
        ));
    }
    if id.is_empty() {
        return Err("sbatch printed no job id".into());
    }
    let failed = (wait && !o.status.success()).then(|| o.status.code().unwrap_or(1));
    Ok(Submitted { id, failed })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_runs_one_shard_per_task() {
        let s = script(&SlurmArgs {
            lard: "/opt/lard".into(),
            campaign: "/c/my campaign.toml".into(),
            out: "/r".into(),
            name: "t".into(),
            tasks: 8,
            cpus: 4,
            array_limit: Some(2),
            partition: Some("batch".into()),
            sbatch: vec!["--time=10:00".into()],
        });
        assert!(s.contains("#SBATCH --array=0-7%2\n"), "{s}");
        assert!(s.contains("#SBATCH --partition=batch\n"), "{s}");
        assert!(s.contains("#SBATCH --cpus-per-task=4\n"), "{s}");
        assert!(s.contains("#SBATCH --time=10:00\n"), "{s}");
        assert!(s.contains("'/c/my campaign.toml'"), "{s}");
        assert!(s.contains("--shard \"$SLURM_ARRAY_TASK_ID/8\""), "{s}");
    }
}
