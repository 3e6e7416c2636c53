package dev.kchaos.kstreams;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.StateRestoreListener;

/**
 * What Kafka Streams tells about restoration, as trace events, the same in every tree (the
 * StateRestoreListener exists from 1.0 on). Each tree says what only it knows: which topic
 * is a global store's, and which task a store's changelog partition belongs to (the current
 * tree from the topology's shape, its Listeners adding the standby events; the legacy one
 * 0_p: the ledger's stores are all in sub-topology 0).
 */
class RestoreTrace implements StateRestoreListener {
    /** The task of a store's changelog partition: (store, partition) -> "s_p". */
    interface TaskOf {
        String task(String store, int partition);
    }

    protected final Trace trace;
    private final Predicate<String> globalTopic;
    private final TaskOf taskOf;
    private final Map<TopicPartition, Long> lastRestored = new ConcurrentHashMap<>();

    RestoreTrace(Trace trace, Predicate<String> globalTopic, TaskOf taskOf) {
        this.trace = trace;
        this.globalTopic = globalTopic;
        this.taskOf = taskOf;
    }

    /** Whether `tp` is a global store's topic (its restoration has no task). */
    private boolean global(TopicPartition tp) {
        return globalTopic.test(tp.topic());
    }

    protected String task(TopicPartition tp, String store) {
        return taskOf.task(store, tp.partition());
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

    /** StateRestoreListener's from 3.5 on (KIP-869, a default method there); a plain method
     * before, never called: declared without @Override so it compiles against both. */
    public void onRestoreSuspended(TopicPartition tp, String store, long restored) {
        trace.emit("restore-suspended", "task", task(tp, store), "store", store, "restored", restored);
    }
}
