//! JavaScript bindings of the simulation (compiled only for wasm32).
//!
//! [`WasmSimulation`] wraps one simulation. Every method returns plain JS data (objects, arrays,
//! numbers, strings; maps become objects, `None` becomes `null`; both directions go through JSON,
//! so inputs may be objects or JSON strings), and
//! every failure is a JS `Error` with a message: bad JSON, an unknown preset, an action the
//! simulation rejects. No JS callback ever runs while Rust mutates the simulation: `step` and
//! `apply` return the events that happened as data.
//!
//! `frame()` batches what the explorer needs per animation frame into one call.
//!
//! The JSON shapes are typed for TypeScript in `types.d.ts` (copied into the generated
//! `groupcoord.d.ts`); each method names its shapes with `unchecked_*_type`.

use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::sim::{ScenarioSpec, Simulation, TimedAction, input, presets};
use crate::util::json::JsonError;
use crate::util::sort;

mod allocator;
mod replay;

#[global_allocator]
static ALLOCATOR: allocator::SizeClassAlloc = allocator::SizeClassAlloc::new();

/// Outputs go through JSON: record values have integer map keys (partition -> epoch), which JSON
/// turns into object keys, and one `JSON.parse` is faster than building the objects field by field.
fn to_js<T: Serialize + ?Sized>(v: &T) -> Result<JsValue, JsError> {
    let s = serde_json::to_string(v)
        .map_err(|e| JsError::new(&format!("cannot convert to JSON: {e}")))?;
    js_sys::JSON::parse(&s).map_err(|_| JsError::new("cannot parse the JSON output"))
}

/// Accepts a JS object or a JSON string, read by `read` (the hand-written readers of
/// `sim::input`: serde's derived deserializers were a large part of the module).
fn from_js<T>(
    v: JsValue,
    what: &str,
    read: fn(&str) -> Result<T, JsonError>,
) -> Result<T, JsError> {
    if let Some(s) = v.as_string() {
        return read(&s).map_err(|e| JsError::new(&format!("invalid {what} JSON: {e}")));
    }
    if v.is_undefined() || v.is_null() {
        return Err(JsError::new(&format!("missing {what}")));
    }
    // Objects go through JSON.stringify and the same reader: one reader for both input forms.
    let s: String = js_sys::JSON::stringify(&v)
        .map_err(|_| JsError::new(&format!("invalid {what}: not serializable to JSON")))?
        .into();
    read(&s).map_err(|e| JsError::new(&format!("invalid {what}: {e}")))
}

/// A duration or time from JS. The message formats the number in JS: Rust's float formatting
/// would add its own code to the module for this one message.
fn ms(v: f64, what: &str) -> Result<i64, JsError> {
    if !v.is_finite() || !(0.0..=9.0e15).contains(&v) {
        let shown: String = js_sys::Number::from(v)
            .to_string_with_radix(10)
            .map(String::from)
            .unwrap_or_default();
        return Err(JsError::new(&format!(
            "{what} must be a finite number of ms >= 0, got {shown}"
        )));
    }
    Ok(v as i64)
}

fn seq(v: Option<f64>) -> u64 {
    v.filter(|x| x.is_finite() && *x > 0.0)
        .map(|x| x as u64)
        .unwrap_or(0)
}

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = include_str!("types.d.ts");

/// Installs the panic hook (a panic shows its message in the console); cheap after the first call.
fn hook() {
    console_error_panic_hook::set_once();
}

/// The simulation as seen from JavaScript.
///
/// A run made by `fromPreset` also carries the preset's later actions: `step` applies each at its
/// time. (`replayTo` applies the actions up to `t`; the explorer schedules later ones itself.)
#[wasm_bindgen]
pub struct WasmSimulation {
    spec: ScenarioSpec,
    sim: Simulation,
    /// Actions still to apply, in time order.
    scheduled: std::collections::VecDeque<TimedAction>,
}

#[derive(Serialize)]
struct PresetInfo<'a> {
    name: &'a str,
    description: &'a str,
    spec: &'a ScenarioSpec,
    actions: &'a [TimedAction],
}

#[derive(Serialize)]
struct Frame<'a> {
    events: Vec<crate::sim::SimEvent>,
    snapshot: crate::sim::SimSnapshot,
    messages: &'a [crate::sim::MessageLogEntry],
    records: &'a [crate::sim::RecordLogEntry],
    invariants: Vec<crate::sim::InvariantResult>,
}

#[wasm_bindgen]
impl WasmSimulation {
    /// A new simulation from a `ScenarioSpec` (object or JSON string).
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "ScenarioSpec | string")] spec: JsValue,
    ) -> Result<WasmSimulation, JsError> {
        hook();
        let spec = from_js(spec, "scenario spec", input::scenario_spec)?;
        Self::build(spec)
    }

    fn build(spec: ScenarioSpec) -> Result<WasmSimulation, JsError> {
        let sim = Simulation::new(spec.clone())
            .map_err(|e| JsError::new(&format!("cannot create simulation: {e}")))?;
        Ok(WasmSimulation {
            spec,
            sim,
            scheduled: Default::default(),
        })
    }

    /// A new simulation from a preset's spec and (timed) actions, replayed to time 0.
    #[wasm_bindgen(js_name = fromPreset)]
    pub fn from_preset(name: &str) -> Result<WasmSimulation, JsError> {
        hook();
        let (spec, actions) = presets()
            .into_iter()
            .find(|(s, _)| s.name == name)
            .ok_or_else(|| JsError::new(&format!("unknown preset {name:?}")))?;
        let sim = Simulation::replay_to(spec.clone(), &actions, 0)
            .map_err(|e| JsError::new(&format!("preset {name}: {e}")))?;
        let mut scheduled: Vec<TimedAction> = actions.into_iter().filter(|a| a.at_ms > 0).collect();
        sort::by_key(&mut scheduled, |a| a.at_ms);
        Ok(WasmSimulation {
            spec,
            sim,
            scheduled: scheduled.into(),
        })
    }

    /// `[{name, description, spec, actions}]` of every preset.
    #[wasm_bindgen(unchecked_return_type = "PresetInfo[]")]
    pub fn presets() -> Result<JsValue, JsError> {
        hook();
        let p = presets();
        let v: Vec<PresetInfo> = p
            .iter()
            .map(|(s, a)| PresetInfo {
                name: &s.name,
                description: &s.description,
                spec: s,
                actions: a,
            })
            .collect();
        to_js(&v)
    }

    /// Re-creates the run of `spec` with `actions` (each applied at its `at_ms`) up to time `t`.
    #[wasm_bindgen(js_name = replayTo)]
    pub fn replay_to(
        #[wasm_bindgen(unchecked_param_type = "ScenarioSpec | string")] spec: JsValue,
        #[wasm_bindgen(unchecked_param_type = "TimedAction[] | string")] actions: JsValue,
        t: f64,
    ) -> Result<WasmSimulation, JsError> {
        hook();
        let spec = from_js(spec, "scenario spec", input::scenario_spec)?;
        let actions = from_js(actions, "actions", input::timed_actions)?;
        let t = ms(t, "t")?;
        let mut sim = Simulation::replay_to(spec.clone(), &actions, t)
            .map_err(|e| JsError::new(&format!("replay failed: {e}")))?;
        // The replay skips replay-equals-live (it would check every step); check the end state
        // once, so that time travel to a state after a broken restart shows it red.
        sim.check_replay();
        Ok(WasmSimulation {
            spec,
            sim,
            scheduled: Default::default(),
        })
    }

    /// Advances the clock by `ms` and returns the events (`SimEvent[]`).
    #[wasm_bindgen(unchecked_return_type = "SimEvent[]")]
    pub fn step(&mut self, ms_: f64) -> Result<JsValue, JsError> {
        let d = ms(ms_, "step")?;
        let ev = self.advance(d)?;
        to_js(&ev)
    }

    /// Steps `d` ms, applying the scheduled actions that fall inside at their times.
    fn advance(&mut self, d: i64) -> Result<Vec<crate::sim::SimEvent>, JsError> {
        let end = self.sim.now() + d;
        let mut ev = Vec::new();
        while self.scheduled.front().is_some_and(|a| a.at_ms <= end) {
            let a = self.scheduled.pop_front().expect("front checked");
            let now = self.sim.now();
            if a.at_ms > now {
                ev.extend(self.sim.step(a.at_ms - now));
            }
            let r = self.sim.apply(a.action.clone());
            ev.extend(r.map_err(|e| {
                JsError::new(&format!("scheduled action at {} ms rejected: {e}", a.at_ms))
            })?);
        }
        let now = self.sim.now();
        if end > now {
            ev.extend(self.sim.step(end - now));
        }
        Ok(ev)
    }

    /// Applies an `Action` (`{action: "crash_member", member: "..."}`, object or JSON) now.
    #[wasm_bindgen(unchecked_return_type = "SimEvent[]")]
    pub fn apply(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "Action | string")] action: JsValue,
    ) -> Result<JsValue, JsError> {
        let a = from_js(action, "action", input::action)?;
        let ev = self
            .sim
            .apply(a)
            .map_err(|e| JsError::new(&format!("action rejected: {e}")))?;
        to_js(&ev)
    }

    /// Current time (ms).
    pub fn now(&self) -> f64 {
        self.sim.now() as f64
    }

    /// Time (ms) of the next event or timer the simulation will process, or `undefined` when
    /// nothing is scheduled (the explorer's single step goes from one such time to the next).
    #[wasm_bindgen(js_name = nextEventTime)]
    pub fn next_event_time(&self) -> Option<f64> {
        self.sim.next_event_ms().map(|t| t as f64)
    }

    /// The spec this run started from.
    #[wasm_bindgen(unchecked_return_type = "ScenarioSpec")]
    pub fn spec(&self) -> Result<JsValue, JsError> {
        to_js(&self.spec)
    }

    /// `SimSnapshot`.
    #[wasm_bindgen(unchecked_return_type = "SimSnapshot")]
    pub fn snapshot(&self) -> Result<JsValue, JsError> {
        to_js(&self.sim.snapshot())
    }

    /// Heartbeat exchanges with `seq >= since_seq` (all when omitted).
    #[wasm_bindgen(js_name = messageLog, unchecked_return_type = "MessageLogEntry[]")]
    pub fn message_log(&self, since_seq: Option<f64>) -> Result<JsValue, JsError> {
        let log = self.sim.message_log();
        let s = seq(since_seq);
        to_js(&log[log.partition_point(|e| e.seq < s)..])
    }

    /// Coordinator records with `seq >= since_seq` (all when omitted).
    #[wasm_bindgen(js_name = recordLog, unchecked_return_type = "RecordLogEntry[]")]
    pub fn record_log(&self, since_seq: Option<f64>) -> Result<JsValue, JsError> {
        let log = self.sim.record_log();
        let s = seq(since_seq);
        to_js(&log[log.partition_point(|e| e.seq < s)..])
    }

    /// Classic groups: `OwnershipSample[]` with `at_ms >= since_ms` (all when omitted), one per
    /// change of the number of partitions owned by nobody (the stop-the-world chart). Empty for
    /// streams groups.
    #[wasm_bindgen(js_name = ownershipHistory, unchecked_return_type = "OwnershipSample[]")]
    pub fn ownership_history(&self, since_ms: Option<f64>) -> Result<JsValue, JsError> {
        let h = self.sim.ownership_history();
        let s = seq(since_ms) as i64;
        to_js(&h[h.partition_point(|e| e.at_ms < s)..])
    }

    /// `InvariantResult[]` at the current state.
    #[wasm_bindgen(unchecked_return_type = "InvariantResult[]")]
    pub fn invariants(&self) -> Result<JsValue, JsError> {
        to_js(&self.sim.invariants())
    }

    /// Fingerprint of the current state (same run, same hash).
    #[wasm_bindgen(js_name = stateHash)]
    pub fn state_hash(&self) -> String {
        self.sim.state_hash()
    }

    /// `TimedAction[]` applied so far.
    #[wasm_bindgen(unchecked_return_type = "TimedAction[]")]
    pub fn actions(&self) -> Result<JsValue, JsError> {
        to_js(self.sim.actions())
    }

    /// One call per animation frame: steps `ms` (0 = none) and returns
    /// `{events, snapshot, messages, records, invariants}` with the logs from the given seqs.
    #[wasm_bindgen(unchecked_return_type = "Frame")]
    pub fn frame(&mut self, ms_: f64, msg_since: f64, rec_since: f64) -> Result<JsValue, JsError> {
        let d = ms(ms_, "step")?;
        let events = self.advance(d)?;
        let (ms_log, rec_log) = (self.sim.message_log(), self.sim.record_log());
        let (m, r) = (seq(Some(msg_since)), seq(Some(rec_since)));
        let f = Frame {
            events,
            snapshot: self.sim.snapshot(),
            messages: &ms_log[ms_log.partition_point(|e| e.seq < m)..],
            records: &rec_log[rec_log.partition_point(|e| e.seq < r)..],
            invariants: self.sim.invariants(),
        };
        to_js(&f)
    }
}
