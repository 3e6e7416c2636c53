package dev.kchaos.kstreams;

import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;

/**
 * One pod of the ledger app on Apache Kafka Streams. Settings as in KAFKA-20685's report:
 * the guarantee given (exactly_once_v2 by default), the default state updater, the commit
 * interval given, static membership (group.instance.id = pod name), persistent RocksDB
 * stores with a small write buffer, the state directory on the pod's volume.
 * Exit 0 after SIGTERM (a clean close), 1 when the client goes to ERROR, 2 on bad flags.
 */
public final class LedgerApp {
    private LedgerApp() {}

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
        for (String setting : f.streamsConfig) {
            int eq = setting.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("--streams-config wants KEY=VALUE, got " + setting);
            }
            p.put(setting.substring(0, eq), setting.substring(eq + 1));
        }
        return p;
    }

    static StoreBuilder<KeyValueStore<String, String>> store(String name) {
        return Stores.keyValueStoreBuilder(
                Stores.persistentKeyValueStore(name), Serdes.String(), Serdes.String())
            .withCachingDisabled();
    }

    static Topology topology(Flags f, Trace trace) {
        StreamsBuilder builder = new StreamsBuilder();
        builder.addStateStore(store(LedgerProcessor.BALANCES));
        builder.addStateStore(store(LedgerProcessor.DEDUP));
        // The stream sub-topology first, so its tasks are 0_<partition> as in the contract.
        builder.stream(f.get("input-topic", "ledger-events"), Consumed.with(Serdes.String(), Serdes.String()))
            .process(() -> new LedgerProcessor(trace), LedgerProcessor.BALANCES, LedgerProcessor.DEDUP)
            .to(f.get("output-topic", "ledger-output"), Produced.with(Serdes.String(), Serdes.String()));
        builder.addGlobalStore(
            store(LedgerProcessor.ACCOUNTS).withLoggingDisabled(),
            f.get("accounts-topic", "ledger-accounts"),
            Consumed.with(Serdes.String(), Serdes.String()),
            GlobalAccounts::new);
        return builder.build();
    }

    public static void main(String[] args) throws Exception {
        Flags flags;
        try {
            flags = Flags.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("kstreams-ledger: " + e.getMessage());
            System.exit(2);
            return;
        }
        String pod = flags.get("instance-id", "pod-0");
        Trace trace = new Trace(flags.get("trace", null), pod);
        Topology topology = topology(flags, trace);
        System.err.println(topology.describe());
        KafkaStreams streams = new KafkaStreams(topology, config(flags));
        Listeners listeners = new Listeners(trace, flags.get("accounts-topic", "ledger-accounts"));
        streams.setGlobalStateRestoreListener(listeners);
        streams.setStandbyUpdateListener(listeners);
        CountDownLatch done = new CountDownLatch(1);
        int[] exit = {0};
        streams.setStateListener((to, from) -> {
            trace.emitAs("main", "client-state", "from", from.name(), "to", to.name());
            if (to == KafkaStreams.State.ERROR) {
                exit[0] = 1;
            }
            if (to == KafkaStreams.State.ERROR || to == KafkaStreams.State.NOT_RUNNING) {
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
        done.await();
        if (exit[0] != 0) {
            streams.close(Duration.ofSeconds(10));
            Runtime.getRuntime().halt(exit[0]);
        }
    }
}
