//! Runs every `tests/scenarios/*.txt` file as its own named test (see README.md there).

// Native only (files, libtest-mimic). wasm-pack builds every test target for wasm32, and this
// one has its own `main` (harness = false), so the wasm build gets an empty one.
#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
use std::path::Path;

#[cfg(not(target_arch = "wasm32"))]
use libtest_mimic::{Arguments, Failed, Trial};

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    let args = Arguments::from_args();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/scenarios exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "no scenario files found in {}",
        dir.display()
    );
    let trials = files
        .into_iter()
        .map(|path| {
            let name = path
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            Trial::test(name, move || {
                let text =
                    std::fs::read_to_string(&path).map_err(|e| Failed::from(e.to_string()))?;
                groupcoord::scenario::run_scenario(&text)
                    .map(|_| ())
                    .map_err(|e| Failed::from(format!("{}: {e}", path.display())))
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
