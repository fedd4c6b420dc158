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
        about = "Kafka 4.4 streams group coordinator (KIP-1071)"
    )]
    struct Cli {
        #[command(subcommand)]
        cmd: Cmd,
    }

    #[derive(Subcommand)]
    enum Cmd {
        /// Serve the Kafka wire protocol (single broker, node 0) with a durable log.
        Serve(ServeArgs),
        /// Benchmarks.
        Bench {
            #[command(subcommand)]
            which: BenchCmd,
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
    enum BenchCmd {
        /// Heartbeat load over TCP, compared with an ApiVersions-only baseline.
        Load(server::tools::bench::LoadArgs),
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
        /// Kafka listener address.
        #[arg(long, default_value = "127.0.0.1:9092")]
        listen: SocketAddr,
        /// Directory of the durable log.
        #[arg(long, default_value = "./data")]
        data_dir: PathBuf,
        /// Create a topic at start-up if missing: NAME:PARTITIONS (repeatable).
        #[arg(long = "topic", value_name = "NAME:PARTITIONS")]
        topics: Vec<String>,
        /// Kafka-style properties file with broker config keys.
        #[arg(long = "config", value_name = "FILE")]
        config: Option<PathBuf>,
        /// Override a config key: key=value (repeatable; wins over --config).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Serve the web view (www/, /api/groups, /api/events, /metrics) on this address.
        #[arg(long)]
        http: Option<SocketAddr>,
        /// Directory served by --http.
        #[arg(long, default_value = "www")]
        www: PathBuf,
        /// Run the embedded demo (topic demo-input, a group of 3 simulated members).
        #[arg(long)]
        demo: bool,
        /// Write a compacted snapshot after this many log bytes.
        #[arg(long, default_value_t = 64 * 1024 * 1024)]
        snapshot_bytes: u64,
    }

    fn config_error(msg: impl std::fmt::Display) -> ExitCode {
        eprintln!("groupcoord: {msg}");
        ExitCode::from(2)
    }

    fn build_options(a: &ServeArgs) -> Result<ServeOptions, String> {
        let mut entries = BTreeMap::new();
        if let Some(path) = &a.config {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            entries = config_keys::parse_properties(&text)
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        for s in &a.set {
            let (k, v) = config_keys::parse_assignment(s).map_err(|e| format!("--set {e}"))?;
            entries.insert(k, v);
        }
        let parsed = config_keys::build(&entries).map_err(|e| e.to_string())?;
        let mut topics = Vec::new();
        for t in &a.topics {
            let (name, parts) = t
                .rsplit_once(':')
                .ok_or_else(|| format!("--topic `{t}`: expected NAME:PARTITIONS"))?;
            let parts: i32 = parts
                .parse()
                .map_err(|_| format!("--topic `{t}`: bad partition count"))?;
            if parts < 1 || !server::kafka::valid_topic_name(name) {
                return Err(format!(
                    "--topic `{t}`: invalid topic name or partition count"
                ));
            }
            topics.push((name.to_string(), parts));
        }
        let mut o = ServeOptions::new(a.listen, a.data_dir.clone());
        o.topics = topics;
        o.coordinator = parsed.coordinator;
        o.server = parsed.server;
        o.http = a.http;
        o.www_dir = a.www.clone();
        o.demo = a.demo;
        o.snapshot_bytes = a.snapshot_bytes.max(1);
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
                rt.block_on(async move {
                    let signal = shutdown_signal();
                    let mut handle = match server::start(opts).await {
                        Ok(h) => {
                            // Machine-readable start line (tests and scripts read the bound port).
                            println!("groupcoord listening on {}", h.addr);
                            if let Some(a) = h.http_addr {
                                println!("groupcoord http on http://{a}/");
                            }
                            h
                        }
                        Err(e) => {
                            eprintln!("groupcoord: cannot start: {e}");
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
