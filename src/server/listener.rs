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

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;
use tracing::{debug, warn};

use super::connection::Connection;
use super::peer::Principal;
use super::security::tls::subject_dn;
use super::{ServeOptions, Shared};
use crate::security_config::{SaslSettings, SecurityProtocol};

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

/// The connection counts all listeners share (`max.connections` is for the whole server).
#[derive(Debug, Default, Clone)]
pub struct OpenConnections(Arc<Mutex<Open>>);

/// One bound listener as its connections see it.
pub struct Endpoint {
    /// The listener name (`PLAINTEXT`, `SASL_SSL`, a custom name).
    pub name: String,
    /// Its security protocol.
    pub protocol: SecurityProtocol,
    /// The bound address.
    pub bound: SocketAddr,
    /// What Metadata / FindCoordinator advertise to its clients.
    pub advertised: (String, i32),
    /// For SSL and SASL_SSL.
    pub tls: Option<TlsAcceptor>,
    /// For SASL_PLAINTEXT and SASL_SSL.
    pub sasl: Option<Arc<SaslSettings>>,
    /// Failed TLS handshakes are logged at `warn` once per [`LOG_EVERY`], the others at
    /// `debug` (a client retrying in a loop must not flood the log).
    last_handshake_warning: Mutex<Option<Instant>>,
}

impl Endpoint {
    /// A listener endpoint.
    pub fn new(
        name: String,
        protocol: SecurityProtocol,
        bound: SocketAddr,
        advertised: (String, i32),
        tls: Option<TlsAcceptor>,
        sasl: Option<Arc<SaslSettings>>,
    ) -> Endpoint {
        Endpoint {
            name,
            protocol,
            bound,
            advertised,
            tls,
            sasl,
            last_handshake_warning: Mutex::new(None),
        }
    }

    /// Log a failed handshake or a client of the wrong protocol: `warn` at most once per
    /// [`LOG_EVERY`] per listener, `debug` otherwise.
    pub fn log_refused(&self, peer: SocketAddr, what: &str) {
        let mut last = self
            .last_handshake_warning
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if last.is_none_or(|t| t.elapsed() >= LOG_EVERY) {
            *last = Some(Instant::now());
            warn!(%peer, listener = %self.name, "{what}; connection closed (further ones for {} s at debug level)", LOG_EVERY.as_secs());
        } else {
            debug!(%peer, listener = %self.name, "{what}; connection closed");
        }
    }
}

/// How long a client has to complete the TLS handshake. Generous: a JVM's first handshake on a
/// loaded 2-core machine has been seen to take over 10 s; the bound only stops a peer that never
/// finishes, and each pending handshake holds only a socket and a small buffer.
pub const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);

/// Accepts connections and spawns a [`Connection`] for each.
pub struct Listener {
    listener: TcpListener,
    shared: Arc<Shared>,
    opts: ServeOptions,
    shutdown: watch::Receiver<bool>,
    open: Arc<Mutex<Open>>,
    endpoint: Arc<Endpoint>,
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
        endpoint: Arc<Endpoint>,
        open: OpenConnections,
    ) -> Listener {
        Listener {
            listener,
            shared,
            opts,
            shutdown,
            open: open.0,
            endpoint,
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
                    let endpoint = self.endpoint.clone();
                    let connection =
                        Connection::new(peer, shared.clone(), &self.opts, endpoint.clone());
                    let shutdown = self.shutdown.clone();
                    tokio::spawn(async move {
                        serve(connection, stream, endpoint, shutdown).await;
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

/// Run a connection: straight away on plaintext listeners, after the TLS handshake on SSL and
/// SASL_SSL ones (the client certificate, if any, names the principal of an SSL listener).
async fn serve(
    connection: Connection,
    stream: TcpStream,
    endpoint: Arc<Endpoint>,
    shutdown: watch::Receiver<bool>,
) {
    let Some(acceptor) = &endpoint.tls else {
        let (rd, wr) = stream.into_split();
        connection.run(rd, wr, shutdown).await;
        return;
    };
    let peer = connection.peer();
    let handshake = async {
        let mut first = [0u8; 1];
        // A Kafka request (size prefix first) instead of a TLS record (0x16): a plaintext
        // client on a TLS listener.
        match stream.peek(&mut first).await {
            Ok(0) | Err(_) => return Err("connection closed before the TLS handshake".to_string()),
            Ok(_) if first[0] != 0x16 => {
                return Err("plaintext client on a TLS listener (not a TLS handshake)".to_string());
            }
            Ok(_) => {}
        }
        acceptor
            .accept(stream)
            .await
            .map_err(|e| format!("TLS handshake failed: {e}"))
    };
    let tls = match tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, handshake).await {
        Ok(Ok(tls)) => tls,
        Ok(Err(what)) => {
            endpoint.log_refused(peer, &what);
            return;
        }
        Err(_) => {
            endpoint.log_refused(peer, "TLS handshake timed out");
            return;
        }
    };
    let mut connection = connection;
    if endpoint.sasl.is_none()
        && let Some(cert) = tls.get_ref().1.peer_certificates().and_then(|c| c.first())
    {
        match subject_dn(cert) {
            Ok(dn) => {
                let principal = Principal::user(&dn);
                debug!(%peer, listener = %endpoint.name, %principal, "authenticated by client certificate");
                connection.set_principal(principal);
            }
            Err(e) => {
                endpoint.log_refused(
                    peer,
                    &format!("client certificate without a usable subject: {e}"),
                );
                return;
            }
        }
    }
    let (rd, wr) = tokio::io::split(tls);
    connection.run(rd, wr, shutdown).await;
}
