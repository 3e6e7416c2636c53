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
 *
 * <p>Under at_least_once the dedup record, the balance record and the output go to three
 * partitions without a transaction, and a SIGKILL keeps any subset of what was sent since
 * the last commit; the restart meets the same input records again. So the balance
 * carries the input offset of the last event applied to it ({"balance", "offset"}: an
 * account's events are all in one input partition, in order), and a redelivery at the
 * position its dedup entry remembers re-emits that output, applying the amount first if
 * the balance does not have it yet (the balance record was lost, the dedup record kept).
 * An event already in the balance whose dedup record was lost is not applied again; its
 * output is rebuilt when the balance is at that very event, else not re-sent.
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
        BalanceValue held = BalanceValue.decode(balances.get(account));
        boolean inBalance = reemitAtSamePosition && held.offset >= where.offset();
        if (seen != null) {
            if (reemitAtSamePosition && remembersPosition(seen, where)) {
                if (!inBalance) {  // its balance record was lost in a crash, its dedup kept
                    balances.put(account,
                                 BalanceValue.encode(held.balance + amount, where.offset()));
                }
                trace.emit("dedup-reemit", "task", task, "event_id", eventId,
                           "partition", where.partition(), "offset", where.offset());
                context.forward(record.withKey(account).withValue(seen));
                return;
            }
            trace.emit("dedup-skip", "task", task, "event_id", eventId,
                       "partition", where.partition(), "offset", where.offset());
            return;
        }
        if (inBalance) {  // at_least_once: applied before a crash that lost its dedup record
            trace.emit("dedup-lost", "task", task, "event_id", eventId,
                       "partition", where.partition(), "offset", where.offset(),
                       "balance_offset", held.offset);
            if (held.offset == where.offset()) {  // the balance is this event's: rebuild its output
                String encoded = output(eventId, account, amount, held.balance, where);
                dedup.put(eventId, encoded);
                context.forward(record.withKey(account).withValue(encoded));
            }
            return;
        }
        long balance = held.balance + amount;
        String encoded = output(eventId, account, amount, balance, where);
        dedup.put(eventId, encoded);
        balances.put(account, reemitAtSamePosition ? BalanceValue.encode(balance, where.offset())
                                                   : Long.toString(balance));
        context.forward(record.withKey(account).withValue(encoded));
        if (!wroteSinceInit) {  // after the writes: the line is never before what it shows
            wroteSinceInit = true;
            trace.emit("task-first-record", "task", task, "partition", where.partition(),
                       "offset", where.offset());
        }
    }

    private String output(String eventId, String account, long amount, long balance,
                          RecordMetadata where) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("event_id", eventId);
        out.put("account", account);
        out.put("amount", amount);
        out.put("balance", balance);
        out.put("partition", where.partition());
        out.put("offset", where.offset());
        out.put("global_version", globalVersion(account));
        try {
            return JSON.writeValueAsString(out);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
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
