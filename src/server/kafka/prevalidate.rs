//! Pre-validation of request bodies before `kafka-protocol` decodes them.
//!
//! The crate's array decoders call `Vec::with_capacity(n)` with the element count read from the
//! wire, before any element is read: a 19-byte Metadata request declaring 2^31-1 topics asks for
//! ~100 GB and aborts the process (or fails under `ulimit -v` / strict overcommit). Rather than
//! fork the crate, every body is walked here first against the request's wire layout (Kafka's
//! message schemas, restricted to the keys and versions this server serves): every string, bytes
//! and array length must fit in the bytes that remain, and every element must actually be there.
//! A body that passes holds at least one byte per array element it declares, so the crate's
//! pre-allocations add up to at most the body's length times the largest element size (a few
//! dozen bytes): bounded by the frame, whatever the counts say.
//!
//! Nullability is not checked (a -1 length is accepted everywhere; the crate rejects it where it
//! is not allowed) and neither are values: only sizes. The walk reads exactly as the crate does,
//! or the two would part ways on a crafted body: varints stop after five bytes whatever the
//! fifth says and keep 32 bits, and a tagged field the crate knows (Fetch's cluster id, replica
//! state and replica directory id) is read as its type, not by its declared size.

/// A field's wire type.
#[derive(Debug, Clone, Copy)]
enum T {
    I8,
    I16,
    I32,
    I64,
    Uuid,
    /// string (i16 length, or compact varint length + 1 in flexible versions).
    Str,
    /// bytes / records (i32 length, or compact).
    Bytes,
    /// An array of structs with these fields (each element ends with tagged fields when
    /// flexible).
    Structs(&'static [F]),
    /// An array of a primitive type.
    Prims(&'static T),
    /// One struct (in a tagged field).
    One(&'static [F]),
    /// The tagged fields the crate decodes by type in this struct: (tag, type). Not a wire
    /// field itself; other tags are skipped by their size.
    Tags(&'static [(u32, T)]),
}

/// A field present in versions `lo..=hi`.
#[derive(Debug, Clone, Copy)]
struct F(T, i16, i16);

const ALL: i16 = i16::MAX;

/// A request body layout: first flexible version and the top-level fields.
struct Layout {
    flexible_from: i16,
    fields: &'static [F],
}

use T::*;

use crate::wire::varint;

const PRODUCE: Layout = Layout {
    flexible_from: 9,
    fields: &[
        F(Str, 3, ALL), // transactional id
        F(I16, 0, ALL), // acks
        F(I32, 0, ALL), // timeout
        F(
            Structs(&[
                F(Str, 0, 12),                                           // topic name
                F(Uuid, 13, ALL),                                        // topic id
                F(Structs(&[F(I32, 0, ALL), F(Bytes, 0, ALL)]), 0, ALL), // partitions
            ]),
            0,
            ALL,
        ),
    ],
};

const FETCH: Layout = Layout {
    flexible_from: 12,
    fields: &[
        F(I32, 0, 14),  // replica id
        F(I32, 0, ALL), // max wait
        F(I32, 0, ALL), // min bytes
        F(I32, 3, ALL), // max bytes
        F(I8, 4, ALL),  // isolation level
        F(I32, 7, ALL), // session id
        F(I32, 7, ALL), // session epoch
        F(
            Structs(&[
                F(Str, 0, 12),
                F(Uuid, 13, ALL),
                F(
                    Structs(&[
                        F(I32, 0, ALL),  // partition
                        F(I32, 9, ALL),  // current leader epoch
                        F(I64, 0, ALL),  // fetch offset
                        F(I32, 12, ALL), // last fetched epoch
                        F(I64, 5, ALL),  // log start offset
                        F(I32, 0, ALL),  // partition max bytes
                        F(Tags(&[(0, Uuid), (1, I64)]), 12, ALL),
                    ]),
                    0,
                    ALL,
                ),
            ]),
            0,
            ALL,
        ),
        F(
            Structs(&[F(Str, 7, 12), F(Uuid, 13, ALL), F(Prims(&I32), 7, ALL)]),
            7,
            ALL,
        ), // forgotten topics
        F(Str, 11, ALL), // rack id
        F(
            Tags(&[(0, Str), (1, One(&[F(I32, 15, ALL), F(I64, 15, ALL)]))]),
            12,
            ALL,
        ),
    ],
};

const LIST_OFFSETS: Layout = Layout {
    flexible_from: 6,
    fields: &[
        F(I32, 0, ALL), // replica id
        F(I8, 2, ALL),  // isolation level
        F(
            Structs(&[
                F(Str, 0, ALL),
                F(
                    Structs(&[
                        F(I32, 0, ALL), // partition
                        F(I32, 4, ALL), // current leader epoch
                        F(I64, 0, ALL), // timestamp
                        F(I32, 0, 0),   // max num offsets
                    ]),
                    0,
                    ALL,
                ),
            ]),
            0,
            ALL,
        ),
        F(I32, 10, ALL), // timeout
    ],
};

const METADATA: Layout = Layout {
    flexible_from: 9,
    fields: &[
        F(Structs(&[F(Uuid, 10, ALL), F(Str, 0, ALL)]), 0, ALL),
        F(I8, 4, ALL), // allow auto topic creation
        F(I8, 8, 10),  // include cluster authorized operations
        F(I8, 8, ALL), // include topic authorized operations
    ],
};

const OFFSET_COMMIT: Layout = Layout {
    flexible_from: 8,
    fields: &[
        F(Str, 0, ALL), // group id
        F(I32, 1, ALL), // generation / member epoch
        F(Str, 1, ALL), // member id
        F(Str, 7, ALL), // group instance id
        F(I64, 2, 4),   // retention time
        F(
            Structs(&[
                F(Str, 0, ALL),
                F(
                    Structs(&[
                        F(I32, 0, ALL), // partition
                        F(I64, 0, ALL), // offset
                        F(I32, 6, ALL), // leader epoch
                        F(I64, 1, 1),   // commit timestamp
                        F(Str, 0, ALL), // metadata
                    ]),
                    0,
                    ALL,
                ),
            ]),
            0,
            ALL,
        ),
    ],
};

const TOPIC_PARTITION_INDEXES: &[F] = &[F(Str, 0, ALL), F(Prims(&I32), 0, ALL)];

const OFFSET_FETCH: Layout = Layout {
    flexible_from: 6,
    fields: &[
        F(Str, 0, 7),
        F(Structs(TOPIC_PARTITION_INDEXES), 0, 7),
        F(
            Structs(&[
                F(Str, 8, ALL), // group id
                F(Str, 9, ALL), // member id
                F(I32, 9, ALL), // member epoch
                F(Structs(TOPIC_PARTITION_INDEXES), 8, ALL),
            ]),
            8,
            ALL,
        ),
        F(I8, 7, ALL), // require stable
    ],
};

const FIND_COORDINATOR: Layout = Layout {
    flexible_from: 3,
    fields: &[F(Str, 0, 3), F(I8, 1, ALL), F(Prims(&Str), 4, ALL)],
};

const DESCRIBE_GROUPS: Layout = Layout {
    flexible_from: 5,
    fields: &[F(Prims(&Str), 0, ALL), F(I8, 3, ALL)],
};

const LIST_GROUPS: Layout = Layout {
    flexible_from: 3,
    fields: &[F(Prims(&Str), 4, ALL), F(Prims(&Str), 5, ALL)],
};

const API_VERSIONS: Layout = Layout {
    flexible_from: 3,
    fields: &[F(Str, 3, ALL), F(Str, 3, ALL)],
};

const CREATE_TOPICS: Layout = Layout {
    flexible_from: 5,
    fields: &[
        F(
            Structs(&[
                F(Str, 0, ALL), // name
                F(I32, 0, ALL), // partitions
                F(I16, 0, ALL), // replication factor
                F(Structs(&[F(I32, 0, ALL), F(Prims(&I32), 0, ALL)]), 0, ALL),
                F(Structs(&[F(Str, 0, ALL), F(Str, 0, ALL)]), 0, ALL),
            ]),
            0,
            ALL,
        ),
        F(I32, 0, ALL), // timeout
        F(I8, 1, ALL),  // validate only
    ],
};

const DELETE_TOPICS: Layout = Layout {
    flexible_from: 4,
    fields: &[
        F(Structs(&[F(Str, 6, ALL), F(Uuid, 6, ALL)]), 6, ALL),
        F(Prims(&Str), 0, 5),
        F(I32, 0, ALL),
    ],
};

const DELETE_RECORDS: Layout = Layout {
    flexible_from: 2,
    fields: &[
        F(
            Structs(&[
                F(Str, 0, ALL),
                F(Structs(&[F(I32, 0, ALL), F(I64, 0, ALL)]), 0, ALL),
            ]),
            0,
            ALL,
        ),
        F(I32, 0, ALL),
    ],
};

const INIT_PRODUCER_ID: Layout = Layout {
    flexible_from: 2,
    fields: &[
        F(Str, 0, ALL),
        F(I32, 0, ALL),
        F(I64, 3, ALL),
        F(I16, 3, ALL),
    ],
};

const OFFSET_FOR_LEADER_EPOCH: Layout = Layout {
    flexible_from: 4,
    fields: &[
        F(I32, 3, ALL),
        F(
            Structs(&[
                F(Str, 0, ALL),
                F(
                    Structs(&[F(I32, 0, ALL), F(I32, 2, ALL), F(I32, 0, ALL)]),
                    0,
                    ALL,
                ),
            ]),
            0,
            ALL,
        ),
    ],
};

const DELETE_GROUPS: Layout = Layout {
    flexible_from: 2,
    fields: &[F(Prims(&Str), 0, ALL)],
};

const JOIN_GROUP: Layout = Layout {
    flexible_from: 6,
    fields: &[
        F(Str, 0, ALL),                                          // group id
        F(I32, 0, ALL),                                          // session timeout
        F(I32, 1, ALL),                                          // rebalance timeout
        F(Str, 0, ALL),                                          // member id
        F(Str, 5, ALL),                                          // group instance id
        F(Str, 0, ALL),                                          // protocol type
        F(Structs(&[F(Str, 0, ALL), F(Bytes, 0, ALL)]), 0, ALL), // protocols: name, metadata
        F(Str, 8, ALL),                                          // reason
    ],
};

const HEARTBEAT: Layout = Layout {
    flexible_from: 4,
    fields: &[
        F(Str, 0, ALL), // group id
        F(I32, 0, ALL), // generation id
        F(Str, 0, ALL), // member id
        F(Str, 3, ALL), // group instance id
    ],
};

const LEAVE_GROUP: Layout = Layout {
    flexible_from: 4,
    fields: &[
        F(Str, 0, ALL), // group id
        F(Str, 0, 2),   // member id
        F(
            Structs(&[F(Str, 3, ALL), F(Str, 3, ALL), F(Str, 5, ALL)]),
            3,
            ALL,
        ), // members: member id, group instance id, reason
    ],
};

const SYNC_GROUP: Layout = Layout {
    flexible_from: 4,
    fields: &[
        F(Str, 0, ALL),                                          // group id
        F(I32, 0, ALL),                                          // generation id
        F(Str, 0, ALL),                                          // member id
        F(Str, 3, ALL),                                          // group instance id
        F(Str, 5, ALL),                                          // protocol type
        F(Str, 5, ALL),                                          // protocol name
        F(Structs(&[F(Str, 0, ALL), F(Bytes, 0, ALL)]), 0, ALL), // assignments
    ],
};

const OFFSET_DELETE: Layout = Layout {
    flexible_from: i16::MAX, // never flexible
    fields: &[
        F(Str, 0, ALL), // group id
        F(
            Structs(&[F(Str, 0, ALL), F(Structs(&[F(I32, 0, ALL)]), 0, ALL)]),
            0,
            ALL,
        ), // topics: name, partitions
    ],
};

/// An ACL filter (DescribeAcls body, DeleteAcls filter): resource type, name, pattern type,
/// principal, host, operation, permission.
const ACL_FILTER: &[F] = &[
    F(I8, 0, ALL),
    F(Str, 0, ALL),
    F(I8, 1, ALL),
    F(Str, 0, ALL),
    F(Str, 0, ALL),
    F(I8, 0, ALL),
    F(I8, 0, ALL),
];

const DESCRIBE_ACLS: Layout = Layout {
    flexible_from: 2,
    fields: ACL_FILTER,
};

const CREATE_ACLS: Layout = Layout {
    flexible_from: 2,
    fields: &[F(Structs(ACL_FILTER), 0, ALL)], // creations: the same seven fields
};

const DELETE_ACLS: Layout = Layout {
    flexible_from: 2,
    fields: &[F(Structs(ACL_FILTER), 0, ALL)],
};

const DESCRIBE_CONFIGS: Layout = Layout {
    flexible_from: 4,
    fields: &[
        F(
            Structs(&[F(I8, 0, ALL), F(Str, 0, ALL), F(Prims(&Str), 0, ALL)]),
            0,
            ALL,
        ), // resources: type, name, keys
        F(I8, 1, ALL), // include synonyms
        F(I8, 3, ALL), // include documentation
    ],
};

const INCREMENTAL_ALTER_CONFIGS: Layout = Layout {
    flexible_from: 1,
    fields: &[
        F(
            Structs(&[
                F(I8, 0, ALL),
                F(Str, 0, ALL),
                F(
                    Structs(&[F(Str, 0, ALL), F(I8, 0, ALL), F(Str, 0, ALL)]),
                    0,
                    ALL,
                ), // configs: name, operation, value
            ]),
            0,
            ALL,
        ),
        F(I8, 0, ALL), // validate only
    ],
};

const CONSUMER_GROUP_HEARTBEAT: Layout = Layout {
    flexible_from: 0,
    fields: &[
        F(Str, 0, ALL),                                                 // group id
        F(Str, 0, ALL),                                                 // member id
        F(I32, 0, ALL),                                                 // member epoch
        F(Str, 0, ALL),                                                 // instance id
        F(Str, 0, ALL),                                                 // rack id
        F(I32, 0, ALL),                                                 // rebalance timeout
        F(Prims(&Str), 0, ALL),                                         // subscribed topic names
        F(Str, 1, ALL),                                                 // subscribed topic regex
        F(Str, 0, ALL),                                                 // server assignor
        F(Structs(&[F(Uuid, 0, ALL), F(Prims(&I32), 0, ALL)]), 0, ALL), // owned partitions: topic id, partitions
    ],
};

const CONSUMER_GROUP_DESCRIBE: Layout = Layout {
    flexible_from: 0,
    fields: &[F(Prims(&Str), 0, ALL), F(I8, 0, ALL)],
};

fn layout(key: i16) -> Option<&'static Layout> {
    Some(match key {
        0 => &PRODUCE,
        1 => &FETCH,
        2 => &LIST_OFFSETS,
        3 => &METADATA,
        8 => &OFFSET_COMMIT,
        9 => &OFFSET_FETCH,
        10 => &FIND_COORDINATOR,
        11 => &JOIN_GROUP,
        12 => &HEARTBEAT,
        13 => &LEAVE_GROUP,
        14 => &SYNC_GROUP,
        15 => &DESCRIBE_GROUPS,
        16 => &LIST_GROUPS,
        18 => &API_VERSIONS,
        19 => &CREATE_TOPICS,
        20 => &DELETE_TOPICS,
        21 => &DELETE_RECORDS,
        22 => &INIT_PRODUCER_ID,
        23 => &OFFSET_FOR_LEADER_EPOCH,
        42 => &DELETE_GROUPS,
        47 => &OFFSET_DELETE,
        29 => &DESCRIBE_ACLS,
        30 => &CREATE_ACLS,
        31 => &DELETE_ACLS,
        32 => &DESCRIBE_CONFIGS,
        44 => &INCREMENTAL_ALTER_CONFIGS,
        68 => &CONSUMER_GROUP_HEARTBEAT,
        69 => &CONSUMER_GROUP_DESCRIBE,
        17 => &SASL_HANDSHAKE,
        36 => &SASL_AUTHENTICATE,
        50 => &DESCRIBE_USER_SCRAM_CREDENTIALS,
        51 => &ALTER_USER_SCRAM_CREDENTIALS,
        _ => return None,
    })
}

const SASL_HANDSHAKE: Layout = Layout {
    flexible_from: ALL,
    fields: &[F(Str, 0, ALL)], // mechanism
};

const SASL_AUTHENTICATE: Layout = Layout {
    flexible_from: 2,
    fields: &[F(Bytes, 0, ALL)], // auth bytes
};

const DESCRIBE_USER_SCRAM_CREDENTIALS: Layout = Layout {
    flexible_from: 0,
    fields: &[F(Structs(&[F(Str, 0, ALL)]), 0, ALL)], // users (nullable)
};

const ALTER_USER_SCRAM_CREDENTIALS: Layout = Layout {
    flexible_from: 0,
    fields: &[
        F(Structs(&[F(Str, 0, ALL), F(I8, 0, ALL)]), 0, ALL), // deletions: name, mechanism
        F(
            Structs(&[
                F(Str, 0, ALL),   // name
                F(I8, 0, ALL),    // mechanism
                F(I32, 0, ALL),   // iterations
                F(Bytes, 0, ALL), // salt
                F(Bytes, 0, ALL), // salted password
            ]),
            0,
            ALL,
        ), // upsertions
    ],
};

/// Nesting deeper than any served schema (arrays in arrays in arrays) is refused outright.
const MAX_DEPTH: usize = 8;

struct Walk<'a> {
    buf: &'a [u8],
    pos: usize,
    version: i16,
    flexible: bool,
}

impl Walk<'_> {
    fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn skip(&mut self, n: usize, what: &str) -> Result<(), String> {
        if n > self.remaining() {
            return Err(format!(
                "{what} of {n} bytes at offset {} but only {} bytes remain",
                self.pos,
                self.remaining()
            ));
        }
        self.pos += n;
        Ok(())
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let at = self.pos;
        self.skip(N, "field")?;
        Ok(self.buf[at..at + N].try_into().unwrap())
    }

    /// As the crate reads it: at most five bytes, 32 bits kept.
    fn uvarint(&mut self) -> Result<u32, String> {
        match varint::get_uvarint_lenient(&self.buf[self.pos..]) {
            Ok((v, len)) => {
                self.pos += len;
                Ok(v)
            }
            Err(_) => {
                // Truncated (the lenient read has no other error): it ran to the end.
                self.pos = self.buf.len();
                Err(format!(
                    "varint at the end of the body: 1 more byte needed at offset {}",
                    self.pos
                ))
            }
        }
    }

    /// A length prefix: `None` = null (-1).
    fn length(&mut self, long: bool) -> Result<Option<usize>, String> {
        let n: i64 = if self.flexible {
            self.uvarint()? as i64 - 1
        } else if long {
            i32::from_be_bytes(self.take::<4>()?) as i64
        } else {
            i16::from_be_bytes(self.take::<2>()?) as i64
        };
        match n {
            -1 => Ok(None),
            n if n < 0 => Err(format!("negative length {n} at offset {}", self.pos)),
            n => Ok(Some(n as usize)),
        }
    }

    fn tagged_fields(&mut self, known: &[(u32, T)], depth: usize) -> Result<(), String> {
        let n = self.uvarint()?;
        if n as usize > self.remaining() {
            return Err(format!(
                "{n} tagged fields declared, {} bytes remain",
                self.remaining()
            ));
        }
        for _ in 0..n {
            let tag = self.uvarint()?;
            let size = self.uvarint()? as usize;
            match known.iter().find(|(k, _)| *k == tag) {
                Some(&(_, t)) => self.value(t, depth + 1)?,
                None => self.skip(size, "tagged field")?,
            }
        }
        Ok(())
    }

    fn fields(&mut self, fields: &[F], depth: usize) -> Result<(), String> {
        let mut known: &[(u32, T)] = &[];
        for &F(t, lo, hi) in fields {
            if (lo..=hi).contains(&self.version) {
                match t {
                    Tags(k) => known = k,
                    t => self.value(t, depth)?,
                }
            }
        }
        if self.flexible {
            self.tagged_fields(known, depth)?;
        }
        Ok(())
    }

    fn value(&mut self, t: T, depth: usize) -> Result<(), String> {
        match t {
            I8 => self.skip(1, "int8"),
            I16 => self.skip(2, "int16"),
            I32 => self.skip(4, "int32"),
            I64 => self.skip(8, "int64"),
            Uuid => self.skip(16, "uuid"),
            Str => match self.length(false)? {
                Some(n) => self.skip(n, "string"),
                None => Ok(()),
            },
            Bytes => match self.length(true)? {
                Some(n) => self.skip(n, "bytes"),
                None => Ok(()),
            },
            Tags(_) => Ok(()),
            One(fs) => {
                if depth >= MAX_DEPTH {
                    return Err("structs nested too deeply".into());
                }
                self.fields(fs, depth + 1)
            }
            Structs(_) | Prims(_) => {
                if depth >= MAX_DEPTH {
                    return Err("arrays nested too deeply".into());
                }
                let Some(n) = self.length(true)? else {
                    return Ok(());
                };
                // Every element takes at least one byte: a count beyond what remains is a lie,
                // refused before anyone allocates for it.
                if n > self.remaining() {
                    return Err(format!(
                        "array of {n} elements declared at offset {} but only {} bytes remain",
                        self.pos,
                        self.remaining()
                    ));
                }
                for _ in 0..n {
                    match t {
                        Structs(fs) => self.fields(fs, depth + 1)?,
                        Prims(p) => self.value(*p, depth + 1)?,
                        _ => unreachable!(),
                    }
                }
                Ok(())
            }
        }
    }
}

/// Check the body of a served standard request (`key`, `version`) before decoding it. Keys
/// without a layout here (88, 89: decoded by the core's own bounded codec) pass.
pub fn check_body(key: i16, version: i16, body: &[u8]) -> Result<(), String> {
    let Some(l) = layout(key) else {
        return Ok(());
    };
    let mut w = Walk {
        buf: body,
        pos: 0,
        version,
        flexible: version >= l.flexible_from,
    };
    w.fields(l.fields, 0)
}
