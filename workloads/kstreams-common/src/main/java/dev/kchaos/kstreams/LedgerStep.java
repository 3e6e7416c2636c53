package dev.kchaos.kstreams;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.BiConsumer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * One input record through the ledger, written once for both trees: skip an event whose id
 * the dedup store holds, else add its amount to the account's balance, join the account's
 * version from the global table, and emit the output (keyed by account), tracing the first
 * record a running period writes (`task-first-record`). workloads/kstreams' LedgerProcessor
 * (the new Processor API) and workloads/kstreams-legacy's LedgerTransformer (the old one)
 * only adapt their context to it: the stores, the record's position, how to forward.
 *
 * <p>Under at_least_once the dedup record, the balance record and the output go to three
 * partitions without a transaction, and a SIGKILL keeps any subset of what was sent since
 * the last commit; the restart meets the same input records again. So the balance carries
 * the input offset of the last event applied to it ({"balance", "offset"}, BalanceValue: an
 * account's events are all in one input partition, in order), and a redelivery at the
 * position its dedup entry remembers re-emits that output, applying the amount first if the
 * balance does not have it yet (the balance record was lost, the dedup record kept). An
 * event already in the balance whose dedup record was lost is not applied again; its output
 * is rebuilt when the balance is at that very event, else not re-sent.
 */
final class LedgerStep {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Trace trace;
    private final String task;
    private final KeyValueStore<String, String> balances;
    private final KeyValueStore<String, String> dedup;
    private final KeyValueStore<String, String> accounts;
    private final boolean reemitAtSamePosition;
    // Whether this running period (since init) has written a record's output: the first
    // is traced, the moment a checkpoint kept from restoration starts to go stale.
    private boolean wroteSinceInit;

    /**
     * Made in the processor's init, which Kafka Streams calls when the task turns RUNNING
     * (after restoration, and again when a suspended task resumes): traced `task-running`.
     */
    LedgerStep(Trace trace, String task, Map<String, Object> appConfigs,
               KeyValueStore<String, String> balances, KeyValueStore<String, String> dedup,
               KeyValueStore<String, String> accounts) {
        this.trace = trace;
        this.task = task;
        this.balances = balances;
        this.dedup = dedup;
        this.accounts = accounts;
        this.reemitAtSamePosition = StreamsConfig.AT_LEAST_ONCE.equals(
            String.valueOf(appConfigs.get(StreamsConfig.PROCESSING_GUARANTEE_CONFIG)));
        trace.emit("task-running", "task", task);
    }

    /** Whether the app runs at_least_once (else exactly-once: no redelivery to tell). */
    boolean atLeastOnce() {
        return reemitAtSamePosition;
    }

    /** The input record `value` at (partition, offset); what it outputs goes to `forward`
     * (account, output JSON), before the trace says it was written. */
    void process(String value, int partition, long offset, BiConsumer<String, String> forward) {
        JsonNode event;
        try {
            event = JSON.readTree(value);
        } catch (Exception e) {
            throw new IllegalStateException("undecodable input " + value, e);
        }
        String eventId = event.get("event_id").asText();
        String account = event.get("account").asText();
        long amount = event.get("amount").asLong();
        String seen = dedup.get(eventId);
        BalanceValue held = BalanceValue.decode(balances.get(account));
        boolean inBalance = reemitAtSamePosition && held.offset >= offset;
        if (seen != null) {
            if (reemitAtSamePosition && remembersPosition(seen, partition, offset)) {
                if (!inBalance) {  // its balance record was lost in a crash, its dedup kept
                    balances.put(account, BalanceValue.encode(held.balance + amount, offset));
                }
                trace.emit("dedup-reemit", "task", task, "event_id", eventId,
                           "partition", partition, "offset", offset);
                forward.accept(account, seen);
                return;
            }
            trace.emit("dedup-skip", "task", task, "event_id", eventId,
                       "partition", partition, "offset", offset);
            return;
        }
        if (inBalance) {  // at_least_once: applied before a crash that lost its dedup record
            trace.emit("dedup-lost", "task", task, "event_id", eventId,
                       "partition", partition, "offset", offset, "balance_offset", held.offset);
            if (held.offset == offset) {  // the balance is this event's: rebuild its output
                String rebuilt = output(eventId, account, amount, held.balance, partition, offset);
                dedup.put(eventId, rebuilt);
                forward.accept(account, rebuilt);
            }
            return;
        }
        long balance = held.balance + amount;
        String encoded = output(eventId, account, amount, balance, partition, offset);
        dedup.put(eventId, encoded);
        balances.put(account, reemitAtSamePosition ? BalanceValue.encode(balance, offset)
                                                   : Long.toString(balance));
        forward.accept(account, encoded);
        if (!wroteSinceInit) {  // after the writes: the line is never before what it shows
            wroteSinceInit = true;
            trace.emit("task-first-record", "task", task, "partition", partition,
                       "offset", offset);
        }
    }

    /** The processor's close: the task suspended or closed. */
    void close() {
        trace.emit("task-closed", "task", task);
    }

    private String output(String eventId, String account, long amount, long balance,
                          int partition, long offset) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("event_id", eventId);
        out.put("account", account);
        out.put("amount", amount);
        out.put("balance", balance);
        out.put("partition", partition);
        out.put("offset", offset);
        out.put("global_version", globalVersion(account));
        try {
            return JSON.writeValueAsString(out);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Whether a dedup entry is the output of the record at (partition, offset) (an entry
     * in another format is not). */
    private static boolean remembersPosition(String seen, int partition, long offset) {
        try {
            JsonNode out = JSON.readTree(seen);
            return out != null && out.path("partition").asInt(-1) == partition
                && out.path("offset").asLong(-1) == offset;
        } catch (Exception e) {
            return false;
        }
    }

    private Long globalVersion(String account) {
        String value = accounts.get(account);
        if (value == null) {
            return null;
        }
        try {
            return JSON.readTree(value).get("version").asLong();
        } catch (Exception e) {
            return null;
        }
    }
}
