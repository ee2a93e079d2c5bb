use super::*;

const FILE: &str = r#"
name = "t"
timeout = 30
env = { LC_ALL = "C" }
options = ["--cores", "2"]
[[program]]
name = "a"
command = ["./a", "4"]
racy = true
[[program]]
command = "./b"
[axes]
detector = ["none", "fasttrack"]
seed = [1, 2, 3]
no-prune = [false, true]
env.OMP_NUM_THREADS = ["2"]
variant = { plain = [], fast = ["--quantum", "20"] }
"#;

#[test]
fn every_program_crosses_every_axis() {
    let c = Campaign::parse(FILE, Path::new("/x"), "d").unwrap();
    assert_eq!(c.name, "t");
    assert_eq!(c.timeout, 30.0);
    assert_eq!(c.programs[1].name, "b");
    assert_eq!(c.programs[0].racy, Some(true));
    let runs = c.runs();
    assert_eq!(runs.len(), 2 * 2 * 3 * 2 * 2);
    let keys: std::collections::BTreeSet<_> = runs.iter().map(|r| &r.key).collect();
    assert_eq!(keys.len(), runs.len(), "keys collide");
    let r = runs
        .iter()
        .find(|r| {
            r.params["detector"] == "fasttrack"
                && r.params["seed"] == "2"
                && r.params["no-prune"] == "yes"
                && r.params["variant"] == "fast"
        })
        .unwrap();
    for w in [
        "--detector",
        "fasttrack",
        "--seed",
        "2",
        "--no-prune",
        "--quantum",
        "20",
    ] {
        assert!(r.options.contains(&w.to_string()), "{:?}", r.options);
    }
    assert_eq!(r.env, vec![("OMP_NUM_THREADS".into(), "2".into())]);
    assert_eq!(c.env, vec![("LC_ALL".into(), "C".into())]);
    // Parsing again gives the same names: results are found again.
    let again = Campaign::parse(FILE, Path::new("/y"), "d").unwrap().runs();
    assert_eq!(runs, again.into_iter().collect::<Vec<_>>());
}

#[test]
fn bad_campaigns_are_one_line_errors() {
    for (text, needle) in [
        ("", "no [[program]]"),
        ("[[program]]\nname = \"a\"", "no command"),
        (
            "[[program]]\ncommand = [\"a\"]\n[axes]\nseed = []",
            "no values",
        ),
        (
            "[[program]]\ncommand = [\"a\"]\n[axes]\nreport-json = [\"x\"]",
            "sets --report-json",
        ),
        (
            "[[program]]\ncommand = [\"a\"]\n[[program]]\ncommand = [\"a\"]",
            "two programs",
        ),
        (
            "[[program]]\ncommand = [\"a\"]\ncmd = 1",
            "unknown key `cmd`",
        ),
        ("timeout = -1\n[[program]]\ncommand = [\"a\"]", "timeout"),
        ("[[program]\n", ""),
        // Options lard run would refuse, named where they are.
        (
            "[[program]]\ncommand = [\"a\"]\n[axes]\nsed = [1, 2]",
            "axes.sed = 1: unexpected argument '--sed' found (tip: a similar argument exists: '--seed')",
        ),
        (
            "[[program]]\ncommand = [\"a\"]\n[axes]\nseed = [\"abc\"]",
            "axes.seed = abc: invalid value 'abc' for '--seed <SEED>'",
        ),
        (
            "options = [\"--detecter\"]\n[[program]]\ncommand = [\"a\"]",
            "options: unexpected argument '--detecter'",
        ),
        (
            "[[program]]\nname = \"a\"\ncommand = [\"a\"]\noptions = [\"--quantum\"]",
            "program a: options: a value is required for '--quantum",
        ),
        (
            "[[program]]\nname = \"a\"\ncommand = [\"a\"]\n[axes]\npct-depth = [3]",
            "program a, pct-depth = 3: lard run options: --pct-depth and --pct-steps need --sched pct",
        ),
    ] {
        let e = Campaign::parse(text, Path::new("."), "d").unwrap_err();
        assert!(e.0.contains(needle), "{text:?}: {e}");
        assert!(!e.0.contains('\n'), "{text:?}: {e}");
    }
}

#[test]
fn a_written_campaign_reads_back_to_the_same_runs() {
    let mut c = Campaign::parse(FILE, Path::new("/x"), "d").unwrap();
    c.programs[0].options = vec![
        "--adversarial".into(),
        "sc".into(),
        "--adversarial-at".into(),
        "0x10,0x20".into(),
    ];
    c.programs[0].expect = Some(Expect {
        exit: Some(3),
        stdout_fnv: Some(stdout_fnv(b"hello\n")),
    });
    let text = c.to_toml().unwrap();
    let back = Campaign::parse(&text, Path::new("/elsewhere"), "e").unwrap();
    assert_eq!(back.dir, Path::new("/x"));
    assert_eq!(back.programs, c.programs);
    let keys = |c: &Campaign| {
        c.runs()
            .into_iter()
            .map(|r| (r.key, r.options, r.env))
            .collect::<std::collections::BTreeSet<_>>()
    };
    assert_eq!(keys(&back), keys(&c), "{text}");
    assert!(keys(&c)
        .iter()
        .all(|(_, o, _)| o.contains(&"0x10,0x20".to_string()) || !o.is_empty()));
}

#[test]
fn expectations_parse_and_bad_ones_are_refused() {
    let t = "[[program]]\ncommand = [\"a\"]\nexpect = { exit = 1, stdout = \"x\\n\" }";
    let c = Campaign::parse(t, Path::new("."), "d").unwrap();
    assert_eq!(
        c.programs[0].expect,
        Some(Expect {
            exit: Some(1),
            stdout_fnv: Some(stdout_fnv(b"x\n"))
        })
    );
    for (text, needle) in [
        ("expect = 3", "expect must be a table"),
        ("expect = { exit = \"0\" }", "expect.exit"),
        ("expect = { code = 0 }", "unknown key `code`"),
        ("expect = { stdout_fnv = \"xyz\" }", "expect.stdout_fnv"),
        ("options = [\"--timeout\", \"3\"]", "sets --timeout"),
    ] {
        let t = format!("[[program]]\ncommand = [\"a\"]\n{text}");
        let e = Campaign::parse(&t, Path::new("."), "d").unwrap_err();
        assert!(e.0.contains(needle), "{text}: {e}");
    }
}

#[test]
fn shards() {
    assert_eq!(parse_shard("0/3"), Ok((0, 3)));
    assert!(parse_shard("3/3").is_err());
    assert!(parse_shard("1").is_err());
    assert!(parse_shard("a/2").is_err());
}
