package dev.kchaos.kstreams;

import java.util.Map;
import java.util.function.Consumer;
import org.apache.kafka.streams.state.RocksDBConfigSetter;
import org.rocksdb.Options;

/**
 * Small memtables, so RocksDB flushes SST files within a run (KAFKA-20685 needs a flush of
 * writes a transaction later aborts; a windowed store's segments flush each on its own).
 * Size and count from the app's `kchaos.write.buffer.bytes` and `kchaos.write.buffer.count`
 * (a RocksDBConfigSetter bounding memory, as Kafka Streams' memory-management docs show).
 * A tree may set more on every store's options once its pod starts (alsoOnEveryStore: the
 * current tree's FlushTrace listener, which not every release's RocksDB has).
 */
public final class SmallWriteBuffer implements RocksDBConfigSetter {
    static final String WRITE_BUFFER_BYTES = "kchaos.write.buffer.bytes";
    static final String WRITE_BUFFER_COUNT = "kchaos.write.buffer.count";

    private static volatile Consumer<Options> more = options -> { };

    /** What else every store's options get from now on (Kafka Streams makes the setters). */
    static void alsoOnEveryStore(Consumer<Options> setting) {
        more = setting;
    }

    @Override
    public void setConfig(String storeName, Options options, Map<String, Object> configs) {
        Object bytes = configs.get(WRITE_BUFFER_BYTES);
        if (bytes != null) {
            options.setWriteBufferSize(Long.parseLong(bytes.toString()));
        }
        Object count = configs.get(WRITE_BUFFER_COUNT);
        if (count != null) {
            options.setMaxWriteBufferNumber(Integer.parseInt(count.toString()));
        }
        more.accept(options);
    }

    /** Not in the interface before 2.3, a default method in 2.3-2.8, abstract from 3.0:
     * declared without @Override so it compiles against all of them. */
    public void close(String storeName, Options options) {}
}
