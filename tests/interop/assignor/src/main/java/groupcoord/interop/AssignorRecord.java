package groupcoord.interop;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import groupcoord.interop.AssignorBench.Sub;

import org.apache.kafka.coordinator.group.api.streams.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.TaskAssignorException;
import org.apache.kafka.coordinator.group.streams.assignor.AssignmentConfigsImpl;
import org.apache.kafka.coordinator.group.streams.assignor.GroupSpecImpl;
import org.apache.kafka.coordinator.group.streams.assignor.MemberMetadataAndStateImpl;
import org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Records Apache Kafka 4.4.0's {@link StickyTaskAssignor} on seeded random groups, one JSON line
 * per group: the full input (members in the order they are put into the assignor's member map,
 * as the coordinator's {@code TargetAssignmentBuilder} does) and the full output (or the
 * exception's message). {@code tests/assignor_apache.rs} replays every line against groupcoord's
 * {@code sticky} assignor and requires identical outputs.
 *
 * <p>Groups vary: 0 to 48 members, one or several members per process, member and process ids
 * in several styles (short, Kafka Uuid, UUID; they decide the HashMap orders), client tags,
 * 1 to 4 subtopologies of different sizes, stateful or not, 0 to 2 standbys, and previous
 * assignments that are empty, the result of earlier rounds with members joining and leaving,
 * partly reconciled, or random and stale (tasks outside the topology, claimed twice, standbys
 * and warm-ups anywhere), with reported task offsets (including -2, "caught up").
 *
 * <p>Usage: {@code java -cp ... groupcoord.interop.AssignorRecord OUT.jsonl [CASES] [FIRST_SEED]}
 */
public final class AssignorRecord {
    static final ObjectMapper JSON = new ObjectMapper();
    static final String B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

    static final class Mem {
        final String id;
        final String process;
        final Map<String, String> tags = new TreeMap<>();
        Map<String, Set<Integer>> active = new TreeMap<>();
        Map<String, Set<Integer>> standby = new TreeMap<>();
        Map<String, Set<Integer>> warmup = new TreeMap<>();
        Map<String, Map<Integer, Long>> offsets = new TreeMap<>();
        Map<String, Map<Integer, Long>> endOffsets = new TreeMap<>();

        Mem(String id, String process) {
            this.id = id;
            this.process = process;
        }
    }

    static final class Case {
        final long seed;
        int standbys;
        List<String> tagKeys = List.of();
        final List<Sub> subs = new ArrayList<>();
        /** In insertion order of the assignor's member map. */
        List<Mem> members = new ArrayList<>();

        Case(long seed) {
            this.seed = seed;
        }
    }

    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[0]);
        int cases = args.length > 1 ? Integer.parseInt(args[1]) : 1200;
        long first = args.length > 2 ? Long.parseLong(args[2]) : 1;
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out, StandardCharsets.UTF_8))) {
            for (long seed = first; seed < first + cases; seed++) {
                Case c = generate(seed);
                w.println(JSON.writeValueAsString(record(c)));
            }
        }
    }

    // ---- generation ----

    static String id(SplittableRandom r, int style, String prefix, int i) {
        StringBuilder b = new StringBuilder();
        switch (style) {
            case 0 -> b.append(prefix).append(i);
            case 1 -> {
                // Kafka's Uuid.toString(): 22 characters of URL-safe base64.
                for (int k = 0; k < 22; k++) {
                    b.append(B64.charAt(r.nextInt(64)));
                }
            }
            default -> b.append(new java.util.UUID(r.nextLong(), r.nextLong()));
        }
        return b.toString();
    }

    static Case generate(long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        Case c = new Case(seed);
        int kind = (int) (seed % 6);
        // Every other group of the last kind is large (table resizes, long queues).
        boolean large = seed % 12 == 5;
        int nSubs = 1 + r.nextInt(large ? 6 : 4);
        boolean namedSubs = r.nextInt(3) == 0;
        for (int s = 0; s < nSubs; s++) {
            String sid = namedSubs ? "sub-" + (char) ('a' + r.nextInt(26)) + s : Integer.toString(s);
            int parts = 1 + r.nextInt(large ? 20 : r.nextInt(3) == 0 ? 16 : 6);
            c.subs.add(new Sub(sid, parts, r.nextInt(10) < 6));
        }
        c.standbys = r.nextInt(3);
        boolean tagged = r.nextBoolean();
        if (tagged) {
            c.tagKeys = r.nextBoolean() ? List.of("rack") : List.of("rack", "zone");
        }
        int memberStyle = r.nextInt(3);
        int processStyle = r.nextInt(3);
        int nextMember = 0;
        int nextProcess = 0;
        int maxMembers = large ? 48 : (r.nextInt(4) == 0 ? 24 : 9);
        int nMembers = seed % 97 == 0 ? 0 : 1 + r.nextInt(maxMembers);
        List<String> processes = new ArrayList<>();
        int nProcs = Math.max(1, 1 + r.nextInt(Math.max(1, nMembers)));
        for (int p = 0; p < nProcs; p++) {
            processes.add(id(r, processStyle, "p", nextProcess++));
        }
        List<Mem> members = new ArrayList<>();
        for (int i = 0; i < nMembers; i++) {
            members.add(newMember(r, c, id(r, memberStyle, "m", nextMember++), processes));
        }

        switch (kind) {
            case 0 -> { } // from scratch
            case 2 -> randomState(r, c, members);
            default -> {
                // Earlier rounds: Kafka's own results become the current assignment while
                // members join and leave.
                int rounds = 1 + r.nextInt(4);
                for (int round = 0; round < rounds && !members.isEmpty(); round++) {
                    c.members = shuffled(r, members);
                    GroupAssignment a;
                    try {
                        a = run(c);
                    } catch (TaskAssignorException e) {
                        break;
                    }
                    for (Mem m : members) {
                        own(r, c, m, a.members().get(m.id), kind == 3);
                    }
                    int leave = r.nextInt(3) == 0 && members.size() > 1 ? 1 : 0;
                    for (int k = 0; k < leave; k++) {
                        members.remove(r.nextInt(members.size()));
                    }
                    int join = r.nextInt(3);
                    for (int k = 0; k < join; k++) {
                        if (r.nextInt(4) == 0) {
                            processes.add(id(r, processStyle, "p", nextProcess++));
                        }
                        members.add(newMember(r, c, id(r, memberStyle, "m", nextMember++), processes));
                    }
                }
                if (kind == 4) {
                    randomState(r, c, members.isEmpty() ? members : List.of(members.get(0)));
                }
            }
        }
        // Insertion order: member-id order for a third of the groups (what groupcoord's
        // `sticky` assumes without an order hint), otherwise random.
        if (seed % 3 == 0) {
            members.sort((a, b) -> a.id.compareTo(b.id));
            c.members = members;
        } else {
            c.members = shuffled(r, members);
        }
        return c;
    }

    static Mem newMember(SplittableRandom r, Case c, String id, List<String> processes) {
        Mem m = new Mem(id, processes.get(r.nextInt(processes.size())));
        for (String key : c.tagKeys) {
            if (r.nextInt(8) != 0) {
                m.tags.put(key, key.charAt(0) + Integer.toString(r.nextInt(3)));
            }
        }
        return m;
    }

    static <T> List<T> shuffled(SplittableRandom r, List<T> in) {
        List<T> out = new ArrayList<>(in);
        for (int i = out.size() - 1; i > 0; i--) {
            Collections.swap(out, i, r.nextInt(i + 1));
        }
        return out;
    }

    static long offset(SplittableRandom r) {
        return switch (r.nextInt(6)) {
            case 0 -> -2L;
            case 1 -> 0L;
            case 2 -> 1000L;
            default -> r.nextInt(1001);
        };
    }

    static void put(Map<String, Set<Integer>> tasks, String sub, int p) {
        tasks.computeIfAbsent(sub, k -> new TreeSet<>()).add(p);
    }

    static void putOffset(Map<String, Map<Integer, Long>> offsets, String sub, int p, long o) {
        offsets.computeIfAbsent(sub, k -> new TreeMap<>()).put(p, o);
    }

    /** The member now owns (all or, if partial, part of) {@code a} and reports offsets. */
    static void own(SplittableRandom r, Case c, Mem m, MemberAssignment a, boolean partial) {
        m.active = new TreeMap<>();
        m.standby = new TreeMap<>();
        m.offsets = new TreeMap<>();
        m.endOffsets = new TreeMap<>();
        if (a == null) {
            return;
        }
        Map<String, Boolean> stateful = new HashMap<>();
        for (Sub s : c.subs) {
            stateful.put(s.id(), s.stateful());
        }
        a.activeTasks().forEach((sub, ps) -> new TreeSet<>(ps).forEach(p -> {
            if (partial && r.nextInt(4) == 0) {
                return;
            }
            put(m.active, sub, p);
            if (stateful.getOrDefault(sub, false) && r.nextInt(3) != 0) {
                putOffset(m.offsets, sub, p, r.nextBoolean() ? -2L : 1000L);
                putOffset(m.endOffsets, sub, p, 1000L);
            }
        }));
        a.standbyTasks().forEach((sub, ps) -> new TreeSet<>(ps).forEach(p -> {
            if (partial && r.nextInt(4) == 0) {
                return;
            }
            put(m.standby, sub, p);
            if (r.nextInt(3) != 0) {
                putOffset(m.offsets, sub, p, offset(r));
            }
        }));
    }

    /** Random, possibly stale or contradictory current assignments and offsets. */
    static void randomState(SplittableRandom r, Case c, List<Mem> members) {
        for (Mem m : members) {
            for (Sub s : c.subs) {
                for (int p = 0; p < s.partitions() + 1; p++) {
                    int roll = r.nextInt(20);
                    if (roll < 3) {
                        put(m.active, s.id(), p);
                    } else if (roll < 5) {
                        put(m.standby, s.id(), p);
                    } else if (roll < 6) {
                        put(m.warmup, s.id(), p);
                    }
                    if (r.nextInt(5) == 0) {
                        putOffset(m.offsets, s.id(), p, offset(r));
                    }
                    if (r.nextInt(8) == 0) {
                        putOffset(m.endOffsets, s.id(), p, r.nextInt(1001));
                    }
                }
            }
            if (r.nextInt(5) == 0) {
                put(m.active, "gone", r.nextInt(3));
                putOffset(m.offsets, "gone", 0, 5L);
            }
        }
    }

    // ---- Kafka's assignor ----

    static <V> Map<String, V> copyOf(Map<String, V> m) {
        return new HashMap<>(m);
    }

    /** Like TargetAssignmentBuilder: a HashMap filled in the case's member order. */
    static GroupAssignment run(Case c) {
        Map<String, MemberMetadataAndStateImpl> specs = new HashMap<>();
        for (Mem m : c.members) {
            specs.put(m.id, new MemberMetadataAndStateImpl(Optional.empty(), Optional.empty(), m.process,
                m.tags, copyOf(m.active), copyOf(m.standby), copyOf(m.warmup), copyOf(m.offsets),
                copyOf(m.endOffsets)));
        }
        return new StickyTaskAssignor().assign(
            new GroupSpecImpl(specs, new AssignmentConfigsImpl(c.standbys, c.tagKeys)),
            AssignorBench.describer(c.subs));
    }

    // ---- output ----

    static String tasks(Map<String, Set<Integer>> tasks) {
        List<String> out = new ArrayList<>();
        new TreeMap<>(tasks).forEach((s, ps) -> new TreeSet<>(ps).forEach(p -> out.add(s + "_" + p)));
        return String.join(" ", out);
    }

    static String offsets(Map<String, Map<Integer, Long>> offsets) {
        List<String> out = new ArrayList<>();
        new TreeMap<>(offsets).forEach((s, ps) -> new TreeMap<>(ps).forEach((p, o) -> out.add(s + "_" + p + "=" + o)));
        return String.join(" ", out);
    }

    static void putIfNotEmpty(ObjectNode n, String key, String value) {
        if (!value.isEmpty()) {
            n.put(key, value);
        }
    }

    static ObjectNode record(Case c) {
        ObjectNode n = JSON.createObjectNode();
        n.put("seed", c.seed);
        n.put("standbys", c.standbys);
        ArrayNode tags = n.putArray("tags");
        c.tagKeys.forEach(tags::add);
        ArrayNode subs = n.putArray("subtopologies");
        for (Sub s : c.subs) {
            subs.addArray().add(s.id()).add(s.partitions()).add(s.stateful());
        }
        ArrayNode members = n.putArray("members");
        for (Mem m : c.members) {
            ObjectNode o = members.addObject();
            o.put("id", m.id);
            o.put("process", m.process);
            if (!m.tags.isEmpty()) {
                ObjectNode t = o.putObject("tags");
                m.tags.forEach(t::put);
            }
            putIfNotEmpty(o, "active", tasks(m.active));
            putIfNotEmpty(o, "standby", tasks(m.standby));
            putIfNotEmpty(o, "warmup", tasks(m.warmup));
            putIfNotEmpty(o, "offsets", offsets(m.offsets));
            putIfNotEmpty(o, "end_offsets", offsets(m.endOffsets));
        }
        try {
            GroupAssignment a = run(c);
            ObjectNode result = n.putObject("result");
            new TreeMap<>(a.members()).forEach((id, ma) ->
                result.putArray(id).add(tasks(ma.activeTasks())).add(tasks(ma.standbyTasks())));
        } catch (TaskAssignorException e) {
            n.put("error", e.getMessage());
        }
        return n;
    }

    private AssignorRecord() { }
}
