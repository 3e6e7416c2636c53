package dev.kchaos.kstreams;

import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

/** Keeps the global accounts store: account -> the Account JSON (a tombstone deletes). */
final class GlobalAccounts implements Processor<String, String, Void, Void> {
    private KeyValueStore<String, String> store;

    @Override
    public void init(ProcessorContext<Void, Void> context) {
        store = context.getStateStore(LedgerProcessor.ACCOUNTS);
    }

    @Override
    public void process(Record<String, String> record) {
        if (record.value() == null) {
            store.delete(record.key());
        } else {
            store.put(record.key(), record.value());
        }
    }
}
