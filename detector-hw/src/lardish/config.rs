//! [`HwConfig`]: every parameter of the LARDISH model, with the RADISH
//! baseline as defaults, and a parser for a small TOML subset (see
//! `docs/lardish.md` for every key).

use std::fmt;

use super::ftcost::FtCost;

/// Geometry and hit latency of one cache level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheGeom {
    /// Capacity in bytes.
    pub size: u64,
    /// Associativity.
    pub ways: u32,
    /// Hit latency in cycles.
    pub latency: u32,
}

impl CacheGeom {
    /// Number of sets for lines of `line_bytes` (at least 1).
    pub fn sets(&self, line_bytes: u64) -> usize {
        ((self.size / line_bytes.max(1)) / u64::from(self.ways.max(1))).max(1) as usize
    }
}

/// The granularity of LARDISH's hardware metadata (`lardish.granularity`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MdGranularity {
    /// RADISH's type safety optimizations (§5.2): each location's item
    /// width is learned from its first access; items of 4 bytes or more
    /// keep base+offset clocks instead of clock-table entries; a software
    /// check covers the line's items; an access that breaks the learned
    /// widths (a granularity conflict) turns its block to byte metadata.
    TypeSafe,
    /// Byte metadata everywhere: every byte is an item.
    Byte,
}

impl MdGranularity {
    /// Name used in configuration files.
    pub fn name(self) -> &'static str {
        match self {
            MdGranularity::TypeSafe => "type",
            MdGranularity::Byte => "byte",
        }
    }
}

/// All parameters of the simulated machine and of the cost models.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HwConfig {
    /// Simulated cores (`origin.core` is taken modulo this).
    pub cores: u32,
    /// Cache line size in bytes (a power of two, at least 8).
    pub line_bytes: u64,
    /// Private L1 per core.
    pub l1: CacheGeom,
    /// Private L2 per core (`latency` is the local L2 hit).
    pub l2: CacheGeom,
    /// Latency of a fill from another core's L2.
    pub remote_l2_latency: u32,
    /// Shared, inclusive L3.
    pub l3: CacheGeom,
    /// Memory latency.
    pub memory_latency: u32,
    /// Cycles of a non-memory instruction.
    pub instruction_cycles: u32,
    /// Cycles of a hardware race check.
    pub hw_check_cycles: u32,
    /// Cycles of LARDISH's transition to its software manager (a software
    /// race check, a ReadVC/WriteVC on an entry only software holds,
    /// ClearHistory/CopyHistory); the manager's work itself is charged at
    /// the FastTrack cost [`HwConfig::ft`].
    pub transition_cycles: u32,
    /// Cycles to invoke the metadata eviction handler (per evicted line).
    pub md_evict_cycles: u32,
    /// Entries of each core's clock table (6-bit pointers: 63).
    pub clock_table_entries: u32,
    /// Cycles charged per epoch rollover.
    pub rollover_cycles: u64,
    /// Before rolling over, the software manager merges the clock-table
    /// entries every thread's clock already holds into one past entry
    /// (docs/lardish.md, "Clock table").
    pub reclaim_past: bool,
    /// Cycles per clock the merge reads or compares (each live thread's
    /// clock entry for the core's thread, each table entry).
    pub reclaim_clock_cycles: u32,
    /// Cycles per resident metadata line of the core whose pointers the
    /// merge rewrites.
    pub reclaim_line_cycles: u32,
    /// Use compact (1:1) metadata lines until a line sees a 1-byte access.
    pub compact_metadata: bool,
    /// Metadata granularity: type-safe items (the default, RADISH's
    /// evaluated configuration) or bytes.
    pub granularity: MdGranularity,
    /// Accesses to a thread stack are thread-local for the hardware: no
    /// metadata lookup and no check (RADISH §6, "Stack accesses (as
    /// identified by Pin) are assumed to be thread-local"); their
    /// histories are still recorded exactly, in software, for verdicts.
    pub stack_thread_local: bool,
    /// Cycles to switch a core's thread (flush/swap the partial vector clock).
    pub context_switch_cycles: u32,
    /// Cycles of ReadVC/WriteVC on an entry held in the per-core partial clock.
    pub vc_hw_cycles: u32,
    /// Extra cores processing software checks asynchronously (0: synchronous).
    pub async_cores: u32,
    /// Cycles an application core spends enqueuing an asynchronous check.
    pub async_enqueue_cycles: u32,
    /// The FastTrack cost (measured), shared by the software-FastTrack
    /// model and LARDISH's software manager.
    pub ft: FtCost,
    /// Sample cache occupancy every this many events (0: never).
    pub sample_every: u64,
}

impl Default for HwConfig {
    fn default() -> Self {
        HwConfig {
            cores: 8,
            line_bytes: 64,
            l1: CacheGeom {
                size: 64 << 10,
                ways: 8,
                latency: 1,
            },
            l2: CacheGeom {
                size: 256 << 10,
                ways: 8,
                latency: 10,
            },
            remote_l2_latency: 15,
            l3: CacheGeom {
                size: 16 << 20,
                ways: 16,
                latency: 35,
            },
            memory_latency: 120,
            instruction_cycles: 1,
            hw_check_cycles: 10,
            transition_cycles: 100,
            md_evict_cycles: 100,
            clock_table_entries: 63,
            rollover_cycles: 100_000,
            reclaim_past: true,
            reclaim_clock_cycles: 2,
            reclaim_line_cycles: 100,
            compact_metadata: true,
            granularity: MdGranularity::TypeSafe,
            stack_thread_local: true,
            context_switch_cycles: 100,
            vc_hw_cycles: 1,
            async_cores: 0,
            async_enqueue_cycles: 10,
            ft: FtCost::default(),
            sample_every: 10_000,
        }
    }
}

/// A configuration text that could not be parsed or that describes a
/// machine the model cannot simulate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// 1-based line number: of the bad line, or for a constraint between
    /// keys ([`HwConfig::validate`]) the last line that set one of them;
    /// `None` when the text set none of them.
    pub line: Option<usize>,
    /// What went wrong (names the key).
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// A violated constraint of [`HwConfig::validate`]: what is wrong and the
/// keys that take part in it (for the line of a parse error).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invalid {
    /// The keys involved, e.g. `["l1.ways", "l1.size", "system.line_bytes"]`.
    pub keys: &'static [&'static str],
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConfigError {}

fn parse_u64(v: &str) -> Option<u64> {
    let v = v.trim().replace('_', "");
    let (digits, mult) = match v.as_bytes().last() {
        Some(b'K') | Some(b'k') => (&v[..v.len() - 1], 1u64 << 10),
        Some(b'M') | Some(b'm') => (&v[..v.len() - 1], 1u64 << 20),
        Some(b'G') | Some(b'g') => (&v[..v.len() - 1], 1u64 << 30),
        _ => (&v[..], 1),
    };
    digits.trim().parse::<u64>().ok()?.checked_mul(mult)
}

impl HwConfig {
    /// The RADISH baseline (same as `Default`).
    pub fn baseline() -> HwConfig {
        HwConfig::default()
    }

    /// Parses `key = value` lines under `[section]` headers, starting from
    /// the defaults; `#` starts a comment. Integers may use `_` and a
    /// `K`/`M`/`G` suffix (powers of 1024); booleans are `true`/`false`.
    pub fn from_toml_str(text: &str) -> Result<HwConfig, ConfigError> {
        let mut c = HwConfig::default();
        let mut section = String::new();
        // The line that last set each key, for errors of `validate`.
        let mut set_on: Vec<(String, usize)> = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line_no = i + 1;
            let err = |message: String| ConfigError {
                line: Some(line_no),
                message,
            };
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            if let Some(rest) = line.strip_prefix('[') {
                let name = rest
                    .strip_suffix(']')
                    .ok_or_else(|| err(format!("bad section header `{line}`")))?;
                section = name.trim().to_string();
                continue;
            }
            let (key, value) = line
                .split_once('=')
                .ok_or_else(|| err(format!("expected `key = value`, got `{line}`")))?;
            let key = key.trim();
            let value = value.trim();
            let full = if section.is_empty() {
                key.to_string()
            } else {
                format!("{section}.{key}")
            };
            c.set(&full, value)
                .map_err(|m| err(format!("key `{full}`: {m}")))?;
            set_on.push((full, line_no));
        }
        c.validate().map_err(|e| ConfigError {
            line: set_on
                .iter()
                .filter(|(k, _)| e.keys.contains(&k.as_str()))
                .map(|&(_, l)| l)
                .max(),
            message: e.message,
        })?;
        Ok(c)
    }

    fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let boolean = || match value {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(format!("expected true or false, got `{value}`")),
        };
        match key {
            "lardish.compact_metadata" => {
                self.compact_metadata = boolean()?;
                return Ok(());
            }
            "lardish.reclaim_past" => {
                self.reclaim_past = boolean()?;
                return Ok(());
            }
            "lardish.stack_thread_local" => {
                self.stack_thread_local = boolean()?;
                return Ok(());
            }
            "lardish.granularity" => {
                self.granularity = match value.trim_matches('"') {
                    "type" => MdGranularity::TypeSafe,
                    "byte" => MdGranularity::Byte,
                    _ => return Err(format!("expected \"type\" or \"byte\", got `{value}`")),
                };
                return Ok(());
            }
            _ => {}
        }
        let n = parse_u64(value).ok_or_else(|| format!("expected an integer, got `{value}`"))?;
        let small = || u32::try_from(n).map_err(|_| format!("value {n} too large"));
        match key {
            "system.cores" => self.cores = small()?,
            "system.line_bytes" => self.line_bytes = n,
            "system.instruction_cycles" => self.instruction_cycles = small()?,
            "system.memory_latency" => self.memory_latency = small()?,
            "l1.size" => self.l1.size = n,
            "l1.ways" => self.l1.ways = small()?,
            "l1.latency" => self.l1.latency = small()?,
            "l2.size" => self.l2.size = n,
            "l2.ways" => self.l2.ways = small()?,
            "l2.latency" => self.l2.latency = small()?,
            "l2.remote_latency" => self.remote_l2_latency = small()?,
            "l3.size" => self.l3.size = n,
            "l3.ways" => self.l3.ways = small()?,
            "l3.latency" => self.l3.latency = small()?,
            "lardish.hw_check_cycles" => self.hw_check_cycles = small()?,
            "lardish.transition_cycles" => self.transition_cycles = small()?,
            "lardish.md_evict_cycles" => self.md_evict_cycles = small()?,
            "lardish.clock_table_entries" => self.clock_table_entries = small()?,
            "lardish.rollover_cycles" => self.rollover_cycles = n,
            "lardish.reclaim_clock_cycles" => self.reclaim_clock_cycles = small()?,
            "lardish.reclaim_line_cycles" => self.reclaim_line_cycles = small()?,
            "lardish.context_switch_cycles" => self.context_switch_cycles = small()?,
            "lardish.vc_hw_cycles" => self.vc_hw_cycles = small()?,
            "lardish.async_cores" => self.async_cores = small()?,
            "lardish.async_enqueue_cycles" => self.async_enqueue_cycles = small()?,
            "lardish.sample_every" => self.sample_every = n,
            _ if key.starts_with("fasttrack.") => self.ft.set(&key["fasttrack.".len()..], n)?,
            _ => return Err("unknown key".to_string()),
        }
        Ok(())
    }

    /// Checks the constraints the model relies on.
    pub fn validate(&self) -> Result<(), Invalid> {
        let invalid = |keys, message: String| Err(Invalid { keys, message });
        if self.cores == 0 || self.cores > 1024 {
            return invalid(&["system.cores"], "system.cores must be 1..=1024".into());
        }
        if !self.line_bytes.is_power_of_two() || self.line_bytes < 8 {
            return invalid(
                &["system.line_bytes"],
                "system.line_bytes must be a power of two >= 8".into(),
            );
        }
        const KEYS: [(&str, [&str; 3]); 3] = [
            ("l1", ["l1.ways", "l1.size", "system.line_bytes"]),
            ("l2", ["l2.ways", "l2.size", "system.line_bytes"]),
            ("l3", ["l3.ways", "l3.size", "system.line_bytes"]),
        ];
        for ((name, keys), g) in KEYS.iter().zip([self.l1, self.l2, self.l3]) {
            if g.ways == 0 || g.size < self.line_bytes {
                return invalid(
                    keys,
                    format!("{name}: ways must be >= 1 and size >= one line"),
                );
            }
            // LRU stamps are 24 bits, renumbered per set (cache.rs).
            if g.ways > 65536 {
                return invalid(&keys[..1], format!("{name}: ways must be <= 65536"));
            }
        }
        if self.clock_table_entries == 0 {
            return invalid(
                &["lardish.clock_table_entries"],
                "lardish.clock_table_entries must be >= 1".into(),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_reports_bad_keys() {
        let c = HwConfig::from_toml_str(
            "# tiny\n[l1]\nsize = 1K\nways = 2\n[lardish]\nclock_table_entries = 3\ncompact_metadata = false\n",
        )
        .unwrap();
        assert_eq!(c.l1.size, 1024);
        assert_eq!(c.l1.ways, 2);
        assert_eq!(c.clock_table_entries, 3);
        assert!(!c.compact_metadata);
        assert_eq!(c.l3, HwConfig::default().l3);
        let e = HwConfig::from_toml_str("[l1]\nsize = 1K\nwayz = 2\n").unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(e.to_string().contains("l1.wayz"), "{e}");
        let e = HwConfig::from_toml_str("[l2]\nlatency = ten\n").unwrap_err();
        assert!(e.to_string().contains("l2.latency"), "{e}");
        assert!(HwConfig::from_toml_str("[system]\nline_bytes = 48\n").is_err());
        let e = HwConfig::from_toml_str("[l3]\nways = 65537\n").unwrap_err();
        assert!(e.to_string().contains("ways must be <= 65536"), "{e}");
        assert_eq!(e.line, Some(2));
        assert!(HwConfig::from_toml_str("[l3]\nsize = 4M\nways = 65536\n").is_ok());
    }

    #[test]
    fn clock_table_merge_keys() {
        let d = HwConfig::default();
        assert!(d.reclaim_past);
        let c = HwConfig::from_toml_str(
            "[lardish]\nreclaim_past = false\nreclaim_clock_cycles = 3\nreclaim_line_cycles = 50\n",
        )
        .unwrap();
        assert!(!c.reclaim_past);
        assert_eq!((c.reclaim_clock_cycles, c.reclaim_line_cycles), (3, 50));
        assert!(HwConfig::from_toml_str("[lardish]\nreclaim_past = 1\n").is_err());
    }

    #[test]
    fn granularity_and_stack_keys() {
        let d = HwConfig::default();
        assert_eq!(d.granularity, MdGranularity::TypeSafe);
        assert!(d.stack_thread_local);
        let c = HwConfig::from_toml_str(
            "[lardish]\ngranularity = \"byte\"\nstack_thread_local = false\n",
        )
        .unwrap();
        assert_eq!(c.granularity, MdGranularity::Byte);
        assert!(!c.stack_thread_local);
        let c = HwConfig::from_toml_str("[lardish]\ngranularity = type\n").unwrap();
        assert_eq!(c.granularity, MdGranularity::TypeSafe);
        let e = HwConfig::from_toml_str("[lardish]\ngranularity = \"word\"\n").unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.to_string().contains("lardish.granularity"), "{e}");
    }

    /// A constraint between keys is reported at the last line that set one
    /// of its keys, never at a line 0.
    #[test]
    fn constraint_errors_name_the_line_that_set_the_key() {
        let cases: &[(&str, Option<usize>, &str)] = &[
            (
                "[system]\ncores = 0\n",
                Some(2),
                "system.cores must be 1..=1024",
            ),
            ("# c\n[system]\nline_bytes = 48\n", Some(3), "power of two"),
            (
                "[l2]\nways = 0\n[l1]\nways = 2\n",
                Some(2),
                "l2: ways must be >= 1",
            ),
            (
                "[l1]\nsize = 32\n[system]\nline_bytes = 64\n",
                Some(4),
                "l1: ways",
            ),
            (
                "[l1]\nsize = 1K\n[system]\nline_bytes = 2K\n",
                Some(4),
                "l1: ways",
            ),
            (
                "[l3]\nways = 70000\nsize = 64M\n",
                Some(2),
                "l3: ways must be <= 65536",
            ),
            (
                "[lardish]\nclock_table_entries = 0\n",
                Some(2),
                "clock_table_entries",
            ),
        ];
        for &(text, line, needle) in cases {
            let e = HwConfig::from_toml_str(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
            assert!(e.message.contains(needle), "{text:?}: {e}");
            assert!(e
                .to_string()
                .starts_with(&format!("line {}: ", line.unwrap())));
        }
        let e = ConfigError {
            line: None,
            message: "m".into(),
        };
        assert_eq!(e.to_string(), "m");
    }
}
