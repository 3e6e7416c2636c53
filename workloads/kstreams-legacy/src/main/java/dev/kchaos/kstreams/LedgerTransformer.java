package dev.kchaos.kstreams;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Transformer;
import org.apache.kafka.streams.processor.ProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * workloads/kstreams' LedgerProcessor on the old Processor API (a Transformer: 2.0 to 3.9),
 * line for line: skip an event whose id the dedup store holds, else add its amount to the
 * account's balance, join the account's version from the global table, and forward the
 * output (keyed by account, stamped with the input record's timestamp, as forward(Record)
 * does), tracing the first record a running period writes (`task-first-record`).
 * Stores hold UTF-8 strings: balances account -> "balance", dedup event_id -> the output's
 * JSON. Under at_least_once a redelivery at the position the dedup entry remembers
 * re-emits that output instead of skipping.
 */
final class LedgerTransformer implements Transformer<String, String, KeyValue<String, String>> {
    static final String BALANCES = "balances";
    static final String DEDUP = "dedup";
    static final String ACCOUNTS = "accounts";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Trace trace;
    private ProcessorContext context;
    private KeyValueStore<String, String> balances;
    private KeyValueStore<String, String> dedup;
    private KeyValueStore<String, String> accounts;
    private String task;
    private boolean reemitAtSamePosition;
    // Whether this running period (since init) has written a record's output: the first
    // is traced, the moment a checkpoint kept from restoration starts to go stale.
    private boolean wroteSinceInit;

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
        this.balances = store(context, BALANCES);
        this.dedup = store(context, DEDUP);
        this.accounts = store(context, ACCOUNTS);
        this.task = context.taskId().toString();
        this.reemitAtSamePosition = StreamsConfig.AT_LEAST_ONCE.equals(
            String.valueOf(context.appConfigs().get(StreamsConfig.PROCESSING_GUARANTEE_CONFIG)));
        // Kafka Streams initialises a task's processors when the task turns RUNNING (after
        // restoration, and again when a task a rebalance suspended resumes: under the eager
        // rebalancing of releases before 2.4 every rebalance does): the trace's task-running.
        trace.emit("task-running", "task", task);
        wroteSinceInit = false;
    }

    @Override
    public KeyValue<String, String> transform(String key, String value) {
        JsonNode event;
        try {
            event = JSON.readTree(value);
        } catch (Exception e) {
            throw new IllegalStateException("undecodable input " + value, e);
        }
        String eventId = event.get("event_id").asText();
        String account = event.get("account").asText();
        long amount = event.get("amount").asLong();
        int partition = context.partition();
        long offset = context.offset();
        String seen = dedup.get(eventId);
        // at_least_once: as the current tree's LedgerProcessor (its class comment says why)
        BalanceValue held = BalanceValue.decode(balances.get(account));
        boolean inBalance = reemitAtSamePosition && held.offset >= offset;
        if (seen != null) {
            if (reemitAtSamePosition && remembersPosition(seen, partition, offset)) {
                if (!inBalance) {  // its balance record was lost in a crash, its dedup kept
                    balances.put(account, BalanceValue.encode(held.balance + amount, offset));
                }
                trace.emit("dedup-reemit", "task", task, "event_id", eventId,
                           "partition", partition, "offset", offset);
                context.forward(account, seen);
                return null;
            }
            trace.emit("dedup-skip", "task", task, "event_id", eventId,
                       "partition", partition, "offset", offset);
            return null;
        }
        if (inBalance) {  // applied before a crash that lost its dedup record
            trace.emit("dedup-lost", "task", task, "event_id", eventId,
                       "partition", partition, "offset", offset, "balance_offset", held.offset);
            if (held.offset == offset) {  // the balance is this event's: rebuild its output
                String rebuilt = output(eventId, account, amount, held.balance, partition, offset);
                dedup.put(eventId, rebuilt);
                context.forward(account, rebuilt);
            }
            return null;
        }
        long balance = held.balance + amount;
        String encoded = output(eventId, account, amount, balance, partition, offset);
        dedup.put(eventId, encoded);
        balances.put(account, reemitAtSamePosition ? BalanceValue.encode(balance, offset)
                                                   : Long.toString(balance));
        context.forward(account, encoded);
        if (!wroteSinceInit) {  // after the writes: the line is never before what it shows
            wroteSinceInit = true;
            trace.emit("task-first-record", "task", task, "partition", partition,
                       "offset", offset);
        }
        return null; // forwarded above, as the current tree's processor does
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

    @Override
    public void close() {
        trace.emit("task-closed", "task", task);
    }
}
