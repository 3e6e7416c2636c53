package dev.kchaos.kstreams;

import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;

/**
 * One pod of a Kafka Streams app, the ledger's (LedgerApp) or a user's (AppLauncher pod).
 * Settings as in KAFKA-20685's report: the guarantee given (exactly_once_v2 by default), the
 * default state updater, the commit interval given, static membership (group.instance.id =
 * pod name), persistent RocksDB stores with a small write buffer, the state directory on the
 * pod's volume.
 */
final class Pod {
    private Pod() {}

    static Properties config(Flags f) {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, f.get("application-id", "ledger-app"));
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, f.get("bootstrap", null));
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, f.get("guarantee", "exactly_once_v2"));
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, f.integer("threads", 1));
        p.put(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, f.integer("standbys", 0));
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, f.integer("commit-interval-ms", 500));
        p.put(StreamsConfig.STATE_DIR_CONFIG, f.get("state-dir", null));
        // Kafka Streams' cleaner runs every state.cleanup.delay.ms: one setting for both.
        p.put(StreamsConfig.STATE_CLEANUP_DELAY_MS_CONFIG, f.integer("cleaner-delay-ms", 600_000));
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0); // writes reach RocksDB at once
        p.put(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG, SmallWriteBuffer.class.getName());
        p.put(SmallWriteBuffer.WRITE_BUFFER_BYTES, f.get("write-buffer-bytes", "65536"));
        if (f.has("write-buffer-count")) {  // else Kafka Streams' own (3 a store)
            p.put(SmallWriteBuffer.WRITE_BUFFER_COUNT, f.get("write-buffer-count", "3"));
        }
        p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class.getName());
        p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class.getName());
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG),
              f.get("instance-id", "pod-0"));
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG),
              f.integer("session-timeout-ms", 10_000));
        // Passed by the harness only when drawn or set (faults/knobs.py); otherwise Kafka
        // Streams' own: a 10 s transaction timeout under exactly-once, 1000 records a poll.
        if (f.has("transaction-timeout-ms")) {
            p.put(StreamsConfig.producerPrefix(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG),
                  f.integer("transaction-timeout-ms", 10_000));
        }
        if (f.has("max-poll-records")) {  // every consumer; the restore one may differ
            p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, f.integer("max-poll-records", 1000));
        }
        if (f.has("restore-max-poll-records")) {
            p.put(StreamsConfig.restoreConsumerPrefix(ConsumerConfig.MAX_POLL_RECORDS_CONFIG),
                  f.integer("restore-max-poll-records", 1000));
        }
        // Passed only for the streams protocol (KIP-1071, 4.4 on: the harness refuses older
        // releases). Its standbys, session and heartbeat are the streams group's configs,
        // which the harness sets on the broker; the client-side ones above are ignored.
        if (f.has("group-protocol")) {
            p.put("group.protocol", f.get("group-protocol", "classic"));  // no constant before 4.1
        }
        for (String setting : f.streamsConfig) {
            int eq = setting.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("--streams-config wants KEY=VALUE, got " + setting);
            }
            p.put(setting.substring(0, eq), setting.substring(eq + 1));
        }
        return p;
    }

    /**
     * Runs the topology until SIGTERM (a clean close: returns 0) or until the client goes to
     * ERROR (returns 1 after closing it; the caller halts with it). With watchTasks, a
     * TaskWatch traces task-running/task-closed (for topologies whose processors do not).
     */
    static int run(Properties config, Trace trace, Topology topology, boolean watchTasks)
            throws InterruptedException {
        System.err.println(topology.describe());
        TopologyShape shape = TopologyShape.of(topology.describe());
        KafkaStreams streams = new KafkaStreams(topology, config);
        Listeners listeners = new Listeners(trace, shape);
        streams.setGlobalStateRestoreListener(listeners);
        streams.setStandbyUpdateListener(listeners);
        TaskWatch tasks = watchTasks ? new TaskWatch(streams, trace) : null;
        CountDownLatch done = new CountDownLatch(1);
        int[] exit = {0};
        streams.setStateListener((to, from) -> {
            boolean over = to == KafkaStreams.State.ERROR || to == KafkaStreams.State.NOT_RUNNING;
            if (tasks != null && over) {
                tasks.closeAll();  // before the client's state, as a processor's close would be
            }
            trace.emitAs("main", "client-state", "from", from.name(), "to", to.name());
            if (to == KafkaStreams.State.ERROR) {
                exit[0] = 1;
            }
            if (over) {
                done.countDown();
            }
        });
        streams.setUncaughtExceptionHandler(e -> {
            trace.emit("fatal", "error", e.getClass().getSimpleName() + ": " + e.getMessage());
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close(Duration.ofSeconds(30));
            done.countDown();
        }, "shutdown"));
        trace.emitAs("main", "client-state", "from", "CREATED", "to", "CREATED");
        streams.start();
        new CommitWatch(streams, trace).start();
        if (tasks != null) {
            tasks.start();
        }
        done.await();
        if (exit[0] != 0) {
            streams.close(Duration.ofSeconds(10));
        }
        return exit[0];
    }
}
