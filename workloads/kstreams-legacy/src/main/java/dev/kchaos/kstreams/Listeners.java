package dev.kchaos.kstreams;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.StateRestoreListener;

/**
 * What Kafka Streams tells about restoration, as trace events (the same as workloads/kstreams'
 * Listeners). A changelog partition p belongs to task 0_p (one sub-topology); the accounts
 * topic is the global store's.
 *
 * Not in this generation: the StandbyUpdateListener (KIP-988) arrived in 3.7, so
 * `standby-update-start` and `standby-update-suspended` are never traced here.
 * `restore-suspended` comes from onRestoreSuspended, which the StateRestoreListener has from
 * 3.5 (KIP-869): declared below without @Override, it is called on 3.5 and 3.6 and never
 * before.
 */
final class Listeners implements StateRestoreListener {
    static final String[] CANNOT_TRACE = {"standby-update-start", "standby-update-suspended"};

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

    /** Whether this release's StateRestoreListener has onRestoreSuspended (3.5 on). */
    static boolean tracesRestoreSuspended() {
        try {
            StateRestoreListener.class.getMethod(
                "onRestoreSuspended", TopicPartition.class, String.class, long.class);
            return true;
        } catch (NoSuchMethodException e) {
            return false;
        }
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

    /** StateRestoreListener's from 3.5 on (a default method there); a plain method before. */
    public void onRestoreSuspended(TopicPartition tp, String store, long restored) {
        trace.emit("restore-suspended", "task", task(tp), "store", store, "restored", restored);
    }
}
