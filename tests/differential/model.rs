//! The recording: one JSON line per sequence, each step a request and Apache Kafka's answer.

use groupcoord::protocol::{
    StreamsGroupDescribeRequest, StreamsGroupDescribeResponse, StreamsGroupHeartbeatRequest,
    StreamsGroupHeartbeatResponse,
};
use serde::{Deserialize, Serialize};

// A few thousand values in a test: boxing the large variants would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Request {
    Heartbeat {
        version: i16,
        body: StreamsGroupHeartbeatRequest,
    },
    Describe {
        version: i16,
        body: StreamsGroupDescribeRequest,
    },
}

#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Response {
    Heartbeat(StreamsGroupHeartbeatResponse),
    Describe(StreamsGroupDescribeResponse),
    /// The request got no decodable answer (connection closed, decode error).
    Failed(String),
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Step {
    /// What the generator meant the request to be ("join member-3-0", "future epoch (...)").
    pub note: String,
    pub request: Request,
    pub response: Response,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Sequence {
    pub seq: u32,
    pub group_id: String,
    pub steps: Vec<Step>,
}
