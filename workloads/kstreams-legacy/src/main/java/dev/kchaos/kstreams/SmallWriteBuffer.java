package dev.kchaos.kstreams;

import java.util.Map;
import org.apache.kafka.streams.state.RocksDBConfigSetter;
import org.rocksdb.Options;

/**
 * Small memtables, so RocksDB flushes SST files within a run (KAFKA-20685 needs a flush of
 * writes a transaction later aborts). Size and count from the app's `kchaos.write.buffer.bytes`
 * and `kchaos.write.buffer.count`.
 */
public final class SmallWriteBuffer implements RocksDBConfigSetter {
    static final String WRITE_BUFFER_BYTES = "kchaos.write.buffer.bytes";
    static final String WRITE_BUFFER_COUNT = "kchaos.write.buffer.count";

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
    }

    /** Not in the interface before 2.3, a default method in 2.3-2.8, abstract from 3.0:
     * declared without @Override so it compiles against all of them. */
    public void close(String storeName, Options options) {}
}
