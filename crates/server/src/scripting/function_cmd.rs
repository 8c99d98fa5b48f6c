//! `FUNCTION LOAD|DELETE|FLUSH|LIST|STATS|KILL|DUMP|RESTORE|HELP` and
//! `FCALL`/`FCALL_RO`, with Redis 7.0's replies and error texts (the
//! libraries themselves are in `functions.rs`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::call::{run_command, split_keys};
use super::functions::{Library, Registry};
use super::registration::FLAGS;
use super::running::Running;
use super::vm::{self, Call, Limits};
use crate::access::InTx;
use crate::collections::dump::functions as payload;
use crate::commands::{fail, Fail, Outcome};
use crate::effects::Effects;
use crate::glob;
use crate::resp::{Reply, Request};
use crate::shared::Shared;

const HELP: &[&str] = &[
    "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LOAD [REPLACE] <FUNCTION CODE>",
    "    Create a new library with the given library name and code.",
    "DELETE <LIBRARY NAME>",
    "    Delete the given library.",
    "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
    "    Return general information on all the libraries:",
    "    * Library name",
    "    * The engine used to run the Library",
    "    * Library description",
    "    * Functions list",
    "    * Library code (if WITHCODE is given)",
    "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
    "STATS",
    "    Return information about the current function running:",
    "    * Function name",
    "    * Command used to run the function",
    "    * Duration in MS that the function is running",
    "    If no function is running, return nil",
    "    In addition, returns a list of available engines.",
    "KILL",
    "    Kill the current running function.",
    "FLUSH [ASYNC|SYNC]",
    "    Delete all the libraries.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the libraries.",
    "    * SYNC: Synchronously flush the libraries.",
    "DUMP",
    "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
    "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
    "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
    "    control how to handle existing libraries (default APPEND):",
    "    * FLUSH: delete all existing libraries.",
    "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
    "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
    "      libraries with the new libraries (notice that even on this option there is a chance of failure",
    "      in case of functions name collision with another library).",
    "HELP",
    "    Prints this help.",
];

fn err(message: impl std::fmt::Display) -> Fail {
    fail(&format!("ERR {message}"))
}

/// `FUNCTION ...`.
pub fn function(s: &Shared, a: &[Vec<u8>]) -> Outcome {
    let sub = String::from_utf8_lossy(&a[1]).to_ascii_lowercase();
    crate::registry::check_subcommand("function", a)?;
    match sub.as_str() {
        "load" => load(s, a),
        "delete" => change(s, |r| match r.take(&lossy(&a[2])) {
            Some(_) => Ok(()),
            None => Err(err("Library not found")),
        }),
        "flush" => flush(s, a),
        "list" => list(s, a),
        "stats" => Ok(stats(s)),
        "kill" => s.scripts.kill(true),
        "dump" => Ok(Reply::Bulk(dump(&s.functions.registry()))),
        "restore" => restore(s, a),
        _ => Ok(Reply::Array(
            HELP.iter().map(|l| Reply::Simple((*l).into())).collect(),
        )),
    }
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Applies `edit` to a copy of the registry, writes the difference to
/// the keyspace, then makes the copy the registry.
fn change(s: &Shared, edit: impl FnOnce(&mut Registry) -> Result<(), Fail>) -> Outcome {
    let mut registry = s.functions.registry();
    let mut next = registry.clone();
    edit(&mut next)?;
    next.touch();
    s.functions
        .persist(&s.store.db(), &registry, &next, &s.write_options())
        .map_err(err)?;
    *registry = next;
    Ok(Reply::ok())
}

fn load(s: &Shared, a: &[Vec<u8>]) -> Outcome {
    let mut replace = false;
    for opt in &a[2..a.len() - 1] {
        match opt.eq_ignore_ascii_case(b"replace") {
            true => replace = true,
            false => return Err(err(format!("Unknown option given: {}", lossy(opt)))),
        }
    }
    let mut name = String::new();
    change(s, |r| {
        let lib = r.create(&a[a.len() - 1], replace).map_err(err)?;
        name = lib.name.clone();
        r.install(lib);
        Ok(())
    })?;
    Ok(Reply::bulk(name))
}

fn flush(s: &Shared, a: &[Vec<u8>]) -> Outcome {
    if a.len() > 3 {
        return Err(crate::registry::subcommand_error("FUNCTION", a));
    }
    if let Some(mode) = a.get(2) {
        if !mode.eq_ignore_ascii_case(b"sync") && !mode.eq_ignore_ascii_case(b"async") {
            return Err(err("FUNCTION FLUSH only supports SYNC|ASYNC option"));
        }
    }
    change(s, |r| {
        *r = Registry::default();
        Ok(())
    })
}

fn list(s: &Shared, a: &[Vec<u8>]) -> Outcome {
    let (mut with_code, mut pattern) = (false, None);
    let mut i = 2;
    while i < a.len() {
        if !with_code && a[i].eq_ignore_ascii_case(b"withcode") {
            with_code = true;
        } else if pattern.is_none() && a[i].eq_ignore_ascii_case(b"libraryname") {
            pattern = Some(
                a.get(i + 1)
                    .ok_or_else(|| err("library name argument was not given"))?,
            );
            i += 1;
        } else {
            return Err(err(format!("Unknown argument {}", lossy(&a[i]))));
        }
        i += 1;
    }
    // Matched without regard to case, as Redis matches it.
    let pattern = pattern.map(|p| p.to_ascii_lowercase());
    let registry = s.functions.registry();
    let libraries = registry.libraries.values().filter(|lib| {
        pattern
            .as_deref()
            .is_none_or(|p| glob::matches(p, lib.name.to_ascii_lowercase().as_bytes()))
    });
    Ok(Reply::Array(
        libraries.map(|lib| library_entry(lib, with_code)).collect(),
    ))
}

fn library_entry(lib: &Library, with_code: bool) -> Reply {
    let functions = lib.functions.iter().map(|f| {
        let flags = FLAGS
            .iter()
            .enumerate()
            .filter(|(i, _)| f.flags & (1 << i) != 0)
            .map(|(_, name)| Reply::Simple((*name).into()));
        Reply::Map(vec![
            (Reply::bulk("name"), Reply::bulk(f.name.as_str())),
            (
                Reply::bulk("description"),
                f.description.clone().map_or(Reply::Null, Reply::Bulk),
            ),
            (Reply::bulk("flags"), Reply::Set(flags.collect())),
        ])
    });
    let mut entry = vec![
        (Reply::bulk("library_name"), Reply::bulk(lib.name.as_str())),
        (Reply::bulk("engine"), Reply::bulk("LUA")),
        (Reply::bulk("functions"), Reply::Array(functions.collect())),
    ];
    if with_code {
        entry.push((Reply::bulk("library_code"), Reply::Bulk(lib.code.clone())));
    }
    Reply::Map(entry)
}

fn stats(s: &Shared) -> Reply {
    let running = s.scripts.running_function().map_or(Reply::Null, |run| {
        Reply::Map(vec![
            (Reply::bulk("name"), Reply::bulk(run.name.as_str())),
            (
                Reply::bulk("command"),
                Reply::Array(run.command.iter().cloned().map(Reply::Bulk).collect()),
            ),
            (
                Reply::bulk("duration_ms"),
                Reply::Int(run.started.elapsed().as_millis() as i64),
            ),
        ])
    });
    let registry = s.functions.registry();
    let lua = Reply::Map(vec![
        (
            Reply::bulk("libraries_count"),
            Reply::Int(registry.libraries.len() as i64),
        ),
        (
            Reply::bulk("functions_count"),
            Reply::Int(registry.function_count() as i64),
        ),
    ]);
    Reply::Map(vec![
        (Reply::bulk("running_script"), running),
        (
            Reply::bulk("engines"),
            Reply::Map(vec![(Reply::bulk("LUA"), lua)]),
        ),
    ])
}

/// `FUNCTION DUMP`'s payload: each library's code as RDB's
/// `RDB_OPCODE_FUNCTION2`, then the dump footer.
fn dump(registry: &Registry) -> Vec<u8> {
    let codes: Vec<&[u8]> = registry.libraries.values().map(|l| &l.code[..]).collect();
    payload::write_functions(&codes)
}

fn restore(s: &Shared, a: &[Vec<u8>]) -> Outcome {
    if a.len() > 4 {
        return Err(crate::registry::subcommand_error("FUNCTION", a));
    }
    let policy = a.get(3).map(|p| p.to_ascii_lowercase());
    let (flush, replace) = match policy.as_deref() {
        None | Some(b"append") => (false, false),
        Some(b"replace") => (false, true),
        Some(b"flush") => (true, false),
        Some(_) => {
            return Err(err(
                "Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.",
            ))
        }
    };
    let codes = payload::read_functions(&a[2]).map_err(err)?;
    change(s, |r| {
        // Loaded as a registry of their own first: a name twice in the
        // payload is a collision there.
        let mut restored = Registry::default();
        let mut libs = Vec::new();
        for code in codes {
            let lib = restored.create(&code, false).map_err(err)?;
            let name = lib.name.clone();
            restored.install(lib);
            libs.push(name);
        }
        let libs = libs.iter().filter_map(|n| restored.take(n)).collect();
        if flush {
            *r = Registry::default();
        }
        r.join(libs, replace).map_err(err)
    })
}

/// `FCALL`/`FCALL_RO` through `acc` (the caller's transaction):
/// the reply, and whether `FUNCTION KILL` stopped it.
pub fn fcall_in(
    s: &Shared,
    acc: &mut InTx<'_>,
    req: &Request,
    effects: &mut Effects,
    killed_out: &mut bool,
) -> Reply {
    let ro = req[0].eq_ignore_ascii_case(b"fcall_ro");
    let name = lossy(&req[1]);
    let (generation, found) = {
        let registry = s.functions.registry();
        let found = registry
            .function(&name)
            .map(|(lib, f)| (lib, f.name.clone(), f.flags));
        (registry.generation, found)
    };
    let Some((lib, fname, flags)) = found else {
        return Reply::err("ERR Function not found");
    };
    let (keys, args) = match split_keys(req, "ERR Bad number of keys provided") {
        Ok(split) => split,
        Err(e) => return e,
    };
    let gate = match super::shebang::check_flags(s, Some(flags), ro) {
        Ok(gate) => gate,
        Err(refused) => return refused,
    };
    let killed = Arc::new(AtomicBool::new(false));
    let run = Running::function(Arc::clone(&killed), fname.clone(), req.clone());
    s.scripts.start(run.clone());
    let mut command = |r: Request| run_command(s, acc, r, gate, effects);
    let outcome = vm::with_vm(|vm| {
        if vm.libraries_generation() != generation {
            let registry = s.functions.registry();
            vm.prune_libraries(registry.generation, |lib_name, id| {
                registry.libraries.get(lib_name).is_some_and(|l| l.id == id)
            });
        }
        let f = vm
            .library_function(&lib.name, lib.id, lib.body(), &fname)
            .map_err(Reply::Error)?;
        let limits = Limits {
            killed: Arc::clone(&killed),
        };
        let call = Call::Function { keys, args };
        vm.run(&f, call, limits, &mut command).map_err(|fail| {
            Reply::Error(format!(
                "{} script: {fname}, on @user_function:{}.",
                fail.message, fail.line
            ))
        })
    });
    s.scripts.finish(&run);
    *killed_out = killed.load(Ordering::Relaxed);
    match outcome {
        Ok(Ok(reply)) | Ok(Err(reply)) => reply,
        Err(e) => Reply::Error(e),
    }
}
