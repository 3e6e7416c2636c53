package dev.kchaos.kstreams;

import org.apache.kafka.streams.processor.Processor;
import org.apache.kafka.streams.processor.ProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;

/** Keeps the global accounts store: account -> the Account JSON (a tombstone deletes).
 * The old Processor API's global-store processor (addGlobalStore takes it from 1.1 to 3.9). */
@SuppressWarnings("deprecation") // processor.Processor: deprecated from 3.0
final class GlobalAccounts implements Processor<String, String> {
    private KeyValueStore<String, String> store;

    @Override
    public void init(ProcessorContext context) {
        store = LedgerTransformer.store(context, LedgerTransformer.ACCOUNTS);
    }

    @Override
    public void process(String key, String value) {
        if (value == null) {
            store.delete(key);
        } else {
            store.put(key, value);
        }
    }

    @Override
    public void close() {}
}
