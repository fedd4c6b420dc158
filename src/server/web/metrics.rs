//! Prometheus metrics (text exposition format 0.0.4).

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Flush latency buckets, seconds.
const BUCKETS: &[f64] = &[
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0,
];

#[derive(Default)]
pub struct Metrics {
    pub heartbeats: AtomicU64,
    pub requests: AtomicU64,
    pub rebalances: AtomicU64,
    pub log_bytes: AtomicU64,
    pub log_batches: AtomicU64,
    pub connections: AtomicU64,
    pub connections_total: AtomicU64,
    pub closed_bad_frames: AtomicU64,
    /// Connections refused by `max.connections` or `max.connections.per.ip`.
    pub connections_refused: AtomicU64,
    /// Request bytes held by connections (received, not yet answered).
    pub request_bytes: AtomicU64,
    /// Groups described for the live view (only when watched, only the changed ones).
    pub live_groups_described: AtomicU64,
    flush_buckets: [AtomicU64; 12],
    flush_count: AtomicU64,
    flush_sum_ns: AtomicU64,
}

/// One group as counted by /metrics.
pub struct GroupCount {
    pub group_type: String,
    pub state: String,
    pub members: usize,
}

impl Metrics {
    pub fn observe_flush(&self, secs: f64) {
        for (i, b) in BUCKETS.iter().enumerate() {
            if secs <= *b {
                self.flush_buckets[i].fetch_add(1, Relaxed);
            }
        }
        self.flush_count.fetch_add(1, Relaxed);
        self.flush_sum_ns.fetch_add((secs * 1e9) as u64, Relaxed);
    }

    pub fn render(&self, groups: &[GroupCount]) -> String {
        let mut o = String::new();
        let counter = |o: &mut String, name: &str, help: &str, v: u64| {
            let _ = writeln!(o, "# HELP {name} {help}\n# TYPE {name} counter\n{name} {v}");
        };
        let gauge = |o: &mut String, name: &str, help: &str, v: u64| {
            let _ = writeln!(o, "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {v}");
        };
        counter(
            &mut o,
            "groupcoord_heartbeats_total",
            "StreamsGroupHeartbeat requests handled.",
            self.heartbeats.load(Relaxed),
        );
        counter(
            &mut o,
            "groupcoord_requests_total",
            "Requests handled by the coordinator task.",
            self.requests.load(Relaxed),
        );
        counter(
            &mut o,
            "groupcoord_rebalances_total",
            "Group epoch bumps (StreamsGroupMetadata records written).",
            self.rebalances.load(Relaxed),
        );
        gauge(
            &mut o,
            "groupcoord_log_bytes",
            "Bytes in the live log files (snapshot + segments).",
            self.log_bytes.load(Relaxed),
        );
        counter(
            &mut o,
            "groupcoord_log_batches_total",
            "Batches appended to the log.",
            self.log_batches.load(Relaxed),
        );
        gauge(
            &mut o,
            "groupcoord_connections",
            "Open client connections.",
            self.connections.load(Relaxed),
        );
        counter(
            &mut o,
            "groupcoord_connections_total",
            "Accepted client connections.",
            self.connections_total.load(Relaxed),
        );
        counter(
            &mut o,
            "groupcoord_connections_closed_bad_frame_total",
            "Connections closed because of an invalid frame.",
            self.closed_bad_frames.load(Relaxed),
        );
        counter(
            &mut o,
            "groupcoord_connections_refused_total",
            "Connections closed at accept by max.connections or max.connections.per.ip.",
            self.connections_refused.load(Relaxed),
        );
        gauge(
            &mut o,
            "groupcoord_request_bytes",
            "Request bytes held by connections (queued.max.request.bytes bounds them).",
            self.request_bytes.load(Relaxed),
        );
        counter(
            &mut o,
            "groupcoord_live_groups_described_total",
            "Groups described for the live view (only while watched, only changed groups).",
            self.live_groups_described.load(Relaxed),
        );
        let _ = writeln!(
            o,
            "# HELP groupcoord_log_flush_seconds fsync latency of a group commit.\n# TYPE groupcoord_log_flush_seconds histogram"
        );
        for (i, b) in BUCKETS.iter().enumerate() {
            let _ = writeln!(
                o,
                "groupcoord_log_flush_seconds_bucket{{le=\"{b}\"}} {}",
                self.flush_buckets[i].load(Relaxed)
            );
        }
        let n = self.flush_count.load(Relaxed);
        let _ = writeln!(o, "groupcoord_log_flush_seconds_bucket{{le=\"+Inf\"}} {n}");
        let _ = writeln!(
            o,
            "groupcoord_log_flush_seconds_sum {}",
            self.flush_sum_ns.load(Relaxed) as f64 / 1e9
        );
        let _ = writeln!(o, "groupcoord_log_flush_seconds_count {n}");
        let mut by: std::collections::BTreeMap<(String, String), (u64, u64)> = Default::default();
        for g in groups {
            let e = by
                .entry((g.group_type.clone(), g.state.clone()))
                .or_default();
            e.0 += 1;
            e.1 += g.members as u64;
        }
        let _ = writeln!(
            o,
            "# HELP groupcoord_groups Groups by type and state.\n# TYPE groupcoord_groups gauge"
        );
        for ((t, s), (c, _)) in &by {
            let _ = writeln!(o, "groupcoord_groups{{type=\"{t}\",state=\"{s}\"}} {c}");
        }
        let _ = writeln!(
            o,
            "# HELP groupcoord_members Members by group type and state.\n# TYPE groupcoord_members gauge"
        );
        for ((t, s), (_, m)) in &by {
            let _ = writeln!(o, "groupcoord_members{{type=\"{t}\",state=\"{s}\"}} {m}");
        }
        o
    }
}
