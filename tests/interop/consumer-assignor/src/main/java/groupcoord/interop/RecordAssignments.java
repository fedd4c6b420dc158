package groupcoord.interop;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedWriter;
import java.io.FileOutputStream;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.zip.GZIPOutputStream;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.PartitionAssignorException;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.assignor.RangeAssignor;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;
import org.apache.kafka.coordinator.group.modern.Assignment;
import org.apache.kafka.coordinator.group.modern.GroupSpecImpl;
import org.apache.kafka.coordinator.group.modern.MemberSubscriptionAndAssignmentImpl;

/**
 * Generates seeded random consumer groups, runs Apache Kafka 4.4.0's uniform and range assignors
 * on each, and writes one JSON line per case: the input as Kafka's coordinator would hold it
 * (members in insertion order, subscriptions as topic-name lists, current assignments in record
 * order) and both outputs. The inputs are handed to the assignors the way the coordinator builds
 * them: members in a HashMap, subscribed names in a HashSet, assignments replayed from records
 * (HashMap of HashSets), so the Rust side must reproduce those iteration orders too.
 *
 * Usage: record [cases] [seed] [output.jsonl.gz]  |  bench [members] [partitions] [topics]
 */
public final class RecordAssignments {
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    private static final String[] RACKS = {"rack-a", "rack-b", "rack-c"};
    private static final ConsumerGroupPartitionAssignor UNIFORM = new UniformAssignor();
    private static final ConsumerGroupPartitionAssignor RANGE = new RangeAssignor();

    /** One generated topic; a ghost has an id but is missing from the metadata. */
    record Topic(String name, Uuid id, int partitions, List<List<String>> racks, boolean exists) {}

    /** One generated member; assignment is topic index to partitions in record order. */
    record Member(String id, String instanceId, String rackId, List<Integer> subscription,
                  Map<Integer, List<Integer>> assignment, List<Integer> assignmentTopicOrder) {}

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "record";
        if (mode.equals("bench")) {
            bench(args.length > 1 ? Integer.parseInt(args[1]) : 1000,
                  args.length > 2 ? Integer.parseInt(args[2]) : 10000,
                  args.length > 3 ? Integer.parseInt(args[3]) : 10);
            return;
        }
        int cases = args.length > 1 ? Integer.parseInt(args[1]) : 1200;
        long seed = args.length > 2 ? Long.parseLong(args[2]) : 20241001L;
        String output = args.length > 3 ? args[3] : "apache-4.4-outputs.jsonl.gz";
        ObjectMapper mapper = new ObjectMapper();
        try (BufferedWriter out = new BufferedWriter(new OutputStreamWriter(
                new GZIPOutputStream(new FileOutputStream(output)), StandardCharsets.UTF_8))) {
            for (int i = 0; i < cases; i++) {
                out.write(mapper.writeValueAsString(recordCase(seed, i)));
                out.write('\n');
            }
        }
        System.err.println("wrote " + cases + " cases to " + output);
    }

    static ObjectNode recordCase(long seed, int index) {
        // java.util.Random's first draws are nearly equal for neighbouring seeds: scramble first.
        Random rnd = new Random(splitMix64(seed * 1_000_003L + index));
        boolean racks = rnd.nextBoolean();
        List<Topic> topics = randomTopics(rnd, racks);
        boolean homogeneous = rnd.nextBoolean();
        int memberCount = 1 + rnd.nextInt(rnd.nextInt(4) == 0 ? 5 : 50);
        boolean statics = rnd.nextInt(3) == 0;
        List<Member> members = new ArrayList<>();
        List<Integer> shared = randomSubscription(rnd, topics, homogeneous ? 0.02 : 0.1);
        for (int m = 0; m < memberCount; m++) {
            List<Integer> subscription = homogeneous
                ? shuffled(rnd, shared) : randomSubscription(rnd, topics, 0.1);
            members.add(new Member(randomMemberId(rnd),
                statics && rnd.nextInt(4) != 0 ? "instance-" + rnd.nextInt(1000) + "-" + m : null,
                racks ? RACKS[rnd.nextInt(RACKS.length)] : null,
                subscription, new HashMap<>(), new ArrayList<>()));
        }
        int previousKind = rnd.nextInt(4);
        String previous = switch (previousKind) {
            case 0 -> "none";
            case 1 -> { randomOwnership(rnd, topics, members); yield "random"; }
            default -> {
                ConsumerGroupPartitionAssignor prior = previousKind == 2 ? UNIFORM : RANGE;
                yield priorRun(rnd, prior, topics, members) ? "prior-" + prior.name() : "none";
            }
        };

        ObjectNode line = JSON.objectNode();
        line.put("case", index);
        line.put("seed", seed);
        line.put("previous", previous);
        line.set("topics", topicsJson(topics));
        line.set("members", membersJson(members));
        GroupSpec spec = groupSpec(topics, members);
        line.put("subscription_type", spec.subscriptionType() == SubscriptionType.HOMOGENEOUS
            ? "Homogeneous" : "Heterogeneous");
        line.set("uniform", outcome(UNIFORM, spec, describer(topics), topics));
        line.set("range", outcome(RANGE, spec, describer(topics), topics));
        return line;
    }

    static long splitMix64(long x) {
        x += 0x9E3779B97F4A7C15L;
        x = (x ^ (x >>> 30)) * 0xBF58476D1CE4E5B9L;
        x = (x ^ (x >>> 27)) * 0x94D049BB133111EBL;
        return x ^ (x >>> 31);
    }

    static List<Topic> randomTopics(Random rnd, boolean racks) {
        int count = 1 + rnd.nextInt(10);
        List<Topic> topics = new ArrayList<>();
        for (int t = 0; t < count; t++) {
            int partitions = 1 + rnd.nextInt(rnd.nextInt(3) == 0 ? 8 : 64);
            topics.add(newTopic(rnd, "topic-" + t + "-" + Integer.toString(rnd.nextInt(1 << 20), 36),
                partitions, racks, true));
        }
        // Now and then a topic deleted between subscription and assignment.
        if (rnd.nextInt(40) == 0) {
            topics.add(newTopic(rnd, "deleted-topic", 4, racks, false));
        }
        return topics;
    }

    static Topic newTopic(Random rnd, String name, int partitions, boolean racks, boolean exists) {
        List<List<String>> partitionRacks = new ArrayList<>();
        if (racks) {
            for (int p = 0; p < partitions; p++) {
                List<String> replicas = new ArrayList<>();
                for (String rack : RACKS) {
                    if (rnd.nextBoolean()) replicas.add(rack);
                }
                partitionRacks.add(replicas);
            }
        }
        return new Topic(name, new Uuid(rnd.nextLong(), rnd.nextLong()), partitions, partitionRacks, exists);
    }

    static List<Integer> randomSubscription(Random rnd, List<Topic> topics, double emptyChance) {
        List<Integer> subscription = new ArrayList<>();
        if (rnd.nextDouble() < emptyChance) return subscription;
        double keep = 0.2 + 0.8 * rnd.nextDouble();
        for (int t = 0; t < topics.size(); t++) {
            if (rnd.nextDouble() < keep) subscription.add(t);
        }
        if (subscription.isEmpty()) subscription.add(rnd.nextInt(topics.size()));
        return shuffled(rnd, subscription);
    }

    static List<Integer> shuffled(Random rnd, List<Integer> list) {
        List<Integer> copy = new ArrayList<>(list);
        Collections.shuffle(copy, rnd);
        return copy;
    }

    static String randomMemberId(Random rnd) {
        return new Uuid(rnd.nextLong(), rnd.nextLong()).toString();
    }

    /** Some partitions owned by random members (subscribed or not), in random record order. */
    static void randomOwnership(Random rnd, List<Topic> topics, List<Member> members) {
        double owned = rnd.nextDouble();
        for (int t = 0; t < topics.size(); t++) {
            if (!topics.get(t).exists()) continue;
            for (int p = 0; p < topics.get(t).partitions(); p++) {
                if (rnd.nextDouble() >= owned) continue;
                Member member = members.get(rnd.nextInt(members.size()));
                member.assignment().computeIfAbsent(t, k -> new ArrayList<>()).add(p);
            }
        }
        for (Member member : members) {
            List<Integer> order = new ArrayList<>(member.assignment().keySet());
            Collections.shuffle(order, rnd);
            member.assignmentTopicOrder().addAll(order);
            for (List<Integer> partitions : member.assignment().values()) {
                Collections.shuffle(partitions, rnd);
            }
        }
    }

    /**
     * The current assignment is a previous run's output on a slightly different group (some
     * members joined since, some left, some changed subscription), recorded in the previous
     * output's iteration order as Kafka writes it to the target assignment record.
     */
    static boolean priorRun(Random rnd, ConsumerGroupPartitionAssignor prior, List<Topic> topics,
                            List<Member> members) {
        List<Member> before = new ArrayList<>();
        for (Member member : members) {
            if (rnd.nextInt(8) == 0) continue; // joined since
            List<Integer> subscription = rnd.nextInt(6) == 0
                ? randomSubscription(rnd, topics, 0.1) : member.subscription();
            before.add(new Member(member.id(), member.instanceId(), member.rackId(), subscription,
                new HashMap<>(), new ArrayList<>()));
        }
        int leavers = rnd.nextInt(4);
        for (int i = 0; i < leavers; i++) {
            before.add(new Member(randomMemberId(rnd), null, null,
                randomSubscription(rnd, topics, 0.1), new HashMap<>(), new ArrayList<>()));
        }
        Collections.shuffle(before, rnd);
        GroupAssignment output;
        try {
            output = prior.assign(groupSpec(topics, before), describer(topics));
        } catch (PartitionAssignorException e) {
            return false;
        }
        Map<Uuid, Integer> topicIndex = new HashMap<>();
        for (int t = 0; t < topics.size(); t++) topicIndex.put(topics.get(t).id(), t);
        for (Member member : members) {
            MemberAssignment assigned = output.members().get(member.id());
            if (assigned == null) continue;
            for (Map.Entry<Uuid, Set<Integer>> entry : assigned.partitions().entrySet()) {
                int t = topicIndex.get(entry.getKey());
                member.assignmentTopicOrder().add(t);
                member.assignment().put(t, new ArrayList<>(entry.getValue()));
            }
        }
        return true;
    }

    /** The GroupSpec as Kafka's TargetAssignmentBuilder builds it. */
    static GroupSpec groupSpec(List<Topic> topics, List<Member> members) {
        Map<String, MemberSubscriptionAndAssignmentImpl> specs = new HashMap<>();
        Map<Uuid, Map<Integer, String>> inverted = new HashMap<>();
        Set<Set<Integer>> distinctSubscriptions = new HashSet<>();
        for (Member member : members) {
            // ConsumerGroupMember keeps names in a HashSet; TopicIds iterates it and maps to ids.
            Set<String> names = new HashSet<>();
            for (int t : member.subscription()) names.add(topics.get(t).name());
            Set<Uuid> ids = new LinkedHashSet<>();
            for (String name : names) {
                for (Topic topic : topics) {
                    if (topic.name().equals(name)) ids.add(topic.id());
                }
            }
            distinctSubscriptions.add(new HashSet<>(member.subscription()));
            // Assignment.fromRecord: Collectors.toMap into a HashMap, partitions into HashSets.
            Map<Uuid, Set<Integer>> partitions = new HashMap<>();
            for (int t : member.assignmentTopicOrder()) {
                Uuid id = topics.get(t).id();
                partitions.put(id, new HashSet<>(member.assignment().get(t)));
                for (int p : member.assignment().get(t)) {
                    inverted.computeIfAbsent(id, k -> new HashMap<>()).put(p, member.id());
                }
            }
            specs.put(member.id(), new MemberSubscriptionAndAssignmentImpl(
                Optional.ofNullable(member.rackId()), Optional.ofNullable(member.instanceId()),
                ids, new Assignment(partitions)));
        }
        SubscriptionType type = distinctSubscriptions.size() <= 1
            ? SubscriptionType.HOMOGENEOUS : SubscriptionType.HETEROGENEOUS;
        return new GroupSpecImpl(Collections.unmodifiableMap(specs), type, inverted);
    }

    static SubscribedTopicDescriber describer(List<Topic> topics) {
        Map<Uuid, Topic> byId = new HashMap<>();
        for (Topic topic : topics) {
            if (topic.exists()) byId.put(topic.id(), topic);
        }
        return new SubscribedTopicDescriber() {
            @Override
            public int numPartitions(Uuid topicId) {
                Topic topic = byId.get(topicId);
                return topic == null ? -1 : topic.partitions();
            }

            @Override
            public Set<String> racksForPartition(Uuid topicId, int partition) {
                Topic topic = byId.get(topicId);
                if (topic == null || topic.racks().isEmpty()) return Set.of();
                return new HashSet<>(topic.racks().get(partition));
            }
        };
    }

    static ObjectNode outcome(ConsumerGroupPartitionAssignor assignor, GroupSpec spec,
                              SubscribedTopicDescriber describer, List<Topic> topics) {
        ObjectNode node = JSON.objectNode();
        try {
            GroupAssignment assignment = assignor.assign(spec, describer);
            Map<Uuid, Integer> topicIndex = new HashMap<>();
            for (int t = 0; t < topics.size(); t++) topicIndex.put(topics.get(t).id(), t);
            ObjectNode members = node.putObject("assignment");
            for (Map.Entry<String, MemberAssignment> member
                    : new TreeMap<>(assignment.members()).entrySet()) {
                // In iteration order: the order Kafka writes the target assignment record in.
                ArrayNode owned = members.putArray(member.getKey());
                member.getValue().partitions().forEach((id, partitions) -> {
                    ArrayNode entry = owned.addArray();
                    entry.add(topicIndex.get(id));
                    ArrayNode list = entry.addArray();
                    partitions.forEach(list::add);
                });
            }
        } catch (PartitionAssignorException e) {
            node.put("error", e.getMessage());
        }
        return node;
    }

    static ArrayNode topicsJson(List<Topic> topics) {
        ArrayNode array = JSON.arrayNode();
        for (Topic topic : topics) {
            ObjectNode node = array.addObject();
            node.put("name", topic.name());
            node.put("msb", topic.id().getMostSignificantBits());
            node.put("lsb", topic.id().getLeastSignificantBits());
            node.put("partitions", topic.partitions());
            if (!topic.exists()) node.put("exists", false);
            if (!topic.racks().isEmpty()) {
                // One digit per partition: bit i set when a replica is in RACKS[i].
                StringBuilder racks = new StringBuilder();
                for (List<String> replicas : topic.racks()) {
                    int mask = 0;
                    for (int i = 0; i < RACKS.length; i++) {
                        if (replicas.contains(RACKS[i])) mask |= 1 << i;
                    }
                    racks.append(mask);
                }
                node.put("racks", racks.toString());
            }
        }
        return array;
    }

    static ArrayNode membersJson(List<Member> members) {
        ArrayNode array = JSON.arrayNode();
        for (Member member : members) {
            ObjectNode node = array.addObject();
            node.put("id", member.id());
            if (member.instanceId() != null) node.put("instance", member.instanceId());
            if (member.rackId() != null) node.put("rack", member.rackId());
            ArrayNode subscription = node.putArray("subscription");
            member.subscription().forEach(subscription::add);
            if (!member.assignmentTopicOrder().isEmpty()) {
                ArrayNode assignment = node.putArray("assignment");
                for (int t : member.assignmentTopicOrder()) {
                    ArrayNode entry = assignment.addArray();
                    entry.add(t);
                    ArrayNode partitions = entry.addArray();
                    member.assignment().get(t).forEach(partitions::add);
                }
            }
        }
        return array;
    }

    /**
     * Times both assignors on the benchmark group: M members ("member-0000"...) subscribed to T
     * topics ("topic-0"..., ids (t + 1, 42)) that share P partitions; a fresh assignment, then a
     * sticky one after the last member left. Mirrors examples/consumer_assignor_bench.rs.
     */
    static void bench(int memberCount, int partitionCount, int topicCount) {
        List<Topic> topics = new ArrayList<>();
        for (int t = 0; t < topicCount; t++) {
            int partitions = partitionCount / topicCount + (t < partitionCount % topicCount ? 1 : 0);
            topics.add(new Topic("topic-" + t, new Uuid(t + 1, 42), partitions, List.of(), true));
        }
        List<Integer> all = new ArrayList<>();
        for (int t = 0; t < topicCount; t++) all.add(t);
        for (ConsumerGroupPartitionAssignor assignor : List.of(UNIFORM, RANGE)) {
            for (boolean heterogeneous : List.of(false, true)) {
                List<Member> members = new ArrayList<>();
                for (int m = 0; m < memberCount; m++) {
                    // Heterogeneous: every member skips one topic.
                    List<Integer> subscription = new ArrayList<>(all);
                    if (heterogeneous && topicCount > 1) subscription.remove(Integer.valueOf(m % topicCount));
                    members.add(new Member(String.format("member-%04d", m), null, null, subscription,
                        new HashMap<>(), new ArrayList<>()));
                }
                GroupSpec fresh = groupSpec(topics, members);
                GroupAssignment first = assignor.assign(fresh, describer(topics));
                List<Member> remaining = new ArrayList<>();
                for (Member member : members.subList(0, members.size() - 1)) {
                    Member copy = new Member(member.id(), null, null, member.subscription(),
                        new HashMap<>(), new ArrayList<>());
                    first.members().get(member.id()).partitions().forEach((id, partitions) -> {
                        int t = (int) id.getMostSignificantBits() - 1;
                        copy.assignmentTopicOrder().add(t);
                        copy.assignment().put(t, new ArrayList<>(partitions));
                    });
                    remaining.add(copy);
                }
                GroupSpec sticky = groupSpec(topics, remaining);
                String label = assignor.name() + (heterogeneous ? " heterogeneous" : " homogeneous");
                report(label + " fresh ", () -> assignor.assign(fresh, describer(topics)));
                report(label + " sticky", () -> assignor.assign(sticky, describer(topics)));
                System.out.printf("java %-32s digest fresh %s sticky %s%n", label,
                    digest(first), digest(assignor.assign(sticky, describer(topics))));
            }
        }
    }

    /**
     * FNV-1a (64 bit) of the assignment in record order: members by id, each as
     * "id:" then per topic "msb/" and "p," per partition, ";" after a topic, a newline after a
     * member. examples/consumer_assignor_bench.rs prints the same digest.
     */
    static String digest(GroupAssignment assignment) {
        StringBuilder text = new StringBuilder();
        for (Map.Entry<String, MemberAssignment> member : new TreeMap<>(assignment.members()).entrySet()) {
            text.append(member.getKey()).append(':');
            member.getValue().partitions().forEach((id, partitions) -> {
                text.append(id.getMostSignificantBits()).append('/');
                partitions.forEach(p -> text.append(p).append(','));
                text.append(';');
            });
            text.append('\n');
        }
        long hash = 0xcbf29ce484222325L;
        for (byte b : text.toString().getBytes(StandardCharsets.UTF_8)) {
            hash ^= b & 0xff;
            hash *= 0x100000001b3L;
        }
        return Long.toHexString(hash);
    }

    static void report(String label, Runnable run) {
        for (int i = 0; i < 20; i++) run.run(); // warm-up (JIT)
        int rounds = 30;
        long[] samples = new long[rounds];
        for (int i = 0; i < rounds; i++) {
            long start = System.nanoTime();
            run.run();
            samples[i] = System.nanoTime() - start;
        }
        java.util.Arrays.sort(samples);
        System.out.printf("java %-32s median %8.3f ms  min %8.3f ms%n", label,
            samples[rounds / 2] / 1e6, samples[0] / 1e6);
    }
}
