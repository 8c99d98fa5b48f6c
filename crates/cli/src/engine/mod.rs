//! The engines `slsm bench --engine=NAME` drives: slsm itself (`slsm.rs`),
//! the bare skiplist under it (`skiplist.rs`), and the harness's own
//! `BTreeMap` engine; and the options the admin commands open slsm with.

mod skiplist;
mod slsm;

pub use self::skiplist::{SkiplistEngine, SkiplistFactory};
pub use self::slsm::{bench_options, SlsmEngine, SlsmFactory, SLSM_FLAGS};

use crate::bench::EngineFactory;
use anyhow::Result;

/// The factory for `slsm bench --engine=NAME`.
pub fn factory(name: &str) -> Option<&'static dyn EngineFactory> {
    match name {
        "slsm" => Some(&self::slsm::SLSM_FACTORY),
        "skiplist" | "slsm-skiplist" => Some(&SkiplistFactory),
        "btreemap" => Some(&crate::bench::engine::MemFactory),
        _ => None,
    }
}

/// Removes `--engine=NAME` / `--engine NAME` from a bench command line and
/// returns the name (default "slsm").
pub fn take_engine_flag(args: &mut Vec<String>) -> Result<String> {
    let mut name = "slsm".to_string();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].trim_start_matches('-');
        if args[i].starts_with('-') && (a == "engine" || a.starts_with("engine=")) {
            if let Some(v) = a.strip_prefix("engine=") {
                name = v.to_string();
                args.remove(i);
            } else if i + 1 < args.len() {
                name = args.remove(i + 1);
                args.remove(i);
            } else {
                return Err(anyhow::Error::new(crate::bench::flags::FlagError(
                    "flag --engine needs a value (slsm, skiplist or btreemap)".into(),
                )));
            }
            continue;
        }
        i += 1;
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::{BenchFlags, WriteMode};

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn engine_flag_is_taken_out() {
        let mut a = args(&["--num=5", "--engine=skiplist", "--histogram"]);
        assert_eq!(take_engine_flag(&mut a).unwrap(), "skiplist");
        assert_eq!(a, args(&["--num=5", "--histogram"]));
        let mut a = args(&["-engine", "btreemap"]);
        assert_eq!(take_engine_flag(&mut a).unwrap(), "btreemap");
        assert!(a.is_empty());
        let mut a = args(&["--num=5"]);
        assert_eq!(take_engine_flag(&mut a).unwrap(), "slsm");
        assert!(take_engine_flag(&mut args(&["--engine"])).is_err());
        assert!(factory("nope").is_none());
    }

    /// Every engine scans forward from the first key and, for readreverse,
    /// backward from the last: value `i` has `i` bytes, so the lengths seen
    /// tell the order.
    #[test]
    fn scans_run_forward_and_in_reverse() {
        let dir = tempfile::tempdir().unwrap();
        let flags = BenchFlags::default();
        for name in ["slsm", "skiplist", "btreemap"] {
            let engine = factory(name)
                .unwrap()
                .open(&dir.path().join(name), &flags, true, false)
                .unwrap();
            for i in 1..=5u8 {
                let value = vec![b'v'; usize::from(i)];
                engine.put(&[i], &value, WriteMode::default()).unwrap();
            }
            let scan = |reverse| {
                let mut lens = Vec::new();
                let n = engine.scan(3, reverse, &mut |len| lens.push(len)).unwrap();
                assert_eq!(n, 3, "{name}");
                lens
            };
            assert_eq!(scan(false), [2, 3, 4], "{name}: key 1 + values 1..3");
            assert_eq!(scan(true), [6, 5, 4], "{name}: key 1 + values 5..3");
        }
    }

    #[test]
    fn memtable_options_stay_in_memory() {
        let mut f = BenchFlags {
            num: 4_194_304,
            key_size: 32,
            value_size: 32,
            ..Default::default()
        };
        let o = bench_options(&f, true).unwrap();
        assert!(o.disable_wal);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let db = ::slsm::Db::open(&path, o).unwrap();
        db.put(b"k", b"v").unwrap();
        db.flush().unwrap();
        drop(db);
        assert!(!path.exists(), "memtable mode must not use the disk");
        // db_bench's default write buffer does not override slsm's run size.
        assert_eq!(
            bench_options(&f, false).unwrap().run_size,
            ::slsm::Options::default().run_size
        );
        f.given.insert("bloom_bits".into(), "10".into());
        f.given.insert("memory_runs".into(), "8".into());
        f.given.insert("run_entries".into(), "1000".into());
        let o = bench_options(&f, false).unwrap();
        assert_eq!(o.memory_runs, 8);
        assert_eq!(o.run_entries, 1000);
        assert!(
            (o.bloom_fp_rate - 0.0082).abs() < 0.001,
            "{}",
            o.bloom_fp_rate
        );
        f.given.insert("level_runs".into(), "x".into());
        assert!(bench_options(&f, false).is_err());
    }

    #[test]
    fn os_page_cache_flag_picks_the_read_path() {
        let with = |v: &str| {
            let mut f = BenchFlags::default();
            f.given.insert("os_page_cache".into(), v.into());
            bench_options(&f, false).map(|o| o.os_page_cache)
        };
        assert_eq!(
            bench_options(&BenchFlags::default(), false)
                .unwrap()
                .os_page_cache,
            None
        );
        assert_eq!(with("auto").unwrap(), None);
        assert_eq!(with("true").unwrap(), Some(true));
        assert_eq!(with("0").unwrap(), Some(false));
        assert!(with("sometimes").is_err());
    }
}
