package dev.kchaos.kstreams;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The ledger processor of workloads/ledger/processor.py: skip an event whose id the dedup
 * store holds, else add its amount to the account's balance, join the account's version
 * from the global table, and emit the output. Stores hold UTF-8 strings like the Python
 * worker's changelogs: balances account -> "balance", dedup event_id -> the output's JSON.
 * Under at_least_once a redelivery at the position the dedup entry remembers re-emits
 * that output instead of skipping (the entry's changelog record may have outlived the
 * output in a crash: without a transaction they are not atomic).
 */
final class LedgerProcessor implements Processor<String, String, String, String> {
    static final String BALANCES = "balances";
    static final String DEDUP = "dedup";
    static final String ACCOUNTS = "accounts";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Trace trace;
    private ProcessorContext<String, String> context;
    private KeyValueStore<String, String> balances;
    private KeyValueStore<String, String> dedup;
    private KeyValueStore<String, String> accounts;
    private String task;
    private boolean reemitAtSamePosition;
    // Whether this running period (since init) has written a record's output: the first
    // is traced, the moment a checkpoint kept from restoration starts to go stale.
    private boolean wroteSinceInit;

    LedgerProcessor(Trace trace) {
        this.trace = trace;
    }

    @Override
    public void init(ProcessorContext<String, String> context) {
        this.context = context;
        this.balances = context.getStateStore(BALANCES);
        this.dedup = context.getStateStore(DEDUP);
        this.accounts = context.getStateStore(ACCOUNTS);
        this.task = context.taskId().toString();
        this.reemitAtSamePosition = StreamsConfig.AT_LEAST_ONCE.equals(
            String.valueOf(context.appConfigs().get(StreamsConfig.PROCESSING_GUARANTEE_CONFIG)));
        // Kafka Streams initialises a task's processors when the task turns RUNNING
        // (after restoration): the trace's task-running.
        trace.emit("task-running", "task", task);
        if (!reemitAtSamePosition) {  // exactly-once: what each store reports of itself
            StoreOffsets.trace(trace, context, task, BALANCES, balances);
            StoreOffsets.trace(trace, context, task, DEDUP, dedup);
        }
        wroteSinceInit = false;
    }

    @Override
    public void process(Record<String, String> record) {
        JsonNode event;
        try {
            event = JSON.readTree(record.value());
        } catch (Exception e) {
            throw new IllegalStateException("undecodable input " + record.value(), e);
        }
        String eventId = event.get("event_id").asText();
        String account = event.get("account").asText();
        long amount = event.get("amount").asLong();
        RecordMetadata where = context.recordMetadata().orElseThrow();
        String seen = dedup.get(eventId);
        if (seen != null) {
            if (reemitAtSamePosition && remembersPosition(seen, where)) {
                trace.emit("dedup-reemit", "task", task, "event_id", eventId,
                           "partition", where.partition(), "offset", where.offset());
                context.forward(record.withKey(account).withValue(seen));
                return;
            }
            trace.emit("dedup-skip", "task", task, "event_id", eventId,
                       "partition", where.partition(), "offset", where.offset());
            return;
        }
        String held = balances.get(account);
        long balance = (held == null ? 0 : Long.parseLong(held)) + amount;
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("event_id", eventId);
        out.put("account", account);
        out.put("amount", amount);
        out.put("balance", balance);
        out.put("partition", where.partition());
        out.put("offset", where.offset());
        out.put("global_version", globalVersion(account));
        String encoded;
        try {
            encoded = JSON.writeValueAsString(out);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
        dedup.put(eventId, encoded);
        balances.put(account, Long.toString(balance));
        context.forward(record.withKey(account).withValue(encoded));
        if (!wroteSinceInit) {  // after the writes: the line is never before what it shows
            wroteSinceInit = true;
            trace.emit("task-first-record", "task", task, "partition", where.partition(),
                       "offset", where.offset());
        }
    }

    /** Whether a dedup entry is the output of the record at `where` (an entry in another
     * format is not). */
    private static boolean remembersPosition(String seen, RecordMetadata where) {
        try {
            JsonNode out = JSON.readTree(seen);
            return out != null && out.path("partition").asInt(-1) == where.partition()
                && out.path("offset").asLong(-1) == where.offset();
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
