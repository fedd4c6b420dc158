//! Who sent a request: the client's address and, once a listener authenticates it, its Kafka
//! principal. One value per connection, handed with every request to
//! [`State::handle`](crate::server::kafka::State::handle), so authentication (which sets the
//! principal) and authorization (which reads it) meet here and nowhere else.

use std::fmt;
use std::sync::Arc;

/// A Kafka principal such as `User:alice`. Connections that are not authenticated (a PLAINTEXT
/// or SSL listener without client certificates) are `User:ANONYMOUS`, as in Kafka.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Principal {
    /// The principal type; Kafka's authenticators only produce `User`.
    pub principal_type: String,
    /// The name, e.g. the SASL user name or the client certificate's distinguished name.
    pub name: String,
}

impl Principal {
    /// `User:<name>`.
    pub fn user(name: &str) -> Principal {
        Principal {
            principal_type: "User".to_string(),
            name: name.to_string(),
        }
    }

    /// `User:ANONYMOUS`, the principal of unauthenticated connections.
    pub fn anonymous() -> Principal {
        Principal::user("ANONYMOUS")
    }
}

impl fmt::Display for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.principal_type, self.name)
    }
}

/// The sender of a request as the request handlers see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Peer {
    /// The client's IP address as text (`127.0.0.1`), without Kafka's leading `/`.
    pub host: Arc<str>,
    /// The authenticated principal, [`Principal::anonymous`] until a listener authenticates.
    pub principal: Principal,
    /// The name of the listener the connection came in on (`PLAINTEXT`, `SASL_SSL`, ...):
    /// Metadata and FindCoordinator answer with that listener's advertised address.
    pub listener: Arc<str>,
}

impl Peer {
    /// An unauthenticated peer at `host`.
    pub fn anonymous(host: &str) -> Peer {
        Peer {
            host: Arc::from(host),
            principal: Principal::anonymous(),
            listener: Arc::from("PLAINTEXT"),
        }
    }

    /// An unauthenticated peer at `host` on listener `listener`.
    pub fn on_listener(host: &str, listener: &str) -> Peer {
        Peer {
            listener: Arc::from(listener),
            ..Peer::anonymous(host)
        }
    }

    /// The same peer, authenticated as `principal`.
    pub fn authenticated(&self, principal: Principal) -> Peer {
        Peer {
            principal,
            ..self.clone()
        }
    }
}
