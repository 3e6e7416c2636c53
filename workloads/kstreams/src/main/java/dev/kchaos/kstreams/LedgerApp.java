package dev.kchaos.kstreams;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;

/**
 * One pod of the ledger app on Apache Kafka Streams (the settings: Pod). Exit 0 after
 * SIGTERM (a clean close), 1 when the client goes to ERROR, 2 on bad flags.
 * Also an app of AppLauncher's convention, `topology(Properties)`: the same topology with a
 * trace that writes nothing.
 */
public final class LedgerApp {
    static final String INPUT_TOPIC = "kchaos.input.topic";
    static final String OUTPUT_TOPIC = "kchaos.output.topic";
    static final String ACCOUNTS_TOPIC = "kchaos.accounts.topic";

    private LedgerApp() {}

    static StoreBuilder<KeyValueStore<String, String>> store(String name) {
        return Stores.keyValueStoreBuilder(
                Stores.persistentKeyValueStore(name), Serdes.String(), Serdes.String())
            .withCachingDisabled();
    }

    static Topology topology(Flags f, Trace trace) {
        StreamsBuilder builder = new StreamsBuilder();
        KStream<String, String> events = ledger(builder, f.get("input-topic", "ledger-events"),
                                                f.get("output-topic", "ledger-output"),
                                                f.get("accounts-topic", "ledger-accounts"), trace);
        if (f.has("windows")) {
            LedgerWindows.add(events, WindowSpec.parse(f.get("windows", null)),
                              f.get("windows-topic", "ledger-windows"),
                              f.get("sessions-topic", "ledger-sessions"));
        }
        return builder.build();
    }

    /** The convention of AppLauncher: topics from kchaos.input.topic, kchaos.output.topic and
     * kchaos.accounts.topic (ledger-events, ledger-output, ledger-accounts by default). */
    public static Topology topology(Properties config) {
        Trace none;
        try {
            none = new Trace(null, "-");  // no path: writes nothing
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return topology(String.valueOf(config.getOrDefault(INPUT_TOPIC, "ledger-events")),
                        String.valueOf(config.getOrDefault(OUTPUT_TOPIC, "ledger-output")),
                        String.valueOf(config.getOrDefault(ACCOUNTS_TOPIC, "ledger-accounts")), none);
    }

    static Topology topology(String inputTopic, String outputTopic, String accountsTopic, Trace trace) {
        StreamsBuilder builder = new StreamsBuilder();
        ledger(builder, inputTopic, outputTopic, accountsTopic, trace);
        return builder.build();
    }

    /** The ledger's balances, dedup and global join; returns the input stream, which the
     * windows (LedgerWindows) aggregate too, in the same sub-topology. */
    static KStream<String, String> ledger(StreamsBuilder builder, String inputTopic,
                                          String outputTopic, String accountsTopic, Trace trace) {
        builder.addStateStore(store(LedgerProcessor.BALANCES));
        builder.addStateStore(store(LedgerProcessor.DEDUP));
        // The stream sub-topology first, so its tasks are 0_<partition> as in the contract.
        KStream<String, String> events =
            builder.stream(inputTopic, Consumed.with(Serdes.String(), Serdes.String()));
        events.process(() -> new LedgerProcessor(trace), LedgerProcessor.BALANCES, LedgerProcessor.DEDUP)
            .to(outputTopic, Produced.with(Serdes.String(), Serdes.String()));
        builder.addGlobalStore(
            store(LedgerProcessor.ACCOUNTS).withLoggingDisabled(),
            accountsTopic,
            Consumed.with(Serdes.String(), Serdes.String()),
            GlobalAccounts::new);
        return events;
    }

    public static void main(String[] args) throws Exception {
        Flags flags = Flags.parseOrExit(args);
        Trace trace = Trace.forPod(flags);
        FlushTrace.install(trace);
        Topology topology = topology(flags, trace);
        int exit = Pod.run(Pod.config(flags), trace, topology, false);
        if (exit != 0) {
            Runtime.getRuntime().halt(exit);
        }
    }
}
