//! The web side: static files from `www/`, the live view (`/api/groups`, `/api/events` SSE) and
//! `/metrics`.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State as AxState;
use axum::http::{StatusCode, Uri, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures::Stream;
use futures::StreamExt;
use tokio::sync::watch;
use tokio_stream::wrappers::WatchStream;

use super::metrics::GroupCount;
use crate::server::Shared;

#[derive(Clone)]
struct Web {
    shared: Arc<Shared>,
    www: PathBuf,
}

/// Bind and serve in the background; returns the bound address.
pub async fn start(
    addr: SocketAddr,
    shared: Arc<Shared>,
    www: PathBuf,
    mut shutdown: watch::Receiver<bool>,
) -> std::io::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let app = Router::new()
        .route("/api/groups", get(groups))
        .route("/api/events", get(events))
        .route("/metrics", get(metrics))
        .fallback(get(static_file))
        .with_state(Web { shared, www });
    tokio::spawn(async move {
        let r = axum::serve(listener, app)
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

async fn groups(AxState(w): AxState<Web>) -> Response {
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
    let rx = w.shared.live.subscribe();
    let _ = w.shared.fresh_live().await;
    let stream = WatchStream::new(rx).map(|snap| {
        Ok(Event::default()
            .event("groups")
            .data(serde_json::to_string(&*snap).unwrap_or_default()))
    });
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}

async fn metrics(AxState(w): AxState<Web>) -> Response {
    let snap = w.shared.fresh_live().await.unwrap_or_default();
    let groups: Vec<GroupCount> = snap
        .groups
        .iter()
        .map(|g| GroupCount {
            group_type: g.group_type.clone(),
            state: g.group_state.clone(),
            members: g.describe.members.len(),
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
