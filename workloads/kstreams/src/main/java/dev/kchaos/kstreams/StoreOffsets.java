package dev.kchaos.kstreams;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The `store-offsets` trace: from Kafka Streams 4.3 (KIP-1035) a store keeps its changelog
 * offsets itself (StateStore#commit(Map), StateStore#committedOffset) instead of the task's
 * .checkpoint file, which the harness could watch from outside. What took the file's place
 * cannot be read from outside a live store, so the app asks the store, through the public
 * API, when its task turns RUNNING (the processor's init: restoration done, no record yet):
 * the offset it reports for its changelog partition, and the digest of what it holds
 * (workloads.ledger.contract.store_digest: count and sum of CRC32(key \0 value)). The
 * checker judges the two against the committed changelog (checker/checks/store_offsets.py).
 *
 * This tree also builds 3.7 to 4.2, whose StateStore has neither method: they are looked
 * up by name, and nothing is traced where they are missing or the store does not manage
 * its offsets. Reading the store is all this does: an error is printed, never thrown into
 * the processor's init.
 */
final class StoreOffsets {
    private static final Method COMMITTED_OFFSET = method("committedOffset", TopicPartition.class);
    private static final Method MANAGES_OFFSETS = method("managesOffsets");

    private StoreOffsets() {}

    private static Method method(String name, Class<?>... parameters) {
        try {
            return StateStore.class.getMethod(name, parameters);
        } catch (NoSuchMethodException e) {
            return null;  // a release before KIP-1035
        }
    }

    /** Whether this release's stores can report their own offsets (4.3 on). */
    static boolean available() {
        return COMMITTED_OFFSET != null && MANAGES_OFFSETS != null;
    }

    /** Trace one store of the task that turned RUNNING, if it keeps its own offsets. */
    static void trace(Trace trace, ProcessorContext<?, ?> context, String task, String name,
                      KeyValueStore<String, String> store) {
        if (!available()) {
            return;
        }
        try {
            if (!Boolean.TRUE.equals(MANAGES_OFFSETS.invoke(store))) {
                return;
            }
            // The changelog topic's name: <application.id>-<store name>-changelog.
            TopicPartition changelog = new TopicPartition(
                context.applicationId() + "-" + name + "-changelog", context.taskId().partition());
            Object offset = COMMITTED_OFFSET.invoke(store, changelog);
            long entries = 0;
            long sum = 0;
            CRC32 crc = new CRC32();
            try (KeyValueIterator<String, String> all = store.all()) {
                while (all.hasNext()) {
                    KeyValue<String, String> entry = all.next();
                    crc.reset();
                    crc.update(entry.key.getBytes(StandardCharsets.UTF_8));
                    crc.update(0);
                    crc.update(entry.value.getBytes(StandardCharsets.UTF_8));
                    sum += crc.getValue();
                    entries++;
                }
            }
            trace.emit("store-offsets", "task", task, "store", name, "changelog",
                       changelog.toString(), "offset", offset, "digest", entries + ":" + sum,
                       "entries", entries);
        } catch (IllegalAccessException | InvocationTargetException | RuntimeException e) {
            System.err.println("store-offsets of " + name + " in task " + task + ": " + e);
        }
    }
}
