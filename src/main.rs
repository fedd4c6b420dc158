//! The `groupcoord` binary: `serve` (Kafka wire protocol server with a durable log and a web
//! view), `scenario` (run scenario files), `simulate` (seeded simulation runs), and `bench load` /
//! `bench assignor` (benchmarks).

//!
//! The binary is native-only; on wasm32 it is an empty `main` so that `cargo test --target
//! wasm32-unknown-unknown` (which builds every target) still compiles.

#[cfg(target_arch = "wasm32")]
fn main() {}

/// mimalloc: requests are decoded on connection tasks and freed on the owner thread (and
/// responses the other way round); glibc's arena locks serialised those frees under load.
#[cfg(not(target_arch = "wasm32"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    native::main()
}

#[cfg(not(target_arch = "wasm32"))]
mod native {

    use std::collections::BTreeMap;
    use std::io::Write;
    use std::net::SocketAddr;
    use std::path::PathBuf;
    use std::process::ExitCode;

    use clap::{Args, Parser, Subcommand};
    use groupcoord::config_keys;
    use groupcoord::server::{self, ServeOptions};
    use tracing_subscriber::EnvFilter;

    #[derive(Parser)]
    #[command(
        name = "groupcoord",
        version,
        about = "Apache Kafka 4.4's group coordinator: streams (KIP-1071), classic and KIP-848 consumer groups"
    )]
    struct Cli {
        #[command(subcommand)]
        cmd: Cmd,
    }

    #[derive(Subcommand)]
    enum Cmd {
        /// Serve the Kafka wire protocol (single broker, node 0) with a durable log.
        ///
        /// Group coordinator state (groups, members, assignments, committed offsets, topics) is
        /// durable: fsynced before it is acknowledged. The small data plane for Kafka Streams
        /// (Produce/Fetch) is IN MEMORY ONLY: produced records are lost on restart (offsets then
        /// restart above the highest committed offset, so no consumer skips records silently),
        /// acks=all means "in this server's memory", and it holds at most
        /// groupcoord.max.data.plane.mb (default 256).
        Serve(ServeArgs),
        /// Benchmarks.
        Bench {
            #[command(subcommand)]
            which: BenchCmd,
        },
        /// Inspect or repair the durable log of a stopped server (the way out when start-up
        /// refuses a log).
        Log {
            #[command(subcommand)]
            which: LogCmd,
        },
        /// Prepare a data directory before the first start, as Kafka's `kafka-storage format`:
        /// `storage format --data-dir DIR --add-scram 'SCRAM-SHA-512=[name=admin,password=admin-secret]'`.
        Storage {
            #[command(subcommand)]
            which: StorageCmd,
        },
        /// Developer helpers.
        Dev {
            #[command(subcommand)]
            which: DevCmd,
        },
        /// Run scenario files (tests/scenarios/*.txt format) against the pure coordinator.
        Scenario {
            /// Scenario files.
            #[arg(required = true)]
            files: Vec<PathBuf>,
        },
        /// Run seeded random simulations (members, faults, invariants, liveness); prints a command
        /// reproducing the first failing seed.
        Simulate {
            /// Number of seeds.
            #[arg(long, default_value_t = 1000)]
            seeds: u64,
            /// First seed.
            #[arg(long, default_value_t = 0)]
            start: u64,
        },
    }

    #[derive(Subcommand)]
    enum StorageCmd {
        /// Write SCRAM credentials into a new data directory (refused if it already holds a
        /// log: add users to a running server with AlterUserScramCredentials, e.g.
        /// `kafka-configs --alter --entity-type users --add-config 'SCRAM-SHA-512=[password=...]'`).
        Format {
            #[arg(long)]
            data_dir: Option<PathBuf>,
            /// Kafka-style properties file; its `log.dirs` is the data directory when
            /// --data-dir is not given.
            #[arg(long = "config", value_name = "FILE")]
            config: Option<PathBuf>,
            /// `MECHANISM=[name=USER,password=PASSWORD(,iterations=N)]` (repeatable), as
            /// kafka-storage format's --add-scram.
            #[arg(long = "add-scram", value_name = "CREDENTIAL")]
            add_scram: Vec<String>,
            /// Owner threads the server will run (wins over the config's
            /// `group.coordinator.threads`; default 1): the directory is made for that count.
            #[arg(long)]
            owners: Option<usize>,
        },
    }

    #[derive(Subcommand)]
    enum DevCmd {
        /// Generate throwaway TLS certificates (a CA, a server certificate for localhost /
        /// 127.0.0.1 and a client certificate CN=client,OU=test,O=groupcoord) into DIR.
        Certs {
            #[arg(long)]
            out: PathBuf,
            /// An extra host name for the server certificate.
            #[arg(long, default_value = "localhost")]
            host: String,
        },
    }

    #[derive(Subcommand)]
    enum LogCmd {
        /// List the commit mark, every snapshot and segment, and every batch (offset, size, what
        /// it holds, whether its checksum is valid).
        Inspect {
            #[arg(long, default_value = "./data")]
            data_dir: PathBuf,
            /// Every record, not only the first few of each batch.
            #[arg(long)]
            verbose: bool,
        },
        /// Write one group's records with their append times as a trace (JSON, the explorer's
        /// "Load trace" format) to stdout.
        Export {
            #[arg(long, default_value = "./data")]
            data_dir: PathBuf,
            /// The group id.
            #[arg(long)]
            group: String,
            /// At most this many records; older ones are replaced by the compacted state they
            /// left.
            #[arg(long, default_value_t = server::storage::log_tool::TRACE_MAX_RECORDS)]
            max_records: usize,
        },
        /// Drop the batch starting at OFFSET and everything after it (newer segments too), and
        /// move the commit mark there. This loses those changes: use it on the batch start-up
        /// named when it refused the log.
        TruncateAfter {
            /// A batch offset, as printed by `inspect` or by the start-up error.
            offset: u64,
            #[arg(long, default_value = "./data")]
            data_dir: PathBuf,
            /// The segment number (default: the newest segment).
            #[arg(long)]
            segment: Option<u64>,
        },
    }

    #[derive(Subcommand)]
    enum BenchCmd {
        /// Heartbeat load over TCP, compared with an ApiVersions-only baseline.
        Load(server::tools::bench::LoadArgs),
        /// Adversarial run against a running server (mutated frames, idle connections, poison
        /// requests, huge claimed bodies) with a well-behaved client throughout: crashes, RSS
        /// before/peak/after (--pid), the good client's p99.
        Hostile(server::tools::bench_hostile::HostileArgs),
        /// Restart time: builds a log of a realistic record mix, then times start-ups of
        /// `groupcoord serve` on it to the first answered request, and their peak RSS.
        Replay(server::tools::bench_replay::ReplayArgs),
        /// The sticky assignor on generated groups: time, balance, movement, rack diversity.
        /// `--members M --tasks T [--standbys S] [--racks R] [--seed N] [--warmups N] [--no-scale]
        /// [--write-input FILE.json] [--input FILE.json]`
        Assignor {
            #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
            args: Vec<String>,
        },
    }

    #[derive(Args)]
    struct ServeArgs {
        /// One PLAINTEXT listener on HOST:PORT (host names allowed). Without it the listeners
        /// come from the config's `listeners`, else 127.0.0.1:9092.
        #[arg(long)]
        listen: Option<String>,
        /// Directory of the durable log (default: the config's `log.dirs`, else ./data).
        #[arg(long)]
        data_dir: Option<PathBuf>,
        /// Create a topic at start-up if missing: NAME:PARTITIONS (repeatable).
        #[arg(long = "topic", value_name = "NAME:PARTITIONS")]
        topics: Vec<String>,
        /// Kafka-style properties file with broker config keys.
        #[arg(long = "config", value_name = "FILE")]
        config: Option<PathBuf>,
        /// Override a config key: key=value (repeatable; wins over --config).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Serve the web view (www/, /api/groups, /api/events, /api/history, /metrics, /healthz,
        /// /readyz) on this address (default 127.0.0.1:8080 when given without one). Beyond
        /// loopback it needs --http-token.
        #[arg(long, num_args = 0..=1, default_missing_value = "127.0.0.1:8080")]
        http: Option<SocketAddr>,
        /// Bearer token the web view requires from clients beyond loopback (also
        /// `groupcoord.http.token`).
        #[arg(long)]
        http_token: Option<String>,
        /// Directory served by --http.
        #[arg(long, default_value = "www")]
        www: PathBuf,
        /// Run the embedded demo (topic demo-input, a group of 3 simulated members).
        #[arg(long)]
        demo: bool,
        /// Write a compacted snapshot after this many log bytes.
        #[arg(long, default_value_t = 64 * 1024 * 1024)]
        snapshot_bytes: u64,
        /// Owner threads the groups are sharded over (wins over `group.coordinator.threads`;
        /// default 1). A data directory keeps the count it was created with (see
        /// `--migrate-owners`).
        #[arg(long)]
        owners: Option<usize>,
        /// Start even when the data directory was written with another owner count: move its
        /// groups to this count first (docs/sharding.md, "Changing the owner count"; also
        /// `groupcoord.migrate.owners=true`).
        #[arg(long)]
        migrate_owners: bool,
        /// Threads an owner-count migration reads old shards with (default: one per core; 1 is
        /// the sequential migration). For benchmarks.
        #[arg(long, hide = true)]
        migrate_threads: Option<usize>,
    }

    fn config_error(msg: impl std::fmt::Display) -> ExitCode {
        eprintln!("groupcoord: {msg}");
        ExitCode::from(2)
    }

    /// The properties file plus `--set`, validated: every bad key is reported at once.
    fn read_config(
        config: Option<&PathBuf>,
        set: &[String],
    ) -> Result<config_keys::ParsedConfig, String> {
        let mut entries = BTreeMap::new();
        if let Some(path) = config {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            entries = config_keys::parse_properties(&text)
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        for s in set {
            let (k, v) = config_keys::parse_assignment(s).map_err(|e| format!("--set {e}"))?;
            entries.insert(k, v);
        }
        let parsed = config_keys::build_all(&entries).map_err(|errors| {
            let lines: Vec<String> = errors.iter().map(|e| format!("  {e}")).collect();
            format!(
                "{} configuration error{}:\n{}",
                errors.len(),
                if errors.len() == 1 { "" } else { "s" },
                lines.join("\n")
            )
        })?;
        if !parsed.listeners.ignored.is_empty() {
            tracing::warn!(
                "Kafka keys that do not apply to groupcoord (ignored): {}",
                parsed.listeners.ignored.join(", ")
            );
        }
        Ok(parsed)
    }

    /// `host:port` with a host name allowed (IPv4 preferred, as clients on 127.0.0.1 expect).
    fn resolve_listen(s: &str) -> Result<SocketAddr, String> {
        use std::net::ToSocketAddrs;
        let addrs: Vec<SocketAddr> = s
            .to_socket_addrs()
            .map_err(|e| format!("--listen `{s}`: {e} (expected HOST:PORT)"))?
            .collect();
        addrs
            .iter()
            .find(|a| a.is_ipv4())
            .or(addrs.first())
            .copied()
            .ok_or_else(|| format!("--listen `{s}`: resolves to no address"))
    }

    fn build_options(a: &ServeArgs) -> Result<ServeOptions, String> {
        let parsed = read_config(a.config.as_ref(), &a.set)?;
        let mut topics = Vec::new();
        for t in &a.topics {
            let (name, parts) = t
                .rsplit_once(':')
                .ok_or_else(|| format!("--topic `{t}`: expected NAME:PARTITIONS"))?;
            let parts: i32 = parts
                .parse()
                .map_err(|_| format!("--topic `{t}`: bad partition count"))?;
            if parts < 1 || !groupcoord::topic::is_valid_name(name) {
                return Err(format!(
                    "--topic `{t}`: invalid topic name or partition count"
                ));
            }
            topics.push((name.to_string(), parts));
        }
        let data_dir = a
            .data_dir
            .clone()
            .or_else(|| parsed.listeners.data_dir.as_ref().map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from("./data"));
        let listen = match &a.listen {
            Some(l) => resolve_listen(l)?,
            None => "127.0.0.1:9092".parse().expect("valid address"),
        };
        let mut o = ServeOptions::new(listen, data_dir);
        if a.listen.is_none() {
            o.listeners = parsed.listeners.listeners.clone();
        } else if !parsed.listeners.listeners.is_empty() {
            tracing::warn!("--listen given: the config's `listeners` are not used");
        }
        o.http_token = a.http_token.clone().or(parsed.listeners.http_token.clone());
        o.topics = topics;
        o.coordinator = parsed.coordinator;
        o.server = parsed.server;
        o.http = a.http;
        o.www_dir = a.www.clone();
        o.demo = a.demo;
        o.snapshot_bytes = a.snapshot_bytes.max(1);
        o.owners = a.owners.unwrap_or(o.server.coordinator_threads);
        o.migrate_owners = a.migrate_owners || o.server.migrate_owners;
        o.migrate_threads = a.migrate_threads;
        let max = groupcoord::config_keys::MAX_COORDINATOR_THREADS as usize;
        if o.owners == 0 || o.owners > max {
            return Err(format!("--owners {}: must be 1 to {max}", o.owners));
        }
        Ok(o)
    }

    /// Resolves on SIGINT or SIGTERM. The handlers are installed when this is called (before the
    /// server announces itself), not when the future is first polled.
    fn shutdown_signal() -> impl std::future::Future<Output = ()> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
            let mut int = signal(SignalKind::interrupt()).expect("SIGINT handler");
            async move {
                tokio::select! {
                    _ = int.recv() => {}
                    _ = term.recv() => {}
                }
            }
        }
        #[cfg(not(unix))]
        {
            async {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }

    /// `groupcoord scenario FILE...`: one line per file, exit 1 if any fails.
    fn run_scenarios(files: &[PathBuf]) -> ExitCode {
        let (mut passed, mut failed) = (0, 0);
        for f in files {
            let result = std::fs::read_to_string(f)
                .map_err(|e| format!("cannot read: {e}"))
                .and_then(|text| {
                    groupcoord::scenario::run_scenario(&text).map_err(|e| e.to_string())
                });
            match result {
                Ok(checks) => {
                    passed += 1;
                    println!("ok    {} ({checks} checks)", f.display());
                }
                Err(e) => {
                    failed += 1;
                    println!("FAIL  {}: {e}", f.display());
                }
            }
        }
        println!("{passed} passed, {failed} failed");
        if failed == 0 {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        }
    }

    pub(crate) fn main() -> ExitCode {
        tracing_subscriber::fmt()
            .with_env_filter(
                EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
            )
            .with_writer(std::io::stderr)
            .init();
        let cli = Cli::parse();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .expect("tokio runtime");
        match cli.cmd {
            Cmd::Serve(a) => {
                let opts = match build_options(&a) {
                    Ok(o) => o,
                    Err(e) => return config_error(e),
                };
                let data_dir = opts.data_dir.clone();
                rt.block_on(async move {
                    let signal = shutdown_signal();
                    let mut handle = match server::start(opts).await {
                        Ok(h) => {
                            // Machine-readable start line (tests and scripts read the bound port).
                            println!("groupcoord listening on {}", h.addr);
                            // Best effort: a caller may stop reading after the first line.
                            let mut out = std::io::stdout();
                            for (name, protocol, addr) in &h.listeners {
                                let _ =
                                    writeln!(out, "groupcoord listener {name} {protocol} {addr}");
                            }
                            let _ = out.flush();
                            if let Some(a) = h.http_addr {
                                println!("groupcoord http on http://{a}/");
                            }
                            h
                        }
                        Err(e) => {
                            eprintln!("groupcoord: cannot start: {e}");
                            if matches!(
                                e,
                                server::StartError::Load(
                                    server::storage::log::LoadError::Corrupt { .. }
                                        | server::storage::log::LoadError::Replay { .. }
                                )
                            ) {
                                eprintln!(
                                    "groupcoord: the files were left as they are. Inspect them \
                                     with `groupcoord log inspect --data-dir {dir}`; \
                                     `groupcoord log truncate-after OFFSET --data-dir {dir} \
                                     [--segment N]` drops the named batch and everything after \
                                     it (those changes are lost).",
                                    dir = data_dir.display()
                                );
                            }
                            return ExitCode::from(1);
                        }
                    };
                    tokio::select! {
                        _ = signal => {
                            tracing::info!("shutdown signal received; flushing the log");
                            handle.shutdown().await;
                            ExitCode::SUCCESS
                        }
                        r = handle.wait() => {
                            // Only a failure stops the server by itself (a dead owner thread, a
                            // failed append or fsync): say why and exit non-zero.
                            if let Err(e) = r {
                                eprintln!("groupcoord: {e}");
                            }
                            ExitCode::from(1)
                        }
                    }
                })
            }
            Cmd::Bench {
                which: BenchCmd::Load(a),
            } => rt.block_on(server::tools::bench::run_load(a)),
            Cmd::Bench {
                which: BenchCmd::Hostile(a),
            } => rt.block_on(server::tools::bench_hostile::run(a)),
            Cmd::Bench {
                which: BenchCmd::Replay(a),
            } => rt.block_on(server::tools::bench_replay::run(a)),
            Cmd::Bench {
                which: BenchCmd::Assignor { args },
            } => match groupcoord::assignor::bench::bench_assignor_cli(&args) {
                Ok(report) => {
                    println!("{report}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("groupcoord bench assignor: {e}");
                    ExitCode::from(2)
                }
            },
            Cmd::Log {
                which: LogCmd::Inspect { data_dir, verbose },
            } => match server::storage::log_tool::inspect(&data_dir, verbose) {
                Ok(report) => {
                    print!("{report}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("groupcoord log inspect: {e}");
                    ExitCode::from(1)
                }
            },
            Cmd::Log {
                which:
                    LogCmd::Export {
                        data_dir,
                        group,
                        max_records,
                    },
            } => match server::storage::log_tool::export(&data_dir, &group, max_records) {
                Ok(json) => {
                    println!("{json}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("groupcoord log export: {e}");
                    ExitCode::from(1)
                }
            },
            Cmd::Log {
                which:
                    LogCmd::TruncateAfter {
                        offset,
                        data_dir,
                        segment,
                    },
            } => match server::storage::log_tool::truncate_after(&data_dir, offset, segment) {
                Ok(msg) => {
                    println!("{msg}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("groupcoord log truncate-after: {e}");
                    ExitCode::from(1)
                }
            },
            Cmd::Storage {
                which:
                    StorageCmd::Format {
                        data_dir,
                        config,
                        add_scram,
                        owners,
                    },
            } => {
                let (dir, owners) = match read_config(config.as_ref(), &[]) {
                    Ok(p) => (
                        data_dir
                            .or_else(|| p.listeners.data_dir.map(PathBuf::from))
                            .unwrap_or_else(|| PathBuf::from("./data")),
                        owners.unwrap_or(p.server.coordinator_threads),
                    ),
                    Err(e) => return config_error(e),
                };
                match server::storage::format::format(&dir, owners, &add_scram) {
                    Ok(msg) => {
                        println!("{msg}");
                        ExitCode::SUCCESS
                    }
                    Err(e) => {
                        eprintln!("groupcoord storage format: {e}");
                        ExitCode::from(1)
                    }
                }
            }
            Cmd::Dev {
                which: DevCmd::Certs { out, host },
            } => match server::security::certs::write(&out, &host) {
                Ok(files) => {
                    for f in files {
                        println!("{f}");
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("groupcoord dev certs: {e}");
                    ExitCode::from(1)
                }
            },
            Cmd::Scenario { files } => run_scenarios(&files),
            Cmd::Simulate { seeds, start } => {
                let t0 = std::time::Instant::now();
                let mut done = 0u64;
                let result = groupcoord::sim::run_seeds_with(start, seeds, |r| {
                    done += 1;
                    if done.is_multiple_of(100) {
                        eprintln!(
                            "{done} seeds ok (last {}: converged {} ms after faults)",
                            r.seed, r.converged_after_ms
                        );
                    }
                });
                match result {
                    Ok(()) => {
                        println!(
                            "simulate: {seeds} seeds from {start} passed in {:.1} s",
                            t0.elapsed().as_secs_f64()
                        );
                        ExitCode::SUCCESS
                    }
                    Err(f) => {
                        eprintln!("simulate: {f}");
                        ExitCode::from(1)
                    }
                }
            }
        }
    }
}
