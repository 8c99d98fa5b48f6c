//! `BITFIELD key [GET type offset] [SET type offset value] [INCRBY type
//! offset increment] [OVERFLOW WRAP|SAT|FAIL] ...` and `BITFIELD_RO` (GETs
//! only), as Redis 7.0's `bitfieldGeneric` runs them: integers of 1 to 64
//! bits (`i1`..`i64`, `u1`..`u63`) at any bit offset (`#n` counts in
//! fields of the type's width), most significant bit first as `SETBIT`
//! numbers them, with each write's overflow wrapped, saturated or refused
//! (a nil reply) as the last `OVERFLOW` before it says.

use super::{fail, int_arg, syntax_error, Fail, Outcome};
use crate::access::Access;
use crate::collections::wrong_type;
use crate::resp::{Reply, MAX_BULK};
use crate::store::{Kind, Value};

#[derive(Clone, Copy, PartialEq)]
enum Overflow {
    Wrap,
    Sat,
    Fail,
}

#[derive(Clone, Copy, PartialEq)]
enum Op {
    Get,
    Set,
    IncrBy,
}

struct Field {
    op: Op,
    signed: bool,
    bits: u32,
    offset: u64,
    value: i64,
    overflow: Overflow,
}

fn type_arg(arg: &[u8]) -> Result<(bool, u32), Fail> {
    let bad = || {
        fail("ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.")
    };
    let signed = match arg.first() {
        Some(b'i') => true,
        Some(b'u') => false,
        _ => return Err(bad()),
    };
    // C reads the width up to the first NUL.
    let width = arg[1..].split(|&b| b == 0).next().unwrap_or_default();
    match int_arg(width) {
        Ok(n) if n >= 1 && n <= if signed { 64 } else { 63 } => Ok((signed, n as u32)),
        _ => Err(bad()),
    }
}

fn offset_arg(arg: &[u8], bits: u32) -> Result<u64, Fail> {
    let bad = || fail("ERR bit offset is not an integer or out of range");
    let (digits, scale) = match arg.first() {
        Some(b'#') => (&arg[1..], bits as i64),
        _ => (arg, 1),
    };
    // Redis multiplies as C does, wrapping around on overflow.
    let offset = int_arg(digits).map_err(|_| bad())?.wrapping_mul(scale);
    if offset < 0 || (offset >> 3) >= MAX_BULK as i64 {
        return Err(bad());
    }
    Ok(offset as u64)
}

/// The operations, parsed whole before any runs (Redis's order of errors).
fn parse(a: &[Vec<u8>]) -> Result<Vec<Field>, Fail> {
    let (mut fields, mut overflow, mut j) = (Vec::new(), Overflow::Wrap, 2);
    while j < a.len() {
        let left = a.len() - j - 1;
        let op = match a[j].to_ascii_lowercase().as_slice() {
            b"get" if left >= 2 => Op::Get,
            b"set" if left >= 3 => Op::Set,
            b"incrby" if left >= 3 => Op::IncrBy,
            b"overflow" if left >= 1 => {
                overflow = match a[j + 1].to_ascii_lowercase().as_slice() {
                    b"wrap" => Overflow::Wrap,
                    b"sat" => Overflow::Sat,
                    b"fail" => Overflow::Fail,
                    _ => return Err(fail("ERR Invalid OVERFLOW type specified")),
                };
                j += 2;
                continue;
            }
            _ => return Err(syntax_error()),
        };
        let (signed, bits) = type_arg(&a[j + 1])?;
        let offset = offset_arg(&a[j + 2], bits)?;
        let value = match op {
            Op::Get => 0,
            _ => int_arg(&a[j + 3])?,
        };
        fields.push(Field {
            op,
            signed,
            bits,
            offset,
            value,
            overflow,
        });
        j += if op == Op::Get { 3 } else { 4 };
    }
    Ok(fields)
}

pub fn bitfield(a: &[Vec<u8>], acc: &mut dyn Access, read_only: bool) -> Outcome {
    let fields = parse(a)?;
    let writes = fields.iter().any(|f| f.op != Op::Get);
    if writes && read_only {
        return Err(fail("ERR BITFIELD_RO only supports the GET subcommand"));
    }
    let found = match acc.get(&a[1])? {
        Some(v) if v.kind != Kind::String => return Err(wrong_type()),
        v => v,
    };
    let created = found.is_none();
    let mut v = found.unwrap_or_else(|| Value::new(Vec::new(), 0));
    let mut dirty = false;
    if writes {
        // Room up to the farthest bit written, as Redis makes it first.
        let last = fields
            .iter()
            .filter(|f| f.op != Op::Get)
            .map(|f| f.offset + f.bits as u64 - 1)
            .max()
            .unwrap_or(0);
        let len = (last >> 3) as usize + 1;
        if created || v.data.len() < len {
            v.data.resize(len.max(v.data.len()), 0);
            dirty = true;
        }
    }
    let mut replies = Vec::with_capacity(fields.len());
    let mut changed = false;
    for f in &fields {
        let reply = match f.op {
            Op::Get => Some(get(&v.data, f.offset, f.bits, f.signed)),
            _ => apply(&mut v.data, f, &mut changed),
        };
        replies.push(reply.map_or(Reply::Null, Reply::Int));
    }
    // Redis grows (or creates) the string before the writes run, so it
    // stays grown even if `OVERFLOW FAIL` refused them all.
    if dirty || changed {
        acc.set(&a[1], &v)?;
        acc.notify(crate::notify::STRING, "setbit", &a[1]);
    }
    Ok(Reply::Array(replies))
}

/// The field's bits, zero past the end of the string.
fn get(data: &[u8], offset: u64, bits: u32, signed: bool) -> i64 {
    let mut value: u64 = 0;
    for i in 0..bits as u64 {
        let at = offset + i;
        let byte = data.get((at >> 3) as usize).copied().unwrap_or(0);
        value = (value << 1) | ((byte >> (7 - (at & 7))) & 1) as u64;
    }
    if signed && bits < 64 && value & (1 << (bits - 1)) != 0 {
        value |= u64::MAX << bits;
    }
    value as i64
}

fn put(data: &mut [u8], offset: u64, bits: u32, value: u64) {
    for i in 0..bits as u64 {
        let bit = (value >> (bits as u64 - 1 - i)) & 1;
        let at = offset + i;
        let shift = 7 - (at & 7);
        let byte = &mut data[(at >> 3) as usize];
        *byte = (*byte & !(1 << shift)) | ((bit as u8) << shift);
    }
}

/// A SET or INCRBY: its reply (the old value for SET, the new for
/// INCRBY; `None` when `OVERFLOW FAIL` refused it). Sets `changed` if the
/// field's bits changed.
fn apply(data: &mut [u8], f: &Field, changed: &mut bool) -> Option<i64> {
    let old = get(data, f.offset, f.bits, f.signed);
    let (wanted, incr) = match f.op {
        Op::IncrBy => (old, f.value),
        _ => (f.value, 0),
    };
    let (new, overflowed) = match f.signed {
        true => signed_overflow(wanted, incr, f.bits, f.overflow),
        false => unsigned_overflow(wanted as u64, incr, f.bits, f.overflow),
    };
    if overflowed && f.overflow == Overflow::Fail {
        return None;
    }
    put(data, f.offset, f.bits, new as u64);
    *changed |= new != old;
    Some(match f.op {
        Op::IncrBy => new,
        _ => old,
    })
}

/// `value + incr` as a `bits`-wide unsigned field under `how` (Redis's
/// `checkUnsignedBitfieldOverflow`), and whether it overflowed.
fn unsigned_overflow(value: u64, incr: i64, bits: u32, how: Overflow) -> (i64, bool) {
    let max = if bits == 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    };
    let max_incr = max.wrapping_sub(value) as i64;
    let min_incr = value.wrapping_neg() as i64;
    let wrap = || (value.wrapping_add(incr as u64) & !(u64::MAX << bits)) as i64;
    if value > max || (incr > 0 && incr > max_incr) {
        return match how {
            Overflow::Sat => (max as i64, true),
            _ => (wrap(), true),
        };
    }
    if incr < 0 && incr < min_incr {
        return match how {
            Overflow::Sat => (0, true),
            _ => (wrap(), true),
        };
    }
    (value.wrapping_add(incr as u64) as i64, false)
}

/// The same for a signed field (`checkSignedBitfieldOverflow`).
fn signed_overflow(value: i64, incr: i64, bits: u32, how: Overflow) -> (i64, bool) {
    let max = if bits == 64 {
        i64::MAX
    } else {
        (1i64 << (bits - 1)) - 1
    };
    let min = -max - 1;
    let max_incr = (max as u64).wrapping_sub(value as u64) as i64;
    let min_incr = min.wrapping_sub(value);
    let wrap = || {
        let mut c = (value as u64).wrapping_add(incr as u64);
        if bits < 64 {
            let mask = u64::MAX << bits;
            c = match c & (1 << (bits - 1)) != 0 {
                true => c | mask,
                false => c & !mask,
            };
        }
        c as i64
    };
    let over = value > max
        || (bits != 64 && incr > max_incr)
        || (value >= 0 && incr > 0 && incr > max_incr);
    if over {
        return match how {
            Overflow::Sat => (max, true),
            _ => (wrap(), true),
        };
    }
    let under = value < min
        || (bits != 64 && incr < min_incr)
        || (value < 0 && incr < 0 && incr < min_incr);
    if under {
        return match how {
            Overflow::Sat => (min, true),
            _ => (wrap(), true),
        };
    }
    (value.wrapping_add(incr), false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny deterministic generator (xorshift).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    /// A field written then read back at any offset and width gives the
    /// value's low bits (sign-extended for a signed field), and leaves
    /// every other bit as it was.
    #[test]
    fn fields_round_trip_against_a_bit_model() {
        let mut rng = Rng(7);
        let mut data = vec![0u8; 64];
        let mut model = vec![false; 512];
        for _ in 0..5000 {
            let bits = (rng.next() % 64 + 1) as u32;
            let offset = rng.next() % (512 - bits as u64);
            let value = rng.next();
            put(&mut data, offset, bits, value);
            for i in 0..bits as u64 {
                model[(offset + i) as usize] = (value >> (bits as u64 - 1 - i)) & 1 == 1;
            }
            let low = if bits == 64 {
                value
            } else {
                value & ((1 << bits) - 1)
            };
            assert_eq!(get(&data, offset, bits, false) as u64, low);
            let signed = get(&data, offset, bits, true) as i128;
            let width = 1i128 << bits;
            let want = if low as i128 >= width / 2 {
                low as i128 - width
            } else {
                low as i128
            };
            assert_eq!(signed, want);
            for (i, bit) in model.iter().enumerate() {
                assert_eq!(get(&data, i as u64, 1, false) == 1, *bit);
            }
        }
    }

    /// For a value within its field's range, an increment's result is the
    /// exact sum, or on overflow the sum wrapped modulo 2^bits (into the
    /// signed range for a signed field) or saturated at the bound crossed.
    #[test]
    fn increments_wrap_or_saturate_as_exact_arithmetic_says() {
        let mut rng = Rng(11);
        for _ in 0..100_000 {
            let signed = rng.next().is_multiple_of(2);
            let bits = (rng.next() % if signed { 64 } else { 63 } + 1) as u32;
            let width = 1i128 << bits;
            let (min, max) = match signed {
                true => (-width / 2, width / 2 - 1),
                false => (0, width - 1),
            };
            let value = min + (rng.next() as i128).rem_euclid(max - min + 1);
            let incr = match rng.next() % 3 {
                0 => (rng.next() % 600) as i64 - 300,
                _ => rng.next() as i64,
            };
            let exact = value + incr as i128;
            let wrapped = {
                let w = exact.rem_euclid(width);
                if signed && w > max {
                    w - width
                } else {
                    w
                }
            };
            let saturated = exact.clamp(min, max);
            for how in [Overflow::Wrap, Overflow::Sat] {
                let (got, over) = match signed {
                    true => signed_overflow(value as i64, incr, bits, how),
                    false => unsigned_overflow(value as u64, incr, bits, how),
                };
                let got = if signed {
                    got as i128
                } else {
                    got as u64 as i128
                };
                let in_range = (min..=max).contains(&exact);
                assert_eq!(over, !in_range, "{signed} {bits} {value} {incr}");
                let want = match (in_range, how) {
                    (true, _) => exact,
                    (false, Overflow::Sat) => saturated,
                    (false, _) => wrapped,
                };
                assert_eq!(
                    got,
                    want,
                    "{signed} {bits} {value} {incr} {}",
                    how == Overflow::Sat
                );
            }
        }
    }
}
