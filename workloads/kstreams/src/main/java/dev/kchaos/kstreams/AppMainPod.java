package dev.kchaos.kstreams;

import dev.kchaos.kstreams.AppLauncher.Refused;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;

/**
 * One pod of a user's app run by its own main (`AppLauncher pod --app-main CLASS`): the app
 * builds its topology and settings and constructs its KafkaStreams; at the constructor the
 * run's settings go over the app's (RUN_OWNED, the knobs the run drew, --streams-config),
 * the rest of the app's stays (serdes, guarantee, commit interval, timestamp extractor...;
 * the run's fill what the app leaves unset). After construction the run's listeners, trace,
 * task and commit watches are attached; the app starts the client itself.
 * Exit as Pod.run: 0 after SIGTERM, 1 when the client goes to ERROR or main throws.
 */
final class AppMainPod {
    private AppMainPod() {}

    /** What the run decides whatever the app says: where it runs, who it is, its fleet. The
     * record cache is the app's (Kafka Streams' default where it sets none): the oracle
     * compares what a cached app promises (checker/oracle/cached.py). */
    static final Set<String> RUN_OWNED = Set.of(
        StreamsConfig.APPLICATION_ID_CONFIG, StreamsConfig.BOOTSTRAP_SERVERS_CONFIG,
        StreamsConfig.STATE_DIR_CONFIG, StreamsConfig.NUM_STREAM_THREADS_CONFIG,
        StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, StreamsConfig.STATE_CLEANUP_DELAY_MS_CONFIG,
        StreamsConfig.consumerPrefix(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG),
        StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG));

    /** The pod's settings: the run's defaults, the app's over them, the run's own over all. */
    static Properties effective(Flags flags, Properties app) {
        Properties run = Pod.config(flags);
        // Default serdes are the app's to choose: the String defaults are only the
        // convention's (a topology method is given them).
        run.remove(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG);
        run.remove(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG);
        run.remove(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG);  // the ledger's, not the app's
        Properties merged = new Properties();
        merged.putAll(run);
        for (Map.Entry<Object, Object> e : app.entrySet()) {  // Capture.properties: flat
            if (!RUN_OWNED.contains(String.valueOf(e.getKey()))) {  // the run's stay
                merged.put(e.getKey(), e.getValue());
            }
        }
        // Knobs the run drew (passed only when drawn): the run's.
        if (flags.has("transaction-timeout-ms")) {
            String key = StreamsConfig.producerPrefix(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG);
            merged.put(key, run.get(key));
        }
        for (String key : List.of(ConsumerConfig.MAX_POLL_RECORDS_CONFIG,
                                  StreamsConfig.restoreConsumerPrefix(ConsumerConfig.MAX_POLL_RECORDS_CONFIG))) {
            if (run.containsKey(key)) {
                merged.put(key, run.get(key));
            }
        }
        for (String setting : flags.streamsConfig) {  // said explicitly for this run: last
            int eq = setting.indexOf('=');
            merged.put(setting.substring(0, eq), setting.substring(eq + 1));
        }
        return merged;
    }

    static int run(AppEntry entry, Flags flags, Trace trace) throws Refused, InterruptedException {
        CountDownLatch done = new CountDownLatch(1);
        int[] exit = {0};
        KafkaStreams[] client = {null};
        Thread main = entry.startMain(Capture.Mode.RUN, app -> effective(flags, app), streams -> {
            client[0] = streams;
            attach(streams, trace, Capture.topology(), done, exit);
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            if (client[0] != null) {
                client[0].close(Duration.ofSeconds(30));
            }
            done.countDown();
        }, "shutdown"));
        while (!done.await(200, TimeUnit.MILLISECONDS)) {
            if (!main.isAlive() && client[0] != null && client[0].state() == KafkaStreams.State.CREATED) {
                System.err.println("kchaos-app: " + entry.appMain + ".main ended without starting its "
                                   + "KafkaStreams");
                return 1;
            }
        }
        if (exit[0] != 0 && client[0] != null) {
            client[0].close(Duration.ofSeconds(10));
        }
        return exit[0];
    }

    /** The run's listeners on the app's client, as Pod.run puts them on its own. */
    private static void attach(KafkaStreams streams, Trace trace, Topology topology,
                               CountDownLatch done, int[] exit) {
        TopologyShape shape = TopologyShape.of(topology.describe());
        Listeners listeners = new Listeners(trace, shape);
        streams.setGlobalStateRestoreListener(listeners);
        streams.setStandbyUpdateListener(listeners);
        TaskWatch tasks = new TaskWatch(streams, trace);
        KafkaStreams.StateListener ours = (to, from) -> {
            boolean over = to == KafkaStreams.State.ERROR || to == KafkaStreams.State.NOT_RUNNING;
            if (over) {
                tasks.closeAll();
            }
            trace.emitAs("main", "client-state", "from", from.name(), "to", to.name());
            if (to == KafkaStreams.State.ERROR) {
                exit[0] = 1;
            }
            if (over) {
                done.countDown();
            }
        };
        streams.setStateListener(ours);
        streams.setUncaughtExceptionHandler(e -> {
            trace.emit("fatal", "error", e.getClass().getSimpleName() + ": " + e.getMessage());
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        Capture.runListeners(ours, listeners, e -> trace.emit("fatal", "error",
                                                   e.getClass().getSimpleName() + ": " + e.getMessage()));
        trace.emitAs("main", "client-state", "from", "CREATED", "to", "CREATED");
        new CommitWatch(streams, trace).start();
        tasks.start();
    }
}
