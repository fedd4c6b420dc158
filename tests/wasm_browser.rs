//! Browser tests of the wasm API (`groupcoord::wasm::WasmSimulation`) in headless Chromium.
//! Run: `pkg-scripts/test-wasm.sh` (or `cargo test --target wasm32-unknown-unknown --test
//! wasm_browser` with `wasm-bindgen-test-runner` and chromedriver on PATH).
#![cfg(target_arch = "wasm32")]

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

use groupcoord::wasm::WasmSimulation;
use js_sys::{Array, JSON, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::*;

fn get(v: &JsValue, k: &str) -> JsValue {
    Reflect::get(v, &JsValue::from_str(k)).expect("property")
}

fn js(json: &str) -> JsValue {
    JSON::parse(json).expect("test JSON")
}

fn preset_names() -> Vec<String> {
    let p = WasmSimulation::presets().unwrap_or_else(|_| panic!("presets"));
    Array::from(&p)
        .iter()
        .map(|x| get(&x, "name").as_string().unwrap())
        .collect()
}

fn first_member(sim: &WasmSimulation) -> String {
    let snap = sim.snapshot().unwrap_or_else(|_| panic!("snapshot"));
    let members = Array::from(&get(&get(&snap, "group"), "members"));
    get(&members.get(0), "member_id")
        .as_string()
        .expect("member id")
}

/// The message of the JS `Error` an API call failed with (and that it *is* an `Error`).
fn js_error_message<T>(r: Result<T, wasm_bindgen::JsError>) -> String {
    let Err(e) = r else {
        panic!("expected an error")
    };
    let v: JsValue = e.into();
    let err: js_sys::Error = v.dyn_into().expect("a JS Error object");
    err.message().into()
}

#[wasm_bindgen_test]
fn presets_are_listed_with_specs() {
    let p = WasmSimulation::presets().unwrap_or_else(|_| panic!("presets"));
    let arr = Array::from(&p);
    assert!(arr.length() >= 1);
    for x in arr.iter() {
        assert!(get(&x, "name").is_string());
        assert!(get(&x, "description").is_string());
        assert!(get(&get(&x, "spec"), "group_id").is_string());
        assert!(Array::is_array(&get(&x, "actions")));
    }
}

#[wasm_bindgen_test]
fn preset_runs_and_reaches_stable_with_invariants_holding() {
    let name = preset_names().remove(0);
    let mut sim = WasmSimulation::from_preset(&name).unwrap_or_else(|_| panic!("preset"));
    let mut events = 0;
    for _ in 0..120 {
        let ev = sim.step(1000.0).unwrap_or_else(|_| panic!("step"));
        events += Array::from(&ev).length();
    }
    assert!(events > 0, "a minute of simulated time produced events");
    assert_eq!(sim.now(), 120_000.0);
    let snap = sim.snapshot().unwrap_or_else(|_| panic!("snapshot"));
    let g = get(&snap, "group");
    assert_eq!(get(&g, "state").as_string().unwrap(), "Stable");
    assert!(get(&g, "group_epoch").as_f64().unwrap() >= 1.0);
    for inv in Array::from(&sim.invariants().unwrap_or_else(|_| panic!("inv"))).iter() {
        assert!(
            get(&inv, "ok").as_bool().unwrap(),
            "invariant {:?}",
            get(&inv, "name")
        );
    }
    let msgs = Array::from(&sim.message_log(None).unwrap_or_else(|_| panic!("log")));
    assert!(msgs.length() > 0);
    let m0 = msgs.get(0);
    // Hex of the wire bytes (the body as encoded by the codec).
    let hex = get(&m0, "request_hex").as_string().unwrap();
    assert!(
        !hex.is_empty() && hex.len().is_multiple_of(2),
        "request_hex {hex:?}"
    );
    assert!(get(&m0, "request").is_object());
    let last_seq = get(&msgs.get(msgs.length() - 1), "seq").as_f64().unwrap();
    let tail = Array::from(
        &sim.message_log(Some(last_seq))
            .unwrap_or_else(|_| panic!("log")),
    );
    assert_eq!(
        tail.length(),
        1,
        "messageLog(since) returns entries with seq >= since"
    );
    assert!(Array::from(&sim.record_log(None).unwrap_or_else(|_| panic!("rec"))).length() > 0);
    let f = sim
        .frame(500.0, last_seq, 0.0)
        .unwrap_or_else(|_| panic!("frame"));
    assert!(get(&f, "snapshot").is_object() && Array::is_array(&get(&f, "events")));
}

#[wasm_bindgen_test]
fn every_action_variant_is_accepted() {
    let name = preset_names().remove(0);
    let mut sim = WasmSimulation::from_preset(&name).unwrap_or_else(|_| panic!("preset"));
    sim.step(20_000.0).unwrap_or_else(|_| panic!("step"));
    let spec = sim.spec().unwrap_or_else(|_| panic!("spec"));
    let topics = js_sys::Object::keys(&get(&spec, "topics").into());
    let topic = topics.get(0).as_string().unwrap();
    // `add_partitions` takes the new total count.
    let partitions = get(&get(&spec, "topics"), &topic).as_f64().unwrap() as i32;
    let process = get(&Array::from(&get(&spec, "processes")).get(0), "process_id")
        .as_string()
        .unwrap();
    let apply = |sim: &mut WasmSimulation, i: usize, a: &str| {
        // Objects and JSON strings are both accepted.
        let arg = if i.is_multiple_of(2) {
            js(a)
        } else {
            JsValue::from_str(a)
        };
        if let Err(e) = sim.apply(arg) {
            let v: JsValue = e.into();
            panic!(
                "{a} rejected: {:?}",
                v.dyn_into::<js_sys::Error>().map(|e| e.message())
            );
        }
        sim.step(3000.0)
            .unwrap_or_else(|_| panic!("step after {a}"));
    };
    apply(
        &mut sim,
        0,
        &format!(r#"{{"action":"add_member","process_id":"{process}"}}"#),
    );
    apply(
        &mut sim,
        1,
        r#"{"action":"add_process","process":{"process_id":"px","threads":2}}"#,
    );
    apply(
        &mut sim,
        2,
        r#"{"action":"add_process","process":{"process_id":"ps","threads":1,"static_members":true}}"#,
    );
    sim.step(10_000.0).unwrap_or_else(|_| panic!("step"));
    // Member ids change (a topology bump restarts every member), so pick a running member of the
    // static process `ps` or of the others right before each member action.
    let running = |sim: &WasmSimulation, static_: bool| -> String {
        let snap = sim.snapshot().unwrap_or_else(|_| panic!("snapshot"));
        Array::from(&get(&get(&snap, "group"), "members"))
            .iter()
            .filter(|m| get(m, "client_status").as_string().as_deref() == Some("alive"))
            .filter(|m| (get(m, "process_id").as_string().unwrap() == "ps") == static_)
            .map(|m| get(&m, "member_id").as_string().unwrap())
            .next()
            .unwrap_or_else(|| panic!("no running member (static: {static_})"))
    };
    type Make<'a> = Box<dyn Fn(&WasmSimulation) -> String + 'a>;
    let member_action = |kind: &'static str, static_: bool, extra: &'static str| -> Make {
        Box::new(move |sim| {
            format!(
                r#"{{"action":"{kind}","member":"{}"{extra}}}"#,
                running(sim, static_)
            )
        })
    };
    let fixed = |a: String| -> Make { Box::new(move |_| a.clone()) };
    let actions: Vec<Make> = vec![
        member_action("cut_network", false, ""),
        Box::new(|sim| {
            // Heal the member that was cut (the only partitioned one).
            let snap = sim.snapshot().unwrap_or_else(|_| panic!("snapshot"));
            let m = Array::from(&get(&get(&snap, "group"), "members"))
                .iter()
                .find(|m| get(m, "client_status").as_string().as_deref() == Some("partitioned"))
                .expect("a partitioned member");
            format!(
                r#"{{"action":"heal_network","member":"{}"}}"#,
                get(&m, "member_id").as_string().unwrap()
            )
        }),
        fixed(r#"{"action":"restart_coordinator"}"#.to_string()),
        fixed(r#"{"action":"bump_topology_epoch"}"#.to_string()),
        fixed(format!(
            r#"{{"action":"add_partitions","topic":"{topic}","partitions":{}}}"#,
            partitions + 2
        )),
        fixed(r#"{"action":"create_topic","topic":"brand-new","partitions":3}"#.to_string()),
        fixed(r#"{"action":"set_standby_replicas","replicas":1}"#.to_string()),
        fixed(r#"{"action":"set_assignor","name":"sticky"}"#.to_string()),
        member_action("static_bounce", true, r#","down_ms":5000"#),
        member_action("crash_member", false, ""),
        Box::new(|sim| {
            // A new incarnation of the crashed member.
            let snap = sim.snapshot().unwrap_or_else(|_| panic!("snapshot"));
            let m = Array::from(&get(&get(&snap, "group"), "members"))
                .iter()
                .find(|m| get(m, "client_status").as_string().as_deref() == Some("crashed"))
                .expect("a crashed member");
            format!(
                r#"{{"action":"restart_member","member":"{}"}}"#,
                get(&m, "member_id").as_string().unwrap()
            )
        }),
        member_action("leave_member", false, ""),
        member_action("request_shutdown", false, ""),
    ];
    for (i, make) in actions.iter().enumerate() {
        let a = make(&sim);
        apply(&mut sim, i, &a);
    }
    let actions_len = actions.len() + 3;
    let applied = Array::from(&sim.actions().unwrap_or_else(|_| panic!("actions")));
    assert!(applied.length() >= actions_len as u32);
    assert!(get(&applied.get(0), "at_ms").as_f64().is_some());
}

#[wasm_bindgen_test]
fn replay_to_reproduces_the_state_hash() {
    let name = preset_names().remove(0);
    let mut sim = WasmSimulation::from_preset(&name).unwrap_or_else(|_| panic!("preset"));
    sim.step(15_000.0).unwrap_or_else(|_| panic!("step"));
    let m = first_member(&sim);
    sim.apply(js(&format!(
        r#"{{"action":"crash_member","member":"{m}"}}"#
    )))
    .unwrap_or_else(|_| panic!("crash"));
    sim.step(70_000.0).unwrap_or_else(|_| panic!("step"));
    let hash = sim.state_hash();
    let spec = sim.spec().unwrap_or_else(|_| panic!("spec"));
    let actions = sim.actions().unwrap_or_else(|_| panic!("actions"));
    let again = WasmSimulation::replay_to(spec.clone(), actions.clone(), sim.now())
        .unwrap_or_else(|_| panic!("replay"));
    assert_eq!(again.state_hash(), hash);
    assert_eq!(again.now(), sim.now());
    // A different time gives a different state.
    let earlier =
        WasmSimulation::replay_to(spec, actions, 10_000.0).unwrap_or_else(|_| panic!("replay"));
    assert_ne!(earlier.state_hash(), hash);
}

#[wasm_bindgen_test]
fn bad_input_is_a_js_error_not_a_panic() {
    assert!(js_error_message(WasmSimulation::new(JsValue::from_str("{not json"))).contains("JSON"));
    assert!(js_error_message(WasmSimulation::new(js(r#"{"name":"x"}"#))).contains("scenario spec"));
    assert!(js_error_message(WasmSimulation::new(JsValue::UNDEFINED)).contains("missing"));
    assert!(
        js_error_message(WasmSimulation::from_preset("no-such-preset")).contains("no-such-preset")
    );
    let name = preset_names().remove(0);
    let mut sim = WasmSimulation::from_preset(&name).unwrap_or_else(|_| panic!("preset"));
    assert!(js_error_message(sim.apply(js(r#"{"action":"fly_to_moon"}"#))).contains("action"));
    assert!(js_error_message(sim.apply(js(r#"{"action":"crash_member"}"#))).contains("member"));
    let _ = sim.apply(js(r#"{"action":"crash_member","member":"nobody"}"#)); // Ok or Err, no panic
    assert!(js_error_message(sim.step(f64::NAN)).contains("step"));
    assert!(js_error_message(sim.step(-5.0)).contains("step"));
    assert!(
        js_error_message(WasmSimulation::replay_to(JsValue::NULL, js("[]"), 0.0)).contains("spec")
    );
    // Still usable after the errors.
    sim.step(1000.0).unwrap_or_else(|_| panic!("step"));
    assert_eq!(sim.now(), 1000.0);
}
