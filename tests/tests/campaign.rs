//! `lard campaign` end to end: campaign files whose programs are built by
//! the campaign itself (guests/plain, plain gcc), run here in shards and as
//! a job array on a real single-node Slurm cluster (slurmctld, slurmd and
//! munged started by the test), then collected. Ground truth comes from
//! the programs' design (racy_sum.c races, mutex_counter.c does not) and
//! from a direct `lard run` of the same configuration.

use lard_e2e::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A fresh directory for one campaign.
fn campaign_dir(name: &str) -> PathBuf {
    let d = scratch_file(name).with_extension("d");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Writes `c.toml` in `dir`: racy_sum and mutex_counter, built by the
/// campaign, crossed with `axes`.
fn write_campaign(dir: &Path, axes: &str) -> PathBuf {
    let src = |f: &str| root().join("guests/plain").join(f);
    let text = format!(
        r#"name = "t"
timeout = 60

[[program]]
name = "racy_sum"
build = "gcc -O2 -g -pthread -o racy_sum '{racy}'"
command = ["./racy_sum"]
racy = true

[[program]]
name = "mutex_counter"
build = "gcc -O2 -g -pthread -o mutex_counter '{locked}'"
command = ["./mutex_counter"]
racy = false

[axes]
{axes}
"#,
        racy = src("racy_sum.c").display(),
        locked = src("mutex_counter.c").display(),
    );
    let f = dir.join("c.toml");
    std::fs::write(&f, text).unwrap();
    f
}

fn lard_campaign(args: &[&str]) -> std::process::Output {
    Command::new(lard())
        .arg("campaign")
        .args(args)
        .output()
        .unwrap()
}

/// The result files of a results directory, parsed, by key.
fn results(dir: &Path) -> std::collections::BTreeMap<String, Value> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.len() == 21 && n.ends_with(".json")
        })
        .map(|e| {
            let v: Value = serde_json::from_slice(&std::fs::read(e.path()).unwrap()).unwrap();
            (v["key"].as_str().unwrap().to_string(), v)
        })
        .collect()
}

const AXES: &str = "detector = [\"none\", \"fasttrack\"]\nseed = [1, 2]";

#[test]
fn shards_make_every_run_once_and_a_rerun_makes_none() {
    let d = campaign_dir("campaign-shards");
    let c = write_campaign(&d, AXES);
    let out = d.join("r");
    let c_s = c.to_str().unwrap();
    let o_s = out.to_str().unwrap();
    for shard in ["0/3", "1/3", "2/3"] {
        let o = lard_campaign(&["run", c_s, "--out", o_s, "--shard", shard, "--jobs", "2"]);
        assert_eq!(shell_status(&o), 0, "{}", stderr(&o));
    }
    let r = results(&out);
    // 2 programs x 2 detectors x 2 seeds.
    assert_eq!(r.len(), 8, "{:?}", r.keys());
    for v in r.values() {
        assert_eq!(v["outcome"], "ok", "{v}");
        assert_eq!(v["exit"], 0, "{v}");
    }
    let again = lard_campaign(&["run", c_s, "--out", o_s]);
    assert_eq!(shell_status(&again), 0, "{}", stderr(&again));
    assert!(
        stdout(&again).contains("8 already done, 0 made"),
        "{}",
        stdout(&again)
    );
    // Each program was built once, by whichever shard came first.
    assert!(d.join("racy_sum").is_file() && d.join("mutex_counter").is_file());
}

#[test]
fn collect_gives_tables_figures_and_the_detectors_verdicts() {
    let d = campaign_dir("campaign-collect");
    let c = write_campaign(&d, AXES);
    let out = d.join("r");
    let o = lard_campaign(&["run", c.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(shell_status(&o), 0, "{}", stderr(&o));
    let o = lard_campaign(&["collect", out.to_str().unwrap()]);
    assert_eq!(shell_status(&o), 0, "{}", stderr(&o));
    let text = stdout(&o);
    // Ground truth by design: FastTrack finds racy_sum's race in every run
    // and none in mutex_counter.
    assert!(
        text.contains("detector=fasttrack: precision 1.000, recall 1.000 (TP 2, FP 0, FN 0, TN 2)"),
        "{text}"
    );
    let summary: Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let cells = summary["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 4, "{summary}");
    // The campaign's figures agree with a direct `lard run`.
    let direct_json = scratch_file("campaign-direct");
    // The campaign's runs keep only these host variables (docs/campaigns.md).
    let kept = ["PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TZ"];
    let direct = Command::new(lard())
        .env_clear()
        .envs(kept.iter().filter_map(|k| Some((k, std::env::var_os(k)?))))
        .args([
            "run",
            "--detector",
            "fasttrack",
            "--seed",
            "1",
            "--report-json",
        ])
        .arg(&direct_json)
        .arg(d.join("racy_sum"))
        .current_dir(&d)
        .output()
        .unwrap();
    assert_eq!(shell_status(&direct), 0);
    let dv: Value = serde_json::from_slice(&std::fs::read(&direct_json).unwrap()).unwrap();
    let runs: Value =
        serde_json::from_slice(&std::fs::read(out.join("runs.json")).unwrap()).unwrap();
    let campaign_run = runs
        .as_array()
        .unwrap()
        .iter()
        .find(|r| {
            r["program"] == "racy_sum"
                && r["params"]["detector"] == "fasttrack"
                && r["params"]["seed"] == "1"
        })
        .unwrap();
    assert_eq!(campaign_run["dre"], dv["detectors"]["fasttrack"]["dre"]);
    assert!(campaign_run["dre"].as_u64().unwrap() > 0);
    assert_eq!(campaign_run["pcs"], dv["detectors"]["fasttrack"]["pcs"]);
    let csv = std::fs::read_to_string(out.join("runs.csv")).unwrap();
    assert_eq!(csv.lines().count(), 9, "{csv}");
    for f in ["cpu.svg", "overhead.svg", "races.svg", "accuracy.svg"] {
        let svg = std::fs::read_to_string(out.join(f)).unwrap();
        let label = if f == "accuracy.svg" {
            "detector=fasttrack"
        } else {
            "racy_sum"
        };
        assert!(svg.starts_with("<svg") && svg.contains(label), "{f}");
    }
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("<img src=\"overhead.svg\""), "{html}");
}

/// `hw_profile = true`: each LARDISH run keeps its instruction profile and
/// `collect` sums them per instruction. Ground truth: the runs' own
/// `--hw-stats-json` figures for the sums, hot_line.c's design (the line
/// marked HOT makes nearly every checked access) for the costliest.
#[test]
fn collect_sums_the_runs_instruction_profiles() {
    let d = campaign_dir("campaign-profile");
    let text = format!(
        r#"name = "p"
timeout = 120
hw_profile = true

[[program]]
name = "hot_line"
build = "gcc -O2 -g -pthread -o hot_line '{}'"
command = ["./hot_line"]
racy = false

[axes]
detector = ["lardish"]
seed = [1, 2]
"#,
        root().join("guests/plain/hot_line.c").display()
    );
    let c = d.join("c.toml");
    std::fs::write(&c, text).unwrap();
    let out = d.join("r");
    let o = lard_campaign(&["run", c.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(shell_status(&o), 0, "{}", stderr(&o));
    let o = lard_campaign(&["collect", out.to_str().unwrap()]);
    assert_eq!(shell_status(&o), 0, "{}", stderr(&o));
    let runs = results(&out);
    assert_eq!(runs.len(), 2);
    let top: Value =
        serde_json::from_slice(&std::fs::read(out.join("instructions.json")).unwrap()).unwrap();
    let top = top.as_array().unwrap();
    assert!(top.iter().all(|t| t["runs"] == 2), "{top:?}");
    let n = |v: &Value, k: &str| v[k].as_i64().unwrap_or_else(|| panic!("{k} in {v}"));
    let sum = |k: &str| top.iter().map(|t| n(t, k)).sum::<i64>();
    let hw = |k: &str| runs.values().map(|r| n(&r["hw_stats"], k)).sum::<i64>();
    for k in [
        "events",
        "hw_checks",
        "sw_checks",
        "md_evictions",
        "rollovers",
    ] {
        assert_eq!(sum(k), hw(k), "{k}");
    }
    assert_eq!(sum("history_ops"), hw("clear_ops") + hw("copy_ops"));
    assert_eq!(
        sum("cycles"),
        hw("cycles_lardish") - hw("cycles_no_detection")
    );
    let src = std::fs::read_to_string(root().join("guests/plain/hot_line.c")).unwrap();
    let hot = src.lines().position(|l| l.contains("/* HOT */")).unwrap() + 1;
    assert_eq!(top[0]["function"], "work", "{}", top[0]);
    assert_eq!(n(&top[0], "line"), hot as i64, "{}", top[0]);
    let text = stdout(&o);
    assert!(
        text.contains("top instructions of hot_line: detector=lardish (LARDISH model, sum over 2 profiled runs)"),
        "{text}"
    );
    assert!(text.contains(&format!("hot_line.c:{hot}\n")), "{text}");
}

#[test]
fn a_run_that_times_out_is_a_result() {
    let d = campaign_dir("campaign-timeout");
    let text = format!(
        "timeout = 1\n[[program]]\nname = \"spin\"\nbuild = \"gcc -O2 -pthread -o spin '{}'\"\ncommand = [\"./spin\"]\n",
        root().join("guests/plain/spin_forever.c").display()
    );
    let c = d.join("c.toml");
    std::fs::write(&c, text).unwrap();
    let out = d.join("r");
    let o = lard_campaign(&["run", c.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(shell_status(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).contains("1 made (1 failed)"), "{}", stdout(&o));
    let r = results(&out);
    let v = r.values().next().unwrap();
    assert_eq!(v["outcome"], "timeout", "{v}");
    assert_eq!(v["exit"], 121, "{v}");
}

#[test]
fn bad_campaign_files_are_one_line_errors() {
    let d = campaign_dir("campaign-bad");
    let c = d.join("c.toml");
    // Each names the file, the line and column of the fault, and the fault.
    for (text, place, needle) in [
        ("[[program]]\nname = \"x\"\n", "1:1", "no command"),
        (
            "[[program]]\ncommand = [\"x\"]\n[axes]\nseed = 3\n",
            "4:1",
            "axes.seed",
        ),
        (
            "[[program]]\ncommand = [\"x\"]\n  colour = 2\n",
            "3:3",
            "unknown key `colour`",
        ),
        ("name = \"x\"\ntimeout = = 3\n", "2:11", "="),
        ("this is not toml", "1:", "c.toml"),
    ] {
        std::fs::write(&c, text).unwrap();
        let o = lard_campaign(&["run", c.to_str().unwrap()]);
        let e = stderr(&o);
        assert_eq!(shell_status(&o), 1, "{text}: {e}");
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(
            e.starts_with(&format!("lard: {}:{place}", c.display())),
            "{text}: {e}"
        );
        assert!(e.contains(needle), "{e}");
    }
    let o = lard_campaign(&["run", "/nonexistent/c.toml"]);
    assert_eq!(shell_status(&o), 1);
    let o = lard_campaign(&["collect", d.to_str().unwrap()]);
    assert_eq!(shell_status(&o), 1);
    assert!(stderr(&o).contains("no campaign results"), "{}", stderr(&o));
    let o = lard_campaign(&["run", c.to_str().unwrap(), "--shard", "3/3"]);
    assert_eq!(shell_status(&o), 2);
}

/// A private single-node Slurm cluster: munged, slurmctld and slurmd with
/// their own configuration, sockets, ports and state under `dir`; stopped
/// when dropped.
struct Slurm {
    dir: PathBuf,
    conf: PathBuf,
}

/// A TCP port nobody listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Slurm {
    /// Starts the cluster, or says in one line why it cannot (the daemons
    /// need root and Debian's slurm-wlm and munge, which `make prereqs`
    /// installs) and returns None.
    fn start(dir: &Path) -> Option<Slurm> {
        for tool in [
            "/usr/sbin/slurmctld",
            "/usr/sbin/slurmd",
            "/usr/sbin/munged",
        ] {
            if !Path::new(tool).exists() {
                eprintln!("Slurm test skipped: {tool} is missing (make prereqs installs slurm-wlm and munge)");
                return None;
            }
        }
        // SAFETY: geteuid(2) has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("Slurm test skipped: slurmd must run as root");
            return None;
        }
        let d = dir.to_path_buf();
        for sub in ["state", "spool"] {
            std::fs::create_dir_all(d.join(sub)).unwrap();
        }
        let key: Vec<u8> = (0..1024u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        let keyf = d.join("munge.key");
        std::fs::write(&keyf, key).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&keyf, std::fs::Permissions::from_mode(0o400)).unwrap();
        let st = Command::new("/usr/sbin/munged")
            .arg(format!("--key-file={}", keyf.display()))
            .arg(format!("--socket={}", d.join("munge.sock").display()))
            .arg(format!("--pid-file={}", d.join("munged.pid").display()))
            .arg(format!("--log-file={}", d.join("munged.log").display()))
            .arg(format!("--seed-file={}", d.join("munge.seed").display()))
            .arg("--force")
            .status()
            .unwrap();
        assert!(st.success(), "munged did not start");
        let host = String::from_utf8(Command::new("hostname").arg("-s").output().unwrap().stdout)
            .unwrap()
            .trim()
            .to_string();
        let p = |f: &str| d.join(f).display().to_string();
        let conf = d.join("slurm.conf");
        std::fs::write(
            &conf,
            format!(
                "ClusterName=lardtest\nSlurmctldHost={host}(127.0.0.1)\nSlurmctldPort={}\n\
                 SlurmdPort={}\nAuthType=auth/munge\nAuthInfo=socket={}\nCredType=cred/munge\n\
                 StateSaveLocation={}\nSlurmdSpoolDir={}\nSlurmctldPidFile={}\nSlurmdPidFile={}\n\
                 SlurmUser=root\nSlurmdUser=root\nProctrackType=proctrack/linuxproc\n\
                 TaskPlugin=task/none\nSelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n\
                 SchedulerType=sched/builtin\nReturnToService=2\nMpiDefault=none\n\
                 JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n\
                 SlurmctldLogFile={}\nSlurmdLogFile={}\n\
                 NodeName={host} NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN\n\
                 PartitionName=lardtest Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n",
                free_port(),
                free_port(),
                p("munge.sock"),
                p("state"),
                p("spool"),
                p("slurmctld.pid"),
                p("slurmd.pid"),
                p("slurmctld.log"),
                p("slurmd.log"),
            ),
        )
        .unwrap();
        let s = Slurm { dir: d, conf };
        for (daemon, args) in [
            ("/usr/sbin/slurmctld", &["-i"][..]),
            ("/usr/sbin/slurmd", &[][..]),
        ] {
            let st = Command::new(daemon)
                .args(args)
                .env("SLURM_CONF", &s.conf)
                .status()
                .unwrap();
            assert!(st.success(), "{daemon} did not start: {}", s.logs());
        }
        // Wait until the node is idle.
        for _ in 0..100 {
            let o = Command::new("sinfo")
                .args(["-h", "-o", "%T"])
                .env("SLURM_CONF", &s.conf)
                .output()
                .unwrap();
            if String::from_utf8_lossy(&o.stdout).trim() == "idle" {
                return Some(s);
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        panic!("the Slurm node never became idle: {}", s.logs());
    }

    fn logs(&self) -> String {
        ["slurmctld.log", "slurmd.log", "munged.log"]
            .iter()
            .map(|f| std::fs::read_to_string(self.dir.join(f)).unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        for pid in ["slurmd.pid", "slurmctld.pid", "munged.pid"] {
            if let Some(p) = std::fs::read_to_string(self.dir.join(pid))
                .ok()
                .and_then(|s| s.trim().parse::<i32>().ok())
            {
                // SAFETY: kill(2) on a daemon this test started.
                unsafe { libc::kill(p, libc::SIGTERM) };
            }
        }
    }
}

#[test]
fn a_slurm_job_array_runs_the_campaign_in_shards() {
    let d = campaign_dir("campaign-slurm");
    let Some(slurm) = Slurm::start(&d.join("slurm")) else {
        return;
    };
    let c = write_campaign(&d, AXES);
    let out = d.join("r");
    let o = Command::new(lard())
        .args(["campaign", "slurm"])
        .arg(&c)
        .args([
            "--out",
            out.to_str().unwrap(),
            "--tasks",
            "3",
            "--array-limit",
            "2",
            "--submit",
            "--wait",
        ])
        .env("SLURM_CONF", &slurm.conf)
        .output()
        .unwrap();
    assert_eq!(
        shell_status(&o),
        0,
        "{}{}\n{}",
        stdout(&o),
        stderr(&o),
        slurm.logs()
    );
    assert!(stdout(&o).contains("submitted job "), "{}", stdout(&o));
    // Three tasks, one shard each, each wrote its log.
    let logs: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("slurm-") && n.ends_with(".out"))
        .collect();
    assert_eq!(logs.len(), 3, "{logs:?}");
    let on_slurm = results(&out);
    assert_eq!(on_slurm.len(), 8);
    // The same campaign run here gives the same runs and the same verdicts.
    let here = d.join("here");
    let o = lard_campaign(&["run", c.to_str().unwrap(), "--out", here.to_str().unwrap()]);
    assert_eq!(shell_status(&o), 0, "{}", stderr(&o));
    let local = results(&here);
    assert_eq!(
        on_slurm.keys().collect::<Vec<_>>(),
        local.keys().collect::<Vec<_>>()
    );
    // The runs' environment is the campaign's, not the Slurm task's: the
    // same runs, instruction for instruction.
    for (k, v) in &on_slurm {
        assert_eq!(v["detectors"], local[k]["detectors"], "{k}");
        assert_eq!(v["instructions"], local[k]["instructions"], "{k}");
        assert_eq!(v["outcome"], "ok", "{v}");
    }
    // A task that fails (its program does not exist: `campaign run` exits
    // 1) makes `--wait` say so and exit 1.
    let ghost = d.join("ghost.toml");
    std::fs::write(
        &ghost,
        "[[program]]\nname = \"ghost\"\ncommand = [\"./no-such-program\"]\n[axes]\nseed = [1]\n",
    )
    .unwrap();
    let o = Command::new(lard())
        .args(["campaign", "slurm"])
        .arg(&ghost)
        .args(["--tasks", "1", "--submit", "--wait"])
        .env("SLURM_CONF", &slurm.conf)
        .output()
        .unwrap();
    assert_eq!(shell_status(&o), 1, "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("submitted job "), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("a task ended with status"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_missing_program_or_an_unwritable_directory_stops_before_any_run() {
    let d = campaign_dir("campaign-input");
    let c = d.join("c.toml");
    std::fs::write(
        &c,
        "[[program]]\nname = \"ghost\"\ncommand = [\"./no-such-program\"]\n[axes]\nseed = [1, 2]\n",
    )
    .unwrap();
    let out = d.join("r");
    let o = lard_campaign(&["run", c.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(shell_status(&o), 1, "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("no-such-program"), "{}", stderr(&o));
    assert!(results(&out).is_empty());
    // A results directory under a regular file cannot be created.
    let blocker = d.join("file");
    std::fs::write(&blocker, "x").unwrap();
    let c2 = write_campaign(&d, AXES);
    let bad_out = blocker.join("r");
    let o = lard_campaign(&[
        "run",
        c2.to_str().unwrap(),
        "--out",
        bad_out.to_str().unwrap(),
    ]);
    assert_eq!(shell_status(&o), 1, "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("results directory"), "{}", stderr(&o));
}

#[test]
fn options_lard_run_refuses_stop_the_campaign_before_any_run() {
    let d = campaign_dir("campaign-options");
    for (axes, options, needle) in [
        (
            "sed = [1, 2]",
            "",
            "axes.sed = 1: unexpected argument '--sed' found (tip: a similar argument exists: '--seed')",
        ),
        (
            "seed = [\"abc\"]",
            "",
            "axes.seed = abc: invalid value 'abc' for '--seed <SEED>'",
        ),
        (
            "seed = [1]",
            "options = [\"--detecter\", \"fasttrack\"]",
            "options: unexpected argument '--detecter' found",
        ),
    ] {
        let c = d.join("c.toml");
        let text = format!(
            "{options}\n[[program]]\nname = \"racy_sum\"\nbuild = \"gcc -O2 -g -pthread -o racy_sum '{}'\"\ncommand = [\"./racy_sum\"]\n[axes]\n{axes}\n",
            root().join("guests/plain/racy_sum.c").display()
        );
        std::fs::write(&c, text).unwrap();
        let out = d.join("r");
        let o = lard_campaign(&["run", c.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        assert_eq!(shell_status(&o), 1, "{axes}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{}", stderr(&o));
        // Nothing was built or run.
        assert!(!out.exists() || results(&out).is_empty(), "{axes}");
        assert!(!d.join("racy_sum").exists(), "{axes}: built");
    }
}

#[test]
fn a_run_lard_refuses_is_an_error_and_collect_counts_it_failed() {
    // The options pass on their own, but `lard run` refuses the
    // combination when it starts (adversarial memory needs Tracked
    // observation), with its usage status 2; a guest that exits with 2
    // itself is an ordinary run.
    let d = campaign_dir("campaign-usage");
    let c = d.join("c.toml");
    std::fs::write(
        &c,
        format!(
            "[[program]]\nname = \"exit2\"\nbuild = \"gcc -O2 -pthread -o exit_code '{}'\"\ncommand = [\"./exit_code\", \"2\"]\n[axes]\nvariant = {{ plain = [], refused = [\"--adversarial\", \"sc\", \"--observe\", \"all\"] }}\n",
            root().join("guests/plain/exit_code.c").display()
        ),
    )
    .unwrap();
    let out = d.join("r");
    let o = lard_campaign(&["run", c.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(shell_status(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).contains("2 made (1 failed)"), "{}", stdout(&o));
    let r = results(&out);
    let by_variant = |v: &str| {
        r.values()
            .find(|x| x["params"]["variant"] == v)
            .unwrap_or_else(|| panic!("no {v} run"))
            .clone()
    };
    let refused = by_variant("refused");
    assert_eq!(refused["outcome"], "error", "{refused}");
    assert_eq!(refused["exit"], 2, "{refused}");
    assert!(
        refused["lard_messages"][0]
            .as_str()
            .is_some_and(|m| m.contains("--adversarial needs Tracked observation")),
        "{refused}"
    );
    let plain = by_variant("plain");
    assert_eq!(plain["outcome"], "ok", "{plain}");
    assert_eq!(plain["exit"], 2, "{plain}");
    let o = lard_campaign(&["collect", out.to_str().unwrap()]);
    assert_eq!(shell_status(&o), 0, "{}", stderr(&o));
    let summary: Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let failed: Vec<(String, u64)> = summary["cells"]
        .as_array()
        .unwrap_or_else(|| panic!("{summary}"))
        .iter()
        .map(|c| {
            (
                c["configuration"].as_str().unwrap_or_default().to_string(),
                c["failed"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(failed.contains(&("variant=refused".into(), 1)), "{summary}");
    assert!(failed.contains(&("variant=plain".into(), 0)), "{summary}");
}

/// `--suppressions` as an axis: its file is read from the campaign's
/// directory, checked before any run, and its races leave the results.
#[test]
fn a_campaign_takes_suppressions_from_its_directory() {
    let d = campaign_dir("campaign-supp");
    std::fs::write(d.join("known.supp"), "# racy_sum's counter\nrace:^work$\n").unwrap();
    let c = write_campaign(&d, "suppressions = [\"known.supp\"]");
    let out = d.join("r");
    let o = lard_campaign(&["run", c.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(shell_status(&o), 0, "{}", stderr(&o));
    let o = lard_campaign(&["collect", out.to_str().unwrap()]);
    assert_eq!(shell_status(&o), 0, "{}", stderr(&o));
    let runs: Value =
        serde_json::from_slice(&std::fs::read(out.join("runs.json")).unwrap()).unwrap();
    let racy = runs
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["program"] == "racy_sum")
        .unwrap_or_else(|| panic!("{runs}"));
    assert_eq!(racy["dre"], 0, "{racy}");

    std::fs::write(d.join("known.supp"), "race:^work$\nrcae:main\n").unwrap();
    let out = d.join("r2");
    let o = lard_campaign(&["run", c.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let e = stderr(&o);
    assert_eq!(shell_status(&o), 1, "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("known.supp:2:"), "{e}");
    assert!(!out.exists() || results(&out).is_empty(), "a run was made");
}
