package dev.kchaos.examples;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KGroupedStream;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Windowed;

/**
 * The click stream the counting examples read, and how they write a window's count: topic
 * "clicks", user -> page as text (what their specs send). One copy, so that each counting
 * example shows only what it is about: its windows. Copy it along with the one you take.
 */
public final class Clicks {
    public static final String TOPIC = "clicks";

    private Clicks() {}

    /** The clicks, keyed by user. */
    public static KStream<String, String> stream(StreamsBuilder builder) {
        return builder.stream(TOPIC, Consumed.with(Serdes.String(), Serdes.String()));
    }

    /** The clicks grouped by user (their key: no repartition), to window and count. */
    public static KGroupedStream<String, String> byUser(StreamsBuilder builder) {
        return stream(builder).groupByKey(Grouped.with(Serdes.String(), Serdes.String()));
    }

    /** A window's count as its output record: "user@windowStart" -> the count as text. */
    public static KeyValue<String, String> countAtStart(Windowed<String> window, Long count) {
        return KeyValue.pair(window.key() + "@" + window.window().start(), String.valueOf(count));
    }
}
