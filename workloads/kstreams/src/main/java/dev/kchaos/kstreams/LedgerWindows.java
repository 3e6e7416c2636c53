package dev.kchaos.kstreams;

import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.SessionWindows;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;
import org.apache.kafka.streams.state.internals.RocksDbWindowBytesStoreSupplier;

/**
 * The ledger's windows and sessions (WindowAggregations, kstreams-common) on the window
 * APIs of 3.0 on: TimeWindows.ofSizeAndGrace, SessionWindows.ofInactivityGapAndGrace, and
 * the window store's supplier with its store type.
 */
final class LedgerWindows {
    private LedgerWindows() {}

    static void add(KStream<String, String> events, WindowSpec spec, String windowsTopic,
                    String sessionsTopic) {
        WindowAggregations.add(
            events, spec, windowsTopic, sessionsTopic,
            TimeWindows.ofSizeAndGrace(spec.size, spec.grace).advanceBy(spec.advance),
            windowStore(spec),
            SessionWindows.ofInactivityGapAndGrace(spec.sessionGap, spec.sessionGrace));
    }

    static WindowBytesStoreSupplier windowStore(WindowSpec spec) {
        return new RocksDbWindowBytesStoreSupplier(
            WindowAggregations.WINDOWS, spec.retention.toMillis(), spec.segment.toMillis(),
            spec.size.toMillis(), false,
            RocksDbWindowBytesStoreSupplier.WindowStoreTypes.TIMESTAMPED_WINDOW_STORE);
    }
}
