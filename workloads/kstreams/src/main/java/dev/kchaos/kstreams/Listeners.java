package dev.kchaos.kstreams;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.StandbyUpdateListener;

/**
 * What Kafka Streams tells about restoration (RestoreTrace, shared with the legacy tree) and
 * standbys (the StandbyUpdateListener, 3.7 on), as trace events. A changelog partition p of
 * a store in sub-topology s belongs to task s_p (the ledger's stores are all in sub-topology
 * 0: 0_p); a global store's topic (the ledger's accounts topic) is global.
 */
final class Listeners extends RestoreTrace implements StandbyUpdateListener {
    Listeners(Trace trace, TopologyShape shape) {
        super(trace, shape::isGlobalTopic, shape::task);
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
