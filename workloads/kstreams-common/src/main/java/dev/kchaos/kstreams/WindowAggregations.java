package dev.kchaos.kstreams;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KGroupedStream;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.SessionWindows;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;

/**
 * The ledger's windowed and session state (workloads/ledger/windowed.py), one copy for
 * every tree: each account's input records aggregated into hopping windows and into
 * sessions, count and sum of the amounts (WindowSpec), every update sent to an output topic
 * of its own. The input is keyed by account, so both aggregations stay in the ledger's
 * sub-topology (tasks 0_p, no repartition). What the DSL spells differently by release (how
 * windows and sessions are defined, how the window store is made) each tree's LedgerWindows
 * passes in; the types themselves exist from 2.1 on.
 *
 * The window store is built with the run's segment interval: the DSL's own store has
 * max(retention / 2, 60 s), which rolls no segment inside a minute's run. The session
 * store is the DSL's persistent one (its segment interval follows its retention).
 */
final class WindowAggregations {
    static final String WINDOWS = "windows";
    static final String SESSIONS = "sessions";

    private WindowAggregations() {}

    static void add(KStream<String, String> events, WindowSpec spec, String windowsTopic,
                    String sessionsTopic, TimeWindows windows, WindowBytesStoreSupplier windowStore,
                    SessionWindows sessions) {
        KGroupedStream<String, String> byAccount =
            events.groupByKey(Grouped.with(Serdes.String(), Serdes.String()));
        byAccount.windowedBy(windows)
            .aggregate(WindowSpec.EMPTY, WindowSpec.ADD,
                       Materialized.<String, String>as(windowStore)
                           .withKeySerde(Serdes.String()).withValueSerde(Serdes.String())
                           .withCachingDisabled())
            .toStream()
            .map(WindowSpec::output)
            .to(windowsTopic, Produced.with(Serdes.String(), Serdes.String()));
        byAccount.windowedBy(sessions)
            .aggregate(WindowSpec.EMPTY, WindowSpec.ADD, WindowSpec.MERGE,
                       Materialized.<String, String>as(
                               Stores.persistentSessionStore(SESSIONS, spec.retention))
                           .withKeySerde(Serdes.String()).withValueSerde(Serdes.String())
                           .withCachingDisabled())
            .toStream()
            .map(WindowSpec::output)
            .to(sessionsTopic, Produced.with(Serdes.String(), Serdes.String()));
    }
}
