package dev.kchaos.kstreams;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.kstream.Aggregator;
import org.apache.kafka.streams.kstream.Initializer;
import org.apache.kafka.streams.kstream.Merger;
import org.apache.kafka.streams.kstream.Windowed;

/**
 * The ledger's windows as the harness gives them (`--windows key=value,...`, from
 * workloads/ledger/windowed.py WindowSpec.flag): every value is passed, none defaulted
 * here, so the pods and the checker read one geometry.
 */
final class WindowSpec {
    private static final ObjectMapper JSON = new ObjectMapper();
    // Durations, as the DSL takes them (the window store's supplier: toMillis()).
    final Duration retention;
    final Duration segment;
    final Duration size;
    final Duration advance;
    final Duration grace;
    final Duration sessionGap;
    final Duration sessionGrace;

    private WindowSpec(Map<String, Long> v) {
        retention = Duration.ofMillis(v.get("retention_ms"));
        segment = Duration.ofMillis(v.get("segment_ms"));
        size = Duration.ofMillis(v.get("size_ms"));
        advance = Duration.ofMillis(v.get("advance_ms"));
        grace = Duration.ofMillis(v.get("grace_ms"));
        sessionGap = Duration.ofMillis(v.get("session_gap_ms"));
        sessionGrace = Duration.ofMillis(v.get("session_grace_ms"));
    }

    /** The aggregation both trees' LedgerWindows run (the DSL types exist from 2.1 on). */
    static final Initializer<String> EMPTY = () -> "0,0";
    static final Aggregator<String, String, String> ADD =
        (account, event, aggregate) -> add(aggregate, amount(event));
    static final Merger<String, String> MERGE = (account, a, b) -> merge(a, b);

    /** A window's or session's update as its output record, keyed by account. */
    static KeyValue<String, String> output(Windowed<String> window, String aggregate) {
        return KeyValue.pair(window.key(), record(window.key(), window.window().start(),
                                                  window.window().end(), aggregate));
    }

    static final String[] KEYS = {"retention_ms", "segment_ms", "size_ms", "advance_ms",
                                  "grace_ms", "session_gap_ms", "session_grace_ms"};

    /** IllegalArgumentException naming what is missing or malformed (exit 2, bad flags). */
    static WindowSpec parse(String text) {
        Map<String, Long> values = new HashMap<>();
        for (String pair : text.split(",")) {
            int eq = pair.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("--windows wants key=value pairs, got " + pair);
            }
            values.put(pair.substring(0, eq), Long.parseLong(pair.substring(eq + 1)));
        }
        for (String key : KEYS) {
            if (!values.containsKey(key)) {
                throw new IllegalArgumentException("--windows lacks " + key);
            }
        }
        return new WindowSpec(values);
    }

    /** The aggregate, "count,sum" of the amounts (a string: the stores' values stay
     * readable in their changelogs). */
    static String add(String aggregate, long amount) {
        long[] cs = counts(aggregate);
        return (cs[0] + 1) + "," + (cs[1] + amount);
    }

    static String merge(String a, String b) {
        long[] x = counts(a);
        long[] y = counts(b);
        return (x[0] + y[0]) + "," + (x[1] + y[1]);
    }

    static long[] counts(String aggregate) {
        if (aggregate == null || aggregate.isEmpty()) {
            return new long[] {0, 0};
        }
        int comma = aggregate.indexOf(',');
        return new long[] {Long.parseLong(aggregate.substring(0, comma)),
                           Long.parseLong(aggregate.substring(comma + 1))};
    }

    /** The output value (workloads/ledger/windowed.py); a null aggregate is a
     * session withdrawn by a merge. */
    static String record(String account, long start, long end, String aggregate) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("account", account);
        out.put("start", start);
        out.put("end", end);
        long[] cs = aggregate == null ? null : counts(aggregate);
        out.put("count", cs == null ? null : cs[0]);
        out.put("sum", cs == null ? null : cs[1]);
        out.put("removed", cs == null);
        try {
            return JSON.writeValueAsString(out);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The amount of a ledger input record (its JSON's "amount"). */
    static long amount(String event) {
        try {
            return JSON.readTree(event).get("amount").asLong();
        } catch (JsonProcessingException | NullPointerException e) {
            throw new IllegalStateException("undecodable input " + event, e);
        }
    }
}
