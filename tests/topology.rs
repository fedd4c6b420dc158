//! Topic configuration (spec §3.7), metadata hash (§3.8) and endpoint partitions (§3.12).
// Native only: plain `#[test]`s (and proptest) do not run under wasm-bindgen-test; the wasm
// API has its browser tests in tests/wasm_browser.rs.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::{BTreeMap, BTreeSet};

use groupcoord::protocol::status_code::{
    INCORRECTLY_PARTITIONED_TOPICS, MISSING_INTERNAL_TOPICS, MISSING_SOURCE_TOPICS,
};
use groupcoord::topology::partitions_for_tasks;
use groupcoord::topology::{
    ConfiguredTopology, CopartitionGroup, InternalTopic, InvalidTopology, KeyValue, MetadataImage,
    StreamsTopology, Subtopology, TopicInfo, configure_topics, metadata_hash,
};

// ---------------------------------------------------------------------------------------------
// Builders

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

fn topic(name: &str, partitions: i32) -> TopicInfo {
    TopicInfo {
        name: name.into(),
        partitions,
        replication_factor: 0,
        topic_configs: vec![],
    }
}

fn sub(id: &str) -> Subtopology {
    Subtopology {
        subtopology_id: id.into(),
        ..Default::default()
    }
}

trait SubExt {
    fn sources(self, v: &[&str]) -> Self;
    fn sinks(self, v: &[&str]) -> Self;
    fn rep(self, name: &str, partitions: i32) -> Self;
    fn changelog(self, name: &str) -> Self;
    fn copartition(self, sources: &[i16], repartition: &[i16]) -> Self;
}

impl SubExt for Subtopology {
    fn sources(mut self, v: &[&str]) -> Self {
        self.source_topics.extend(s(v));
        self
    }
    fn sinks(mut self, v: &[&str]) -> Self {
        self.repartition_sink_topics.extend(s(v));
        self
    }
    fn rep(mut self, name: &str, partitions: i32) -> Self {
        self.repartition_source_topics.push(topic(name, partitions));
        self
    }
    fn changelog(mut self, name: &str) -> Self {
        self.state_changelog_topics.push(topic(name, 0));
        self
    }
    fn copartition(mut self, sources: &[i16], repartition: &[i16]) -> Self {
        self.copartition_groups.push(CopartitionGroup {
            source_topics: sources.to_vec(),
            source_topic_regex: vec![],
            repartition_source_topics: repartition.to_vec(),
        });
        self
    }
}

fn topology(subs: Vec<Subtopology>) -> StreamsTopology {
    StreamsTopology {
        epoch: 3,
        subtopologies: subs,
    }
}

fn md(topics: &[(&str, i32)]) -> MetadataImage {
    MetadataImage {
        topics: topics.iter().map(|(n, p)| (n.to_string(), *p)).collect(),
    }
}

fn configure(t: &StreamsTopology, m: &MetadataImage) -> ConfiguredTopology {
    configure_topics(t, m).expect("valid topology")
}

fn invalid(t: &StreamsTopology, m: &MetadataImage) -> String {
    let InvalidTopology { message } = configure_topics(t, m).expect_err("invalid topology");
    message
}

/// Asserts an issue that stops configuration: no subtopologies, nothing to create.
fn assert_stopped(c: &ConfiguredTopology, code: i8, detail: &str) {
    let issue = c.issue.as_ref().expect("an issue");
    assert_eq!((issue.status_code, issue.detail.as_str()), (code, detail));
    assert!(c.subtopologies.is_none());
    assert!(c.internal_topics_to_create.is_empty());
    assert!(!c.is_ready());
}

fn assert_ready(c: &ConfiguredTopology) {
    assert_eq!(c.issue, None);
    assert!(c.subtopologies.is_some());
    assert!(c.internal_topics_to_create.is_empty());
    assert!(c.is_ready());
}

fn tasks(c: &ConfiguredTopology) -> BTreeMap<String, i32> {
    c.subtopologies
        .as_ref()
        .unwrap()
        .iter()
        .map(|(id, s)| (id.clone(), s.number_of_tasks))
        .collect()
}

/// Partition count of a configured internal topic (repartition source or changelog), by name.
fn internal_count(c: &ConfiguredTopology, name: &str) -> i32 {
    c.subtopologies
        .as_ref()
        .unwrap()
        .values()
        .find_map(|s| {
            s.repartition_source_topics
                .get(name)
                .or(s.state_changelog_topics.get(name))
        })
        .unwrap_or_else(|| panic!("no internal topic {name}"))
        .partitions
}

fn counts(pairs: &[(&str, i32)]) -> BTreeMap<String, i32> {
    pairs.iter().map(|(n, p)| (n.to_string(), *p)).collect()
}

/// Two subtopologies: `0` reads `input` and writes `app-rep`; `1` reads `app-rep` with a store.
fn two_subtopologies(declared_rep: i32) -> StreamsTopology {
    topology(vec![
        sub("0").sources(&["input"]).sinks(&["app-rep"]),
        sub("1")
            .rep("app-rep", declared_rep)
            .changelog("app-store-changelog"),
    ])
}

// ---------------------------------------------------------------------------------------------
// Step 1: missing source topics

#[test]
fn missing_source_topics_are_listed_sorted() {
    let t = topology(vec![sub("0").sources(&["b", "a"]).changelog("cl")]);
    let c = configure(&t, &md(&[]));
    assert_stopped(&c, MISSING_SOURCE_TOPICS, "Source topics a, b are missing.");
    assert_eq!(c.topology_epoch, 3);

    let c = configure(&t, &md(&[("a", 1)]));
    assert_stopped(&c, MISSING_SOURCE_TOPICS, "Source topics b are missing.");
}

#[test]
fn missing_source_topics_show_at_most_three_names() {
    let t = topology(vec![
        sub("0").sources(&["e", "c", "a"]),
        sub("1").sources(&["d", "b", "a"]), // `a` twice counts once
    ]);
    let c = configure(&t, &md(&[]));
    assert_stopped(
        &c,
        MISSING_SOURCE_TOPICS,
        "Source topics a, b, c and 2 additional topics are missing.",
    );

    let c = configure(&t, &md(&[("d", 1), ("e", 1)]));
    assert_stopped(
        &c,
        MISSING_SOURCE_TOPICS,
        "Source topics a, b, c are missing.",
    );
}

#[test]
fn missing_source_topics_win_over_an_invalid_repartition_setup() {
    // The loop would be an invalid topology, but source topics are checked first.
    let t = topology(vec![
        sub("0").sources(&["in"]).rep("r1", 0).sinks(&["r2"]),
        sub("1").rep("r2", 0).sinks(&["r1"]),
    ]);
    let c = configure(&t, &md(&[]));
    assert_stopped(&c, MISSING_SOURCE_TOPICS, "Source topics in are missing.");
}

// ---------------------------------------------------------------------------------------------
// Step 2a: repartition topics

#[test]
fn repartition_count_is_inferred_from_the_writing_subtopology() {
    let t = two_subtopologies(0);
    let c = configure(&t, &md(&[("input", 4)]));

    assert_eq!(tasks(&c), counts(&[("0", 4), ("1", 4)]));
    assert_eq!(internal_count(&c, "app-rep"), 4);
    assert_eq!(internal_count(&c, "app-store-changelog"), 4);
    let issue = c.issue.clone().unwrap();
    assert_eq!(issue.status_code, MISSING_INTERNAL_TOPICS);
    assert_eq!(
        issue.detail,
        "Internal topics are missing: app-rep, app-store-changelog"
    );
    assert_eq!(
        c.internal_topics_to_create
            .values()
            .map(|t| (t.name.as_str(), t.partitions))
            .collect::<Vec<_>>(),
        vec![("app-rep", 4), ("app-store-changelog", 4)]
    );

    // Once they exist with the right counts, the topology is ready.
    let c = configure(
        &t,
        &md(&[("input", 4), ("app-rep", 4), ("app-store-changelog", 4)]),
    );
    assert_ready(&c);
    assert_eq!(tasks(&c), counts(&[("0", 4), ("1", 4)]));
}

#[test]
fn repartition_count_is_max_over_inputs_of_the_writer() {
    let t = topology(vec![
        sub("0").sources(&["small", "big"]).sinks(&["r"]),
        sub("1").rep("r", 0),
    ]);
    let c = configure(&t, &md(&[("small", 2), ("big", 6)]));
    assert_eq!(internal_count(&c, "r"), 6);
    assert_eq!(tasks(&c), counts(&[("0", 6), ("1", 6)]));
}

#[test]
fn declared_repartition_count_wins() {
    let t = two_subtopologies(7);
    let c = configure(&t, &md(&[("input", 4)]));
    assert_eq!(internal_count(&c, "app-rep"), 7);
    assert_eq!(internal_count(&c, "app-store-changelog"), 7);
    assert_eq!(tasks(&c), counts(&[("0", 4), ("1", 7)]));
}

#[test]
fn multi_hop_repartition_chain() {
    // 0 -> r1 -> 1 -> r2 -> 2, declared downstream-first.
    let t = topology(vec![
        sub("2").rep("r2", 0).changelog("store-2"),
        sub("1").rep("r1", 0).sinks(&["r2"]),
        sub("0").sources(&["in"]).sinks(&["r1"]),
    ]);
    let c = configure(&t, &md(&[("in", 3)]));
    assert_eq!(tasks(&c), counts(&[("0", 3), ("1", 3), ("2", 3)]));
    assert_eq!(
        c.internal_topics_to_create
            .keys()
            .cloned()
            .collect::<Vec<_>>(),
        s(&["r1", "r2", "store-2"])
    );
}

#[test]
fn loops_are_an_invalid_topology() {
    let t = topology(vec![
        sub("0").sources(&["in"]),
        sub("1").rep("r1", 0).sinks(&["r2"]),
        sub("2").rep("r2", 0).sinks(&["r1"]),
    ]);
    assert_eq!(
        invalid(&t, &md(&[("in", 1)])),
        "Failed to compute number of partitions for all repartition topics. There may be loops in the \
         topology that cannot be resolved."
    );
}

#[test]
fn a_loop_with_a_declared_count_resolves() {
    let t = topology(vec![
        sub("1").rep("r1", 5).sinks(&["r2"]),
        sub("2").rep("r2", 0).sinks(&["r1"]),
    ]);
    let c = configure(&t, &md(&[]));
    assert_eq!(tasks(&c), counts(&[("1", 5), ("2", 5)]));
}

#[test]
fn repartition_source_never_written_is_an_invalid_topology() {
    let t = topology(vec![sub("0").sources(&["in"]).rep("orphan", 0)]);
    assert_eq!(
        invalid(&t, &md(&[("in", 1)])),
        "Failed to compute number of partitions for all repartition topics, because a repartition \
         source topic is never used as a sink topic."
    );
}

/// The fix-point depends on the order subtopologies are visited; it is Java's `HashMap` order.
/// Here ids "9" and "10": Java visits "9" first (bucket 9 before bucket 15), while list order and
/// name order both put "10" first.
#[test]
fn repartition_inference_visits_subtopologies_in_java_hash_map_order() {
    let t = topology(vec![
        sub("10").sources(&["s"]).sinks(&["r1"]),
        sub("9").sources(&["e"]).rep("r1", 0).sinks(&["r2"]),
        sub("2").rep("r2", 0),
    ]);
    let c = configure(&t, &md(&[("s", 8), ("e", 2)]));
    // "9" is visited while r1 is still unknown, so r2 takes e's count only.
    assert_eq!(internal_count(&c, "r2"), 2);
    assert_eq!(tasks(&c), counts(&[("10", 8), ("2", 2), ("9", 8)]));
}

// ---------------------------------------------------------------------------------------------
// Step 2b: copartitioning

#[test]
fn copartitioned_external_topics_with_equal_counts_are_fine() {
    let t = topology(vec![
        sub("0").sources(&["a", "b"]).copartition(&[0, 1], &[]),
    ]);
    let c = configure(&t, &md(&[("a", 3), ("b", 3)]));
    assert_ready(&c);
    assert_eq!(tasks(&c), counts(&[("0", 3)]));
}

#[test]
fn copartitioned_external_topics_must_have_equal_counts() {
    let t = topology(vec![
        sub("0").sources(&["b", "a", "c"]).copartition(&[0, 1], &[]),
    ]);
    let c = configure(&t, &md(&[("a", 3), ("b", 6), ("c", 9)]));
    assert_stopped(
        &c,
        INCORRECTLY_PARTITIONED_TOPICS,
        "Following topics do not have the same number of partitions: [{a=3, b=6}]",
    );
}

#[test]
fn flexible_repartition_topic_takes_the_external_count() {
    // r is inferred as 8 from `big`, then coerced to 3 by its copartner `a`.
    let t = topology(vec![
        sub("0").sources(&["big"]).sinks(&["r"]),
        sub("1")
            .sources(&["a"])
            .rep("r", 0)
            .copartition(&[0], &[0])
            .changelog("join-store"),
    ]);
    let c = configure(&t, &md(&[("big", 8), ("a", 3)]));
    assert_eq!(internal_count(&c, "r"), 3);
    assert_eq!(internal_count(&c, "join-store"), 3);
    assert_eq!(tasks(&c), counts(&[("0", 8), ("1", 3)]));
}

#[test]
fn fixed_repartition_topic_must_match_the_external_count() {
    let t = topology(vec![
        sub("0").sources(&["big"]).sinks(&["r"]),
        sub("1").sources(&["a"]).rep("r", 4).copartition(&[0], &[0]),
    ]);
    let c = configure(&t, &md(&[("big", 8), ("a", 6)]));
    assert_stopped(
        &c,
        INCORRECTLY_PARTITIONED_TOPICS,
        "Number of partitions [4] of repartition topic [r] doesn't match number of partitions [6] of the \
         source topic.",
    );

    let c = configure(&t, &md(&[("big", 8), ("a", 4)]));
    assert_eq!(internal_count(&c, "r"), 4);
}

#[test]
fn all_flexible_repartition_group_takes_the_max() {
    let t = topology(vec![
        sub("0").sources(&["x"]).sinks(&["r1"]),
        sub("1").sources(&["y"]).sinks(&["r2"]),
        sub("2").rep("r1", 0).rep("r2", 0).copartition(&[], &[0, 1]),
    ]);
    let c = configure(&t, &md(&[("x", 2), ("y", 6)]));
    assert_eq!(internal_count(&c, "r1"), 6);
    assert_eq!(internal_count(&c, "r2"), 6);
    assert_eq!(tasks(&c), counts(&[("0", 2), ("1", 6), ("2", 6)]));
}

#[test]
fn all_repartition_group_with_undefined_counts_is_an_invalid_topology() {
    let t = topology(vec![
        sub("0").sources(&["empty"]).sinks(&["r1", "r2"]),
        sub("1").rep("r2", 0).rep("r1", 0).copartition(&[], &[0, 1]),
    ]);
    assert_eq!(
        invalid(&t, &md(&[("empty", 0)])),
        "All topics in the copartition group had undefined partition number: [r1, r2]"
    );
}

/// With a fixed repartition topic anywhere in the topology, an all-repartition group takes the
/// count of the fixed topics — even ones outside the group.
#[test]
fn fixed_repartition_topics_of_the_whole_topology_decide_an_all_repartition_group() {
    let t = topology(vec![
        sub("0").sources(&["x"]).sinks(&["r1", "r2"]),
        sub("1").rep("r1", 0).rep("r2", 0).copartition(&[], &[0, 1]),
        sub("2").sources(&["z"]).sinks(&["r3"]),
        sub("3").rep("r3", 5),
    ]);
    let c = configure(&t, &md(&[("x", 2), ("z", 1)]));
    assert_eq!(internal_count(&c, "r1"), 5);
    assert_eq!(internal_count(&c, "r2"), 5);
    assert_eq!(tasks(&c), counts(&[("0", 2), ("1", 5), ("2", 1), ("3", 5)]));
}

#[test]
fn fixed_repartition_topics_of_the_whole_topology_must_agree() {
    // r1 (fixed 4) and r2 (flexible, inferred 2) are copartitioned; r3 (fixed 5) is elsewhere.
    let t = topology(vec![
        sub("0").sources(&["x"]).sinks(&["r1", "r2", "r3"]),
        sub("1").rep("r1", 4).rep("r2", 0).copartition(&[], &[0, 1]),
        sub("2").rep("r3", 5),
    ]);
    let c = configure(&t, &md(&[("x", 2)]));
    assert_stopped(
        &c,
        INCORRECTLY_PARTITIONED_TOPICS,
        "Following topics do not have the same number of partitions: [{r1=4, r2=2}]",
    );

    // With r3 agreeing, the group takes 4.
    let mut t = t;
    t.subtopologies[2].repartition_source_topics[0].partitions = 4;
    let c = configure(&t, &md(&[("x", 2)]));
    assert_eq!(internal_count(&c, "r2"), 4);
}

#[test]
fn copartition_counts_prefer_the_metadata_image() {
    // Fixed r declared 4 but existing with 6 partitions: copartitioning sees 6 (like Java), so the
    // mismatch surfaces as an existing topic with the wrong count.
    let t = topology(vec![
        sub("0").sources(&["in"]).sinks(&["r"]),
        sub("1").sources(&["a"]).rep("r", 4).copartition(&[0], &[0]),
    ]);
    let c = configure(&t, &md(&[("in", 1), ("a", 6), ("r", 6)]));
    assert_stopped(
        &c,
        INCORRECTLY_PARTITIONED_TOPICS,
        "Existing topic r has different number of partitions: expected 4, found 6",
    );
}

#[test]
fn copartition_index_out_of_range_is_an_invalid_topology() {
    let base = sub("0").sources(&["a"]).rep("r", 1);
    for (sources, repartition, message) in [
        (
            vec![1],
            vec![],
            "Copartition group of subtopology 0 refers to source topic index 1, but the subtopology has 1 \
             source topics.",
        ),
        (
            vec![-1],
            vec![],
            "Copartition group of subtopology 0 refers to source topic index -1, but the subtopology has 1 \
             source topics.",
        ),
        (
            vec![0],
            vec![3],
            "Copartition group of subtopology 0 refers to repartition source topic index 3, but the \
             subtopology has 1 repartition source topics.",
        ),
    ] {
        let t = topology(vec![base.clone().copartition(&sources, &repartition)]);
        // Checked before anything else, even with missing source topics.
        assert_eq!(invalid(&t, &md(&[])), message);
    }
}

#[test]
fn copartition_regex_indices_are_ignored() {
    let mut t = topology(vec![
        sub("0").sources(&["a", "b"]).copartition(&[0, 1], &[]),
    ]);
    t.subtopologies[0].copartition_groups[0].source_topic_regex = vec![7, -3];
    assert_ready(&configure(&t, &md(&[("a", 2), ("b", 2)])));
}

// ---------------------------------------------------------------------------------------------
// Step 2c: changelog topics

#[test]
fn changelog_takes_max_over_sources_and_repartition_sources() {
    let t = topology(vec![
        sub("0").sources(&["in"]).sinks(&["r"]),
        sub("1").sources(&["a", "b"]).changelog("store-1"),
        sub("2")
            .sources(&["a"])
            .rep("r", 9)
            .changelog("store-2")
            .changelog("store-2b"),
    ]);
    let c = configure(&t, &md(&[("in", 1), ("a", 2), ("b", 5)]));
    assert_eq!(internal_count(&c, "store-1"), 5);
    assert_eq!(internal_count(&c, "store-2"), 9);
    assert_eq!(internal_count(&c, "store-2b"), 9);
    assert!(c.subtopologies.as_ref().unwrap()["1"].is_stateful());
    assert!(!c.subtopologies.as_ref().unwrap()["0"].is_stateful());
}

#[test]
fn declared_changelog_partitions_win_in_the_configured_topic() {
    // Request validation rejects this (§3.2), but stored topologies are configured as declared.
    let mut t = topology(vec![sub("0").sources(&["a"]).changelog("store")]);
    t.subtopologies[0].state_changelog_topics[0].partitions = 3;
    let c = configure(&t, &md(&[("a", 5)]));
    assert_eq!(internal_count(&c, "store"), 3);
}

#[test]
fn source_topic_used_as_changelog_is_not_created() {
    // A source-table changelog: the source topic itself, which exists.
    let t = topology(vec![sub("0").sources(&["table"]).changelog("table")]);
    assert_ready(&configure(&t, &md(&[("table", 4)])));
}

#[test]
fn subtopology_without_inputs_is_an_invalid_topology() {
    let t = topology(vec![sub("0").sources(&["in"]), sub("7").changelog("store")]);
    assert_eq!(
        invalid(&t, &md(&[("in", 1)])),
        "No source topics found for subtopology 7"
    );
}

#[test]
fn subtopology_with_only_sinks_fails_repartition_inference_first() {
    let t = topology(vec![sub("0").sinks(&["r"])]);
    assert!(invalid(&t, &md(&[])).starts_with("Failed to compute number of partitions"));
}

// ---------------------------------------------------------------------------------------------
// Steps 3-5: configured subtopologies, internal topics to create

#[test]
fn configured_subtopology_carries_sets_and_topic_settings() {
    let mut t = two_subtopologies(0);
    t.subtopologies[1].repartition_source_topics[0].replication_factor = 3;
    t.subtopologies[1].repartition_source_topics[0].topic_configs = vec![
        KeyValue {
            key: "cleanup.policy".into(),
            value: "delete".into(),
        },
        KeyValue {
            key: "retention.ms".into(),
            value: "-1".into(),
        },
    ];
    let c = configure(&t, &md(&[("input", 2)]));
    let subs = c.subtopologies.as_ref().unwrap();
    assert_eq!(
        subs["0"].source_topics,
        BTreeSet::from(["input".to_string()])
    );
    assert_eq!(
        subs["0"].repartition_sink_topics,
        BTreeSet::from(["app-rep".to_string()])
    );
    assert!(subs["0"].repartition_source_topics.is_empty());
    assert!(subs["1"].source_topics.is_empty());
    let rep = InternalTopic {
        name: "app-rep".into(),
        partitions: 2,
        replication_factor: Some(3),
        configs: [
            ("cleanup.policy".into(), "delete".into()),
            ("retention.ms".into(), "-1".into()),
        ]
        .into(),
    };
    assert_eq!(subs["1"].repartition_source_topics["app-rep"], rep);
    assert_eq!(c.internal_topics_to_create["app-rep"], rep);
    // Replication factor 0 means the broker default.
    assert_eq!(
        c.internal_topics_to_create["app-store-changelog"].replication_factor,
        None
    );
}

#[test]
fn only_missing_internal_topics_are_created() {
    let t = topology(vec![
        sub("0")
            .sources(&["in"])
            .sinks(&["r1", "r2"])
            .changelog("c1")
            .changelog("c2"),
        sub("1").rep("r1", 0).rep("r2", 0).changelog("c3"),
    ]);
    let c = configure(&t, &md(&[("in", 2), ("r2", 2), ("c2", 2)]));
    let issue = c.issue.clone().unwrap();
    assert_eq!(issue.status_code, MISSING_INTERNAL_TOPICS);
    assert_eq!(issue.detail, "Internal topics are missing: c1, c3, r1");
    assert_eq!(
        c.internal_topics_to_create
            .keys()
            .cloned()
            .collect::<Vec<_>>(),
        s(&["c1", "c3", "r1"])
    );
    assert!(c.subtopologies.is_some());
    assert!(!c.is_ready());
}

#[test]
fn missing_internal_topics_show_at_most_three_names() {
    let t = topology(vec![
        sub("0")
            .sources(&["in"])
            .changelog("e")
            .changelog("d")
            .changelog("c")
            .changelog("b")
            .changelog("a"),
    ]);
    let c = configure(&t, &md(&[("in", 1)]));
    let issue = c.issue.clone().unwrap();
    assert_eq!(issue.status_code, MISSING_INTERNAL_TOPICS);
    assert_eq!(
        issue.detail,
        "Internal topics are missing: a, b, c and 2 additional topics"
    );
    assert_eq!(c.internal_topics_to_create.len(), 5);
}

#[test]
fn existing_internal_topic_with_wrong_count_is_incorrectly_partitioned() {
    let t = two_subtopologies(0);
    let c = configure(&t, &md(&[("input", 4), ("app-rep", 2)]));
    assert_stopped(
        &c,
        INCORRECTLY_PARTITIONED_TOPICS,
        "Existing topic app-rep has different number of partitions: expected 4, found 2",
    );
    let c = configure(
        &t,
        &md(&[("input", 4), ("app-rep", 4), ("app-store-changelog", 8)]),
    );
    assert_stopped(
        &c,
        INCORRECTLY_PARTITIONED_TOPICS,
        "Existing topic app-store-changelog has different number of partitions: expected 4, found 8",
    );
}

#[test]
fn duplicate_subtopology_ids_are_an_invalid_topology() {
    let t = topology(vec![sub("0").sources(&["a"]), sub("0").sources(&["b"])]);
    assert_eq!(
        invalid(&t, &md(&[("a", 1), ("b", 1)])),
        "Duplicate subtopology id 0 in the topology."
    );
}

#[test]
fn empty_topology_is_ready() {
    let c = configure(&topology(vec![]), &md(&[("x", 1)]));
    assert_ready(&c);
    assert!(c.subtopologies.unwrap().is_empty());
    assert_eq!(c.metadata_hash, 0);
}

// ---------------------------------------------------------------------------------------------
// Metadata hash

fn set(v: &[&str]) -> BTreeSet<String> {
    s(v).into_iter().collect()
}

#[test]
fn metadata_hash_is_deterministic_and_tracks_counts() {
    let m = md(&[("a", 3), ("b", 1)]);
    let h = metadata_hash(&set(&["a", "b"]), &m);
    assert_ne!(h, 0);
    assert_eq!(h, metadata_hash(&set(&["b", "a"]), &m.clone()));
    assert_ne!(
        h,
        metadata_hash(&set(&["a", "b"]), &md(&[("a", 4), ("b", 1)]))
    );
    assert_ne!(
        h,
        metadata_hash(&set(&["a", "b"]), &md(&[("a", 3), ("c", 1)]))
    );
    // Golden value: the hash is persisted (group metadata record), so its format must not drift.
    // Cross-checked with python-xxhash (bindings to the reference C xxHash library).
    assert_eq!(
        metadata_hash(&set(&["a", "b"]), &md(&[("a", 1), ("b", 7)])),
        -4532086004280677832
    );
}

#[test]
fn metadata_hash_skips_missing_and_unrequired_topics() {
    let m = md(&[("a", 3), ("b", 1), ("unrelated", 9)]);
    let h = metadata_hash(&set(&["a", "b"]), &m);
    assert_eq!(h, metadata_hash(&set(&["a", "b", "missing"]), &m));
    assert_eq!(
        h,
        metadata_hash(&set(&["a", "b"]), &md(&[("a", 3), ("b", 1)]))
    );
    assert_ne!(h, metadata_hash(&set(&["a"]), &m));
}

#[test]
fn metadata_hash_is_zero_without_existing_topics() {
    assert_eq!(metadata_hash(&set(&[]), &md(&[("a", 1)])), 0);
    assert_eq!(metadata_hash(&set(&["a", "b"]), &md(&[])), 0);
}

#[test]
fn configure_topics_stores_the_metadata_hash_of_the_required_topics() {
    let t = two_subtopologies(0);
    let m = md(&[("input", 4), ("app-rep", 4), ("other", 1)]);
    let expected = metadata_hash(&set(&["input", "app-rep", "app-store-changelog"]), &m);
    assert_eq!(expected, metadata_hash(&t.required_topics(), &m));
    assert_eq!(configure(&t, &m).metadata_hash, expected);
    // Also on an issue.
    let c = configure(&t, &md(&[]));
    assert_eq!(c.metadata_hash, 0);
    assert!(c.issue.is_some());
}

// ---------------------------------------------------------------------------------------------
// Endpoint partitions

#[test]
fn partitions_for_tasks_maps_tasks_to_existing_partitions() {
    // Subtopology 1 reads `a` (2 partitions), `b` (4) and repartition `r` (3, not created yet).
    let t = topology(vec![
        sub("0").sources(&["in"]).sinks(&["r"]),
        sub("1").sources(&["b", "a"]).rep("r", 3),
    ]);
    let m = md(&[("in", 1), ("a", 2), ("b", 4)]);
    let c = configure(&t, &m);
    let s1 = &c.subtopologies.as_ref().unwrap()["1"];
    assert_eq!(s1.number_of_tasks, 4);

    let tasks: BTreeSet<i32> = [0, 2, 3].into();
    assert_eq!(
        partitions_for_tasks(s1, &tasks, &m),
        vec![
            ("a".to_string(), vec![0]),
            ("b".to_string(), vec![0, 2, 3]),
            ("r".to_string(), vec![0, 2])
        ]
    );
    // Topics without any of the partitions are omitted.
    assert_eq!(
        partitions_for_tasks(s1, &[3].into(), &m),
        vec![("b".to_string(), vec![3])]
    );
    assert!(partitions_for_tasks(s1, &BTreeSet::new(), &m).is_empty());
    // The metadata image wins over the configured count.
    let m2 = md(&[("in", 1), ("a", 2), ("b", 4), ("r", 4)]);
    assert_eq!(
        partitions_for_tasks(s1, &[3].into(), &m2),
        vec![("b".into(), vec![3]), ("r".into(), vec![3])]
    );
}

#[test]
fn partitions_for_tasks_degrades_gracefully() {
    let t = topology(vec![sub("0").sources(&["a", "gone"])]);
    let m = md(&[("a", 2), ("gone", 2)]);
    let c = configure(&t, &m);
    let s0 = &c.subtopologies.as_ref().unwrap()["0"];
    // `gone` was deleted since: skipped. Negative and out-of-range task ids map to nothing.
    assert_eq!(
        partitions_for_tasks(s0, &[-1, 0, 1, 7].into(), &md(&[("a", 2)])),
        vec![("a".to_string(), vec![0, 1])]
    );
    assert!(partitions_for_tasks(s0, &[0].into(), &md(&[])).is_empty());
}

// ---------------------------------------------------------------------------------------------
// Never panics

mod props {
    use super::*;
    use proptest::prelude::*;

    const EXTERNAL: &[&str] = &["a", "b", "c"];
    const INTERNAL: &[&str] = &["r1", "r2", "r3"];
    const STORES: &[&str] = &["s1", "s2"];
    const IDS: &[&str] = &["0", "1", "2", "10", "11"];

    /// Mostly from `pool`, sometimes any name (so roles overlap: a source that is also a
    /// repartition topic, a changelog that is a source, ...).
    fn name(pool: &'static [&'static str]) -> impl Strategy<Value = String> {
        let any: Vec<&str> = EXTERNAL
            .iter()
            .chain(INTERNAL)
            .chain(STORES)
            .copied()
            .collect();
        prop_oneof![
            6 => prop::sample::select(pool).prop_map(str::to_string),
            1 => prop::sample::select(any).prop_map(str::to_string),
        ]
    }

    fn topic_info(pool: &'static [&'static str]) -> impl Strategy<Value = TopicInfo> {
        (
            name(pool),
            prop_oneof![4 => Just(0), 2 => 1..6i32, 1 => -2..1i32],
            0..3i16,
        )
            .prop_map(|(name, partitions, rf)| TopicInfo {
                name,
                partitions,
                replication_factor: rf,
                topic_configs: vec![],
            })
    }

    /// An index: mostly in range of a list of `len` (taken modulo), sometimes anything.
    fn index() -> impl Strategy<Value = (bool, i16)> {
        (
            prop::bool::weighted(0.05),
            prop_oneof![3 => 0..4i16, 1 => any::<i16>()],
        )
    }

    fn resolve(raw: Vec<(bool, i16)>, len: usize) -> Vec<i16> {
        raw.into_iter()
            .filter_map(|(wild, i)| match (wild, len) {
                (true, _) => Some(i),
                (false, 0) => None,
                (false, len) => Some(i.rem_euclid(len as i16)),
            })
            .collect()
    }

    fn subtopology() -> impl Strategy<Value = Subtopology> {
        (
            prop::collection::vec(name(EXTERNAL), 0..3),
            prop::collection::vec(topic_info(STORES), 0..3),
            prop::collection::vec(name(INTERNAL), 0..3),
            prop::collection::vec(topic_info(INTERNAL), 0..3),
            prop::collection::vec(
                (
                    prop::collection::vec(index(), 0..3),
                    prop::collection::vec(index(), 0..2),
                    prop::collection::vec(index(), 0..3),
                ),
                0..3,
            ),
        )
            .prop_map(|(sources, changelogs, sinks, reps, groups)| {
                let copartition_groups = groups
                    .into_iter()
                    .map(|(src, regex, rep)| CopartitionGroup {
                        source_topics: resolve(src, sources.len()),
                        source_topic_regex: resolve(regex, 0),
                        repartition_source_topics: resolve(rep, reps.len()),
                    })
                    .collect();
                Subtopology {
                    subtopology_id: String::new(),
                    source_topics: sources,
                    source_topic_regex: vec![],
                    state_changelog_topics: changelogs,
                    repartition_sink_topics: sinks,
                    repartition_source_topics: reps,
                    copartition_groups,
                }
            })
    }

    fn topology() -> impl Strategy<Value = StreamsTopology> {
        (
            0..5i32,
            prop::collection::vec(subtopology(), 0..5),
            prop::bool::weighted(0.05),
        )
            .prop_map(|(epoch, mut subtopologies, duplicate)| {
                for (i, s) in subtopologies.iter_mut().enumerate() {
                    s.subtopology_id = IDS[i].to_string();
                }
                if duplicate && subtopologies.len() > 1 {
                    subtopologies[1].subtopology_id = IDS[0].to_string();
                }
                StreamsTopology {
                    epoch,
                    subtopologies,
                }
            })
    }

    fn count() -> impl Strategy<Value = i32> {
        prop_oneof![12 => 1..9i32, 1 => -1..1i32]
    }

    fn metadata() -> impl Strategy<Value = MetadataImage> {
        (
            prop::collection::vec(prop::option::weighted(0.9, count()), EXTERNAL.len()),
            prop::collection::vec(
                prop::option::weighted(0.3, count()),
                INTERNAL.len() + STORES.len(),
            ),
        )
            .prop_map(|(external, internal)| {
                let names = EXTERNAL.iter().chain(INTERNAL).chain(STORES);
                let topics = names
                    .zip(external.into_iter().chain(internal))
                    .filter_map(|(n, c)| c.map(|c| (n.to_string(), c)))
                    .collect();
                MetadataImage { topics }
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// Random names, roles, counts and out-of-range copartition indices: never a panic, the
        /// same answer twice, and every result has the shape §3.6 promises.
        #[test]
        fn configure_topics_never_panics(t in topology(), m in metadata()) {
            let first = configure_topics(&t, &m);
            prop_assert_eq!(&first, &configure_topics(&t, &m), "deterministic");
            let Ok(c) = first else { return Ok(()) };
            prop_assert_eq!(c.topology_epoch, t.epoch);
            prop_assert_eq!(c.metadata_hash, metadata_hash(&t.required_topics(), &m));
            match c.issue.as_ref().map(|i| i.status_code) {
                None => {
                    prop_assert!(c.subtopologies.is_some());
                    prop_assert!(c.internal_topics_to_create.is_empty());
                }
                Some(MISSING_INTERNAL_TOPICS) => {
                    prop_assert!(c.subtopologies.is_some());
                    prop_assert!(!c.internal_topics_to_create.is_empty());
                    for name in c.internal_topics_to_create.keys() {
                        prop_assert!(m.partitions(name).is_none());
                    }
                }
                Some(MISSING_SOURCE_TOPICS) | Some(INCORRECTLY_PARTITIONED_TOPICS) => {
                    prop_assert!(c.subtopologies.is_none());
                    prop_assert!(c.internal_topics_to_create.is_empty());
                }
                Some(other) => prop_assert!(false, "unexpected status {}", other),
            }
            if let Some(subs) = &c.subtopologies {
                prop_assert_eq!(
                    subs.keys().collect::<BTreeSet<_>>(),
                    t.subtopologies.iter().map(|s| &s.subtopology_id).collect::<BTreeSet<_>>()
                );
                for s in subs.values() {
                    // Every internal topic that exists has the configured count.
                    for it in s.repartition_source_topics.values().chain(s.state_changelog_topics.values()) {
                        if let Some(found) = m.partitions(&it.name) {
                            prop_assert_eq!(found, it.partitions);
                        }
                    }
                    for p in [-1, 0, 1, 5] {
                        let tasks: BTreeSet<i32> = [p, p + 1].into();
                        for (topic, ps) in partitions_for_tasks(s, &tasks, &m) {
                            prop_assert!(!ps.is_empty());
                            prop_assert!(ps.iter().all(|p| tasks.contains(p) && *p >= 0), "{}", topic);
                        }
                    }
                }
            }
        }
    }
}

/// Found by the property test: the same changelog configured differently by two subtopologies
/// (one declares a count, the other derives it). Each configured occurrence must match.
#[test]
fn every_configured_occurrence_of_an_existing_topic_is_checked() {
    let mut t = topology(vec![
        sub("0").sources(&["a"]).changelog("shared"),
        sub("1").sources(&["shared"]).changelog("shared"),
    ]);
    t.subtopologies[0].state_changelog_topics[0].partitions = 1;
    let c = configure(&t, &md(&[("a", 2), ("shared", 2)]));
    assert_stopped(
        &c,
        INCORRECTLY_PARTITIONED_TOPICS,
        "Existing topic shared has different number of partitions: expected 1, found 2",
    );
}
