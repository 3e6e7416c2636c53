package dev.kchaos.kstreams;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.AppInfoParser;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.TransformerSupplier;
import org.apache.kafka.streams.processor.ProcessorSupplier;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;

/**
 * One pod of the ledger app on Apache Kafka Streams 2.1 to 3.6: the legacy generation of
 * workloads/kstreams (3.7 and later), with the same topics, records, dedup, pod flags
 * (Flags.java) and trace (Trace.java), on the APIs every release of the range has.
 *
 * What differs by release, decided at run time from what the release's classes define, and
 * traced once at start as `app-config` {release, generation, guarantee, guarantee_asked,
 * static_membership, cannot_trace}:
 * - the guarantee: an exactly-once ask (the harness passes exactly_once_v2) gets the
 *   strongest the release has: exactly_once_v2 (3.0 on), exactly_once_beta (2.6 to 2.8),
 *   else exactly_once (v1: one transactional producer per task);
 * - static membership (group.instance.id = pod name) from 2.3 on (KIP-345); none before;
 * - no record cache: statestore.cache.max.bytes (3.4 on) or cache.max.bytes.buffering;
 * - a fatal error in a stream thread: the Thread.UncaughtExceptionHandler (the only one
 *   before 2.8) traces `fatal` and the app closes and exits 1, as SHUTDOWN_CLIENT does in
 *   workloads/kstreams.
 * Trace events this generation cannot emit: `standby-update-start`/`-suspended` (no
 * StandbyUpdateListener before 3.7), `restore-suspended` before 3.5 (tracesRestoreSuspended).
 * Exit 0 after SIGTERM (a clean close), 1 when the client goes to ERROR or a thread dies,
 * 2 on bad flags.
 */
public final class LedgerApp {
    static final String GENERATION = "legacy";

    private LedgerApp() {}

    /** A public static String constant of `type`, or null when this release lacks it. */
    static String constant(Class<?> type, String field) {
        try {
            return (String) type.getField(field).get(null);
        } catch (ReflectiveOperationException e) {
            return null;
        }
    }

    /** The strongest exactly-once guarantee this release has. */
    static String strongestExactlyOnce() {
        for (String field : List.of("EXACTLY_ONCE_V2", "EXACTLY_ONCE_BETA", "EXACTLY_ONCE")) {
            String value = constant(StreamsConfig.class, field);
            if (value != null) {
                return value;
            }
        }
        throw new IllegalStateException("this Kafka Streams has no exactly-once guarantee");
    }

    static String guarantee(String asked) {
        return asked.startsWith("exactly_once") ? strongestExactlyOnce() : asked;
    }

    /** group.instance.id, or null before 2.3 (no static membership). */
    static String groupInstanceIdConfig() {
        return constant(ConsumerConfig.class, "GROUP_INSTANCE_ID_CONFIG");
    }

    /** PodConfig's settings with what this release has (the class comment). */
    static Properties config(Flags f) {
        String cache = constant(StreamsConfig.class, "STATESTORE_CACHE_MAX_BYTES_CONFIG");
        Properties p = PodConfig.shared(f, guarantee(f.get("guarantee", "exactly_once_v2")),
                                        cache != null ? cache : "cache.max.bytes.buffering",
                                        groupInstanceIdConfig());
        return PodConfig.overrides(p, f);
    }

    static StoreBuilder<KeyValueStore<String, String>> store(String name) {
        return Stores.keyValueStoreBuilder(
                Stores.persistentKeyValueStore(name), Serdes.String(), Serdes.String())
            .withCachingDisabled();
    }

    @SuppressWarnings("deprecation") // transform, the old ProcessorSupplier: deprecated in 3.x
    static Topology topology(Flags f, Trace trace) {
        StreamsBuilder builder = new StreamsBuilder();
        builder.addStateStore(store(LedgerTransformer.BALANCES));
        builder.addStateStore(store(LedgerTransformer.DEDUP));
        // The stream sub-topology first, so its tasks are 0_<partition> as in the contract.
        TransformerSupplier<String, String, KeyValue<String, String>> ledger =
            () -> new LedgerTransformer(trace);
        KStream<String, String> events =
            builder.stream(f.get("input-topic", "ledger-events"), Consumed.with(Serdes.String(), Serdes.String()));
        events.transform(ledger, LedgerTransformer.BALANCES, LedgerTransformer.DEDUP)
            .to(f.get("output-topic", "ledger-output"), Produced.with(Serdes.String(), Serdes.String()));
        if (f.has("windows")) {  // the same sub-topology: the input is keyed by account
            LedgerWindows.add(events, WindowSpec.parse(f.get("windows", null)),
                              f.get("windows-topic", "ledger-windows"),
                              f.get("sessions-topic", "ledger-sessions"));
        }
        ProcessorSupplier<String, String> accounts = GlobalAccounts::new;
        builder.addGlobalStore(
            store(LedgerTransformer.ACCOUNTS).withLoggingDisabled(),
            f.get("accounts-topic", "ledger-accounts"),
            Consumed.with(Serdes.String(), Serdes.String()),
            accounts);
        return builder.build();
    }

    /** Whether this release's StateRestoreListener has onRestoreSuspended (3.5 on, KIP-869):
     * RestoreTrace declares it without @Override, so 3.5 and 3.6 call it and none before. */
    static boolean tracesRestoreSuspended() {
        try {
            StateRestoreListener.class.getMethod(
                "onRestoreSuspended", TopicPartition.class, String.class, long.class);
            return true;
        } catch (NoSuchMethodException e) {
            return false;
        }
    }

    /** The trace events this release cannot emit: no StandbyUpdateListener (KIP-988) before
     * 3.7, so never the standby ones; restore-suspended before 3.5. */
    static List<String> cannotTrace() {
        List<String> events = new ArrayList<>(List.of("standby-update-start", "standby-update-suspended"));
        if (!tracesRestoreSuspended()) {
            events.add("restore-suspended");
        }
        return events;
    }

    @SuppressWarnings("deprecation") // the Thread.UncaughtExceptionHandler: deprecated from 2.8
    public static void main(String[] args) throws Exception {
        Flags flags = Flags.parseOrExit(args);
        Properties config = config(flags);
        Trace trace = Trace.forPod(flags);
        LogTrace.install(trace); // lock-failed, cleaner-delete: from Kafka Streams' log lines
        StateDirTrace.install(trace); // cleaner passes, locks, checkpoint reads: StateDirAgent
        Topology topology = topology(flags, trace);
        System.err.println(topology.describe());
        String used = String.valueOf(config.get(StreamsConfig.PROCESSING_GUARANTEE_CONFIG));
        String asked = flags.get("guarantee", "exactly_once_v2");
        boolean staticMembership = groupInstanceIdConfig() != null;
        System.err.println("kstreams-ledger: Kafka Streams " + AppInfoParser.getVersion()
            + " (generation " + GENERATION + "), guarantee " + used + " for " + asked
            + (staticMembership ? ", static membership" : ", no static membership (before 2.3)"));
        KafkaStreams streams = new KafkaStreams(topology, config);
        // The ledger's stores are all in sub-topology 0: a changelog partition p is task 0_p.
        String accountsTopic = flags.get("accounts-topic", "ledger-accounts");
        streams.setGlobalStateRestoreListener(
            new RestoreTrace(trace, accountsTopic::equals, (store, partition) -> "0_" + partition));
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
        Thread.UncaughtExceptionHandler fatal = (thread, e) -> {
            trace.emit("fatal", "error", e.getClass().getSimpleName() + ": " + e.getMessage());
            exit[0] = 1;
            done.countDown();
        };
        streams.setUncaughtExceptionHandler(fatal);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close(Duration.ofSeconds(30));
            done.countDown();
        }, "shutdown"));
        trace.emitAs("main", "app-config", "release", AppInfoParser.getVersion(),
                     "generation", GENERATION, "guarantee", used, "guarantee_asked", asked,
                     "static_membership", staticMembership, "cannot_trace", cannotTrace());
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
