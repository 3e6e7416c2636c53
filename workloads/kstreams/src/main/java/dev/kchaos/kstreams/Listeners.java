package dev.kchaos.kstreams;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.StandbyUpdateListener;
import org.apache.kafka.streams.processor.StateRestoreListener;

/**
 * What Kafka Streams tells about restoration and standbys, as trace events. A changelog
 * partition p belongs to task 0_p (one sub-topology); the accounts topic is the global
 * store's.
 */
final class Listeners implements StateRestoreListener, StandbyUpdateListener {
    private final Trace trace;
    private final String accountsTopic;
    private final Map<TopicPartition, Long> lastRestored = new ConcurrentHashMap<>();

    Listeners(Trace trace, String accountsTopic) {
        this.trace = trace;
        this.accountsTopic = accountsTopic;
    }

    private boolean global(TopicPartition tp) {
        return tp.topic().equals(accountsTopic);
    }

    static String task(TopicPartition tp) {
        return "0_" + tp.partition();
    }

    @Override
    public void onRestoreStart(TopicPartition tp, String store, long start, long end) {
        lastRestored.remove(tp);
        if (global(tp)) {
            trace.emit("global-restore-start", "from_offset", start, "end_offset", end);
        } else {
            trace.emit("restore-start", "task", task(tp), "store", store,
                       "partition", tp.partition(), "from_offset", start, "end_offset", end);
        }
    }

    @Override
    public void onBatchRestored(TopicPartition tp, String store, long batchEnd, long count) {
        lastRestored.put(tp, batchEnd);
    }

    @Override
    public void onRestoreEnd(TopicPartition tp, String store, long restored) {
        Long offset = lastRestored.remove(tp);
        if (global(tp)) {
            trace.emit("global-restore-end", "restored", restored, "offset", offset);
        } else {
            trace.emit("restore-end", "task", task(tp), "store", store,
                       "partition", tp.partition(), "restored", restored, "offset", offset);
        }
    }

    @Override
    public void onRestoreSuspended(TopicPartition tp, String store, long restored) {
        trace.emit("restore-suspended", "task", task(tp), "store", store, "restored", restored);
    }

    @Override
    public void onUpdateStart(TopicPartition tp, String store, long start) {
        trace.emit("standby-update-start", "task", task(tp), "store", store, "from_offset", start);
    }

    @Override
    public void onBatchLoaded(TopicPartition tp, String store, org.apache.kafka.streams.processor.TaskId task,
                              long batchEnd, long size, long endOffset) {}

    @Override
    public void onUpdateSuspended(TopicPartition tp, String store, long storeOffset,
                                  long currentEndOffset, SuspendReason reason) {
        trace.emit("standby-update-suspended", "task", task(tp), "store", store,
                   "offset", storeOffset, "reason", reason.name());
    }
}
