//! Criterion benches of the `sticky` assignor on the steady-state groups of
//! `groupcoord::assignor::bench` (members owning their previous assignment and reporting offsets):
//! 100 members x 1,000 tasks and 1,000 members x 10,000 tasks, 1 standby, 3 racks. Dropping the
//! returned assignment is not timed (`iter_with_large_drop`), as in the report.
//!
//! `cargo bench --bench assignor` runs criterion. With report options instead
//! (`cargo bench --bench assignor -- --members 1000 --tasks 10000 --standbys 1 [--racks 3]`) it
//! prints the same report as `groupcoord bench assignor`.

use criterion::{Criterion, black_box};
use groupcoord::assignor::KafkaStickyAssignor;
use groupcoord::assignor::bench::{BenchInput, bench_assignor_cli};
use groupcoord::assignor::{GroupAssignment, GroupSpec, TaskAssignor, TopologySpec};

/// The default `sticky` assignor (Kafka 4.4's algorithm).
fn assign_sticky(group: &GroupSpec, topology: &TopologySpec) -> GroupAssignment {
    KafkaStickyAssignor
        .assign(group, topology)
        .expect("groups with members")
}

fn steady(c: &mut Criterion, members: usize, tasks: usize, standbys: i32) {
    let input = BenchInput::generate(members, tasks, standbys, 3, 42);
    let topo = input.topology();
    let scratch = input.scratch_group();
    let group = input.owning(&scratch, &assign_sticky(&scratch, &topo));
    c.bench_function(
        &format!("sticky steady {members}x{tasks}x{standbys}"),
        |b| b.iter_with_large_drop(|| assign_sticky(black_box(&group), black_box(&topo))),
    );
    c.bench_function(
        &format!("sticky scratch {members}x{tasks}x{standbys}"),
        |b| b.iter_with_large_drop(|| assign_sticky(black_box(&scratch), black_box(&topo))),
    );
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if args
        .iter()
        .any(|a| a.starts_with("--members") || a.starts_with("--input"))
    {
        match bench_assignor_cli(&args) {
            Ok(report) => println!("{report}"),
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(2);
            }
        }
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    steady(&mut c, 100, 1_000, 1);
    steady(&mut c, 1_000, 10_000, 1);
    c.final_summary();
}
