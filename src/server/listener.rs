//! The accept loop and the connection limits: `max.connections` (groupcoord's default is
//! [`DEFAULT_MAX_CONNECTIONS`](crate::config_keys::DEFAULT_MAX_CONNECTIONS)) and
//! `max.connections.per.ip`. A connection over a limit is accepted and closed at once, as Kafka
//! does. When accepting fails (typically EMFILE/ENFILE: out of file descriptors) the loop backs
//! off exponentially, up to [`MAX_BACKOFF`], instead of retrying in a tight loop, and logs the
//! failures at most once per [`LOG_EVERY`].

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::net::TcpListener;
use tokio::sync::watch;
use tracing::warn;

use super::connection::Connection;
use super::{ServeOptions, Shared};

/// First pause after a failed accept.
pub const MIN_BACKOFF: Duration = Duration::from_millis(10);
/// Longest pause after repeated failed accepts.
pub const MAX_BACKOFF: Duration = Duration::from_secs(1);
/// Accept failures are logged at most this often.
pub const LOG_EVERY: Duration = Duration::from_secs(10);

/// Open connections, in total and per client address.
#[derive(Debug, Default)]
struct Open {
    total: usize,
    per_ip: HashMap<IpAddr, usize>,
}

/// Accepts connections and spawns a [`Connection`] for each.
pub struct Listener {
    listener: TcpListener,
    shared: Arc<Shared>,
    opts: ServeOptions,
    shutdown: watch::Receiver<bool>,
    open: Arc<Mutex<Open>>,
}

/// Counts a connection as open until dropped.
struct OpenGuard {
    open: Arc<Mutex<Open>>,
    ip: IpAddr,
}

impl Drop for OpenGuard {
    fn drop(&mut self) {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        open.total -= 1;
        if let Some(n) = open.per_ip.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                // Forget the address: the map does not grow with every client ever seen.
                open.per_ip.remove(&self.ip);
            }
        }
    }
}

impl Listener {
    pub fn new(
        listener: TcpListener,
        shared: Arc<Shared>,
        opts: ServeOptions,
        shutdown: watch::Receiver<bool>,
    ) -> Listener {
        Listener {
            listener,
            shared,
            opts,
            shutdown,
            open: Arc::default(),
        }
    }

    pub async fn run(mut self) {
        let mut backoff = MIN_BACKOFF;
        let mut failures = 0u64;
        let mut last_log: Option<Instant> = None;
        loop {
            let accepted = tokio::select! {
                r = self.listener.accept() => r,
                _ = self.shutdown.changed() => break,
            };
            match accepted {
                Ok((stream, peer)) => {
                    backoff = MIN_BACKOFF;
                    let Some(guard) = self.admit(peer) else {
                        self.shared
                            .metrics
                            .connections_refused
                            .fetch_add(1, Relaxed);
                        drop(stream);
                        continue;
                    };
                    let _ = stream.set_nodelay(true);
                    let metrics = &self.shared.metrics;
                    metrics.connections_total.fetch_add(1, Relaxed);
                    metrics.connections.fetch_add(1, Relaxed);
                    let shared = self.shared.clone();
                    let connection = Connection::new(peer, shared.clone(), &self.opts);
                    let shutdown = self.shutdown.clone();
                    tokio::spawn(async move {
                        connection.run(stream, shutdown).await;
                        shared.metrics.connections.fetch_sub(1, Relaxed);
                        drop(guard);
                    });
                }
                Err(e) => {
                    failures += 1;
                    if last_log.is_none_or(|t| t.elapsed() >= LOG_EVERY) {
                        warn!(
                            failures,
                            retry_in_ms = backoff.as_millis() as u64,
                            "accept failed: {e} (out of file descriptors? see max.connections)"
                        );
                        last_log = Some(Instant::now());
                    }
                    tokio::select! {
                        _ = tokio::time::sleep(backoff) => {}
                        _ = self.shutdown.changed() => break,
                    }
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
            }
        }
    }

    /// Count the connection in, or refuse it (`None`) when a limit is reached.
    fn admit(&self, peer: SocketAddr) -> Option<OpenGuard> {
        let max_total = self.opts.server.max_connections.max(0) as usize;
        let max_per_ip = self.opts.server.max_connections_per_ip.max(0) as usize;
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if open.total >= max_total {
            warn!(%peer, max = max_total, "max.connections reached; closing new connection");
            return None;
        }
        let ip = peer.ip();
        let from_ip = open.per_ip.get(&ip).copied().unwrap_or(0);
        if from_ip >= max_per_ip {
            warn!(%peer, max = max_per_ip, "max.connections.per.ip reached; closing new connection");
            return None;
        }
        open.total += 1;
        open.per_ip.insert(ip, from_ip + 1);
        Some(OpenGuard {
            open: self.open.clone(),
            ip,
        })
    }
}
