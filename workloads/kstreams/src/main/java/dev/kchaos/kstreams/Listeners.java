package dev.kchaos.kstreams;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.StandbyUpdateListener;
import org.apache.kafka.streams.processor.StateRestoreListener;

/**
 * What Kafka Streams tells about restoration and standbys, as trace events. A changelog
 * partition p of a store in sub-topology s belongs to task s_p (the ledger's stores are all
 * in sub-topology 0: 0_p); a global store's topic (the ledger's accounts topic) is global.
 */
final class Listeners implements StateRestoreListener, StandbyUpdateListener {
    private final Trace trace;
    private final TopologyShape shape;
    private final Map<TopicPartition, Long> lastRestored = new ConcurrentHashMap<>();

    Listeners(Trace trace, TopologyShape shape) {
        this.trace = trace;
        this.shape = shape;
    }

    private boolean global(TopicPartition tp) {
        return shape.isGlobalTopic(tp.topic());
    }

    private String task(TopicPartition tp, String store) {
        return shape.task(store, tp.partition());
    }

    @Override
    public void onRestoreStart(TopicPartition tp, String store, long start, long end) {
        lastRestored.remove(tp);
        if (global(tp)) {
            trace.emit("global-restore-start", "from_offset", start, "end_offset", end);
        } else {
            trace.emit("restore-start", "task", task(tp, store), "store", store,
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
            trace.emit("restore-end", "task", task(tp, store), "store", store,
                       "partition", tp.partition(), "restored", restored, "offset", offset);
        }
    }

    @Override
    public void onRestoreSuspended(TopicPartition tp, String store, long restored) {
        trace.emit("restore-suspended", "task", task(tp, store), "store", store, "restored", restored);
    }

    @Override
    public void onUpdateStart(TopicPartition tp, String store, long start) {
        trace.emit("standby-update-start", "task", task(tp, store), "store", store, "from_offset", start);
    }

    @Override
    public void onBatchLoaded(TopicPartition tp, String store, org.apache.kafka.streams.processor.TaskId task,
                              long batchEnd, long size, long endOffset) {}

    @Override
    public void onUpdateSuspended(TopicPartition tp, String store, long storeOffset,
                                  long currentEndOffset, SuspendReason reason) {
        trace.emit("standby-update-suspended", "task", task(tp, store), "store", store,
                   "offset", storeOffset, "reason", reason.name());
    }
}
