//! `CLIENT TRACKING`, `CLIENT CACHING`, `CLIENT GETREDIR` and `CLIENT
//! TRACKINGINFO`, with Redis 7.0's checks, errors and replies
//! (`networking.c`'s `clientCommand`); and the end of a connection's
//! tracking at `RESET`.
//!
//! * **Owns**: nothing; the session's [`Mode`] and `caching` flag are the
//!   session's, the tables `crate::tracking`'s.

use super::{Mode, Options};
use crate::commands::{fail, int_arg, syntax_error, Fail, Outcome};
use crate::resp::Reply;
use crate::session::Session;
use crate::shared::Shared;

/// `CLIENT TRACKING ON|OFF [REDIRECT id] [BCAST] [PREFIX p]... [OPTIN]
/// [OPTOUT] [NOLOOP]` (`a`: the whole request).
pub fn tracking(s: &Shared, session: &mut Session, a: &[Vec<u8>]) -> Outcome {
    let options = parse(s, &a[3..])?;
    match a[2].to_ascii_lowercase().as_slice() {
        b"on" => {
            check(s, session, &options)?;
            session.tracking = Some(options.mode);
            s.tracking
                .enable(&session.client, options, &s.store.tuning().tracking);
        }
        b"off" => stop(s, session),
        _ => return Err(syntax_error()),
    }
    Ok(Reply::ok())
}

fn parse(s: &Shared, args: &[Vec<u8>]) -> Result<Options, Fail> {
    let mut o = Options::default();
    let mut i = 0;
    while i < args.len() {
        let more = i + 1 < args.len();
        match args[i].to_ascii_lowercase().as_slice() {
            b"redirect" if more => {
                i += 1;
                if o.redirect != 0 {
                    return Err(fail(
                        "ERR A client can only redirect to a single other client",
                    ));
                }
                let id = int_arg(&args[i])?;
                // Checked now, though the client may leave later (Redis).
                if id <= 0 || !s.tracking.is_connected(id as u64) {
                    return Err(fail(
                        "ERR The client ID you want redirect to does not exist",
                    ));
                }
                o.redirect = id as u64;
            }
            b"bcast" => o.mode.bcast = true,
            b"optin" => o.mode.optin = true,
            b"optout" => o.mode.optout = true,
            b"noloop" => o.noloop = true,
            b"prefix" if more => {
                i += 1;
                o.prefixes.push(args[i].clone());
            }
            _ => return Err(syntax_error()),
        }
        i += 1;
    }
    Ok(o)
}

/// The options agree with each other and with the client's tracking.
fn check(s: &Shared, session: &Session, o: &Options) -> Result<(), Fail> {
    let m = o.mode;
    if !m.bcast && !o.prefixes.is_empty() {
        return Err(fail("ERR PREFIX option requires BCAST mode to be enabled"));
    }
    let now = session.tracking.unwrap_or_default();
    if session.tracking.is_some() && now.bcast != m.bcast {
        return Err(fail("ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode."));
    }
    if m.bcast && (m.optin || m.optout) {
        return Err(fail("ERR OPTIN and OPTOUT are not compatible with BCAST"));
    }
    if m.optin && m.optout {
        return Err(fail("ERR You can't use both OPTIN and OPTOUT"));
    }
    if (m.optin && now.optout) || (m.optout && now.optin) {
        return Err(fail("ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode."));
    }
    if m.bcast {
        if let Some(e) = s.tracking.prefix_collision(session.id, &o.prefixes) {
            return Err(fail(&e));
        }
    }
    Ok(())
}

/// Ends the client's tracking (`CLIENT TRACKING OFF`, `RESET`).
pub fn stop(s: &Shared, session: &mut Session) {
    if session.tracking.take().is_some() {
        s.tracking.disable(session.id, &s.store.tuning().tracking);
    }
    session.caching = false;
}

/// `CLIENT CACHING YES|NO`: whether the next command's keys are tracked
/// (in `OPTIN` mode, yes; in `OPTOUT`, no).
pub fn caching(session: &mut Session, arg: &[u8]) -> Outcome {
    let Some(mode) = session.tracking else {
        return Err(fail("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled"));
    };
    match arg.to_ascii_lowercase().as_slice() {
        b"yes" if mode.optin => {}
        b"yes" => {
            return Err(fail(
                "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.",
            ))
        }
        b"no" if mode.optout => {}
        b"no" => {
            return Err(fail(
                "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.",
            ))
        }
        _ => return Err(syntax_error()),
    }
    session.caching = true;
    Ok(Reply::ok())
}

/// `CLIENT GETREDIR`: the redirect (0 for none), -1 when not tracking.
pub fn getredir(s: &Shared, session: &Session) -> Reply {
    Reply::Int(match s.tracking.info(session.id) {
        Some(info) => info.options.redirect as i64,
        None => -1,
    })
}

/// `CLIENT TRACKINGINFO`: the flags, the redirect and the prefixes.
pub fn info(s: &Shared, session: &Session) -> Reply {
    let info = s.tracking.info(session.id);
    let mut flags = vec![match info {
        Some(_) => "on",
        None => "off",
    }];
    let (redirect, prefixes) = match &info {
        Some(i) => {
            flags.extend(info_flags(i.options.mode, i, session.caching));
            (i.options.redirect as i64, i.options.prefixes.clone())
        }
        None => (-1, Vec::new()),
    };
    Reply::Map(vec![
        (
            Reply::bulk("flags"),
            Reply::Set(flags.into_iter().map(Reply::bulk).collect()),
        ),
        (Reply::bulk("redirect"), Reply::Int(redirect)),
        (
            Reply::bulk("prefixes"),
            Reply::Array(prefixes.into_iter().map(Reply::Bulk).collect()),
        ),
    ])
}

/// The flags past `on`, in Redis's order.
fn info_flags(m: Mode, i: &super::Info, caching: bool) -> Vec<&'static str> {
    [
        (m.bcast, "bcast"),
        (m.optin, "optin"),
        (m.optin && caching, "caching-yes"),
        (m.optout, "optout"),
        (m.optout && caching, "caching-no"),
        (i.options.noloop, "noloop"),
        (i.broken, "broken_redirect"),
    ]
    .into_iter()
    .filter(|(on, _)| *on)
    .map(|(_, name)| name)
    .collect()
}
