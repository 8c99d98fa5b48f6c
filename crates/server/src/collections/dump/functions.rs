//! `FUNCTION DUMP`'s payload: each library's code under RDB's
//! `RDB_OPCODE_FUNCTION2`, then the footer every dump payload has (see
//! `rdb.rs`).

use super::encoding::{put_string, Reader};
use super::rdb::{checked_body, frame};

/// RDB's opcodes for a function library: Redis 7.0's (its code), and
/// 7.0's release candidates' (name, engine, description, code).
const FUNCTION2: u8 = 245;
const FUNCTION_PRE_GA: u8 = 246;

/// `FUNCTION DUMP`'s payload for libraries of code `codes`.
pub fn write_functions(codes: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for code in codes {
        out.push(FUNCTION2);
        put_string(&mut out, code);
    }
    frame(&out)
}

/// The libraries' code in a `FUNCTION DUMP` payload, or why it is
/// refused (Redis's texts, without `ERR `).
pub fn read_functions(payload: &[u8]) -> Result<Vec<Vec<u8>>, &'static str> {
    let body = checked_body(payload).ok_or("DUMP payload version or checksum are wrong")?;
    let mut r = Reader { buf: body, at: 0 };
    let mut codes = Vec::new();
    while r.at < body.len() {
        let code = match r.byte() {
            Some(FUNCTION2) => r.string().ok_or("Failed loading library payload")?,
            Some(FUNCTION_PRE_GA) => pre_ga_function(&mut r)?,
            _ => return Err("given type is not a function"),
        };
        codes.push(code);
    }
    Ok(codes)
}

/// A library as 7.0's release candidates wrote it, as the code Redis
/// makes of it (`#!ENGINE name=NAME` then the code).
fn pre_ga_function(r: &mut Reader) -> Result<Vec<u8>, &'static str> {
    let name = r.string().ok_or("Failed loading library name")?;
    let engine = r.string().ok_or("Failed loading engine name")?;
    let has_description = r
        .len()
        .ok_or("Failed loading library description indicator")?;
    if has_description != 0 {
        r.string().ok_or("Failed loading library description")?;
    }
    let blob = r.string().ok_or("Failed loading library blob")?;
    let mut code = b"#!".to_vec();
    code.extend_from_slice(&engine);
    code.extend_from_slice(b" name=");
    code.extend_from_slice(&name);
    code.push(b'\n');
    code.extend_from_slice(&blob);
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn libraries_round_trip_and_damage_is_refused() {
        let codes: [&[u8]; 2] = [b"#!lua name=a\nx", b"#!lua name=b\ny"];
        let payload = write_functions(&codes);
        assert_eq!(read_functions(&payload).unwrap(), codes);
        let mut bad = payload.clone();
        bad[3] ^= 0x10;
        assert!(read_functions(&bad).is_err());
        assert_eq!(
            read_functions(&frame(b"\x00\x01x")),
            Err("given type is not a function")
        );
        assert_eq!(
            read_functions(&frame(b"\xf5")),
            Err("Failed loading library payload")
        );
    }

    /// A library as Redis 7.0's release candidates dumped it becomes the
    /// code Redis makes of it.
    #[test]
    fn pre_ga_libraries_read_as_redis_reads_them() {
        let mut body = vec![FUNCTION_PRE_GA];
        for s in [&b"lib"[..], b"LUA"] {
            put_string(&mut body, s);
        }
        body.push(1);
        put_string(&mut body, b"described");
        put_string(&mut body, b"redis.register_function('f', function() end)");
        assert_eq!(
            read_functions(&frame(&body)).unwrap(),
            [b"#!LUA name=lib\nredis.register_function('f', function() end)".to_vec()]
        );
    }

    proptest! {
        #[test]
        fn any_body_is_read_or_refused(body in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = read_functions(&frame(&body));
        }
    }
}
