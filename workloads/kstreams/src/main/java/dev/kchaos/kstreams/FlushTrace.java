package dev.kchaos.kstreams;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import org.rocksdb.AbstractEventListener;
import org.rocksdb.FlushJobInfo;
import org.rocksdb.RocksDB;

/**
 * The `store-flush` trace: every memtable flush RocksDB completes, with the task, the
 * store and, for a segmented (windowed or session) store, the segment. With the write-ahead
 * log off (Kafka Streams' setting), a flush is the moment a store's or a segment's writes
 * become durable, and each segment flushes on its own: the nemesis times kills by it.
 * The path says which: `<task>/rocksdb/<store>/<file>.sst` for a key-value store,
 * `<task>/<store>/<store>.<segment id>/<file>.sst` for a segment.
 */
final class FlushTrace extends AbstractEventListener {
    private static volatile Trace installed;

    /** The pod's trace, for the listeners Kafka Streams has RocksDB create (main): one on
     * every store from now on (SmallWriteBuffer). */
    static void install(Trace podTrace) {
        installed = podTrace;
        SmallWriteBuffer.alsoOnEveryStore(options -> options.setListeners(List.of(new FlushTrace())));
    }

    @Override
    public void onFlushCompleted(RocksDB db, FlushJobInfo info) {
        Trace trace = installed;
        if (trace == null) {
            return;
        }
        Path dbDir = Paths.get(info.getFilePath()).getParent();
        if (dbDir == null || dbDir.getParent() == null || dbDir.getParent().getParent() == null) {
            return;
        }
        String dbName = dbDir.getFileName().toString();
        String parent = dbDir.getParent().getFileName().toString();
        boolean keyValue = parent.equals("rocksdb");
        String task = dbDir.getParent().getParent().getFileName().toString();
        String store = keyValue ? dbName : parent;
        String segment = keyValue ? null : dbName;
        trace.emitAs("rocksdb", "store-flush", "task", task, "store", store, "segment", segment,
                  "reason", String.valueOf(info.getFlushReason()),
                  "cf", info.getColumnFamilyName(), "largest_seqno", info.getLargestSeqno());
    }
}
