//! The web side: static files from `www/`, the live view (`/api/groups`, `/api/events` SSE),
//! a group's recorded history (`/api/groups/{id}/trace`), `/metrics`, `/healthz` and `/readyz`.
//!
//! Access ([`access`]): without the token the Host header must name a loopback host or an IP
//! address (a page on another domain that resolves to this machine, DNS rebinding, is refused),
//! and clients that are not on loopback must present the bearer token (`--http-token` /
//! `groupcoord.http.token`: `Authorization: Bearer <token>` or `?token=<token>`); without a
//! token the view serves loopback clients only (and `serve` refuses to bind it elsewhere).
//! `/healthz` and `/readyz` reveal nothing and need no token.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Query, State as AxState};
use axum::http::{StatusCode, Uri, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures::Stream;
use futures::StreamExt;
use tokio::sync::watch;
use tokio_stream::wrappers::WatchStream;

use super::history::HistoryPage;
use super::metrics::GroupCount;
use crate::server::{Shared, now_ms};

#[derive(Clone)]
struct Web {
    shared: Arc<Shared>,
    www: PathBuf,
    /// The log's directory (`/api/groups/{id}/trace` reads it).
    data_dir: PathBuf,
    token: Option<Arc<str>>,
}

/// Bind and serve in the background; returns the bound address. Binding beyond loopback needs
/// a token.
pub async fn start(
    addr: SocketAddr,
    shared: Arc<Shared>,
    www: PathBuf,
    data_dir: PathBuf,
    token: Option<String>,
    mut shutdown: watch::Receiver<bool>,
) -> std::io::Result<SocketAddr> {
    if !addr.ip().is_loopback() && token.is_none() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            "the web view serves clients beyond loopback only with a token (--http-token or \
             groupcoord.http.token); bind it to 127.0.0.1 or set one",
        ));
    }
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let web = Web {
        shared,
        www,
        data_dir,
        token: token.map(Arc::from),
    };
    let app = Router::new()
        .route("/api/groups", get(groups))
        .route("/api/events", get(events))
        .route("/api/history", get(history))
        .route("/api/groups/{id}/trace", get(trace))
        .route("/metrics", get(metrics))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .fallback(get(static_file))
        .layer(axum::middleware::from_fn_with_state(web.clone(), guard))
        .with_state(web);
    tokio::spawn(async move {
        let r = axum::serve(
            listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .with_graceful_shutdown(async move {
            let _ = shutdown.changed().await;
        })
        .await;
        if let Err(e) = r {
            tracing::warn!("http server stopped: {e}");
        }
    });
    Ok(bound)
}

/// Why a request is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// No Host header, or one naming a host that is neither loopback nor an IP address.
    Host,
    /// A client beyond loopback without the right token (or with no token configured).
    Token,
}

/// Whether a request may be served: `host` is the Host header, `loopback` whether the client
/// is on loopback, `bearer` the token it presented, `token` the configured one.
pub fn access(
    path: &str,
    host: Option<&str>,
    loopback: bool,
    bearer: Option<&str>,
    token: Option<&str>,
) -> Result<(), Refused> {
    let token_ok = match (token, bearer) {
        (Some(t), Some(b)) => {
            t.len() == b.len() && t.bytes().zip(b.bytes()).fold(0u8, |a, (x, y)| a | (x ^ y)) == 0
        }
        _ => false,
    };
    // A page that rebinds a name to this machine cannot know the token: with it, any host name
    // (a deployment behind DNS) is served.
    if token_ok {
        return Ok(());
    }
    let host = host.ok_or(Refused::Host)?;
    // Strip the port: "[::1]:8080", "127.0.0.1:8080", "localhost".
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        host.rsplit_once(':').map_or(host, |(h, p)| {
            if p.chars().all(|c| c.is_ascii_digit()) {
                h
            } else {
                host
            }
        })
    };
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    let host_ok = name == "localhost"
        || name.ends_with(".localhost")
        || name.parse::<std::net::IpAddr>().is_ok();
    if !host_ok {
        return Err(Refused::Host);
    }
    if path == "/healthz" || path == "/readyz" || loopback {
        return Ok(());
    }
    Err(Refused::Token)
}

async fn guard(
    AxState(w): AxState<Web>,
    axum::extract::ConnectInfo(peer): axum::extract::ConnectInfo<SocketAddr>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let headers = req.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| req.uri().authority().map(|a| a.as_str()));
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.strip_prefix("Bearer "))
        .or_else(|| {
            req.uri()
                .query()
                .and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("token=")))
        });
    match access(
        req.uri().path(),
        host,
        peer.ip().is_loopback(),
        bearer,
        w.token.as_deref(),
    ) {
        Ok(()) => next.run(req).await,
        Err(Refused::Host) => (
            StatusCode::FORBIDDEN,
            "Host header must name localhost or an IP address",
        )
            .into_response(),
        Err(Refused::Token) => (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            "a bearer token is required beyond loopback",
        )
            .into_response(),
    }
}

async fn healthz() -> &'static str {
    "ok"
}

async fn readyz(AxState(w): AxState<Web>) -> Response {
    // Ready when the log was replayed (start() returns only then) and the owner answers.
    match w.shared.fresh_live().await {
        Some(_) => (StatusCode::OK, "ready").into_response(),
        None => (StatusCode::SERVICE_UNAVAILABLE, "stopping").into_response(),
    }
}

async fn groups(AxState(w): AxState<Web>) -> Response {
    w.shared.watch.looked(now_ms().0);
    let Some(snap) = w.shared.fresh_live().await else {
        return (StatusCode::SERVICE_UNAVAILABLE, "server stopping").into_response();
    };
    (
        [(header::CONTENT_TYPE, "application/json")],
        serde_json::to_string(&*snap).unwrap_or_default(),
    )
        .into_response()
}

async fn events(AxState(w): AxState<Web>) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    // Subscribing makes the owner publish (at most 10 snapshots/s, and only while someone is
    // subscribed); the fresh view asked for here is the stream's first item. The watch channel
    // keeps only the newest, so a slow reader skips intermediate ones instead of queueing them.
    w.shared.watch.looked(now_ms().0);
    let rx = w.shared.live.subscribe();
    let _ = w.shared.fresh_live().await;
    let stream = WatchStream::new(rx).map(|snap| {
        Ok(Event::default()
            .event("groups")
            .data(serde_json::to_string(&*snap).unwrap_or_default()))
    });
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}

#[derive(serde::Deserialize)]
struct HistoryQuery {
    group: Option<String>,
    after_msg: Option<u64>,
    after_rec: Option<u64>,
}

/// `GET /api/history?group=G&after_msg=N&after_rec=M`: the group's recent exchanges
/// (StreamsGroupHeartbeat, ConsumerGroupHeartbeat, JoinGroup, SyncGroup, Heartbeat, LeaveGroup)
/// and records after those sequence numbers (see [`super::history`]). Asking keeps
/// the history recording.
async fn history(AxState(w): AxState<Web>, Query(q): Query<HistoryQuery>) -> Response {
    let now = now_ms().0;
    w.shared.watch.looked(now);
    let (group, after_msg, after_rec) =
        (q.group, q.after_msg.unwrap_or(0), q.after_rec.unwrap_or(0));
    let Some(group) = group.filter(|g| !g.is_empty() && g.len() <= super::phases::MAX_GROUP_ID_LEN)
    else {
        return (StatusCode::BAD_REQUEST, "group=<group id> is required").into_response();
    };
    let page = {
        let h = w.shared.history.lock().unwrap_or_else(|e| e.into_inner());
        h.page(&group, now, after_msg, after_rec)
    };
    let page = HistoryPage {
        phases: w
            .shared
            .phases
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .of(&group),
        ..page
    };
    (
        [(header::CONTENT_TYPE, "application/json")],
        serde_json::to_string(&page).unwrap_or_default(),
    )
        .into_response()
}

#[derive(serde::Deserialize)]
struct TraceQuery {
    max_records: Option<usize>,
}

/// `GET /api/groups/{id}/trace[?max_records=N]`: the group's records with their append times,
/// read from the log (`groupcoord log export`'s JSON; at most
/// [`TRACE_MAX_RECORDS`](crate::server::storage::log_tool::TRACE_MAX_RECORDS), older ones
/// compacted). 404 when the log holds no record of the group.
async fn trace(
    AxState(w): AxState<Web>,
    axum::extract::Path(id): axum::extract::Path<String>,
    Query(q): Query<TraceQuery>,
) -> Response {
    use crate::server::storage::log_tool::{TRACE_MAX_RECORDS, trace};
    if id.is_empty() || id.len() > 249 {
        return (
            StatusCode::BAD_REQUEST,
            "a group id of 1 to 249 bytes is required",
        )
            .into_response();
    }
    let max = q
        .max_records
        .unwrap_or(TRACE_MAX_RECORDS)
        .clamp(2, TRACE_MAX_RECORDS);
    let dir = w.data_dir.clone();
    let read = tokio::task::spawn_blocking(move || {
        trace(&dir, &id, max).and_then(|t| serde_json::to_string(&t).map_err(|e| e.to_string()))
    })
    .await;
    match read {
        Ok(Ok(json)) => ([(header::CONTENT_TYPE, "application/json")], json).into_response(),
        Ok(Err(e)) if e.starts_with("no records") => (StatusCode::NOT_FOUND, e).into_response(),
        // A snapshot can replace segments while they are read: asking again reads the new files.
        Ok(Err(e)) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("cannot read the log: {e}"),
        )
            .into_response(),
        Err(_) => (StatusCode::INTERNAL_SERVER_ERROR, "the log reader failed").into_response(),
    }
}

async fn metrics(AxState(w): AxState<Web>) -> Response {
    let snap = w.shared.fresh_live().await.unwrap_or_default();
    let groups: Vec<GroupCount> = snap
        .groups
        .iter()
        .map(|g| GroupCount {
            group_type: g.group_type.clone(),
            state: g.group_state.clone(),
            members: g.member_count,
        })
        .collect();
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        w.shared.metrics.render(&groups),
    )
        .into_response()
}

fn content_type(p: &Path) -> &'static str {
    match p.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" => "application/json",
        "wasm" => "application/wasm",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "txt" | "md" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

async fn static_file(AxState(w): AxState<Web>, uri: Uri) -> Response {
    let rel = uri.path().trim_start_matches('/');
    let rel = if rel.is_empty() || rel.ends_with('/') {
        format!("{rel}index.html")
    } else {
        rel.to_string()
    };
    let rel_path = Path::new(&rel);
    if rel_path
        .components()
        .any(|c| !matches!(c, Component::Normal(_)))
    {
        return (StatusCode::BAD_REQUEST, "bad path").into_response();
    }
    let path = w.www.join(rel_path);
    match tokio::fs::read(&path).await {
        Ok(bytes) => ([(header::CONTENT_TYPE, content_type(&path))], bytes).into_response(),
        Err(_) => (StatusCode::NOT_FOUND, "not found").into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_header_is_checked_against_dns_rebinding() {
        for ok in [
            "localhost",
            "localhost:8080",
            "127.0.0.1:8080",
            "[::1]:8080",
            "10.1.2.3",
            "app.localhost",
        ] {
            assert_eq!(
                access("/api/groups", Some(ok), true, None, None),
                Ok(()),
                "{ok}"
            );
        }
        for bad in [
            "evil.example",
            "evil.example:8080",
            "localhost.evil.example",
            "",
        ] {
            assert_eq!(
                access("/api/groups", Some(bad), true, None, None),
                Err(Refused::Host),
                "{bad}"
            );
        }
        assert_eq!(access("/", None, true, None, None), Err(Refused::Host));
    }

    #[test]
    fn token_is_required_beyond_loopback() {
        let t = Some("0123456789abcdef");
        assert_eq!(
            access("/api/groups", Some("10.0.0.1"), false, None, t),
            Err(Refused::Token)
        );
        assert_eq!(
            access(
                "/api/groups",
                Some("10.0.0.1"),
                false,
                Some("0123456789abcdeX"),
                t
            ),
            Err(Refused::Token)
        );
        assert_eq!(
            access(
                "/api/groups",
                Some("10.0.0.1"),
                false,
                Some("0123456789abcdef"),
                t
            ),
            Ok(())
        );
        // No token configured: loopback only.
        assert_eq!(
            access("/", Some("10.0.0.1"), false, Some("x"), None),
            Err(Refused::Token)
        );
        // With the token, a DNS name is fine (a rebinding page cannot know it).
        assert_eq!(
            access(
                "/",
                Some("groupcoord.example"),
                false,
                Some("0123456789abcdef"),
                t
            ),
            Ok(())
        );
        assert_eq!(
            access("/", Some("groupcoord.example"), true, None, t),
            Err(Refused::Host)
        );
        // Health checks need no token.
        assert_eq!(access("/healthz", Some("10.0.0.1"), false, None, t), Ok(()));
        assert_eq!(access("/readyz", Some("10.0.0.1"), false, None, t), Ok(()));
    }
}
