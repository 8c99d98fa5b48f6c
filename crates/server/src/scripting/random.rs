//! `math.random` and `math.randomseed` for scripts, in place of Lua 5.1's
//! (which draw from the C library's `rand`, one stream for the whole
//! process). Redis 7 gives scripts its own generator: random unless a
//! script seeds it, and the same numbers after the same `math.randomseed`.
//! A cluster needs more: a script applied from the replicated log must
//! draw the same numbers on every node, so while an entry is applied the
//! numbers come from the entry's generator (`crate::replay`), and a seed
//! reseeds that one.
//!
//! The arguments and results are Lua 5.1's: no argument, a float in
//! [0, 1); `m`, an integer in [1, m]; `m, n`, an integer in [m, n].
//!
//! * **Owns**: this thread's generator state (one interpreter a thread).
//! * **Thread safety**: per thread, as the interpreter.

use std::cell::Cell;

use mlua::{Lua, MultiValue, Table, Value};

thread_local! {
    /// This thread's generator outside a replicated entry; 0 until first
    /// drawn or seeded.
    static STATE: Cell<u64> = const { Cell::new(0) };
}

/// Replaces `math.random` and `math.randomseed` in `math`.
pub fn install(lua: &Lua, math: &Table) -> mlua::Result<()> {
    math.raw_set("random", lua.create_function(random)?)?;
    math.raw_set(
        "randomseed",
        lua.create_function(|_, seed: f64| {
            reseed(seed);
            Ok(())
        })?,
    )?;
    Ok(())
}

/// Seeds the generator scripts draw from now: the applied entry's, or
/// this thread's.
fn reseed(seed: f64) {
    let mixed = splitmix(seed.to_bits());
    if !crate::replay::reseed(mixed) {
        STATE.with(|s| s.set(mixed | 1));
    }
}

/// The next 64 random bits.
fn next_u64() -> u64 {
    if let Some(replayed) = crate::replay::random() {
        return replayed;
    }
    STATE.with(|s| {
        let mut x = s.get();
        if x == 0 {
            x = crate::collections::random_u64() | 1;
        }
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        s.set(x);
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    })
}

/// A seed's bits spread over the word (so seeds 1 and 2 start far apart).
fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn random(_: &Lua, args: MultiValue) -> mlua::Result<Value> {
    // A float in [0, 1) from the top 53 bits.
    let r = (next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let bound = |v: &Value, n: usize| -> mlua::Result<f64> {
        match v {
            Value::Integer(i) => Ok(*i as f64),
            Value::Number(f) => Ok(f.floor()),
            Value::String(s) => s
                .to_str()
                .ok()
                .and_then(|t| t.trim().parse::<f64>().ok())
                .map(f64::floor)
                .ok_or_else(|| bad_argument(n)),
            _ => Err(bad_argument(n)),
        }
    };
    let (low, high) = match args.len() {
        0 => return Ok(Value::Number(r)),
        1 => (1.0, bound(&args[0], 1)?),
        2 => (bound(&args[0], 1)?, bound(&args[1], 2)?),
        _ => return Err(mlua::Error::runtime("wrong number of arguments")),
    };
    if low > high {
        let n = if args.len() == 1 { 1 } else { 2 };
        return Err(mlua::Error::runtime(format!(
            "bad argument #{n} to 'random' (interval is empty)"
        )));
    }
    Ok(Value::Number((r * (high - low + 1.0)).floor() + low))
}

fn bad_argument(n: usize) -> mlua::Error {
    mlua::Error::runtime(format!("bad argument #{n} to 'random' (number expected)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lua() -> Lua {
        let lua = Lua::new();
        let math: Table = lua.globals().get("math").unwrap();
        install(&lua, &math).unwrap();
        lua
    }

    fn draw(lua: &Lua, code: &str) -> Vec<f64> {
        lua.load(code).eval::<Vec<f64>>().unwrap()
    }

    #[test]
    fn results_stay_in_lua_s_intervals() {
        let lua = lua();
        for x in draw(
            &lua,
            "local t = {} for i = 1, 500 do t[i] = math.random() end return t",
        ) {
            assert!((0.0..1.0).contains(&x), "{x}");
        }
        let dice = draw(
            &lua,
            "local t = {} for i = 1, 500 do t[i] = math.random(6) end return t",
        );
        assert!(dice
            .iter()
            .all(|d| (1.0..=6.0).contains(d) && d.fract() == 0.0));
        assert!(
            (1..=6).all(|face| dice.contains(&(face as f64))),
            "every face is drawn"
        );
        let span = draw(
            &lua,
            "local t = {} for i = 1, 200 do t[i] = math.random(-3, 3) end return t",
        );
        assert!(span.iter().all(|d| (-3.0..=3.0).contains(d)));
        let empty = lua
            .load("return math.random(5, 4)")
            .eval::<f64>()
            .unwrap_err();
        assert!(empty.to_string().contains("interval is empty"), "{empty}");
        let many = lua
            .load("return math.random(1, 2, 3)")
            .eval::<f64>()
            .unwrap_err();
        assert!(many.to_string().contains("wrong number of arguments"));
    }

    #[test]
    fn a_seed_repeats_its_numbers_and_others_differ() {
        let lua = lua();
        let seeded = |s: u32| {
            draw(
                &lua,
                &format!("math.randomseed({s}) return {{math.random(), math.random(1000)}}"),
            )
        };
        assert_eq!(seeded(10), seeded(10));
        assert_ne!(seeded(10), seeded(20));
        let (a, b) = (
            draw(&lua, "return {math.random()}"),
            draw(&lua, "return {math.random()}"),
        );
        assert_ne!(a, b, "unseeded draws go on");
    }

    #[test]
    fn an_applied_entry_draws_the_same_numbers_on_every_node() {
        let lua = lua();
        let script = "return {math.random(), math.random(100)}";
        let node = |seed| crate::replay::with(5, seed, || draw(&lua, script));
        assert_eq!(node(77), node(77));
        assert_ne!(node(77), node(78));
        // A script's own seed is the entry's too, and leaves the thread's
        // generator alone.
        let reseeded = "math.randomseed(3) return {math.random()}";
        let a = crate::replay::with(5, 1, || draw(&lua, reseeded));
        let b = crate::replay::with(5, 2, || draw(&lua, reseeded));
        assert_eq!(a, b);
        assert_ne!(draw(&lua, "return {math.random()}"), a);
    }
}
