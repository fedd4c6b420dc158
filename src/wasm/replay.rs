//! `WasmRecordReplay`: a real server's records (a trace from `groupcoord log export` or
//! `GET /api/groups/{id}/trace`) replayed into a coordinator, so that the explorer shows the
//! recorded history of a group with the same time travel as a simulated run.
//!
//! The records arrive in Kafka's coordinator record layout (key and value hex) and go through
//! the hardened record codec, then `Coordinator::replay`, exactly as the server's start-up
//! replays its log. Kept apart from the simulation bindings, and free of serde beyond the
//! output and the topic map.

use wasm_bindgen::prelude::*;

use super::to_js;
use crate::config::CoordinatorConfig;
use crate::coordinator::Coordinator;
use crate::records::{Record, codec};
use crate::topology::MetadataImage;
use crate::util::map::BTreeMap;

/// Records a trace may hold (the exporters cap theirs below this).
const MAX_RECORDS: usize = 200_000;

/// The records of one group, replayed up to a chosen count.
#[wasm_bindgen]
pub struct WasmRecordReplay {
    group_id: String,
    topics: BTreeMap<String, i32>,
    records: Vec<Record>,
    coord: Coordinator,
    applied: usize,
}

/// Hex digits to bytes; `None` for an odd count or a character that is not a hex digit.
fn unhex(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    if b.len() % 2 != 0 {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    b.chunks(2)
        .map(|p| Some(digit(p[0])? << 4 | digit(p[1])?))
        .collect()
}

#[wasm_bindgen]
impl WasmRecordReplay {
    /// Decodes the records of `group_id`: `records` holds one record a line, `KEY:VALUE` in hex
    /// (an empty value is a tombstone); `topics` is `name=partitions` pairs separated by commas.
    /// Fails naming the first record that does not decode.
    #[wasm_bindgen(constructor)]
    pub fn new(group_id: String, topics: &str, records: &str) -> Result<WasmRecordReplay, JsError> {
        let mut topic_map = BTreeMap::new();
        for t in topics.split(',').filter(|t| !t.is_empty()) {
            let p = t
                .split_once('=')
                .and_then(|(n, p)| Some((n, p.parse::<i32>().ok()?)));
            let (name, partitions) = p.ok_or_else(|| JsError::new("topics: name=partitions"))?;
            topic_map.insert(name.to_string(), partitions);
        }
        let mut decoded = Vec::new();
        for (i, line) in records.lines().enumerate() {
            if i >= MAX_RECORDS {
                return Err(JsError::new("too many records"));
            }
            let bytes = line.split_once(':').and_then(|(k, v)| {
                let value = if v.is_empty() { None } else { Some(unhex(v)?) };
                Some((unhex(k)?, value))
            });
            let r = bytes
                .ok_or_else(|| "not KEY:VALUE hex bytes".to_string())
                .and_then(|(key, value)| {
                    codec::decode_record(&key, value.as_deref()).map_err(|e| e.to_string())
                })
                .map_err(|e| JsError::new(&format!("record {i}: {e}")))?;
            if r.group_id() != group_id {
                return Err(JsError::new(&format!("record {i}: another group's")));
            }
            decoded.push(r);
        }
        let mut replay = WasmRecordReplay {
            group_id,
            topics: topic_map,
            records: decoded,
            coord: Coordinator::new(CoordinatorConfig::default()),
            applied: 0,
        };
        replay.reset();
        Ok(replay)
    }

    fn reset(&mut self) {
        self.coord = Coordinator::new(CoordinatorConfig::default());
        self.coord.set_metadata(MetadataImage {
            topics: self.topics.clone(),
        });
        self.applied = 0;
    }

    /// The state after the first `n` records (forward from where it is, back by replaying from
    /// the start). Fails naming a record the coordinator refuses.
    #[wasm_bindgen(js_name = seekTo)]
    pub fn seek_to(&mut self, n: usize) -> Result<(), JsError> {
        let n = n.min(self.records.len());
        if n < self.applied {
            self.reset();
        }
        while self.applied < n {
            let r = &self.records[self.applied];
            self.coord.replay(r).map_err(|e| {
                JsError::new(&format!(
                    "record {} ({}) does not replay: {e:?}",
                    self.applied,
                    r.summary()
                ))
            })?;
            self.applied += 1;
        }
        Ok(())
    }

    /// The group as the explorer shows it (`GroupView`: a streams, KIP-848 consumer or classic
    /// group), or `null` before its first record.
    #[wasm_bindgen(unchecked_return_type = "GroupView | null")]
    pub fn view(&self) -> Result<JsValue, JsError> {
        let (coord, id) = (&self.coord, self.group_id.as_str());
        let view = crate::sim::coordinator_group_view(coord, id)
            .or_else(|| crate::sim::consumer_group_view(coord, id))
            .or_else(|| crate::sim::classic_group_view(coord, id));
        to_js(&view)
    }
}
