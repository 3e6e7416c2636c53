package dev.kchaos.kstreams;

import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.kstream.Transformer;
import org.apache.kafka.streams.processor.ProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * workloads/kstreams' LedgerProcessor on the old Processor API (a Transformer: 2.0 to 3.9):
 * what it does to each record is LedgerStep's (kstreams-common), the same in both trees;
 * this adapts the old context to it. The output is forwarded keyed by account and stamped
 * with the input record's timestamp, as forward(Record) does.
 */
final class LedgerTransformer implements Transformer<String, String, KeyValue<String, String>> {
    static final String BALANCES = "balances";
    static final String DEDUP = "dedup";
    static final String ACCOUNTS = "accounts";

    private final Trace trace;
    private ProcessorContext context;
    private LedgerStep ledger;

    LedgerTransformer(Trace trace) {
        this.trace = trace;
    }

    /** getStateStore returns StateStore before 2.7 and a generic S from 2.7 on: cast. */
    @SuppressWarnings("unchecked")
    static KeyValueStore<String, String> store(ProcessorContext context, String name) {
        return (KeyValueStore<String, String>) context.getStateStore(name);
    }

    @Override
    public void init(ProcessorContext context) {
        this.context = context;
        // Kafka Streams initialises a task's processors when the task turns RUNNING (after
        // restoration, and again when a task a rebalance suspended resumes: under the eager
        // rebalancing of releases before 2.4 every rebalance does): the trace's task-running.
        ledger = new LedgerStep(trace, context.taskId().toString(), context.appConfigs(),
                                store(context, BALANCES), store(context, DEDUP),
                                store(context, ACCOUNTS));
    }

    @Override
    public KeyValue<String, String> transform(String key, String value) {
        ledger.process(value, context.partition(), context.offset(), context::forward);
        return null; // forwarded above, as the current tree's processor does
    }

    @Override
    public void close() {
        ledger.close();
    }
}
