package dev.kchaos.kstreams;

import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The ledger processor of workloads/ledger/processor.py on the new Processor API: what it
 * does to each record is LedgerStep's (kstreams-common, shared with the legacy tree's
 * LedgerTransformer); this adapts the context to it. Stores hold UTF-8 strings like the
 * Python worker's changelogs: balances account -> "balance", dedup event_id -> the
 * output's JSON. Under exactly-once it also traces what each store reports of itself when
 * its task turns RUNNING (StoreOffsets).
 */
final class LedgerProcessor implements Processor<String, String, String, String> {
    static final String BALANCES = "balances";
    static final String DEDUP = "dedup";
    static final String ACCOUNTS = "accounts";

    private final Trace trace;
    private ProcessorContext<String, String> context;
    private LedgerStep ledger;

    LedgerProcessor(Trace trace) {
        this.trace = trace;
    }

    @Override
    public void init(ProcessorContext<String, String> context) {
        this.context = context;
        KeyValueStore<String, String> balances = context.getStateStore(BALANCES);
        KeyValueStore<String, String> dedup = context.getStateStore(DEDUP);
        String task = context.taskId().toString();
        // Kafka Streams initialises a task's processors when the task turns RUNNING
        // (after restoration): the trace's task-running.
        ledger = new LedgerStep(trace, task, context.appConfigs(), balances, dedup,
                                context.getStateStore(ACCOUNTS));
        if (!ledger.atLeastOnce()) {  // exactly-once: what each store reports of itself
            StoreOffsets.trace(trace, context, task, BALANCES, balances);
            StoreOffsets.trace(trace, context, task, DEDUP, dedup);
        }
    }

    @Override
    public void process(Record<String, String> record) {
        RecordMetadata where = context.recordMetadata().orElseThrow();
        ledger.process(record.value(), where.partition(), where.offset(),
                       (account, output) -> context.forward(record.withKey(account).withValue(output)));
    }

    @Override
    public void close() {
        ledger.close();
    }
}
