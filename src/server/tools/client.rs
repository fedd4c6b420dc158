//! A minimal Kafka wire client: for the tests, the load benchmark and tools.

use std::net::SocketAddr;

use bytes::Bytes;
use kafka_protocol::protocol::{Decodable, Request};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::protocol::{
    STREAMS_GROUP_DESCRIBE_KEY, STREAMS_GROUP_HEARTBEAT_KEY, StreamsGroupDescribeRequest,
    StreamsGroupDescribeResponse, StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse,
};

use crate::server::codec88;
use crate::server::wire;

pub use crate::server::wire::split_response;

/// Client errors are strings: this is a test and tooling client.
pub type Result<T> = std::result::Result<T, String>;

/// A connection to a Kafka broker (or groupcoord), one request at a time or pipelined.
pub struct Client {
    stream: TcpStream,
    next_corr: i32,
    /// The client id sent in request headers.
    pub client_id: Option<String>,
}

/// Build a request frame (length prefix included) from raw body bytes.
pub fn raw_frame(
    key: i16,
    version: i16,
    corr: i32,
    client_id: Option<&str>,
    body: &[u8],
) -> Result<Vec<u8>> {
    let header = wire::encode_request_header(&wire::Header {
        api_key: key,
        api_version: version,
        correlation_id: corr,
        client_id: client_id.map(str::to_owned),
    })?;
    let len = u32::try_from(header.len() + body.len())
        .map_err(|_| format!("request of {} bytes is too large", body.len()))?;
    let mut f = Vec::with_capacity(4 + header.len() + body.len());
    f.extend_from_slice(&len.to_be_bytes());
    f.extend_from_slice(&header);
    f.extend_from_slice(body);
    Ok(f)
}

impl Client {
    /// Connects to `addr`.
    pub async fn connect(addr: SocketAddr) -> Result<Client> {
        let stream = TcpStream::connect(addr)
            .await
            .map_err(|e| format!("connect {addr}: {e}"))?;
        stream.set_nodelay(true).ok();
        Ok(Client {
            stream,
            next_corr: 1,
            client_id: Some("groupcoord-test".into()),
        })
    }

    /// A fresh correlation id for a request sent by hand.
    pub fn next_correlation(&mut self) -> i32 {
        let c = self.next_corr;
        self.next_corr = self.next_corr.wrapping_add(1);
        c
    }

    /// Writes raw bytes (a frame built with [`raw_frame`], or garbage on purpose).
    pub async fn write_raw(&mut self, bytes: &[u8]) -> Result<()> {
        self.stream
            .write_all(bytes)
            .await
            .map_err(|e| e.to_string())
    }

    /// Read one response frame (without its length prefix).
    pub async fn read_frame(&mut self) -> Result<Vec<u8>> {
        let mut len = [0u8; 4];
        self.stream
            .read_exact(&mut len)
            .await
            .map_err(|e| format!("read: {e}"))?;
        let n = u32::from_be_bytes(len) as usize;
        let mut buf = vec![0u8; n];
        self.stream
            .read_exact(&mut buf)
            .await
            .map_err(|e| format!("read: {e}"))?;
        Ok(buf)
    }

    /// Send a request of body bytes; returns its correlation id.
    pub async fn send_body(&mut self, key: i16, version: i16, body: &[u8]) -> Result<i32> {
        let corr = self.next_correlation();
        let f = raw_frame(key, version, corr, self.client_id.as_deref(), body)?;
        self.write_raw(&f).await?;
        Ok(corr)
    }

    /// Read a response to (key, version) and check its correlation id; returns the body.
    pub async fn read_body(&mut self, key: i16, version: i16, corr: i32) -> Result<Vec<u8>> {
        let f = self.read_frame().await?;
        let (c, body) = wire::split_response(key, version, &f)?;
        if c != corr {
            return Err(format!("correlation id {c}, expected {corr}"));
        }
        Ok(body.to_vec())
    }

    /// A kafka-protocol request/response round trip.
    pub async fn call<R: Request>(&mut self, version: i16, req: &R) -> Result<R::Response> {
        let mut body = bytes::BytesMut::new();
        req.encode(&mut body, version)
            .map_err(|e| format!("{e:#}"))?;
        let corr = self.send_body(R::KEY, version, &body).await?;
        let resp = self.read_body(R::KEY, version, corr).await?;
        let mut b = Bytes::from(resp);
        R::Response::decode(&mut b, version).map_err(|e| format!("{e:#}"))
    }

    /// StreamsGroupHeartbeat at `version`: sends and waits for the answer.
    pub async fn heartbeat(
        &mut self,
        version: i16,
        req: &StreamsGroupHeartbeatRequest,
    ) -> Result<StreamsGroupHeartbeatResponse> {
        let corr = self
            .send_body(
                STREAMS_GROUP_HEARTBEAT_KEY,
                version,
                &codec88::encode_heartbeat_request(req, version)?,
            )
            .await?;
        let body = self
            .read_body(STREAMS_GROUP_HEARTBEAT_KEY, version, corr)
            .await?;
        codec88::decode_heartbeat_response(&body, version)
    }

    /// StreamsGroupDescribe at `version`: sends and waits for the answer.
    pub async fn describe(
        &mut self,
        version: i16,
        req: &StreamsGroupDescribeRequest,
    ) -> Result<StreamsGroupDescribeResponse> {
        let corr = self
            .send_body(
                STREAMS_GROUP_DESCRIBE_KEY,
                version,
                &codec88::encode_describe_request(req, version)?,
            )
            .await?;
        let body = self
            .read_body(STREAMS_GROUP_DESCRIBE_KEY, version, corr)
            .await?;
        codec88::decode_describe_response(&body, version)
    }

    /// Split for pipelined use.
    pub fn into_split(
        self,
    ) -> (
        tokio::net::tcp::OwnedReadHalf,
        tokio::net::tcp::OwnedWriteHalf,
    ) {
        self.stream.into_split()
    }
}

/// Encoded body of a heartbeat request (for pipelined senders).
pub fn heartbeat_body(req: &StreamsGroupHeartbeatRequest, version: i16) -> Result<Vec<u8>> {
    codec88::encode_heartbeat_request(req, version)
}

/// Decodes a StreamsGroupHeartbeat response body.
pub fn decode_heartbeat(body: &[u8], version: i16) -> Result<StreamsGroupHeartbeatResponse> {
    codec88::decode_heartbeat_response(body, version)
}
