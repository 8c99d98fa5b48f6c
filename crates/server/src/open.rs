//! Opening what the server serves: the database, alone or as a cluster
//! node's state machine (its raft parts started later, once the server's
//! shared state exists).

use std::sync::Arc;

use crate::options::ServerOptions;
use crate::{cluster, scripting, store};

/// What the server serves: its database, and in a cluster the node's
/// parts not started yet.
pub struct Opened {
    pub db: Arc<slsm::Db>,
    pub store: store::Store,
    pub functions: scripting::functions::Functions,
    pub cluster: Option<cluster::node::Pending>,
}

pub fn single(opts: &ServerOptions) -> Result<Opened, String> {
    let db = slsm::Db::open(&opts.db, opts.engine.clone()).map_err(|e| e.to_string())?;
    let db = Arc::new(db);
    let store =
        store::Store::new(Arc::clone(&db), store::Clock::Wall).map_err(|e| e.to_string())?;
    let functions = scripting::functions::Functions::open(&db).map_err(|e| e.to_string())?;
    Ok(Opened {
        db,
        store,
        functions,
        cluster: None,
    })
}

pub fn clustered(opts: &ServerOptions, c: &cluster::ClusterOptions) -> Result<Opened, String> {
    let (pending, db) = cluster::node::open(opts, c)?;
    let clock = store::Clock::Replicated(pending.1.clock());
    let store = store::Store::new(Arc::clone(&db), clock).map_err(|e| e.to_string())?;
    let functions = scripting::functions::Functions::open(&db).map_err(|e| e.to_string())?;
    Ok(Opened {
        db,
        store,
        functions,
        cluster: Some(pending),
    })
}
