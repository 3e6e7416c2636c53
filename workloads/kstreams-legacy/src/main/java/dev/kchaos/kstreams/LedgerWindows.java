package dev.kchaos.kstreams;

import java.lang.reflect.Constructor;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.SessionWindows;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;

/**
 * The ledger's windows and sessions (WindowAggregations, kstreams-common) on Kafka Streams
 * 2.1 to 3.6, on the window APIs all of them have: TimeWindows.of and grace,
 * SessionWindows.with and grace (deprecated from 3.0, gone in 4.0).
 */
final class LedgerWindows {
    private LedgerWindows() {}

    @SuppressWarnings("deprecation")
    static void add(KStream<String, String> events, WindowSpec spec, String windowsTopic,
                    String sessionsTopic) {
        WindowAggregations.add(
            events, spec, windowsTopic, sessionsTopic,
            TimeWindows.of(spec.size).advanceBy(spec.advance).grace(spec.grace),
            windowStore(spec),
            SessionWindows.with(spec.sessionGap).grace(spec.sessionGrace));
    }

    /**
     * The window store at the run's segment interval. Its supplier's constructor changed
     * over the range: (name, retention, segment interval, size, retain duplicates) in 2.1
     * and 2.2, a sixth argument from 2.3 (returnTimestampedStore, a boolean; a
     * WindowStoreTypes enum besides it from 3.3): looked up by its arity.
     */
    static WindowBytesStoreSupplier windowStore(WindowSpec spec) {
        try {
            Class<?> supplier = Class.forName(
                "org.apache.kafka.streams.state.internals.RocksDbWindowBytesStoreSupplier");
            for (Constructor<?> c : supplier.getConstructors()) {
                Class<?>[] types = c.getParameterTypes();
                if (types.length == 6 && types[5] == boolean.class) {
                    return (WindowBytesStoreSupplier) c.newInstance(
                        WindowAggregations.WINDOWS, spec.retention.toMillis(), spec.segment.toMillis(),
                        spec.size.toMillis(), false, true);
                }
            }
            for (Constructor<?> c : supplier.getConstructors()) {
                if (c.getParameterTypes().length == 5) {
                    return (WindowBytesStoreSupplier) c.newInstance(
                        WindowAggregations.WINDOWS, spec.retention.toMillis(), spec.segment.toMillis(),
                        spec.size.toMillis(), false);
                }
            }
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("no window store supplier in this Kafka Streams", e);
        }
        throw new IllegalStateException("no known RocksDbWindowBytesStoreSupplier constructor");
    }
}
