package interop;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * One member of a classic consumer group (Java KafkaConsumer 4.4, group.protocol=classic), speaking
 * the harness's line protocol on stdout:
 *   READY                      subscribed, polling
 *   OWNED p,p,... gen=G        after every rebalance callback (the full set it owns now)
 *   REC p offset key value     each record, before the batch's synchronous commit
 *   HANDOFF p committed o ...  a revoked partition whose offsets only the revoke commit saved
 *   ERR text                   an exception from poll/commit ("ERR commit ..." when offsets that were
 *                              consumed could not be committed and will not be retried)
 * Commits: synchronously after every batch, of the revoked partitions in onPartitionsRevoked, and
 * what is pending before close() (see commitBeforeClose).
 * A commit after poll() fails with RebalanceInProgressException while the member rejoins (a
 * cooperative rebalance: it keeps fetching its partitions meanwhile); those offsets stay pending and
 * are committed by the next commit, or in onPartitionsRevoked if the partition is handed off (the
 * client allows that commit: its generation is stable again when the callback runs).
 * SIGTERM closes the consumer (a dynamic member sends LeaveGroup, a static one does not).
 *
 * Args: bootstrap topic group clientId assignor(range|cooperative-sticky|consumer|manual) sessionMs heartbeatMs [instanceId]
 * (consumer: group.protocol=consumer, KIP-848; the broker assigns, sessionMs/heartbeatMs are the broker's)
 * (manual: assign() of partitions 0..INTEROP_PARTITIONS-1, no membership, commits as a simple group)
 */
public final class ConsumerWorker {
  private static final PrintStream OUT =
      new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false, StandardCharsets.UTF_8);

  public static void main(String[] args) throws Exception {
    String bootstrap = args[0], topic = args[1], group = args[2], clientId = args[3];
    String assignor = args[4].equals("cooperative-sticky")
        ? "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"
        : "org.apache.kafka.clients.consumer.RangeAssignor";
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    p.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
    if (args[4].equals("consumer")) {
      // KIP-848: the broker assigns and owns session and heartbeat settings (the client refuses
      // the classic-only keys with this protocol).
      p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
    } else {
      p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
      p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, assignor);
      p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, args[5]);
      p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, args[6]);
    }
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    if (args.length > 7) p.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, args[7]);

    KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p);
    TreeSet<Integer> owned = new TreeSet<>();
    // The next offset to consume per partition: what poll() handed out and was printed.
    Map<TopicPartition, OffsetAndMetadata> consumed = new HashMap<>();
    // What the last successful commit after poll() covered (to report a hand-off that mattered).
    Map<TopicPartition, OffsetAndMetadata> committed = new HashMap<>();
    CountDownLatch closed = new CountDownLatch(1);
    final boolean[] stopping = {false};
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      stopping[0] = true;
      consumer.wakeup();
      try {
        closed.await();
      } catch (InterruptedException ignored) {
      }
    }));

    ConsumerRebalanceListener listener = new ConsumerRebalanceListener() {
      @Override public void onPartitionsRevoked(Collection<TopicPartition> parts) {
        // Hand the partitions off with their consumed offsets committed, so that the next owner
        // starts where this member stopped (the commit after poll() may have failed meanwhile).
        Map<TopicPartition, OffsetAndMetadata> handOff = new HashMap<>();
        for (TopicPartition tp : parts) {
          OffsetAndMetadata next = consumed.remove(tp);
          if (next != null) handOff.put(tp, next);
        }
        if (!handOff.isEmpty()) {
          try {
            consumer.commitSync(handOff, Duration.ofSeconds(10));
            // HANDOFF lines (ignored by the harness): partitions whose consumed offsets only this
            // commit saved: the commit after poll() had not completed (RebalanceInProgress, or
            // interrupted by the shutdown's wakeup()).
            handOff.forEach((tp, next) -> {
              OffsetAndMetadata before = committed.remove(tp);
              if (before == null || before.offset() < next.offset()) {
                OUT.println("HANDOFF " + tp.partition() + " committed " + next.offset() + " (after poll: "
                    + (before == null ? "none" : before.offset()) + ")");
              }
            });
          } catch (Exception e) {
            OUT.println("ERR commit on revoke " + e.getClass().getSimpleName() + ": " + e.getMessage());
          }
        }
        parts.forEach(tp -> owned.remove(tp.partition()));
        report(consumer, owned);
      }
      @Override public void onPartitionsAssigned(Collection<TopicPartition> parts) {
        parts.forEach(tp -> owned.add(tp.partition()));
        report(consumer, owned);
      }
      @Override public void onPartitionsLost(Collection<TopicPartition> parts) {
        // No commit: the member is no longer in the generation that owned them.
        parts.forEach(consumed::remove);
        parts.forEach(committed::remove);
        parts.forEach(tp -> owned.remove(tp.partition()));
        report(consumer, owned);
      }
    };
    try {
      if (args[4].equals("manual")) {
        // No membership: the data plane alone (Metadata, OffsetFetch, ListOffsets, Fetch, OffsetCommit).
        int n = Integer.parseInt(System.getenv().getOrDefault("INTEROP_PARTITIONS", "6"));
        List<TopicPartition> all = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
          all.add(new TopicPartition(topic, i));
          owned.add(i);
        }
        consumer.assign(all);
        report(consumer, owned);
      } else {
        consumer.subscribe(List.of(topic), listener);
      }
      OUT.println("READY");
      OUT.flush();
      while (!stopping[0]) {
        try {
          ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
          for (ConsumerRecord<String, String> r : records) {
            OUT.println("REC " + r.partition() + " " + r.offset() + " " + r.key() + " " + r.value());
            consumed.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
          }
          OUT.flush();
          if (!records.isEmpty()) commitPending(consumer, consumed, committed);
        } catch (WakeupException e) {
          break;
        } catch (CommitFailedException e) {
          // The generation ended before the commit landed: the next owner reads these again.
          OUT.println("ERR commit " + e.getClass().getSimpleName() + ": " + e.getMessage());
          OUT.flush();
          Thread.sleep(200);
        } catch (RebalanceInProgressException e) {
          // Not a lost commit: the offsets stay in `consumed` (see the class comment).
          OUT.println("ERR " + e.getClass().getSimpleName() + ": " + e.getMessage());
          OUT.flush();
        } catch (Exception e) {
          OUT.println("ERR " + e.getClass().getSimpleName() + ": " + e.getMessage());
          OUT.flush();
          Thread.sleep(200);
        }
      }
    } finally {
      try {
        if (!args[4].equals("manual")) commitBeforeClose(consumer, consumed, committed);
        consumer.close(Duration.ofSeconds(10));
      } finally {
        OUT.flush();
        closed.countDown();
      }
    }
  }

  /**
   * On shutdown, commits what is still pending before close(). A classic member that closes while
   * it rejoins (a cooperative rebalance in progress) gets onPartitionsLost, not onPartitionsRevoked,
   * and the client refuses a commit until the rejoin completes: so poll() (printing what it hands
   * out) until a commit goes through, for at most 5 s, as RebalanceInProgressException advises.
   */
  private static void commitBeforeClose(KafkaConsumer<String, String> consumer,
      Map<TopicPartition, OffsetAndMetadata> consumed, Map<TopicPartition, OffsetAndMetadata> committed) {
    long deadline = System.currentTimeMillis() + 5000;
    while (true) {
      try {
        commitPending(consumer, consumed, committed);
        return;
      } catch (WakeupException e) {
        continue; // the shutdown hook's wakeup(), not consumed yet: it fires once
      } catch (RebalanceInProgressException e) {
        if (System.currentTimeMillis() > deadline) {
          OUT.println("ERR commit before close " + e.getClass().getSimpleName() + ": " + e.getMessage());
          return;
        }
      } catch (Exception e) {
        OUT.println("ERR commit before close " + e.getClass().getSimpleName() + ": " + e.getMessage());
        return;
      }
      try {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(100))) {
          OUT.println("REC " + r.partition() + " " + r.offset() + " " + r.key() + " " + r.value());
          consumed.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
        }
        OUT.flush();
      } catch (WakeupException e) {
        // as above
      } catch (Exception e) {
        OUT.println("ERR poll before close " + e.getClass().getSimpleName() + ": " + e.getMessage());
        return;
      }
    }
  }

  /** Commits every consumed offset (then recorded in `committed`); throws what commitSync throws. */
  private static void commitPending(KafkaConsumer<?, ?> consumer, Map<TopicPartition, OffsetAndMetadata> consumed,
      Map<TopicPartition, OffsetAndMetadata> committed) {
    if (consumed.isEmpty()) return;
    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>(consumed);
    consumer.commitSync(offsets, Duration.ofSeconds(10));
    committed.putAll(offsets);
  }

  private static void report(KafkaConsumer<?, ?> consumer, TreeSet<Integer> owned) {
    int gen;
    try {
      gen = consumer.groupMetadata().generationId();
    } catch (Exception e) {
      gen = -1;
    }
    OUT.println("OWNED " + owned.stream().map(String::valueOf).collect(Collectors.joining(",")) + " gen=" + gen);
    OUT.flush();
  }
}
