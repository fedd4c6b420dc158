package interop;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

/**
 * One Kafka Streams 4.4 instance with {@code group.protocol=streams}.
 *
 * <p>Topology (two subtopologies):
 * <ul>
 *   <li>subtopology 0: {@code interop-input} -> filter -> mapValues -> {@code interop-filtered}
 *       (stateless branch), and groupBy(value) -> repartition topic {@code <app>-by-word-repartition}</li>
 *   <li>subtopology 1: repartition topic -> count (store {@code word-counts}, changelog
 *       {@code <app>-word-counts-changelog}) -> {@code interop-counts}</li>
 * </ul>
 *
 * <p>Protocol with the driver: the app prints lines starting with {@code @@} on stdout
 * ({@code @@STATE <ms> <old> <new>}, {@code @@TASKS <ms> <state> a=<ids> s=<ids>}, {@code @@ERROR ...},
 * {@code @@CLOSED <ms>}); it reads commands from stdin: {@code halt} (Runtime.halt, no close),
 * {@code close} (close and leave the group), {@code close-remain} (close, stay in the group: the
 * static-member bounce), {@code topology} (print the topology description to stderr).
 *
 * <p>Usage: {@code StreamsApp key=value ...} with bootstrap, app, name, state.dir, optional
 * instance.id (static membership), standby (num.standby.replicas, default 1), threads (default 1).
 */
public final class StreamsApp {
    public static final String INPUT = "interop-input";
    public static final String FILTERED = "interop-filtered";
    public static final String COUNTS = "interop-counts";

    private static final PrintStream OUT = System.out;

    static synchronized void report(String line) {
        OUT.println("@@" + line);
        OUT.flush();
    }

    public static Topology topology() {
        StreamsBuilder b = new StreamsBuilder();
        KStream<String, String> in = b.stream(INPUT, Consumed.with(Serdes.String(), Serdes.String()));
        in.filter((k, v) -> v != null && (v.length() % 2 == 0))
          .mapValues(v -> v.toUpperCase())
          .to(FILTERED, Produced.with(Serdes.String(), Serdes.String()));
        in.groupBy((k, v) -> v, Grouped.with("by-word", Serdes.String(), Serdes.String()))
          .count(Materialized.as("word-counts"))
          .toStream()
          .to(COUNTS, Produced.with(Serdes.String(), Serdes.Long()));
        return b.build();
    }

    static String ids(java.util.Set<TaskMetadata> tasks) {
        TreeSet<String> s = new TreeSet<>();
        for (TaskMetadata t : tasks) {
            s.add(t.taskId().toString());
        }
        return String.join(",", s);
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> a = Args.parse(args);
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, a.getOrDefault("app", "interop-app"));
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, a.get("bootstrap"));
        p.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
        p.put(StreamsConfig.STATE_DIR_CONFIG, a.get("state.dir"));
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, a.getOrDefault("threads", "1"));
        // Ignored by the streams protocol (the group config group.streams.num.standby.replicas
        // decides), set for documentation and for the classic protocol.
        p.put(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, a.getOrDefault("standby", "1"));
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "1000");
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, "0");
        p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        p.put(StreamsConfig.CLIENT_ID_CONFIG, a.getOrDefault("name", "app"));
        // Keep the rest of the client traffic modest on a shared 2-core box.
        p.put(StreamsConfig.METADATA_MAX_AGE_CONFIG, "30000");
        if (a.containsKey("instance.id")) {
            p.put(StreamsConfig.consumerPrefix("group.instance.id"), a.get("instance.id"));
        }
        for (Map.Entry<String, String> e : a.entrySet()) {
            if (e.getKey().startsWith("cfg.")) {
                p.put(e.getKey().substring(4), e.getValue());
            }
        }

        Topology topo = topology();
        KafkaStreams streams = new KafkaStreams(topo, p);
        streams.setStateListener((n, o) -> report("STATE " + System.currentTimeMillis() + " " + o + " " + n));
        streams.setUncaughtExceptionHandler(e -> {
            report("ERROR " + System.currentTimeMillis() + " " + e.toString().replace('\n', ' '));
            e.printStackTrace();
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });

        Thread reporter = new Thread(() -> {
            while (true) {
                try {
                    Thread.sleep(Long.parseLong(a.getOrDefault("report.ms", "250")));
                    StringBuilder act = new StringBuilder();
                    StringBuilder sb = new StringBuilder();
                    KafkaStreams.State st = streams.state();
                    if (st == KafkaStreams.State.RUNNING || st == KafkaStreams.State.REBALANCING) {
                        TreeSet<String> as = new TreeSet<>();
                        TreeSet<String> ss = new TreeSet<>();
                        for (ThreadMetadata t : streams.metadataForLocalThreads()) {
                            if (!ids(t.activeTasks()).isEmpty()) as.add(ids(t.activeTasks()));
                            if (!ids(t.standbyTasks()).isEmpty()) ss.add(ids(t.standbyTasks()));
                        }
                        act.append(String.join(",", as));
                        sb.append(String.join(",", ss));
                    }
                    report("TASKS " + System.currentTimeMillis() + " " + st + " a=" + act + " s=" + sb);
                } catch (InterruptedException ie) {
                    return;
                } catch (Exception ex) {
                    report("ERROR " + System.currentTimeMillis() + " reporter " + ex);
                }
            }
        }, "reporter");
        reporter.setDaemon(true);

        streams.start();
        reporter.start();

        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            line = line.trim();
            if (line.equals("halt")) {
                Runtime.getRuntime().halt(137);
            } else if (line.equals("close") || line.equals("close-remain")) {
                CloseOptions.GroupMembershipOperation op = line.equals("close")
                    ? CloseOptions.GroupMembershipOperation.LEAVE_GROUP
                    : CloseOptions.GroupMembershipOperation.REMAIN_IN_GROUP;
                boolean ok = streams.close(CloseOptions.timeout(Duration.ofSeconds(30)).withGroupMembershipOperation(op));
                report("CLOSED " + System.currentTimeMillis() + " " + ok);
                System.exit(0);
            } else if (line.equals("topology")) {
                System.err.println(topo.describe());
            }
        }
        // stdin closed: the driver died; do not linger.
        Runtime.getRuntime().halt(3);
    }
}
