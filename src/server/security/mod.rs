//! Authentication (issue 16): TLS for SSL and SASL_SSL listeners (`tls`), the SASL exchange
//! of SASL_PLAINTEXT and SASL_SSL listeners (`sasl`: PLAIN and SCRAM), SCRAM credentials and
//! their primitives ([`scram`]), the SCRAM admin requests (`admin`) and throwaway test
//! certificates ([`certs`]). What a connection authenticates as ends up in its
//! [`Peer`](super::peer::Peer)'s principal; authorization reads it from there.

pub(crate) mod admin;
pub mod certs;
pub(crate) mod sasl;
pub mod scram;
pub(crate) mod tls;

/// Kafka's error codes of the authentication requests (kept here, not in `crate::error`, so
/// the authorization work can extend that table without conflicts).
pub(crate) mod codes {
    use crate::error::ErrorCode;
    pub const UNSUPPORTED_SASL_MECHANISM: ErrorCode = ErrorCode(33);
    pub const ILLEGAL_SASL_STATE: ErrorCode = ErrorCode(34);
    pub const SASL_AUTHENTICATION_FAILED: ErrorCode = ErrorCode(58);
    pub const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(91);
    pub const DUPLICATE_RESOURCE: ErrorCode = ErrorCode(92);
    pub const UNACCEPTABLE_CREDENTIAL: ErrorCode = ErrorCode(93);
}
