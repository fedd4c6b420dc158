package interop;

import java.io.BufferedReader;
import java.io.File;
import java.io.FileWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Starts N {@link StreamsApp} instances as separate JVMs and walks them through
 * start, crash (Runtime.halt), graceful close, scale-out and a static-member bounce, checking after each
 * step, from what the instances report through the Streams API, that every task is active on exactly one
 * live instance and that standbys sit on another instance than their active.
 *
 * <p>Options: --bootstrap H:P --instances N --partitions P --steps start,crash,close,add,static
 * --label NAME --workdir DIR --results FILE --settle-timeout-s S --hold-ms MS --standby 0|1
 * --describe (run kafka-streams-groups --describe at the end, output to DIR/describe.txt)
 * --require-standby true|false (default true: with >1 instance every stateful task needs a standby)
 * --app-loglevel LEVEL (root log level of the instances, default WARN)
 * --require-balance true|false (default true: active task counts per instance differ by at most 1).
 */
public final class Driver {
    static final class Inst {
        final int idx;
        final String name;
        final String instanceId;
        final Process proc;
        final Writer stdin;
        volatile String state = "CREATED";
        volatile long lastReport = 0;
        volatile Set<String> active = Set.of();
        volatile Set<String> standby = Set.of();
        volatile boolean live = true;
        volatile String error = null;
        volatile long closedAt = 0;
        /** When KafkaStreams.start() moved it out of CREATED (JVM start and set-up are done). */
        volatile long startedAt = 0;

        Inst(int idx, String name, String instanceId, Process proc) {
            this.idx = idx;
            this.name = name;
            this.instanceId = instanceId;
            this.proc = proc;
            this.stdin = new OutputStreamWriter(proc.getOutputStream(), StandardCharsets.UTF_8);
        }

        void send(String cmd) throws IOException {
            stdin.write(cmd + "\n");
            stdin.flush();
        }
    }

    final Map<String, String> opt;
    final String bootstrap;
    final String app;
    final Path work;
    final int partitions;
    final int standby;
    final long settleTimeoutMs;
    final long holdMs;
    final boolean requireStandby;
    final boolean requireBalance;
    final List<Inst> insts = new ArrayList<>();
    final Map<String, String> results = new LinkedHashMap<>();
    final PrintWriter log;
    int nextIdx = 0;

    Driver(Map<String, String> opt) throws IOException {
        this.opt = opt;
        this.bootstrap = opt.get("bootstrap");
        this.app = opt.getOrDefault("app", "interop-app");
        this.work = Path.of(opt.getOrDefault("workdir", "target/run"));
        Files.createDirectories(work);
        this.partitions = Integer.parseInt(opt.getOrDefault("partitions", "4"));
        this.standby = Integer.parseInt(opt.getOrDefault("standby", "1"));
        this.settleTimeoutMs = 1000L * Long.parseLong(opt.getOrDefault("settle-timeout-s", "120"));
        this.holdMs = Long.parseLong(opt.getOrDefault("hold-ms", "2000"));
        this.requireStandby = Boolean.parseBoolean(opt.getOrDefault("require-standby", "true"));
        this.requireBalance = Boolean.parseBoolean(opt.getOrDefault("require-balance", "true"));
        this.log = new PrintWriter(new FileWriter(work.resolve("driver.log").toFile(), true), true);
    }

    void say(String s) {
        String line = String.format("[driver %s %tT] %s", opt.getOrDefault("label", ""), System.currentTimeMillis(), s);
        System.out.println(line);
        log.println(line);
    }

    Set<String> expectedTasks() {
        TreeSet<String> s = new TreeSet<>();
        for (int sub = 0; sub < 2; sub++) {
            for (int p = 0; p < partitions; p++) {
                s.add(sub + "_" + p);
            }
        }
        return s;
    }

    static boolean stateful(String task) {
        return task.startsWith("1_");
    }

    Inst launch(String instanceId) throws IOException {
        int idx = nextIdx++;
        String name = "inst-" + idx;
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java,
            "-Xmx" + opt.getOrDefault("app-xmx", "256m"), "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            "-Xss512k", "-Dinterop.loglevel=" + opt.getOrDefault("app-loglevel", "WARN"),
            "-cp", System.getProperty("java.class.path"),
            "interop.StreamsApp", "bootstrap=" + bootstrap, "app=" + app, "name=" + name,
            "state.dir=" + work.resolve("state-" + (instanceId != null ? instanceId : name)),
            "standby=" + standby));
        if (instanceId != null) {
            cmd.add("instance.id=" + instanceId);
        }
        ProcessBuilder pb = new ProcessBuilder(cmd);
        File errFile = work.resolve(name + ".log").toFile();
        pb.redirectError(ProcessBuilder.Redirect.appendTo(errFile));
        Process p = pb.start();
        Inst in = new Inst(idx, name, instanceId, p);
        insts.add(in);
        Thread t = new Thread(() -> readReports(in, errFile), name + "-reader");
        t.setDaemon(true);
        t.start();
        say("launched " + name + (instanceId != null ? " (static " + instanceId + ")" : "") + " pid " + p.pid());
        return in;
    }

    void readReports(Inst in, File logFile) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in.proc.getInputStream(), StandardCharsets.UTF_8));
             PrintWriter w = new PrintWriter(new FileWriter(work.resolve(in.name + ".out").toFile(), true), true)) {
            String line;
            while ((line = r.readLine()) != null) {
                if (!line.startsWith("@@TASKS")) {
                    w.println(line);
                }
                if (line.startsWith("@@TASKS ")) {
                    String[] f = line.split(" ", -1);
                    in.state = f[2];
                    in.active = parseIds(f[3].substring(2));
                    in.standby = parseIds(f[4].substring(2));
                    in.lastReport = System.currentTimeMillis();
                } else if (line.startsWith("@@STATE ")) {
                    String[] f = line.split(" ");
                    if (in.startedAt == 0 && f[2].equals("CREATED")) {
                        in.startedAt = Long.parseLong(f[1]);
                    }
                    in.state = f[3];
                    if (!f[3].equals("RUNNING")) {
                        say(in.name + " state " + f[2] + " -> " + f[3]);
                    } else {
                        say(in.name + " RUNNING");
                    }
                } else if (line.startsWith("@@ERROR")) {
                    in.error = line;
                    say(in.name + " " + line);
                } else if (line.startsWith("@@CLOSED")) {
                    in.closedAt = System.currentTimeMillis();
                }
            }
        } catch (IOException e) {
            // process gone
        }
    }

    static Set<String> parseIds(String s) {
        if (s.isEmpty()) return Set.of();
        return new TreeSet<>(Arrays.asList(s.split(",")));
    }

    /** Null if the group looks settled, else why not. */
    String unsettledReason() {
        long now = System.currentTimeMillis();
        List<Inst> live = new ArrayList<>();
        for (Inst i : insts) if (i.live) live.add(i);
        if (live.isEmpty()) return "no live instance";
        Map<String, List<String>> activeOn = new TreeMap<>();
        Map<String, List<String>> standbyOn = new TreeMap<>();
        for (Inst i : live) {
            if (!i.state.equals("RUNNING")) return i.name + " is " + i.state;
            if (now - i.lastReport > 1500) return i.name + " has not reported for " + (now - i.lastReport) + " ms";
            for (String t : i.active) activeOn.computeIfAbsent(t, k -> new ArrayList<>()).add(i.name);
            for (String t : i.standby) standbyOn.computeIfAbsent(t, k -> new ArrayList<>()).add(i.name);
        }
        Set<String> exp = expectedTasks();
        for (String t : exp) {
            List<String> on = activeOn.getOrDefault(t, List.of());
            if (on.size() != 1) return "task " + t + " active on " + on;
        }
        for (String t : activeOn.keySet()) {
            if (!exp.contains(t)) return "unexpected task " + t;
        }
        for (Map.Entry<String, List<String>> e : standbyOn.entrySet()) {
            String act = activeOn.get(e.getKey()).get(0);
            if (e.getValue().contains(act)) return "standby " + e.getKey() + " on its active " + act;
            if (!stateful(e.getKey())) return "standby for stateless task " + e.getKey();
        }
        if (requireBalance) {
            int min = Integer.MAX_VALUE, max = 0;
            for (Inst i : live) {
                min = Math.min(min, i.active.size());
                max = Math.max(max, i.active.size());
            }
            if (max - min > 1) return "active tasks unbalanced (" + min + ".." + max + " per instance)";
        }
        if (requireStandby && standby > 0 && live.size() > 1) {
            for (String t : exp) {
                if (stateful(t) && standbyOn.getOrDefault(t, List.of()).isEmpty()) return "no standby for " + t;
            }
        }
        return null;
    }

    String snapshot() {
        StringBuilder sb = new StringBuilder();
        for (Inst i : insts) {
            if (!i.live) continue;
            sb.append(String.format("  %-7s %-12s %-10s active=%s standby=%s%n", i.name,
                i.instanceId == null ? "-" : i.instanceId, i.state, String.join(",", i.active), String.join(",", i.standby)));
        }
        return sb.toString();
    }

    /** Waits until the group is settled and stays so for hold-ms; returns seconds since t0, or -1. */
    double awaitSettled(String step, long t0) throws InterruptedException {
        long firstOk = -1;
        String last = null;
        long lastSaid = 0;
        while (System.currentTimeMillis() - t0 < settleTimeoutMs) {
            for (Inst i : insts) {
                if (i.live && !i.proc.isAlive()) {
                    say("UNEXPECTED: " + i.name + " exited with " + i.proc.exitValue());
                    i.live = false;
                }
            }
            String why = unsettledReason();
            long now = System.currentTimeMillis();
            if (why == null) {
                if (firstOk < 0) firstOk = now;
                if (now - firstOk >= holdMs) {
                    double s = (firstOk - t0) / 1000.0;
                    say(String.format("step %s settled after %.2f s%n%s", step, s, snapshot()));
                    return s;
                }
            } else {
                firstOk = -1;
                if (!why.equals(last) || now - lastSaid > 5000) {
                    log.println("  [" + step + " +" + (now - t0) + " ms] " + why);
                    last = why;
                    lastSaid = now;
                }
            }
            Thread.sleep(50);
        }
        say("step " + step + " did NOT settle within " + settleTimeoutMs / 1000 + " s: " + unsettledReason() + "\n" + snapshot());
        return -1;
    }

    void record(String step, double s) {
        results.put(step, s < 0 ? "FAIL" : String.format("%.2f", s));
    }

    Inst pick(boolean wantStatic) {
        for (int k = insts.size() - 1; k >= 0; k--) {
            Inst i = insts.get(k);
            if (i.live && ((i.instanceId != null) == wantStatic)) return i;
        }
        return null;
    }

    void stopProcess(Inst i, long waitMs) throws InterruptedException {
        if (!i.proc.waitFor(waitMs, TimeUnit.MILLISECONDS)) {
            say(i.name + " did not exit in " + waitMs + " ms, killing it");
            i.proc.destroyForcibly();
            i.proc.waitFor(5, TimeUnit.SECONDS);
        }
        i.live = false;
    }

    void createTopics() throws Exception {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(p)) {
            for (String t : List.of(StreamsApp.INPUT, StreamsApp.FILTERED, StreamsApp.COUNTS)) {
                try {
                    admin.createTopics(List.of(new NewTopic(t, partitions, (short) 1))).all().get(30, TimeUnit.SECONDS);
                    say("created topic " + t + " (" + partitions + " partitions)");
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof TopicExistsException)) throw e;
                    say("topic " + t + " exists");
                }
            }
        }
    }

    Thread startProducer() {
        Thread t = new Thread(() -> {
            Properties p = new Properties();
            p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
            p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
            p.put(ProducerConfig.CLIENT_ID_CONFIG, "interop-driver-producer");
            p.put(ProducerConfig.LINGER_MS_CONFIG, "20");
            Random rnd = new Random(42);
            long sent = 0;
            try (KafkaProducer<String, String> prod = new KafkaProducer<>(p)) {
                while (!Thread.currentThread().isInterrupted()) {
                    String w = "w" + rnd.nextInt(40) + (rnd.nextBoolean() ? "x" : "");
                    prod.send(new ProducerRecord<>(StreamsApp.INPUT, Long.toString(sent), w));
                    sent++;
                    try {
                        Thread.sleep(10);
                    } catch (InterruptedException e) {
                        break;
                    }
                }
                prod.flush();
            } catch (Exception e) {
                say("producer stopped: " + e);
            }
            results.put("produced", Long.toString(sent));
        }, "producer");
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** Records in the output topics (latest offsets): shows that data flowed through both branches. */
    void countOutputs() {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(p)) {
            for (String t : List.of(StreamsApp.INPUT, StreamsApp.FILTERED, StreamsApp.COUNTS)) {
                Map<org.apache.kafka.common.TopicPartition, org.apache.kafka.clients.admin.OffsetSpec> q = new HashMap<>();
                for (int i = 0; i < partitions; i++) {
                    q.put(new org.apache.kafka.common.TopicPartition(t, i), org.apache.kafka.clients.admin.OffsetSpec.latest());
                }
                long sum = 0;
                for (var e : admin.listOffsets(q).all().get(30, TimeUnit.SECONDS).values()) {
                    sum += e.offset();
                }
                results.put("records_" + t.replace("interop-", ""), Long.toString(sum));
            }
        } catch (Exception e) {
            say("counting output records failed: " + e);
        }
    }

    void describe() {
        if (!opt.containsKey("describe")) return;
        try {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            for (String[] extra : List.of(new String[] {}, new String[] {"--members", "--verbose"})) {
                List<String> cmd = new ArrayList<>(List.of(java, "-Xmx128m", "-XX:TieredStopAtLevel=1",
                    "-cp", System.getProperty("java.class.path"),
                    "org.apache.kafka.tools.streams.StreamsGroupCommand",
                    "--bootstrap-server", bootstrap, "--describe", "--group", app));
                cmd.addAll(Arrays.asList(extra));
                ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
                Process pr = pb.start();
                String out = new String(pr.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                pr.waitFor(60, TimeUnit.SECONDS);
                Files.writeString(work.resolve("describe.txt"), "$ kafka-streams-groups --describe --group " + app
                    + " " + String.join(" ", extra) + "\n" + out + "(exit " + pr.exitValue() + ")\n\n",
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
                System.out.println("$ kafka-streams-groups --describe --group " + app + " " + String.join(" ", extra));
                System.out.print(out);
            }
        } catch (Exception e) {
            say("describe failed: " + e);
        }
    }

    void run() throws Exception {
        List<String> steps = Arrays.asList(opt.getOrDefault("steps", "start,crash,close,add,static").split(","));
        int n = Integer.parseInt(opt.getOrDefault("instances", "3"));
        createTopics();
        Thread producer = startProducer();
        try {
            long t0 = System.currentTimeMillis();
            for (int k = 0; k < n; k++) {
                launch(k == 0 && steps.contains("static") ? "interop-static-0" : null);
            }
            double s = awaitSettled("start", t0);
            record("start", s);
            if (s >= 0) {
                // The same, counted from the moment the last instance called KafkaStreams.start():
                // without JVM start-up, which dominates "start" on a loaded machine.
                long lastStart = 0;
                for (Inst i : insts) lastStart = Math.max(lastStart, i.startedAt);
                record("start_protocol", (t0 + (long) (s * 1000) - lastStart) / 1000.0);
            }
            if (s < 0) return;
            for (String step : steps) {
                long t;
                switch (step) {
                    case "start":
                        continue;
                    case "crash": {
                        Inst v = pick(false);
                        say("crash " + v.name + " (Runtime.halt)");
                        t = System.currentTimeMillis();
                        v.send("halt");
                        stopProcess(v, 10000);
                        break;
                    }
                    case "close": {
                        Inst v = pick(false);
                        say("graceful close of " + v.name + " (leave group)");
                        t = System.currentTimeMillis();
                        v.send("close");
                        stopProcess(v, 60000);
                        say(v.name + " closed after " + (System.currentTimeMillis() - t) + " ms");
                        break;
                    }
                    case "add": {
                        say("scale out");
                        t = System.currentTimeMillis();
                        launch(null);
                        break;
                    }
                    case "static": {
                        Inst v = pick(true);
                        if (v == null) {
                            say("no static instance to bounce");
                            record(step, -1);
                            continue;
                        }
                        Set<String> before = new TreeSet<>(v.active);
                        say("static bounce of " + v.name + " (" + v.instanceId + "), active before " + before);
                        t = System.currentTimeMillis();
                        v.send("close-remain");
                        stopProcess(v, 60000);
                        say(v.name + " closed after " + (System.currentTimeMillis() - t) + " ms; restarting");
                        Inst back = launch(v.instanceId);
                        double bs = awaitSettled(step, t);
                        record(step, bs);
                        results.put("static_same_tasks", Boolean.toString(before.equals(back.active)));
                        say("static member active after bounce " + back.active + (before.equals(back.active) ? " (same)" : " (CHANGED)"));
                        if (bs < 0) return;
                        continue;
                    }
                    default:
                        throw new IllegalArgumentException("unknown step " + step);
                }
                double ss = awaitSettled(step, t);
                record(step, ss);
                if (ss < 0) return;
            }
        } finally {
            // Also after a failed step: the describe output shows what the coordinator thinks.
            countOutputs();
            describe();
            producer.interrupt();
            producer.join(10000);
            for (Inst i : insts) {
                if (i.proc.isAlive()) {
                    try {
                        i.send("close");
                    } catch (IOException e) {
                        // ignore
                    }
                }
            }
            for (Inst i : insts) {
                if (!i.proc.waitFor(20, TimeUnit.SECONDS)) i.proc.destroyForcibly();
            }
            StringBuilder sb = new StringBuilder();
            for (Map.Entry<String, String> e : results.entrySet()) {
                sb.append(e.getKey()).append('=').append(e.getValue()).append('\n');
            }
            if (opt.containsKey("results")) Files.writeString(Path.of(opt.get("results")), sb.toString());
            say("results:\n" + sb);
        }
    }

    public static void main(String[] args) throws Exception {
        Driver d = new Driver(Args.parse(args));
        try {
            d.run();
        } finally {
            for (Inst i : d.insts) {
                if (i.proc.isAlive()) i.proc.destroyForcibly();
            }
        }
        boolean ok = !d.results.containsValue("FAIL") && d.results.containsKey("start");
        System.exit(ok ? 0 : 1);
    }
}
