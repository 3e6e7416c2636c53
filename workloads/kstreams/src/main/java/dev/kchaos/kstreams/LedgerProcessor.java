package dev.kchaos.kstreams;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The ledger processor of workloads/ledger/processor.py: skip an event whose id the dedup
 * store holds, else add its amount to the account's balance, join the account's version
 * from the global table, and emit the output. Stores hold UTF-8 strings like the Python
 * worker's changelogs: balances account -> "balance", dedup event_id -> "partition:offset".
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
        // Kafka Streams initialises a task's processors when the task turns RUNNING
        // (after restoration): the trace's task-running.
        trace.emit("task-running", "task", task);
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
        if (dedup.get(eventId) != null) {
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
        dedup.put(eventId, where.partition() + ":" + where.offset());
        balances.put(account, Long.toString(balance));
        try {
            context.forward(record.withKey(account).withValue(JSON.writeValueAsString(out)));
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
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
