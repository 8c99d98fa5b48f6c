//! Why a script or function failed, as Redis words it: the error it
//! raised (a string, an `{err=...}` table, or a command's error that
//! `redis.call` raised for it) and the line of the user's code it was on.

use mlua::Value;

/// Why a script did not return a value: the error's text (for Redis's
/// reply) and the script's line it happened on (0 if unknown).
pub struct Failure {
    pub message: String,
    pub line: i64,
}

/// The error a script raised (`{e, line}` from the message handler) as
/// Redis reports it: an `{err=...}` table's text as it is, any other
/// error's message after `ERR`.
pub(super) fn failure_of(v: Value) -> Failure {
    let Value::Table(t) = v else {
        return Failure {
            message: "ERR unknown error".into(),
            line: 0,
        };
    };
    let line = t.raw_get::<i64>(2).unwrap_or(0);
    let message = match t.raw_get::<Value>(1) {
        Ok(Value::Table(e)) => match e.raw_get::<Value>("err") {
            Ok(Value::String(s)) => s.to_string_lossy(),
            _ => "ERR unknown error".into(),
        },
        Ok(Value::String(s)) => format!("ERR {}", s.to_string_lossy()),
        Ok(Value::Error(e)) => match command_failure(&e) {
            Some(message) => message,
            None => format!("ERR {}", lua_message(&e)),
        },
        Ok(other) => format!("ERR {}", other.to_string().unwrap_or_default()),
        Err(e) => format!("ERR {e}"),
    };
    Failure { message, line }
}

/// A command a script ran with `redis.call` answered this error: the
/// script fails with it (Redis raises it as the script's error).
#[derive(Debug)]
pub(super) struct CommandFailed(pub String);

impl std::fmt::Display for CommandFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CommandFailed {}

/// The command error inside `e`, if a `redis.call` raised it.
pub(super) fn command_failure(e: &mlua::Error) -> Option<String> {
    match e {
        mlua::Error::CallbackError { cause, .. } => command_failure(cause),
        mlua::Error::ExternalError(inner) => {
            inner.downcast_ref::<CommandFailed>().map(|c| c.0.clone())
        }
        _ => None,
    }
}

/// The text of a Lua error, without mlua's decoration.
pub(super) fn lua_message(e: &mlua::Error) -> String {
    match e {
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        mlua::Error::RuntimeError(m) => m.clone(),
        mlua::Error::MemoryError(_) => "script used more memory than it may".into(),
        mlua::Error::CallbackError { cause, .. } => lua_message(cause),
        other => other.to_string(),
    }
}
