//! Data-driven scenarios: a small text format of steps and expectations, run against the pure
//! coordinator. The format is documented in `tests/scenarios/README.md`. (The explorer's presets
//! are simulations, `sim::presets`, not scenario files.)
//!
//! A file is a list of lines; `#` starts a comment (the first comment line is the title). Each
//! line is a command followed by words: bare flags and `key=value` pairs; `"..."` quotes a value
//! with spaces. Unknown commands and unknown fields are errors, so a typo never passes silently.
//! After the last line the runner rebuilds the coordinator by replaying every record written and
//! checks that it equals the live one.

mod parse;
mod run;

pub use parse::ScenarioError;
pub use run::run_scenario;

/// The title of a scenario: its first comment line.
pub fn title(text: &str) -> Option<&str> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix('#'))
        .map(str::trim)
}
