package dev.kchaos.kstreams;

import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * LedgerProcessor under at_least_once after crashes that kept some of one record's writes
 * (tests/kstreams/test_ledger_redelivery.py compiles and runs it against the built app).
 * Prints one line per case, "ok <case>", or throws.
 */
public final class LedgerRedeliveryCheck {
    private final MockProcessorContext<String, String> context;
    private final KeyValueStore<String, String> balances = store(LedgerProcessor.BALANCES);
    private final KeyValueStore<String, String> dedup = store(LedgerProcessor.DEDUP);
    private final LedgerProcessor processor = new LedgerProcessor(trace());

    private LedgerRedeliveryCheck(String guarantee) {
        Properties config = new Properties();
        config.put(StreamsConfig.APPLICATION_ID_CONFIG, "ledger-check");
        config.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        config.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, guarantee);
        context = new MockProcessorContext<>(config);
        for (KeyValueStore<String, String> s : List.of(balances, dedup, store(LedgerProcessor.ACCOUNTS))) {
            s.init(context.getStateStoreContext(), s);
            context.addStateStore(s);
        }
        processor.init(context);
    }

    private static KeyValueStore<String, String> store(String name) {
        return Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(name), Serdes.String(),
                                           Serdes.String()).withLoggingDisabled().build();
    }

    private static Trace trace() {
        try {
            return new Trace(null, "check");
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The outputs of one input record at partition 4, `offset`. */
    private List<String> process(String eventId, long amount, long offset) {
        context.resetForwards();
        context.setRecordMetadata("ledger-events", 4, offset);
        String event = "{\"event_id\":\"" + eventId + "\",\"account\":\"acct-21\",\"amount\":"
            + amount + "}";
        processor.process(new Record<>("acct-21", event, 0L));
        List<String> out = new ArrayList<>();
        context.forwarded().forEach(f -> out.add(f.record().value()));
        return out;
    }

    /** The balance, in either of the store's formats (read here, not with the app's own
     * decoder, so the check runs against an app from before the offset was kept). */
    private long balance() {
        String value = balances.get("acct-21");
        if (value == null) {
            return 0;
        }
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\d+").matcher(value);
        expect(m.find(), "a balance: " + value);
        return Long.parseLong(m.group());
    }

    private static void expect(boolean holds, String what) {
        if (!holds) {
            throw new AssertionError(what);
        }
    }

    public static void main(String[] args) {
        String alos = StreamsConfig.AT_LEAST_ONCE;

        // The run that found it: the dedup record of 932 kept, its balance record lost.
        LedgerRedeliveryCheck c = new LedgerRedeliveryCheck(alos);
        List<String> first = c.process("e-932", 21, 932);
        c.balances.delete("acct-21");
        List<String> again = c.process("e-932", 21, 932);
        expect(again.equals(first), "redelivery re-emits the remembered output: " + again);
        expect(c.balance() == 21, "the lost balance record's amount applied again: " + c.balance());
        c.process("e-942", 9, 942);
        expect(c.balance() == 30, "the next event builds on it: " + c.balance());
        System.out.println("ok dedup-kept-balance-lost");

        // The mirror: the balance record kept, the dedup record lost.
        c.dedup.delete("e-942");
        List<String> rebuilt = c.process("e-942", 9, 942);
        expect(c.balance() == 30, "an event already in the balance is not applied twice: " + c.balance());
        expect(rebuilt.size() == 1 && rebuilt.get(0).contains("\"balance\":30"),
               "its output rebuilt from the balance at it: " + rebuilt);
        expect(c.dedup.get("e-942") != null, "its dedup record written back");
        System.out.println("ok balance-kept-dedup-lost");

        // A re-send of an id at another position is skipped, as before.
        expect(c.process("e-942", 9, 950).isEmpty() && c.balance() == 30, "a re-send is skipped");
        System.out.println("ok resend-skipped");

        // Exactly-once keeps plain balances, and a seen id is always skipped.
        LedgerRedeliveryCheck eos = new LedgerRedeliveryCheck(StreamsConfig.EXACTLY_ONCE_V2);
        eos.process("e-1", 5, 10);
        expect("5".equals(eos.balances.get("acct-21")), "plain balance under EOS");
        expect(eos.process("e-1", 5, 10).isEmpty() && eos.balance() == 5, "EOS skips a seen id");
        System.out.println("ok exactly-once-unchanged");
    }
}
