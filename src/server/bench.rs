//! `groupcoord bench load`: heartbeat load over TCP.

use std::net::SocketAddr;
use std::process::ExitCode;

/// Arguments of `groupcoord bench load`.
#[derive(Debug, Clone, clap::Args)]
pub struct LoadArgs {
    #[arg(long, default_value_t = 1000)]
    pub members: usize,
    #[arg(long, default_value_t = 10)]
    pub groups: usize,
    #[arg(long, default_value_t = 10)]
    pub duration: u64,
    #[arg(long)]
    pub addr: Option<SocketAddr>,
}

pub async fn run_load(_a: LoadArgs) -> ExitCode {
    eprintln!("not implemented yet");
    ExitCode::from(1)
}
